"""Choose LogCA's terms by cross-validated prediction (issue 35 item 5, issue 36 item 3).

Forward selection (:mod:`.termfit` derives the model and the fit): start from plain LogCA,
add the term (host constant, kernel floor, β_A, per-byte latency, a host layer's step) or
the pair of terms that lowers the k-fold cross-validated speedup error most, while it lowers
it by at least ``MIN_GAIN`` (a single term wherever the best pair does not beat it by
``MIN_GAIN``); each term's sentence says what it did to that error. Pairs, because the host
and accelerator times are fitted each to its own points: a host constant mends the host's
curve and a floor the accelerator's, and the speedup improves only with both (a noise-free
GPU-like offload: 35% cross-validated error plain, no single term below 19%, the two
together 1%; adding one term at a time stopped at β_A and predicted 21% off). What follows is said in
the warnings: a parameter on a bound, each point the robust loss discounted (size, measured,
expected), layers whose bend the sizes do not bracket, sanity checks of the data and a g1
that the fitted points contradict (:mod:`.fitsanity`). g1's interval is the delete-a-group
jackknife's over the chosen model's cross-validation refits (``se² = (k−1)/k·Σ(θ_i − θ̄)²``
in ln g, 95% normal; with one size per fold the ordinary jackknife), computed when
``jackknife`` is set: those refits are already made, so the interval costs no fit.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import cached_property
from itertools import combinations
from typing import TYPE_CHECKING

import numpy as np

from ..errors import ModelError
from ..units import format_size
from .anchored import AnchoredSpeedup
from .fit import FitData, GranularityEstimate, SpeedupErrors, measured_crossing
from .fitsanity import g1_contradiction, sanity_warnings
from .hierarchy import HierarchicalLogCA, MemoryLayer
from .termfit import (MIN_GAIN, MIN_SIDE, MMAP, TERMS, Solved, Spec, bend_working_set,
                      free_count, solve, subset, term_name, times)
from .validation import Validation

if TYPE_CHECKING:
    from .holdout import PredictionCheck
    from .quote import QuotedG1

OUTLIER_LOG = math.log(1.5)          # a point 50% off the robust fit is named


@dataclass(frozen=True)
class TermChoice:
    term: str
    kept: bool
    reason: str

    def to_dict(self) -> dict:
        return {"term": self.term, "kept": self.kept, "reason": self.reason}


@dataclass(frozen=True)
class ChosenFit(SpeedupErrors):
    """The model chosen by cross-validation, its fit to all the data and what was said."""

    model: HierarchicalLogCA
    solved: Solved = field(repr=False)
    terms: tuple[TermChoice, ...]
    cv_error: float
    folds: int
    granularity: np.ndarray = field(repr=False)
    speedup_measured: np.ndarray = field(repr=False)
    speedup_model: np.ndarray = field(repr=False)
    g1: GranularityEstimate
    warnings: tuple[str, ...] = ()

    def speedup(self, g):
        return self.model.speedup(g)

    @cached_property
    def anchored(self) -> AnchoredSpeedup:
        """The model's curve pinned to the measured speedups it was fitted to
        (:mod:`.anchored`)."""
        return AnchoredSpeedup.of(self.model, self.granularity, self.speedup_measured)

    @cached_property
    def anchored_g1(self) -> float | None:
        """g1 of :attr:`anchored` (a scan and a root: computed once, for the command's
        lines and its figure alike)."""
        return self.anchored.g1()

    def g1_to_quote(self) -> "QuotedG1":
        """The g1 to quote and what it rests on (:mod:`.quote`), as `logca fit --select`
        prints it."""
        from .quote import g1_to_quote
        return g1_to_quote(self.granularity, self.speedup_measured, self.g1.model,
                           self.anchored_g1)

    def predict(self, granularity, measured_speedup) -> "PredictionCheck":
        """This fit judged at sizes it was not fitted to (`logca fit --predict`): the model,
        its anchored curve and the neighbour interpolation against the measured speedups."""
        from .holdout import PredictionCheck, interpolate_neighbours, predict
        g, s = self.granularity, self.speedup_measured
        return PredictionCheck(
            predict(self.speedup, granularity, measured_speedup),
            predict(self.anchored.speedup, granularity, measured_speedup),
            predict(lambda x: interpolate_neighbours(g, s, x), granularity, measured_speedup))

    def parameters(self) -> dict:
        m, b = self.model, self.model.base
        out = {"C": b.C, "beta": b.beta, "A": b.A, "o": b.o, "L": b.L,
               "latency": b.latency, "unit": b.unit}
        if m.host_constant:
            out["c0"] = m.host_constant
        if m.floor:
            out["floor"] = m.floor
        if m.accel_beta is not None:
            out["beta_A"] = m.accel_beta
        for layer, h in zip(m.layers, m.host_steps):
            out[f"h[{layer.name}]"] = h
        return out

    def to_dict(self) -> dict:
        return {"parameters": self.parameters(),
                "terms": [t.to_dict() for t in self.terms],
                "kept": [t.term for t in self.terms if t.kept],
                "error": {"mean": self.mean_error, "max": self.max_error},
                "cv": {"folds": self.folds, "mean": self.cv_error},
                "g1": self.g1.to_dict(), "anchored": {"g1": self.anchored_g1},
                "g1_to_quote": self.g1_to_quote().to_dict(), "warnings": list(self.warnings),
                "method": "terms chosen by cross-validated speedup error (forward selection"
                          " of one or two terms a step, folds refitted from scratch); robust"
                          " soft-L1 loss on the log host and accelerated times, its scale the"
                          " residuals' normalised MAD (at least 5%)"}

    def __repr__(self) -> str:
        kept = ", ".join(t.term for t in self.terms if t.kept) or "plain LogCA"
        return (f"ChosenFit({kept}; speedup error {self.mean_error:.1%} in sample, "
                f"{self.cv_error:.1%} cross-validated over {self.folds} folds)")


def supported_layers(layers, g) -> tuple[tuple[MemoryLayer, ...], list[str]]:
    """The layers (not the unbounded last) with at least MIN_SIDE sizes each side of their
    capacity, and a sentence for each other one."""
    kept, said = [], []
    for layer in layers:
        if math.isinf(layer.capacity_bytes):
            continue
        below = int(np.sum(g < layer.capacity_bytes))
        above = int(np.sum(g >= layer.capacity_bytes if layer.threshold
                           else g > layer.capacity_bytes))
        if below >= MIN_SIDE and above >= MIN_SIDE:
            kept.append(layer)
        elif layer.threshold and above == 0:
            continue                # no size reaches it: nothing to say about it
        else:
            said.append(f"{term_name(layer)}: left out, its bend at "
                        f"{format_size(layer.capacity_bytes)} has {below} measured size(s) "
                        f"below and {above} above (needs {MIN_SIDE} on each side)")
    return tuple(kept), said


def choose(d: FitData, layers=(), folds: int | None = None, name: str | None = None,
           jackknife: bool = True, thresholds=(MMAP,), workers: int = 1) -> ChosenFit:
    """Forward selection of terms, one or two a step, by ``folds``-fold cross-validation
    (None: leave one size out, at most 12 folds); refuses every candidate with more free
    parameters than a fold has sizes. ``layers``: the host's memory hierarchy (stores);
    ``thresholds``: the host's software thresholds (:data:`.termfit.MMAP`: glibc's);
    ``workers``: processes the folds are solved in (:mod:`.validation`; the fit is the
    same with any number)."""
    k = folds or min(d.n, 12)
    if k > d.n or k < 2:
        raise ModelError(f"folds = {folds} is invalid: between 2 and the number of sizes "
                         f"({d.n})", field="folds")
    candidates = _by_bend(tuple(layers) + tuple(thresholds))
    usable, layer_notes = supported_layers(candidates, d.g)
    has_echo = d.echo is not None
    pool = [t for t in TERMS if not (t == "per-byte-latency" and has_echo)] + \
        [term_name(l) for l in usable]
    spec = Spec()
    validation = Validation(d, k, workers)
    validation.run([spec])
    best, refits = validation[spec]
    if best is None:
        raise ModelError(f"only {d.n} sizes: too few to cross-validate even plain LogCA "
                         f"({free_count(spec, has_echo)} free parameters)")
    notes: dict[str, TermChoice] = {}
    while pool:
        scores, fold_models = {}, {}
        step_specs = {}
        for step in [(t,) for t in pool] + list(combinations(pool, 2)):
            cand = spec
            for term in step:
                cand = cand.with_term(term, usable)
            step_specs[step] = cand
        # A step's single term added to the spec a pair of the step before was: the same
        # spec, validated once (a solve depends on the spec and the sizes alone).
        validation.run(step_specs.values())
        for step, cand in step_specs.items():
            err, models = validation[cand]
            if err is None and len(step) == 1:
                notes[step[0]] = TermChoice(step[0], False, f"refused: "
                                            f"{free_count(cand, has_echo)} free parameters "
                                            f"against {d.n - math.ceil(d.n / k)} sizes in a fold")
            elif err is not None:
                scores[step], fold_models[step] = err, models
        if not scores:
            break
        single = min((s for s in scores if len(s) == 1), key=scores.get, default=None)
        pair = min((s for s in scores if len(s) == 2), key=scores.get, default=None)
        # one term where it does about as well as the best pair: the simpler model
        step = pair if single is None or (pair is not None and scores[pair] <
                                          scores[single] * (1 - MIN_GAIN)) else single
        if scores[step] > best * (1 - MIN_GAIN):
            for s_, e in scores.items():
                if len(s_) == 1:
                    notes[s_[0]] = TermChoice(s_[0], False, f"left out: the cross-validated "
                                              f"error would be {e:.1%} with it, {best:.1%} "
                                              f"without")
            break
        for i, term in enumerate(step):
            other = f" together with {step[1 - i]}" if len(step) == 2 else ""
            notes[term] = TermChoice(term, True, f"kept{other}: it lowers the cross-validated "
                                                 f"speedup error from {best:.1%} to "
                                                 f"{scores[step]:.1%}")
        for term in step:
            spec = spec.with_term(term, usable)
            pool.remove(term)
        best, refits = scores[step], fold_models[step]
    for note in layer_notes:
        term, _, reason = note.partition(": ")
        notes[term] = TermChoice(term, False, reason)
    order = list(TERMS) + [term_name(l) for l in candidates
                           if not math.isinf(l.capacity_bytes)]
    terms = tuple(notes[t] for t in order if t in notes)
    return _finish(d, spec, best, k, terms, name, refits if jackknife else (), candidates)


def _by_bend(layers) -> tuple[MemoryLayer, ...]:
    """Stores and thresholds in the order of their bends' centres, μ/w (a threshold's lies
    below its size, :func:`.termfit.bend_working_set`)."""
    return tuple(sorted(layers, key=lambda l: l.capacity_bytes / bend_working_set(l)))


def _finish(d: FitData, spec: Spec, cv_error: float, k: int, terms, name, refits, layers):
    """The chosen spec fitted to all of ``d``, its warnings and g1 (with the jackknife
    interval from ``refits``, the spec's fold models, when there are any)."""
    s = solve(d, spec, name)
    s_meas = d.t0 / d.t1
    with np.errstate(all="ignore"):
        s_model = np.asarray(s.model.speedup(d.g), float)
    warnings = [_bound_warning(s, p, d) for p in s.at_bound]
    if d.echo is None and s.model.base.L == 0:
        # a PCIe GPU's copies reported as L = 0 and a lower A, with no word of why
        warnings.append(f"no copies-only (echo) run: the copies' time per byte cannot be "
                        f"told from the kernel's, so L = 0 and A = {s.model.A:.4g} carries "
                        f"both; measure an echo run (accelperf measure gpu or offload) to "
                        f"separate them")
    warnings += _outliers(d, s)
    warnings += sanity_warnings(d, s.model, layers)
    g1 = s.model.g1()
    contradiction = g1_contradiction(d.g, s_meas, s_model, g1, OUTLIER_LOG)
    if contradiction:
        warnings.append(contradiction)
    interval = stderr = None
    if refits and g1 is not None:
        vals = np.log([v for v in (m.g1() for m in refits) if v is not None])
        if vals.size >= 3:
            se = math.sqrt((vals.size - 1) / vals.size * float(np.sum((vals - vals.mean()) ** 2)))
            interval = (math.exp(math.log(g1) - 1.96 * se), math.exp(math.log(g1) + 1.96 * se))
            stderr = g1 * se
    est = GranularityEstimate(measured_crossing(d.g, s_meas, 1.0), g1, stderr, interval)
    return ChosenFit(s.model, s, terms, cv_error, k, d.g, s_meas, s_model, est,
                     tuple(warnings))


def _bound_warning(s: Solved, label: str, d: FitData) -> str:
    value = _value(s, label)
    if label == "c0" and value >= d.t0.min() * (1 - 1e-3):
        return (f"c0 = {value:.4g} is at the least measured host time, its bound (T0 = c0 + "
                f"C·g^β exceeds c0 at every size): the host's time at the smallest sizes is "
                f"its per-call cost alone")
    if label == "c0":
        # its lower bound, a thousandth of the least time measured (termfit._bounds)
        return (f"c0 = {value:.4g} is at its least value, a thousandth of the least time "
                f"measured: the times show no per-call cost of the host; the term changes "
                f"nothing here")
    return (f"{label} = {value:.4g} is on its bound: the data push it beyond what the model "
            f"allows; read the fit with care")


def _value(s: Solved, label: str) -> float:
    """A parameter's value by the name :func:`.termfit.solve` reports a bound with."""
    return dict(s.model_parameters())[label]


def _outliers(d: FitData, s: Solved) -> list[str]:
    """Each time the robust fit misses by more than OUTLIER_LOG, with what it expected."""
    m0, m1 = times(s.x, s.spec, d.g, s.dependent)
    out = []
    for label, measured, model in (("host", d.t0, m0), ("accelerated", d.t1, m1)):
        for g, t, e in zip(d.g, measured, model):
            if abs(math.log(t / e)) > OUTLIER_LOG:
                out.append(f"outlier at {format_size(g)}: {label} time measured "
                           f"{_seconds(t)}, the fit expects {_seconds(e)} ({t / e:.3g}x); "
                           f"the robust loss discounts it (measure that size again and "
                           f"replace its rows: for a GPU run, `accelperf measure gpu "
                           f"--from {_asked(g)} --to {_asked(g)}` with its other options)")
    return out


def _asked(g: float) -> str:
    """The power of two `accelperf measure gpu` was asked for to measure granularity g (a
    GEMM's exact 8n² lies within 1% of it), as its --from takes it."""
    return format_size(2.0 ** round(math.log2(g))).replace(" ", "")


def _seconds(t: float) -> str:
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("µs", 1e-6), ("ns", 1e-9)):
        if t >= scale:
            return f"{t / scale:.3g} {unit}"
    return f"{t:.3g} s"


@dataclass(frozen=True)
class TimeErrors:
    """One side's time at the held-out sizes: the mean |relative error| of the model's
    (``T0`` or ``T1``) and of the line through the two neighbouring training sizes in
    (ln g, ln t). Which side a speedup error comes from: the host's steps, or the
    accelerator's curve."""

    model: float
    line: float

    def __repr__(self) -> str:
        return f"TimeErrors(model {self.model:.1%}, line {self.line:.1%})"


@dataclass(frozen=True)
class HoldoutCheck:
    """A fit on every other size judged on the rest: the chosen model's prediction and the
    neighbour interpolation's (:mod:`.holdout`), and g1 of that fit against the crossing
    measured on all sizes (log-log interpolation where the measured speedup passes 1);
    ``host`` and ``accelerated``: each time's own held-out errors."""

    fit: ChosenFit
    model: "Prediction"
    baseline: "Prediction"
    g1_measured: float | None
    anchored: "Prediction"          # the fit's curve anchored at its training points
    g1_anchored: float | None
    host: TimeErrors
    accelerated: TimeErrors

    @property
    def g1_error(self) -> float | None:
        return _relative(self.fit.g1.model, self.g1_measured)

    @property
    def g1_anchored_error(self) -> float | None:
        return _relative(self.g1_anchored, self.g1_measured)


def _relative(value: float | None, reference: float | None) -> float | None:
    return None if value is None or reference is None else value / reference - 1


def holdout_check(d: FitData, layers=(), name: str | None = None,
                  workers: int = 1) -> HoldoutCheck:
    from .holdout import alternate_split, interpolate_neighbours, predict
    train, test = alternate_split(d.n)
    part = subset(d, train)
    fit = choose(part, layers, name=name, jackknife=False, workers=workers)
    s_test = d.t0[test] / d.t1[test]
    model = predict(fit.speedup, d.g[test], s_test)
    baseline = predict(lambda g: interpolate_neighbours(part.g, part.t0 / part.t1, g),
                       d.g[test], s_test)
    anchored = AnchoredSpeedup.of(fit.model, part.g, part.t0 / part.t1)

    def side(model_time, train_time, measured) -> TimeErrors:
        return TimeErrors(predict(model_time, d.g[test], measured).mean,
                          predict(lambda g: interpolate_neighbours(part.g, train_time, g),
                                  d.g[test], measured).mean)
    return HoldoutCheck(fit, model, baseline, measured_crossing(d.g, d.t0 / d.t1, 1.0),
                        predict(anchored.speedup, d.g[test], s_test), anchored.g1(),
                        side(fit.model.T0, part.t0, d.t0[test]),
                        side(fit.model.T1, part.t1, d.t1[test]))
