"""The calibrated JPEG decoder's emitted --phases interface against the core's RTL (issue 21's
target for the interface: mean <= 0.5%, max <= 1.5% on the validation images), from the
committed Verilator measurements; no Verilator needed."""

import csv
import tomllib
from pathlib import Path

import pytest

from accelperf.lpn.analysis.emit import load_module, module_source
from accelperf.lpn.analysis.interface import extract_interface
from accelperf.lpn.analysis.space import default_space
from accelperf.lpn.inputs import read_jpeg
from accelperf.lpn.library import build

ROOT = Path(__file__).parents[1]
DATA = ROOT / "examples/measurements/core_jpeg_verilator.csv"
TRAIN = ROOT / "examples/measurements/core_jpeg_train.csv"
PARAMS = tomllib.loads((ROOT / "examples/params/core_jpeg.toml").read_text())["parameters"]


def _rows(path):
    with path.open(newline="") as fh:
        return list(csv.DictReader(line for line in fh if not line.startswith("#")))


@pytest.fixture(scope="module")
def calibrated_module():
    model = build("jpeg-decoder", PARAMS)
    iface = extract_interface(model, default_space(model))
    return load_module(module_source(iface, model, "jpeg-decoder", phases=True))


def test_the_emitted_interface_meets_the_rtl_targets(calibrated_module):
    trained = {r["input"] for r in _rows(TRAIN)}
    errors = []
    for row in _rows(DATA):
        if row["input"] in trained:
            continue
        image = read_jpeg(DATA.parent / row["input"])
        tokens = {"blocks": [{"symbols": int(s)} for s in image.symbols],
                  "header": [{"bytes": image.header_bytes}]}
        cycles = int(row["cycles"])
        errors.append(abs(calibrated_module.latency(tokens) - cycles) / cycles)
    assert len(errors) >= 40
    assert sum(errors) / len(errors) <= 0.005 and max(errors) <= 0.015


def test_the_module_reads_the_header_from_the_file(calibrated_module):
    # A file gives the header stage its bytes: header_per_byte·bytes + header_base cycles
    # in series before the blocks; a list of symbol counts has no header.
    photo = DATA.parent / "core_jpeg/astronaut_16x16_q75_420.jpg"
    image = read_jpeg(photo)
    header = PARAMS["header_per_byte"] * image.header_bytes + PARAMS["header_base"]
    symbols = [int(s) for s in image.symbols]
    assert calibrated_module.latency(str(photo)) == \
        calibrated_module.latency(symbols) + header
    assert calibrated_module.phases(str(photo))[0] == ("parse_header", 1, header)
