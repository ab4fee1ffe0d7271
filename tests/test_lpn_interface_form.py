"""Issue 23 item 1: `lpn interface` makes the form (plain §4.2 max, or by phase) that is more
accurate on the space's own samples the module's default, says which with both errors,
and --phases / --plain force one."""

import json
import types

import pytest

from accelperf.lpn import simulate
from accelperf.lpn.analysis.accuracy import (FormChoice, choose_form, sampled_inputs,
                                             whole_periods)
from accelperf.lpn.analysis.emit import load_module, module_source
from accelperf.lpn.analysis.interface import extract_interface
from accelperf.lpn.analysis.space import default_space
from accelperf.lpn.library import build, darwin_latency_formula
from extracted import default_interface

PAIRS = [dict(ref_len=320, query_len=128, steps=180), dict(ref_len=1000, query_len=400,
                                                             steps=999),
         dict(ref_len=17, query_len=4, steps=1), dict(ref_len=2000, query_len=8000, steps=5000)]


def test_darwin_default_module_is_fig6(cli, tmp_path):
    out = tmp_path / "darwin_iface.py"
    code, text, _ = cli("lpn", "interface", "darwin", "--out", str(out))
    assert code == 0
    assert "default form: by phase" in text and "plain" in text
    module = load_module(out.read_text())
    assert module.PHASES is True
    assert "Default form: by phase: on " in module.__doc__
    darwin = build("darwin")
    for pair in PAIRS:
        assert module.latency(pair) == darwin_latency_formula(**pair) == \
            simulate(darwin, pair).latency


def test_json_says_which_form_and_both_errors(cli):
    code, out, _ = cli("lpn", "interface", "darwin", "--json")
    assert code == 0
    assert json.loads(out)["classes"][0]["grouped"] == []
    form = json.loads(out)["default_form"]
    assert form["form"] == "phases" and form["forced"] is False and form["inputs"] >= 1
    assert form["phases_max_error"] == 0 < form["plain_mean_error"] <= form["plain_max_error"]


@pytest.mark.parametrize("flag, phases", [("--plain", False), ("--phases", True)])
def test_a_flag_forces_the_form(cli, tmp_path, flag, phases):
    out = tmp_path / "m.py"
    code, text, _ = cli("lpn", "interface", "darwin", flag, "--out", str(out))
    assert code == 0 and "(forced)" in text
    assert load_module(out.read_text()).PHASES is phases
    code, text, _ = cli("lpn", "interface", "darwin", flag, "--json")
    assert json.loads(text)["default_form"] == {"form": "phases" if phases else "plain",
                                                "forced": True}


def test_both_flags_are_one_line_exit_2(cli):
    code, _, err = cli("lpn", "interface", "darwin", "--plain", "--phases")
    assert code == 2 and "--phases and --plain" in err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err


def test_the_choice_follows_the_errors():
    """choose_form picks the form with the lower mean error: a module whose phase-aware
    form is off by 10% while its plain form is the simulation itself gets plain."""
    model = build("darwin")
    iface = extract_interface(model, default_space(model))
    inputs = sampled_inputs(model, iface)
    assert len(inputs) >= 3
    from accelperf.lpn.analysis.classes import marking_of
    truth = {json.dumps(x, sort_keys=True): simulate(model, marking_of(model, x)).latency
             for x in inputs}

    def latency(x, phases=None):
        exact = truth[json.dumps(x, sort_keys=True)]
        return exact * 1.1 if phases else exact

    choice = choose_form(model, iface, types.SimpleNamespace(latency=latency))
    assert isinstance(choice, FormChoice) and choice.phases is False
    assert choice.plain.max_error == 0 and choice.phased.mean_error == pytest.approx(0.1)
    real = choose_form(model, iface, load_module(module_source(iface, model, "darwin")))
    assert real.phases is True and real.phased.max_error == 0 < real.plain.mean_error


def test_the_jpeg_chooser_samples_whole_mcus_that_run(cli):
    """The decoder deadlocks on a stream that is not whole MCUs of 6 blocks: the chooser
    draws whole periods (the recurrence's), so every sampled input runs and counts."""
    model, iface = default_interface("jpeg-decoder")
    assert whole_periods(iface.classes[0]) == {"blocks": 6}
    inputs = sampled_inputs(model, iface)
    assert len(inputs) >= 4 and all(len(x["blocks"]) % 6 == 0 for x in inputs)
    from accelperf.lpn.analysis.classes import marking_of
    assert all(simulate(model, marking_of(model, x)).latency > 0 for x in inputs)
    code, out, _ = cli("lpn", "interface", "jpeg-decoder", "--json")
    assert code == 0 and json.loads(out)["default_form"]["inputs"] == len(inputs)


def test_the_printed_by_phase_form_is_what_the_module_replays(cli):
    """With a period recurrence the module replays the stream period by period: the
    printed by-phase line says so (not the full-pipeline closed form), and --check of
    that form agrees with the simulation exactly."""
    code, out, _ = cli("lpn", "interface", "jpeg-decoder", "--phases")
    assert code == 0
    assert "by phase = period replay of blocks (6 token(s) a period, 16 firing(s) each) " \
           "+ parse_header phase (0)" in out
    assert "period replay (closed form, pipeline full: " in out
    code, out, _ = cli("lpn", "interface", "jpeg-decoder", "--json")
    assert json.loads(out)["classes"][0]["phased_form"].startswith("period replay of blocks")
    code, out, _ = cli("lpn", "interface", "jpeg-decoder", "--phases", "--tolerance", "1e-9",
                       "--check", "[1, 5, 63, 2, 9, 30, 40, 3, 17, 22, 9, 31]",
                       "[63, 63, 63, 63, 63, 63]")
    assert code == 0 and "max error 0.00%" in out, out
    # a partial MCU is bad input: one line, exit 2 (it was an internal error)
    code, _, err = cli("lpn", "interface", "jpeg-decoder", "--check", "[63]")
    assert code == 2 and "INPUT = '[63]' is invalid for --check" in err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
    code, out, _ = cli("lpn", "interface", "darwin")       # no recurrence: the formula
    assert "by phase = 3*alignment_0_steps + n_stripes*(mean_stripes_ref_len + 6) + 6" in out


def test_a_typed_module_defaults_to_the_better_form():
    """A multi-type module built in Python without ``phases`` measures both forms on
    every type's samples and defaults to the better one (issue 23 item 1; it was plain).
    Small Protoacc messages (the authors' one_scalar and one_string beside the default
    message) sit between their processing floor and their write-back: measured plain
    64% / 48% low on resized ones, by phase exact."""
    from protoacc_types import AUTHORS, resized

    from accelperf.lpn.analysis.accuracy import check
    from accelperf.lpn.analysis.emit import typed_module_source
    from accelperf.lpn.analysis.space import structure_space
    model = build("protoacc")
    own = {c["name"]: c["message"] for c in json.loads(AUTHORS.read_text())["own_inputs"]}
    types_ = {t: own[t] for t in ("default", "one_scalar", "one_string")}
    ifaces = {t: extract_interface(model, structure_space(model, x))
              for t, x in types_.items()}
    module = load_module(typed_module_source(ifaces, model, "protoacc"))
    assert module.PHASES is True
    assert "Default form: by phase: on " in module.__doc__ and " plain " in module.__doc__
    rng = __import__("random").Random(10)
    small = [[m] for x in types_.values() for m in [x] + [resized(x, rng) for _ in range(4)]]
    assert check(model, module, small).max_error <= 0.10      # measured 0.00%
    assert check(model, module, small, phases=False).max_error > 0.10   # measured 64%
    # a forced form is kept, and says it is the default without errors
    plain = load_module(typed_module_source(ifaces, model, "protoacc", phases=False))
    assert plain.PHASES is False and "Default form: plain; " in plain.__doc__
