"""The JPEG decoder's LPN calibrated against its own RTL (issue 21's targets).

Data: examples/measurements/core_jpeg_verilator.csv (core_jpeg simulated with Verilator,
cycles from the first input byte to the last pixel; see examples/measurements/README.md).
Training set: examples/measurements/core_jpeg_train.csv, at most TRAIN images, every third
of the images of at most 2,000 blocks in size order (16x16 and up; RTL runs of small
images are the cheap ones to make); validation: every other image
(photos up to 21,600 blocks included). ``accelperf lpn calibrate jpeg-decoder --measured
examples/measurements/core_jpeg_train.csv --out examples/params/core_jpeg.toml`` wrote
the shipped parameter file from the same rows.

Figures, each against the RTL cycles of the validation images:
* the authors' model (default parameters), simulated;
* the calibrated model, simulated;
* the calibrated model's ``--phases`` interface: the emitted module alone, given the
  file (its header stage is a one-shot phase in series before the block stream,
  derived from the net; docs/explanation/interfaces.md);
* seconds to calibrate, as a ratio against simulating the training set once with the
  authors' model in the same process, on the engine the fit uses (``backend="auto"``:
  compiled when a C compiler is found).

Run: .venv/bin/python benchmarks/lpn_calibrate.py     (about a minute on 2 cores)
Last line: ``calibrated_max_error: X`` (simulation, validation set, relative).
"""

from __future__ import annotations

import csv
import time
from pathlib import Path

from accelperf.lpn import simulate
from accelperf.lpn.analysis.interfaces.emit import load_module, module_source
from accelperf.lpn.analysis.interfaces.interface import extract_interface
from accelperf.lpn.analysis.space import default_space
from accelperf.lpn.calibrate import Measurement, calibrate
from accelperf.lpn.inputs import read_jpeg
from accelperf.lpn.library import build

DATA = Path(__file__).parents[1] / "examples/measurements/core_jpeg_verilator.csv"
TRAIN_CSV = DATA.parent / "core_jpeg_train.csv"      # the same rows `lpn calibrate` reads
TRAIN = 10
SMALL = 2000            # blocks: training images are at most this large


def rows():
    with DATA.open(newline="") as fh:
        out = []
        for r in csv.DictReader(line for line in fh if not line.startswith("#")):
            image = read_jpeg(DATA.parent / r["input"])
            out.append(Measurement(r["input"], image, int(r["cycles"])))
    return out


def split(measured):
    """The rows of core_jpeg_train.csv (written by this rule: every third image of at most
    SMALL blocks, in size order, at most TRAIN) and the others."""
    small = sorted((m for m in measured if m.input.blocks <= SMALL),
                   key=lambda m: (m.input.blocks, m.name))
    train = small[::3][:TRAIN]
    with TRAIN_CSV.open(newline="") as fh:
        shipped = {r["input"] for r in csv.DictReader(l for l in fh if not l.startswith("#"))}
    if shipped != {m.name for m in train}:
        raise SystemExit(f"{TRAIN_CSV} is not the training rule's set: rewrite it")
    return train, [m for m in measured if m.name not in shipped]


def errors(predicted, measured):
    e = [abs(p - m.cycles) / m.cycles for p, m in zip(predicted, measured)]
    return sum(e) / len(e), max(e), measured[e.index(max(e))].name


def main() -> None:
    measured = rows()
    train, test = split(measured)
    print(f"{len(measured)} RTL measurements; training on {len(train)} images "
          f"({min(m.input.blocks for m in train)}..{max(m.input.blocks for m in train)} "
          f"blocks), validating on {len(test)} "
          f"({min(m.input.blocks for m in test)}..{max(m.input.blocks for m in test)} blocks)")
    authors = build("jpeg-decoder")
    # The baseline is one pass on the engine the fit uses (compiled when a C compiler is
    # found), compiled and warmed first so the ratio counts simulations, not the compiler.
    simulate(authors, train[0].input, backend="auto")
    start = time.perf_counter()
    for m in train:
        simulate(authors, m.input, backend="auto")
    one_pass = time.perf_counter() - start

    start = time.perf_counter()
    fit = calibrate(lambda values: build("jpeg-decoder", values), train)
    seconds = time.perf_counter() - start
    print(fit)
    for p in fit.parameters:
        err = "—" if p.stderr is None else f"{p.stderr:.3g}"
        print(f"  {p.name}: {p.default} -> {p.fitted} (std. error {err})")
    for w in fit.warnings:
        print(f"  warning: {w}")
    cv = fit.cross_validated
    print(f"training error after: mean {fit.after.mean:.3%}, max {fit.after.max:.3%}; "
          f"{len(train)}-image {min(5, len(train))}-fold cross-validated: mean {cv.mean:.3%}, "
          f"max {cv.max:.3%}")

    calibrated = build("jpeg-decoder", fit.values())
    before = [simulate(authors, m.input).latency for m in test]
    after = [simulate(calibrated, m.input).latency for m in test]
    iface = extract_interface(calibrated, default_space(calibrated))
    module = load_module(module_source(iface, calibrated, "jpeg-decoder", phases=True))
    by_phase = [module.latency(str(DATA.parent / m.name), phases=True) for m in test]
    tiny = [m for m in test if m.input.blocks <= 6]
    large = [m for m in test if m.input.blocks >= 1000]
    for label, pred in (("authors' model, simulated", before), ("calibrated, simulated", after),
                        ("calibrated, --phases interface", by_phase)):
        mean, worst, name = errors(pred, test)
        sub = lambda group: errors([p for p, m in zip(pred, test) if m in group], group)
        print(f"{label}: mean {mean:.3%}, max {worst:.3%} ({name}); 1,000+ blocks: "
              f"mean {sub(large)[0]:.3%}, max {sub(large)[1]:.3%}; 16x16 (6 blocks): "
              f"max {sub(tiny)[1]:.3%}")
    interface_max = errors(by_phase, test)[1]
    print(f"calibration seconds: {seconds:.1f} ({fit.simulations} simulations; "
          f"{seconds / one_pass:.0f}x one simulation pass over the training set on the same engine)")
    print(f"calibrated_interface_mean_error: {errors(by_phase, test)[0]:.5f}")
    print(f"calibrated_interface_max_error: {interface_max:.5f}")
    print(f"calibrated_max_error: {errors(after, test)[1]:.5f}")


if __name__ == "__main__":
    main()
