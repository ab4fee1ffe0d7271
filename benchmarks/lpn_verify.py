"""lpn verify: how long the proofs take, against simulating random inputs in the same process.

For the jpeg-decoder's 18-block spaces (OSDI'24 §5.3.4: the paper needed under 2 minutes
per bound; target here < 10 s), the proved worst and best case with their witnesses; the
interface-accuracy proofs of examples/interfaces/jpeg_decoder_plain.py and of the module
`accelperf lpn interface jpeg-decoder --out` writes (target < 30 s); and buffer sizing of
the entropy decoder's coefficient slots (§5.2.4; target < 30 s) against a latency budget,
a stall-ratio budget, and for the least worst-case latency. The
baseline is simulating 300 random inputs of the same space, which is what testing without
a proof would do (and which finds neither extreme).

Then the bound queries on random nets with shared places (issue 23): the suite's random-net
generator (tests/lpn_random.py) drawn deterministically, the first 100 nets in which several
transitions take, read or count one place's tokens; every input token's two properties
range over 0..3. Each net gets a max and a min bound query with a 10 s budget; a query is
*decided* when it is proved or refuted with a witness (an input that never finishes). Every
proved bound is re-checked: its witness must simulate to it and 200 random inputs of the
space must run to the end within it; a refutation's witness must really not finish. A
failed re-check counts as unsound.

Run: .venv/bin/python benchmarks/lpn_verify.py          (everything)
     .venv/bin/python benchmarks/lpn_verify.py --shared (the random shared-place nets only)
     .venv/bin/python benchmarks/lpn_verify.py --provable [--nets N] (the provable
         population only: its first N nets, 50 by default)
"""

from __future__ import annotations

import collections
import contextlib
import importlib.util
import io
import random
import sys
import tempfile
import time
from pathlib import Path

import z3

from accelperf.lpn import semantics, simulate
from accelperf.lpn.analysis.space import load_space
from accelperf.cli.app import main as cli
from accelperf.lpn.analysis.formula import generated_interface_term
from accelperf.lpn.analysis.proofs.sizing import optimal_size, size_buffer
from accelperf.lpn.analysis.space import space_from_dict
from accelperf.lpn.analysis.proofs.verify import latency_bound, prove, shared_places, within
from accelperf.lpn.library import build

ROOT = Path(__file__).resolve().parents[1]
SPACES = ROOT / "examples" / "spaces"


def timed(func):
    began = time.perf_counter()
    value = func()
    return value, time.perf_counter() - began


def _show(value) -> str:
    return "holds" if value is None else f"{float(value):.4g}"


def interface():
    spec = importlib.util.spec_from_file_location(
        "iface", ROOT / "examples" / "interfaces" / "jpeg_decoder_plain.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.max = lambda a, b: z3.If(a > b, a, b)       # the CLI's --interface does this
    return module.latency


def shared_place_nets(n: int = 100) -> list:
    """The first ``n`` random nets with shared places, drawn deterministically."""
    from hypothesis import HealthCheck, Phase, given, settings
    sys.path.insert(0, str(ROOT / "tests"))
    from lpn_random import nets
    drawn = []

    @settings(max_examples=4 * n, derandomize=True, database=None, deadline=None,
              phases=[Phase.generate], suppress_health_check=list(HealthCheck))
    @given(nets(max_places=4, max_transitions=4))
    def collect(net):
        if len(drawn) < n and shared_places(net[0]):
            drawn.append(net)
    collect()
    return drawn


def _runs(model, tokens) -> semantics.Run:
    return semantics.run(model, model.marking(tokens).tokens, max_commits=4000)


def recheck(model, space, given_tokens, r, rng) -> bool:
    """Whether a decided result survives simulation (see the module docstring)."""
    if r.status == "does not finish":
        stuck = _runs(model, {p: [(t["a"], t["b"]) for t in ts]
                              for p, ts in r.witness.tokens.items()})
        return stuck.stopped is not None or stuck.latency is None
    if r.status != "proved":
        return True
    if r.simulated != r.bound:
        return False
    for _ in range(200):
        run = _runs(model, {p: [(rng.randint(0, 3), rng.randint(0, 3)) for _ in v]
                            for p, v in given_tokens.items()})
        if run.stopped is not None or run.latency is None or \
                (run.latency > r.bound if r.which == "max" else run.latency < r.bound):
            return False
    return True


def provable_nets(n: int = 50) -> tuple[list, int]:
    """The first ``n`` acyclic random nets with shared places that finish on every input
    of their space, with their true extremes: ([(seed, model, tokens, M, m, inputs)],
    seeds drawn)."""
    sys.path.insert(0, str(ROOT / "tests"))
    from lpn_random import acyclic_net, exhaustive_extremes
    out, seed = [], 0
    while len(out) < n:
        net = acyclic_net(seed)
        seed += 1
        if net is None or not shared_places(net[0]):
            continue
        model, given_tokens, _ = net
        extremes = exhaustive_extremes(model, given_tokens)
        if extremes is not None:
            top, _, bottom, _, inputs = extremes
            out.append((seed - 1, model, given_tokens, top, bottom, inputs))
    return out, seed


def _breaks(model, prop: str, r) -> bool:
    """Whether a refutation's counterexample, run by the reference semantics, really
    breaks ``prop`` (``latency <= X`` or ``latency >= X``)."""
    run = _runs(model, {p: [(t["a"], t["b"]) for t in ts]
                        for p, ts in r.counterexample.tokens.items()})
    if run.stopped is not None or run.latency is None:
        return False                     # every net of the population finishes
    bound = int(prop.split()[-1])
    return run.latency > bound if "<=" in prop else run.latency < bound


def provable_queries(n: int = 50) -> tuple[collections.Counter, int, int]:
    """The four property queries per provable net (see the module docstring): prints
    the verdict counts; returns (verdicts, provable queries proved, unsound)."""
    nets, seeds = provable_nets(n)
    began = time.perf_counter()
    verdicts, proved, unsound, slowest = collections.Counter(), 0, 0, 0.0
    for _seed, model, given_tokens, top, bottom, _ in nets:
        space = _small_space(model, given_tokens)
        for prop, provable in ((f"latency <= {top}", True), (f"latency <= {top - 1}", False),
                               (f"latency >= {bottom}", True),
                               (f"latency >= {bottom + 1}", False)):
            r, seconds = timed(lambda: prove(model, space, prop, timeout=10))
            slowest = max(slowest, seconds)
            verdict = {True: "proved", False: "refuted"}.get(
                r.holds, "timeout" if "time budget" in r.note else "unknown")
            verdicts[verdict] += 1
            proved += provable and r.holds is True
            unsound += (r.holds is False and (provable or not _breaks(model, prop, r))) or \
                (r.holds is True and not provable)
    inputs = collections.Counter(x[5] for x in nets)
    print(f"provable nets: {len(nets)} of the acyclic nets drawn from seeds 0..{seeds - 1} "
          f"finish on every input (inputs per space: "
          f"{', '.join(f'{k} x {v}' for k, v in sorted(inputs.items()))}, every one "
          f"simulated); {sum(verdicts.values())} queries in "
          f"{time.perf_counter() - began:.1f} s, slowest {slowest:.2f} s")
    print(f"provable nets: proved {verdicts['proved']}, refuted {verdicts['refuted']}, "
          f"unknown {verdicts['unknown']}, timeout {verdicts['timeout']} "
          f"(of {2 * len(nets)} provable and {2 * len(nets)} refutable queries)")
    return verdicts, proved, unsound


def _small_space(model, given_tokens):
    return space_from_dict(model, {"places": {
        p: {"count": len(v), "properties": {"a": [0, 3], "b": [0, 3]}}
        for p, v in given_tokens.items()}})


def shared_place_queries(n: int = 100) -> None:
    """Bound queries on random nets with shared places, then the provable population's
    queries; prints the three headline figures."""
    rng = random.Random(0)
    verdicts, unsound, slowest = collections.Counter(), 0, 0.0
    began = time.perf_counter()
    for model, given_tokens, _ in shared_place_nets(n):
        space = _small_space(model, given_tokens)
        for which in ("max", "min"):
            r, seconds = timed(lambda: latency_bound(model, space, which, timeout=10))
            slowest = max(slowest, seconds)
            verdicts[r.status] += 1
            unsound += not recheck(model, space, given_tokens, r, rng)
    total = sum(verdicts.values())
    decided = verdicts["proved"] + verdicts["does not finish"] + verdicts["empty"]
    print(f"shared places: {total} bound queries on {n} random nets in "
          f"{time.perf_counter() - began:.1f} s ({dict(verdicts)}); slowest query "
          f"{slowest:.2f} s")
    more, proved, wrong = provable_queries()
    provable = sum(more.values()) // 2
    print(f"shared_place_proved: {proved / provable:.2f}")
    decided += more["proved"] + more["refuted"]
    print(f"shared_place_decided: {decided / (total + sum(more.values())):.2f}")
    print(f"unsound: {unsound + wrong}")


def main():
    if "--shared" in sys.argv[1:]:
        shared_place_queries()
        return
    if "--provable" in sys.argv[1:]:
        args = sys.argv[1:]
        verdicts, proved, unsound = provable_queries(
            int(args[args.index("--nets") + 1]) if "--nets" in args else 50)
        print(f"shared_place_proved: {proved / (sum(verdicts.values()) // 2):.2f}")
        print(f"unsound: {unsound}")
        return
    model = build("jpeg-decoder")
    rng = random.Random(1)
    seen, baseline = timed(lambda: [simulate(model, [rng.randint(1, 63) for _ in range(18)])
                                    .latency for _ in range(300)])
    print(f"baseline: 300 random 18-block inputs simulated in {baseline:.2f} s, latencies "
          f"{min(seen)}..{max(seen)}")
    results = {}
    for space_file in ("jpeg-decoder-18-blocks.toml", "jpeg-decoder-18-blocks-90pct.toml"):
        space = load_space(model, SPACES / space_file)
        for which in ("max", "min"):
            r, seconds = timed(lambda: latency_bound(model, space, which))
            results[(space_file, which)] = seconds
            print(f"{space_file:36s} {which}: {r.bound} cycles ({r.status}), witness "
                  f"simulates to {r.simulated}, {seconds:.2f} s = "
                  f"{seconds / baseline:.2f}x the baseline")
    space = load_space(model, SPACES / "jpeg-decoder-18-blocks.toml")
    for tolerance in (0.43, 0.10):
        r, seconds = timed(lambda: within(interface(), space, model, tolerance))
        print(f"interface within {tolerance:.0%}: {r.holds} {r.values or ''} {seconds:.2f} s "
              f"= {seconds / baseline:.2f}x the baseline")
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "jpeg_iface.py"
        with contextlib.redirect_stdout(io.StringIO()):        # its summary: not a figure
            assert cli(["lpn", "interface", "jpeg-decoder", "--out", str(out)]) == 0
        for tolerance in (0.43, 0.10):
            r, seconds = timed(lambda: within(
                lambda _x: generated_interface_term(out.read_text(), space.variables(model)),
                space, model, tolerance))
            print(f"generated interface within {tolerance:.0%}: {r.holds} {r.values or ''} "
                  f"{seconds:.2f} s = {seconds / baseline:.2f}x the baseline")
    for budget in ("latency <= 3836", "stall <= 0.65"):
        r, seconds = timed(lambda: size_buffer(model, space, "coeff_slots", range(1, 33),
                                               budget))
        print(f"buffer sizing: smallest coeff_slots with {budget!r} on every input: "
              f"{r.size} ({', '.join(f'{t.size}: {_show(t.value)}' for t in r.tried)}),"
              f" {seconds:.2f} s = {seconds / baseline:.2f}x the baseline")
    r, seconds = timed(lambda: optimal_size(model, space, "coeff_slots", range(1, 33)))
    print(f"buffer sizing: coeff_slots with the least worst case in 1..32: {r.size} "
          f"({r.chosen.value} cycles; size 1: {r.tried[0].value}), {seconds:.2f} s = "
          f"{seconds / baseline:.2f}x the baseline")
    shared_place_queries()
    print(f"jpeg18_max_bound_seconds: "
          f"{results[('jpeg-decoder-18-blocks.toml', 'max')]:.2f}")


if __name__ == "__main__":
    main()
