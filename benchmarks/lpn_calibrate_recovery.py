"""Does calibration find known truths? (issue 35, item 1)

For every library model with parameters, TRUTHS seeded random truths: 2–4 of its delays
(its only one, for models with one) changed by a factor drawn from 0.6..2.0 (−40 % ..
+100 %; rounded, at least one cycle away from the default, within the delay's bounds).
INPUTS generated inputs per truth (seeded, per model below), simulated with the true
delays: **clean** (the exact latencies) and **noisy** (each × (1 + ε), ε ~ N(0, 2 %)).
The first 60 % of the inputs are fitted (from the defaults, by the same search ``lpn
calibrate`` runs: :meth:`Fitter.optimum`, 3 starts), the other 40 % held out.

**Recovered** (clean data), precisely: the fit meets every training measurement exactly
(cost 0, so every combination of delays the training inputs determine has its true
value), *and* every delay whose fitted value differs from its true value is one the tool
reports as not identified (:func:`accelperf.lpn.identify.identify` on the training
Jacobian at the fit: no input sensitive to it, or confounded; judged as ``lpn calibrate``
judges it: the Jacobian by a step to each delay's plateau edge,
:meth:`Fitter.edge_jacobian`, and a delay the fit moved is never "no input sensitive",
:func:`accelperf.lpn.calibrate.settled`. Before, the one-unit Jacobian called a
quantised delay that sat inside its plateau at the fit dead, which excused its wrong
value whatever its interval said) or whose reported interval
holds the true value (the profile interval, which at cost 0 is exactly the run of whole
values that fit the training data equally, the other delays refitted — moved along a
quantised partner's plateau where needed, :meth:`Fitter.along_plateaus`: a delay the
latency is quantised in, such as a link's bytes per cycle with its header bytes, is flat
over a range). Such a delay is one ``lpn calibrate`` reports as not identified: on an
exact fit, a profile interval of more than one value marks it *flat*
(``Identification.flat``, ``"identified": false``, "values a..b of X fit the data
equally"). A truth the generated inputs cannot pin down thus counts as recovered only
when the tool says so, with an interval that covers it, and matches the data exactly; a
delay reported as determined must equal its true value. Nothing else is loosened: a fit
that stops above cost 0, or a wrong delay reported as determined, is a miss.

**Held-out error** (noisy data): mean |relative error| of the fitted model on the held-out
40 % against their noisy measurements, beside the defaults' (the model-free baseline:
no calibration at all) on the same rows; the noise floor itself is about 1.6 % (mean |ε|).

Run: PYTHONPATH=src .venv/bin/python benchmarks/lpn_calibrate_recovery.py [MODEL ...]
(TRUTHS = 2 and INPUTS = 10: 1,129 s wall, 225 s of CPU, on the shared 2-core machine
under a load average of 7 to 9, the code before the valley phase run beside it for most
of that time taking 1,296 s and 221 s; Protoacc and the PCIe decoder most of it; the
printed seconds are per model, wall). Last line: ``clean_recovery: X`` (target 1.00;
measured 0.95, 21 of 22, as before the valley phase but not the same 21: the PCIe
decoder's second truth, where the search stopped at a relative cost of 8.7e-7 on a valley
of level cost between the link latency and colour_cycles, now reaches cost 0 with
intervals that hold the truth; pipeline-over-link's second truth is a miss under the
stricter judging above: an exact fit at 49 header bytes whose profile interval, 37..55,
leaves out the true 31 (28..34 fit exactly too; the exact fits are not one run), which
the one-unit Jacobian had excused by calling the header dead: see
docs/how-to/calibrate.md).
"""

from __future__ import annotations

import random
import sys
import time
from pathlib import Path

import numpy as np

from accelperf.lpn import simulate
from accelperf.lpn.calibrate import Measurement, settled
from accelperf.lpn.fitter import Fitter
from accelperf.lpn.identify import identify
from accelperf.lpn.inputs import read_jpeg
from accelperf.lpn.library import LIBRARY, build
from accelperf.lpn.uncertainty import profile_walk

ROOT = Path(__file__).parents[1]
TRUTHS = 2
INPUTS = 10
TRAIN = 0.6
NOISE = 0.02
SEED = 35


def _message(rng, depth=0):
    fields = {}
    for k in range(rng.randint(1, 4)):
        kind = rng.choice(["scalar", "nonscalar", "submessage"][:3 if depth == 0 else 2])
        if kind == "submessage":
            fields[f"f{k + 1}"] = {"type": kind, "is_repeated": False,
                                   "data": _message(rng, depth + 1)}
            continue
        repeated = rng.random() < 0.4
        size = (lambda: rng.choice([4, 8])) if kind == "scalar" else \
            (lambda: rng.randint(1, 200))
        fields[f"f{k + 1}"] = {"type": kind, "is_repeated": repeated,
                               "data": [size() for _ in range(rng.randint(2, 4) if repeated
                                                              else 1)]}
    return fields


def _blocks(rng, per=1):
    return [rng.choice((0, 2, 8, 20, 40, 63)) for _ in range(per * rng.randint(1, 12))]


def _load_compute_pairs(rng):
    """fig2's programs: each load (kind 0) feeds its operands to the compute after it."""
    out = []
    for _ in range(rng.randint(1, 7)):
        k = rng.randint(0, 4)
        out += [(0, rng.randint(5, 50), k), (1, rng.randint(2, 30), k)]
    return out


_IMAGES = sorted(p for folder in ("examples/images", "examples/measurements/core_jpeg")
                 for p in (ROOT / folder).glob("*.jpg") if p.stat().st_size < 12_000)
_PROGRAM = (ROOT / "examples/inputs/program.insns").read_text().splitlines()

GENERATORS = {
    "fig2-pipeline": lambda rng: _load_compute_pairs(rng),
    "jpeg-decoder": lambda rng: (read_jpeg(rng.choice(_IMAGES)) if rng.random() < 0.4
                                 else _blocks(rng, 6)),
    "jpeg-decoder-pcie": lambda rng: read_jpeg(rng.choice(_IMAGES)),   # the link needs bytes
    "block-pipeline": lambda rng: _blocks(rng),
    "darwin": lambda rng: {"ref_len": rng.randint(32, 400), "query_len": rng.randint(16, 256),
                           "steps": rng.randint(10, 300)},
    "credit-link": lambda rng: [rng.choice((1, 64, 256, 1500, 4096, 65536, rng.randint(1, 9000)))
                                for _ in range(rng.randint(1, 6))],
    "pipeline-over-link": lambda rng: {"width": 8 * rng.randint(1, 6),
                                       "height": 8 * rng.randint(1, 6),
                                       "mean_nnz": rng.randint(0, 40), "seed": rng.randint(0, 99)},
    "protoacc": _message,
    "menshen": lambda rng: [rng.choice(([rng.randint(1, 4), 1, 0, 0], [rng.randint(2, 30), 0, 1, 0],
                                        [rng.randint(2, 30), 0, 0, 1]))
                            for _ in range(rng.randint(1, 12))],
    "vta": lambda rng: _PROGRAM[:rng.randint(2, len(_PROGRAM))],
    "aes-gcm": lambda rng: [rng.randint(1, 1500) for _ in range(rng.randint(1, 8))],
}


def truth(model, rng) -> dict[str, int]:
    params = list(model.parameters)
    changed = rng.sample(params, min(len(params), rng.randint(2, 4)))
    out = {}
    for p in changed:
        v = round(p.value * rng.uniform(0.6, 2.0))
        if v == p.value:
            v += 1
        if p.minimum is not None:
            v = max(v, p.minimum)
        if p.maximum is not None:
            v = min(v, p.maximum)
        if v != p.value:
            out[p.name] = v
    return out


def inputs_for(name, model, rng) -> list:
    """INPUTS distinct generated inputs the model runs to the end."""
    out, tries = [], 0
    while len(out) < INPUTS and tries < 20 * INPUTS:
        tries += 1
        x = GENERATORS[name](rng)
        if any(repr(x) == repr(y) for y in out):
            continue
        try:
            if simulate(model, x, backend="auto").latency <= 0:
                continue           # nothing to time (e.g. only dropped packets)
        except Exception:          # noqa: BLE001  a generated input the model rejects
            continue
        out.append(x)
    if len(out) < INPUTS:
        raise SystemExit(f"{name}: only {len(out)} of {INPUTS} generated inputs run")
    return out


def reaches(fitter, fit, names, rows, name, target) -> bool:
    """Whether ``name``'s profile interval at cost 0 holds ``target``: the profile's own
    walk (:func:`~accelperf.lpn.uncertainty.profile_walk`), stopped at the target."""
    direction = 1 if target > fit[name] else -1
    steps = abs(target - fit[name])
    end, _ = profile_walk(fitter, fit, names, rows, name, direction, 0.0, steps)
    return end == target


def one_case(name, true, inputs, noise_rng) -> tuple[bool, float, float]:
    model = build(name, true)
    exact = [simulate(model, x, backend="auto").latency for x in inputs]
    n_train = round(TRAIN * len(inputs))
    builder = lambda v: build(name, v)                        # noqa: E731
    defaults = {p.name: p.value for p in build(name).parameters}
    names = list(defaults)

    clean = [Measurement(f"x{k}", x, c) for k, (x, c) in enumerate(zip(inputs, exact))]
    fitter = Fitter(builder, clean[:n_train])
    rows = np.arange(n_train)
    fit = fitter.optimum(defaults, names, rows).values
    found = settled(identify(fitter.edge_jacobian(fit, names, rows), names), fit, defaults)
    wrong = {n for n in names if fit[n] != true.get(n, defaults[n])}
    recovered = fitter.cost(fit, rows) == 0 and all(
        reaches(fitter, fit, names, rows, n, true.get(n, defaults[n]))
        for n in sorted(wrong - found.unidentified))

    noisy = [Measurement(m.name, m.input, m.cycles * (1 + noise_rng.gauss(0, NOISE)))
             for m in clean]
    fit = Fitter(builder, noisy[:n_train]).optimum(defaults, names, rows).values
    held = Fitter(builder, noisy[n_train:])         # predicts the held-out rows
    every = np.arange(len(noisy) - n_train)
    return (recovered, float(np.abs(held.residuals(fit, every)).mean()),
            float(np.abs(held.residuals(defaults, every)).mean()))


def main() -> None:
    total, recovered_all = 0, 0
    for name in (sys.argv[1:] or LIBRARY):
        start = time.perf_counter()
        model = build(name)
        rng, noise_rng = random.Random(f"{SEED}-{name}"), random.Random(f"{SEED}-noise-{name}")
        hits, held, base = 0, [], []
        for _ in range(TRUTHS):
            true = truth(model, rng)
            inputs = inputs_for(name, build(name, true), rng)
            ok, err, err0 = one_case(name, true, inputs, noise_rng)
            hits += ok
            held.append(err)
            base.append(err0)
            if not ok:
                print(f"  {name}: missed truth {true}")
        total += TRUTHS
        recovered_all += hits
        print(f"{name}: clean recovered {hits}/{TRUTHS}; held-out error under {NOISE:.0%} "
              f"noise {np.mean(held):.2%} (defaults {np.mean(base):.2%}); "
              f"{time.perf_counter() - start:.0f} s")
    print(f"clean_recovery: {recovered_all / total:.2f}")


if __name__ == "__main__":
    main()
