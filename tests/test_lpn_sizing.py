"""lpn verify --size: buffer sizing against a latency budget, a stall-ratio budget, and the
size that optimises the worst-case latency (OSDI'24 §5.2.4), checked against simulation."""

import itertools
import json
import random
from fractions import Fraction
from pathlib import Path

import pytest

from accelperf.cli.app import main
from accelperf.lpn import Net, simulate
from accelperf.lpn.analysis.space import load_space, space_from_dict
from accelperf.lpn.analysis.sizing import (optimal_size, simulated_stall, size_buffer,
                                           stall_check, with_size)
from accelperf.lpn.analysis.verify import latency_bound
from accelperf.lpn.library import build
from accelperf.lpn.net import Marking

ROOT = Path(__file__).resolve().parents[1]
SPACES = ROOT / "examples" / "spaces"


def test_buffer_sizing_finds_the_smallest_size_meeting_the_budget():
    jpeg = build("jpeg-decoder")
    space = load_space(jpeg, SPACES / "jpeg-decoder-18-blocks.toml")
    worst4 = latency_bound(jpeg, space, "max").bound        # the model's 4 slots
    result = size_buffer(jpeg, space, "coeff_slots", range(1, 9), f"latency <= {worst4}")
    assert result.size is not None and result.size <= 4
    assert all(t.holds is False for t in result.tried[:-1]) and result.tried[-1].holds is True
    for trial in result.tried[:-1]:
        assert trial.value > worst4 and trial.witness.simulated == trial.value
    # a latency budget that holds is proved: no input is named (docs/how-to/verify.md)
    assert result.chosen.witness is None and result.chosen.value is None
    assert result.to_dict()["tried"][-1]["witness"] is None



# ---------------------------------------------------------------------- stall ratio
def two_stage(interval=None):
    """jobs -> produce (1 cycle, a start every ``interval``) -> buf (1 slot) -> consume
    (work cycles) -> out."""
    net = Net("two-stage")
    job = net.token_type("Job", "work")
    jobs, buf, out = net.place("jobs", job), net.place("buf", job, capacity=1), \
        net.place("out", job)
    net.transition("produce", inputs={jobs: 1}, outputs={buf: 1}, delay=1,
                   **({} if interval is None else {"initiation_interval": interval}))
    net.transition("consume", inputs={buf: 1}, outputs={out: 1}, delay=lambda j: j.work)
    net.start, net.done = jobs, out
    return net.build()


def jobs_space(model, lo, hi, n=3):
    return space_from_dict(model, {"places": {"jobs": {"count": n,
                                                       "properties": {"work": [lo, hi]}}}})


def marking(model, works):
    return {model.place_id("jobs"): [(w,) for w in works],
            **{pid: list(ts) for pid, ts in model.initial.items()}}


def test_stall_ratio_of_a_two_stage_pipeline_matches_the_hand_count():
    """Three jobs of 10 cycles. One slot: produce waits 10 cycles for the second and the
    third job's slot, in a run of 33 cycles; two slots: it waits from cycle 2 to 11 for
    the third; three: never."""
    base = two_stage()
    space = jobs_space(base, 10, 10)
    for slots, ratio in ((1, Fraction(20, 33)), (2, Fraction(9, 31)), (3, Fraction(0))):
        model, _ = with_size(base, "buf", slots)
        assert simulated_stall(model, "buf", marking(model, [10] * 3)).ratio == ratio
        holds, worst, witness = stall_check(model, space, "buf", Fraction(1), worst=True)
        assert holds is True and worst == ratio and witness.tokens["jobs"][0]["work"] == 10


def test_a_producer_still_in_its_initiation_interval_is_not_stalled_by_the_buffer():
    """A start every 3 cycles: the second job is ready at 3 (not 1) and waits for the
    slot until 11, the third from 14 to 22: 16 of 33 cycles."""
    model = two_stage(interval=3)
    assert simulated_stall(model, "buf", marking(model, [10] * 3)).ratio == Fraction(16, 33)
    holds, worst, _ = stall_check(model, jobs_space(model, 10, 10), "buf", Fraction(1),
                                  worst=True)
    assert holds is True and worst == Fraction(16, 33)


def test_the_proved_worst_stall_is_the_largest_over_every_input_of_a_small_space():
    """Exhaustive: every input of 3 jobs of 2..7 cycles, simulated and measured."""
    base = two_stage()
    space = jobs_space(base, 2, 7)
    for slots in (1, 2):
        model, _ = with_size(base, "buf", slots)
        every = {works: simulated_stall(model, "buf", marking(model, works)).ratio
                 for works in itertools.product(range(2, 8), repeat=3)}
        holds, worst, witness = stall_check(model, space, "buf", Fraction(1), worst=True)
        assert holds is True and worst == max(every.values())
        assert every[tuple(t["work"] for t in witness.tokens["jobs"])] == worst
        # Just below the worst, the budget fails with a counterexample above it.
        holds, ratio, cx = stall_check(model, space, "buf", worst, strict=True)
        assert holds is False and ratio == worst
        assert every[tuple(t["work"] for t in cx.tokens["jobs"])] == ratio


def jpeg_90pct_input(rng):
    while True:
        counts = [rng.choice([1, 1, 1, 2, 3, 5, 8, 20, 63]) for _ in range(18)]
        if sum(counts) <= 115:
            return counts


def test_stall_budget_sizing_of_the_jpeg_coefficient_buffer_against_simulation():
    """§5.2.4: the smallest coefficient buffer keeping the entropy decoder's stalls at
    most 65% of the run on the 90% space; the size below has an input that breaks it."""
    jpeg = build("jpeg-decoder")
    space = load_space(jpeg, SPACES / "jpeg-decoder-18-blocks-90pct.toml")
    result = size_buffer(jpeg, space, "coeff_slots", range(1, 9), "stall <= 0.65")
    assert result.size == 3 and result.measure == "stall ratio"
    below, chosen = result.below, result.chosen
    assert below.holds is False and below.value > Fraction(65, 100)
    assert chosen.holds is True and chosen.value <= Fraction(65, 100)
    for trial in (below, chosen):
        sized, _ = with_size(jpeg, "coeff_slots", trial.size)
        tokens = sized.marking(trial.witness.input).tokens
        assert simulated_stall(sized, "coeff_slots", tokens).ratio == trial.value
    sized, _ = with_size(jpeg, "coeff_slots", 3)
    rng = random.Random(5)
    for _ in range(25):
        tokens = sized.marking(jpeg_90pct_input(rng)).tokens
        assert simulated_stall(sized, "coeff_slots", tokens).ratio <= chosen.value


# ---------------------------------------------------------------------- optimum
def test_the_size_that_optimises_the_jpeg_worst_case():
    """One coefficient slot serialises entropy decoding and the IDCT (4958 cycles at
    worst); from two on, the worst case is the back end's 3836."""
    jpeg = build("jpeg-decoder")
    space = load_space(jpeg, SPACES / "jpeg-decoder-18-blocks.toml")
    result = optimal_size(jpeg, space, "coeff_slots", range(1, 5))
    assert result.status == "proved" and result.size == 2 and result.chosen.value == 3836
    sized, _ = with_size(jpeg, "coeff_slots", 2)
    assert simulate(sized, result.chosen.witness.input).latency == 3836
    one, _ = with_size(jpeg, "coeff_slots", 1)
    assert result.below.value == 4958 == simulate(one, result.below.witness.input).latency
    for t in result.tried[2:]:
        assert t.holds is False and t.value >= 3836
        again, _ = with_size(jpeg, "coeff_slots", t.size)
        assert simulate(again, t.witness.input).latency == t.value


def test_the_size_that_optimises_a_small_net_against_every_input():
    base = two_stage()
    space = jobs_space(base, 1, 6)
    result = optimal_size(base, space, "buf", range(1, 5))
    worst = {}
    for slots in range(1, 5):
        model, _ = with_size(base, "buf", slots)
        worst[slots] = max(simulate(model, Marking(model.name, {
            p: tuple(ts) for p, ts in marking(model, works).items()})).latency
            for works in itertools.product(range(1, 7), repeat=3))
    best = min(worst.values())
    assert result.size == min(s for s, w in worst.items() if w == best)
    assert result.chosen.value == best
    for t in result.tried:          # the others: no better, shown by an input
        assert t.holds == (t.size == result.size)
        assert best <= t.value <= worst[t.size]


def test_the_optimum_is_the_first_size_reaching_it_on_the_90pct_space():
    """Two sizes share the least worst case (1951 from 2 slots on): the answer is the
    smaller, and the sizes after it are shown no better by an input taking 1951."""
    jpeg = build("jpeg-decoder")
    space = load_space(jpeg, SPACES / "jpeg-decoder-18-blocks-90pct.toml")
    result = optimal_size(jpeg, space, "coeff_slots", range(1, 5))
    assert result.size == 2 and [t.value for t in result.tried] == [2143, 1951, 1951, 1951]
    assert [t.holds for t in result.tried] == [False, True, False, False]


# ---------------------------------------------------------------------- command line
def run_json(capsys, *args):
    assert main(["lpn", "verify", *args, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_cli_stall_budget_and_optimise(capsys):
    space = str(SPACES / "jpeg-decoder-18-blocks-90pct.toml")
    out = run_json(capsys, "jpeg-decoder", "--space", space, "--size", "coeff_slots",
                   "--range", "1..4", "--budget", "stall <= 0.65")
    assert out["size"] == 3 and out["measure"] == "stall ratio" and out["value"] <= 0.65
    assert [t["holds"] for t in out["tried"]] == [False, False, True]
    assert out["tried"][1]["value"] > 0.65 and len(out["tried"][1]["witness"]) == 18
    full = str(SPACES / "jpeg-decoder-18-blocks.toml")
    out = run_json(capsys, "jpeg-decoder", "--space", full, "--size", "coeff_slots",
                   "--range", "1..32", "--optimise")
    assert out["size"] == 2 and out["value"] == 3836 and len(out["tried"]) == 32


@pytest.mark.parametrize("args,needle", [
    (["--budget", "stall <= lots"], "--budget"),
    (["--budget", "latency < 9", "--optimise"], "--optimise"),
    (["--range", "1..3"], "--optimise"),
])
def test_cli_sizing_errors_are_one_line(capsys, args, needle):
    space = str(SPACES / "jpeg-decoder-18-blocks.toml")
    code = main(["lpn", "verify", "jpeg-decoder", "--space", space, "--size", "coeff_slots",
                 *([] if "--range" in args else ["--range", "1..3"]), *args])
    err = capsys.readouterr().err
    assert code == 2 and needle in err and err.count("\n") == 1, err


def test_cli_sizing_rows_read_as_words(tmp_path, capsys):
    # The tutorial's pipeline, six items of sizes 1..8: one slot serialises compute and
    # write-back (worse), two reach the least worst case, more are no better.
    space = tmp_path / "six.toml"
    space.write_text('input = "list(inbox.size)"\n[places.inbox]\ncount = 6\n'
                     'properties = { size = [1, 8] }\n')
    code = main(["lpn", "verify", "examples/three_stage.py:pipeline", "--space", str(space),
                 "--size", "computed", "--range", "1..3", "--optimise"])
    rows = [line.split(":")[1].split(";")[0].strip()
            for line in capsys.readouterr().out.splitlines() if "computed = " in line]
    assert code == 0 and rows == ["worse", "least worst case", "no better"], rows
    code = main(["lpn", "verify", "examples/three_stage.py:pipeline", "--space", str(space),
                 "--size", "computed", "--range", "1..2", "--budget", "latency <= 10000"])
    rows = [line.split(":")[1].strip()
            for line in capsys.readouterr().out.splitlines() if "computed = " in line]
    assert code == 0 and rows == ["meets the budget"], rows
    # no size meets it: said in words, not as Python's None ("None (proved)")
    code = main(["lpn", "verify", "examples/three_stage.py:pipeline", "--space", str(space),
                 "--size", "computed", "--range", "1..2", "--budget", "latency <= 1"])
    first = capsys.readouterr().out.splitlines()[0]
    assert code == 1 and "'latency <= 1': none of 1..2 (" in first and "None" not in first
