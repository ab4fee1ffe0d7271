"""Exit statuses a script relies on: `lpn verify` 0 proved, 1 refuted, 3 undecided, 2 bad
input; `lpn interface --check` 1 when an input misses by more than --tolerance."""

import json
from pathlib import Path

import pytest

from accelperf.cli import main
from accelperf.cli.lpn import PROVED, REFUTED, UNDECIDED, verdict_status

ROOT = Path(__file__).resolve().parents[1]
SPACE = str(ROOT / "examples/spaces/jpeg-decoder-18-blocks-90pct.toml")
PLAIN = str(ROOT / "examples/interfaces/jpeg_decoder_plain.py")


def verify_json(capsys, *args):
    code = main(["lpn", "verify", "jpeg-decoder", "--space", SPACE, *args, "--json"])
    return code, json.loads(capsys.readouterr().out)


def test_a_refuted_property_exits_1_with_its_counterexample(capsys):
    code, out = verify_json(capsys, "--prove", "latency <= 1000")
    assert code == REFUTED == 1
    assert out["holds"] is False and len(out["counterexample"]) == 18
    assert out["values"]["latency"] > 1000


def test_a_proved_property_exits_0(capsys):
    code, out = verify_json(capsys, "--prove", "latency <= 2300")
    assert code == PROVED == 0 and out["holds"] is True


def test_an_interface_out_of_bounds_exits_1(capsys):
    code, out = verify_json(capsys, "--interface", PLAIN, "--within", "0.01")
    assert code == 1 and out["holds"] is False


def test_no_size_meeting_the_budget_exits_1(capsys):
    code, out = verify_json(capsys, "--size", "coeff_slots", "--range", "1..2", "--budget",
                            "latency <= 1000")
    assert code == 1 and out["size"] is None and out["status"] == "proved"


def test_plain_text_output_gets_the_same_status(capsys):
    code = main(["lpn", "verify", "jpeg-decoder", "--space", SPACE, "--prove",
                 "latency <= 1000"])
    assert code == 1 and "fails" in capsys.readouterr().out


@pytest.mark.parametrize("result,status", [
    ({"holds": True}, PROVED), ({"holds": False}, REFUTED), ({"holds": "unknown"}, UNDECIDED),
    ({"bound": 10, "status": "proved"}, PROVED),
    ({"bound": 10, "status": "unknown"}, UNDECIDED),
    ({"bound": None, "status": "unknown"}, UNDECIDED),
    ({"bound": None, "status": "does not finish"}, REFUTED),
    ({"size": 3, "status": "proved"}, PROVED), ({"size": None, "status": "proved"}, REFUTED),
    ({"size": None, "status": "unknown"}, UNDECIDED),
])
def test_verdict_status_of_every_result_shape(result, status):
    assert verdict_status(result) == status
    assert UNDECIDED == 3


def test_interface_check_over_tolerance_exits_1(capsys):
    # the plain form (the by-phase module replays the decoder exactly: no error to exceed)
    inputs = ["[1,1,1,1,1,1]", "[63,63,63,63,63,63]"]
    assert main(["lpn", "interface", "jpeg-decoder", "--plain", "--check", *inputs,
                 "--tolerance", "0.5", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    worst = out["max_error"]
    assert 0 < worst < 0.5
    assert main(["lpn", "interface", "jpeg-decoder", "--plain", "--check", *inputs,
                 "--tolerance", str(worst / 2)]) == 1
    assert "over the tolerance" in capsys.readouterr().out
