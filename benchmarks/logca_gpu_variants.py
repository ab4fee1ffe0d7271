"""Variants of LogCA's GPU fit and term choice, judged as benchmarks/logca_gpu.py judges the
chosen fit (issue 36, the search for what limits prediction on the harness data).

Each variant maps a training set to a fitted curve; for each offload CSV of each DIR it is
fitted on every other size and the rest predicted (held-out error, g1 against the measured
crossing), and with ``--nested`` also by nested cross-validation inside the training half
(each interior size left out, the variant refitted on the rest). Variants:

* ``current``: :func:`accelperf.logca.choose.choose` (forward selection, one or two terms a
  step, ``MIN_GAIN`` 2%);
* ``fixed-hc-floor``, ``fixed-hc-floor-beta``: no choice, those terms always, no layers;
* ``keep-floor``, ``keep-hc-floor``: the floor (and the host constant) always kept, the
  other terms and the layers chosen forward as ``choose`` does;
* ``gain10``: ``choose``'s forward selection with a 10% least gain instead of 2%;
* ``one-se``: the forward path run to its end, then the first term set on it within one
  standard error (over sizes) of the best cross-validated error;
* ``anchored``: ``choose``'s fit anchored at its training points
  (:mod:`accelperf.logca.anchored`).

Run: PYTHONPATH=src .venv/bin/python benchmarks/logca_gpu_variants.py VARIANT[,VARIANT]
[--nested] [DIR ...]; the last line is the last variant's ``variant_holdout_mean_error``.
"""

from __future__ import annotations

import math
import sys
import time
import warnings
from itertools import combinations
from pathlib import Path

import numpy as np

from accelperf.density import hierarchy
from accelperf.logca.anchored import AnchoredSpeedup
from accelperf.logca.choose import choose, supported_layers
from accelperf.logca.fit import measured_crossing, prepare_data
from accelperf.logca.hierarchy import layers_from_hierarchy
from accelperf.logca.holdout import alternate_split, fold_indices, interpolate_neighbours
from accelperf.logca.termfit import MIN_GAIN, TERMS, Spec, free_count, solve, subset
from accelperf.measure.data import read_timings

ROOT = Path(__file__).resolve().parent.parent / "examples" / "measurements"
DIRS = [ROOT / "gpu-h200", ROOT / "gpu-h200-harness", ROOT / "gpu-h100-harness"]
GPU_TERMS = TERMS[:3]            # with an echo run the per-byte latency is never a candidate


def load(directory: Path):
    layers = layers_from_hierarchy(hierarchy(str(directory / "host-layers.toml")))
    for p in sorted(directory.glob("*.csv")):
        t = read_timings(p, "min")
        if t.echo is not None and t.granularity.size >= 10:
            yield p.stem, prepare_data(t.granularity, t.host, t.accel, t.echo, None, None), \
                layers


def cv_errors(d, spec: Spec, k: int):
    """Per-size |relative speedup error| of k-fold cross-validation; None when refused."""
    folds = fold_indices(d.n, k)
    if any(tr.size < free_count(spec, True) for tr, _ in folds):
        return None
    errs = np.zeros(d.n)
    for tr, te in folds:
        m = solve(subset(d, tr), spec).model
        with np.errstate(all="ignore"):
            errs[te] = np.abs(np.asarray(m.speedup(d.g[te]), float) / (d.t0[te] / d.t1[te])
                              - 1)
    return errs


def forward(d, layers, keep=(), gain=MIN_GAIN, to_end=False):
    """``choose``'s forward selection from the ``keep`` terms; with ``to_end`` no stopping
    rule: the path of (spec, per-size errors) to the last term."""
    k = min(d.n, 12)
    usable, _ = supported_layers(layers, d.g)
    spec = Spec()
    for t in keep:
        spec = spec.with_term(t, usable)
    pool = [t for t in GPU_TERMS if t not in keep] + [f"layer:{l.name}" for l in usable]
    errs = cv_errors(d, spec, k)
    path = [(spec, errs)]
    while pool:
        scores = {}
        for step in [(t,) for t in pool] + list(combinations(pool, 2)):
            cand = spec
            for t in step:
                cand = cand.with_term(t, usable)
            e = cv_errors(d, cand, k)
            if e is not None:
                scores[step] = (cand, e)
        if not scores:
            break
        mean = {s: e.mean() for s, (_, e) in scores.items()}
        single = min((s for s in scores if len(s) == 1), key=mean.get, default=None)
        pair = min((s for s in scores if len(s) == 2), key=mean.get, default=None)
        step = pair if single is None or (pair is not None and mean[pair] <
                                          mean[single] * (1 - gain)) else single
        if not to_end and mean[step] > path[-1][1].mean() * (1 - gain):
            break
        for t in step:
            pool.remove(t)
        spec = scores[step][0]
        path.append(scores[step])
    return path


def one_se(d, layers):
    path = forward(d, layers, to_end=True)
    best = min(path, key=lambda p: p[1].mean())[1]
    limit = best.mean() + best.std(ddof=1) / math.sqrt(best.size)
    return solve(d, next(s for s, e in path if e.mean() <= limit)).model


def fixed(*terms):
    def fit(d, layers):
        spec = Spec()
        for t in terms:
            spec = spec.with_term(t, ())
        return solve(d, spec).model
    return fit


def kept(*terms, gain=MIN_GAIN):
    return lambda d, layers: solve(d, forward(d, layers, keep=terms, gain=gain)[-1][0]).model


def current(d, layers):
    return choose(d, layers, jackknife=False).model


def anchored(d, layers):
    return AnchoredSpeedup.of(current(d, layers), d.g, d.t0 / d.t1)


VARIANTS = {"current": current, "fixed-hc-floor": fixed("host-constant", "floor"),
            "fixed-hc-floor-beta": fixed("host-constant", "floor", "accel-beta"),
            "keep-floor": kept("floor"), "keep-hc-floor": kept("host-constant", "floor"),
            "gain10": kept(gain=0.10), "one-se": one_se, "anchored": anchored}


def holdout(fit, d, layers):
    tr, te = alternate_split(d.n)
    part = subset(d, tr)
    start = time.perf_counter()
    m = fit(part, layers)
    seconds = time.perf_counter() - start
    s = d.t0[te] / d.t1[te]
    with np.errstate(all="ignore"):
        err = float(np.mean(np.abs(np.asarray(m.speedup(d.g[te]), float) / s - 1)))
    base = float(np.mean(np.abs(interpolate_neighbours(part.g, part.t0 / part.t1, d.g[te])
                                / s - 1)))
    g1m, g1 = measured_crossing(d.g, d.t0 / d.t1, 1.0), m.g1()
    return err, base, (None if g1m is None or g1 is None else g1 / g1m - 1), seconds


def nested(fit, d, layers) -> float:
    part = subset(d, alternate_split(d.n)[0])
    s = part.t0 / part.t1
    out = []
    for i in range(1, part.n - 1):
        m = fit(subset(part, np.delete(np.arange(part.n), i)), layers)
        out.append(abs(float(m.speedup(part.g[i])) / s[i] - 1))
    return float(np.mean(out))


def main(names: list[str], directories: list[Path], with_nested: bool) -> None:
    warnings.simplefilter("ignore")          # the solvers' NumPy warnings
    for name in names:
        fit = VARIANTS[name]
        print(f"## {name}", flush=True)
        every, every_nested = [], []
        for directory in directories:
            errs, bases, nests = [], [], []
            for kernel, d, layers in load(directory):
                err, base, g1e, sec = holdout(fit, d, layers)
                line = (f"  {directory.name} {kernel}: held-out {err:.1%} (interpolation "
                        f"{base:.1%}), g1 {'none' if g1e is None else f'{g1e:+.0%}'}, "
                        f"fit {sec:.1f} s")
                if with_nested:
                    nests.append(nested(fit, d, layers))
                    line += f", nested {nests[-1]:.1%}"
                print(line, flush=True)
                errs.append(err)
                bases.append(base)
            print(f"  {directory.name}: held-out {np.mean(errs):.4f} (interpolation "
                  f"{np.mean(bases):.4f})" + (f", nested {np.mean(nests):.4f}"
                                              if with_nested else ""), flush=True)
            every += errs
            every_nested += nests
        if with_nested:
            print(f"{name}_nested_cv_mean_error: {np.mean(every_nested):.4f}")
        print(f"{name}_holdout_mean_error: {np.mean(every):.4f}")


if __name__ == "__main__":
    args = sys.argv[1:]
    if not args or args[0].startswith("-") or any(v not in VARIANTS
                                                   for v in args[0].split(",")):
        raise SystemExit(f"usage: logca_gpu_variants.py VARIANT[,VARIANT] [--nested] "
                         f"[DIR ...]; variants: {', '.join(VARIANTS)}")
    main(args[0].split(","), [Path(a) for a in args[1:] if a != "--nested"] or DIRS,
         "--nested" in args[1:])
