"""What a calibration's inputs covered, so that a later prediction outside it is flagged
(issue 35, item 2).

A calibration pins the delays through the inputs it saw. A new input is predicted as
well as that only if its latency leans on the delays no harder than some calibration
input did, and not on a combination the calibration could not determine. Both are
stated through the **sensitivity** of the latency to each fitted delay θⱼ, the same
one-cycle difference the fit's Jacobian uses (exact inside a regime)::

    shareⱼ(x) = (L(x; θ + eⱼ) − L(x; θ)) / L(x; θ)

the relative change of the latency per cycle of θⱼ: an error of δ cycles in θⱼ moves
the prediction of x by about shareⱼ(x)·δ. It is generic (any model, any input), in the
model's own terms, and needs one simulation per fitted delay. The calibration records,
per fitted delay, ``[min, max]`` of shareⱼ over its inputs, and the null directions v
of its Jacobian (:mod:`accelperf.lpn.identify`: moves of the delays that change no
calibration input). A new input x is **outside** when

* shareⱼ(x) > (1 + :data:`SLACK`)·maxⱼ for some j: it leans on θⱼ harder than every
  calibration input (an input that leans less is safer, and is not flagged); a delay no
  calibration input was sensitive to has maxⱼ = 0, so any use of it is flagged; or
* g(x)·v ≠ 0 for a null direction v, with gⱼ = L(x; θ + eⱼ) − L(x; θ): its latency
  depends on the split of the confounded delays, which the calibration left at the one
  nearest the start (e.g. a 4x4 weight load when VTA was calibrated on 1x1 loads only,
  where the DRAM base and the per-element cost always added).

``lpn calibrate --out`` writes this as the ``[coverage]`` table of the parameter file;
``lpn simulate`` on one input and ``lpn compare`` with ``--params`` of such a file check
their inputs and warn once (a batch only notes that it does not check).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..errors import ModelError, invalid

SLACK = 0.1                # a share up to 10 % above the calibration's largest passes
COLLINEAR = 1e-6           # |g·v| / Σ|gⱼvⱼ| above this: the input sees a null direction


@dataclass(frozen=True)
class Coverage:
    """Per fitted delay, the range of its share of the latency over the calibration
    inputs; the calibration's null directions (in cycles); how many inputs."""

    inputs: int
    share: dict[str, tuple[float, float]]
    null: tuple[dict[str, float], ...] = ()

    def to_table(self) -> dict:
        """The ``[coverage]`` table of a parameter file (plain TOML values)."""
        return {"inputs": self.inputs,
                "share": {n: [lo, hi] for n, (lo, hi) in self.share.items()},
                "unidentified": [dict(v) for v in self.null]}

    @staticmethod
    def from_table(table, where: str = "[coverage]") -> "Coverage":
        """Read back :meth:`to_table`'s form; a malformed table is a one-line error."""
        def bad(key, value, allowed):
            return invalid(f"{where} {key}", value, allowed)
        if not isinstance(table, dict):
            raise bad("", table, "a table as lpn calibrate writes it in a parameter file")
        inputs, share = table.get("inputs"), table.get("share")
        if isinstance(inputs, bool) or not isinstance(inputs, int) or inputs < 1:
            raise bad("inputs", inputs, "a count of calibration inputs >= 1")
        if not isinstance(share, dict):
            raise bad("share", share, "a table of name = [min, max]")
        ranges = {}
        for name, pair in share.items():
            if not (isinstance(pair, list) and len(pair) == 2 and
                    all(_number(x) for x in pair) and pair[0] <= pair[1]):
                raise bad(f"share.{name}", pair, "[min, max], two numbers, min <= max")
            ranges[name] = (float(pair[0]), float(pair[1]))
        null = table.get("unidentified", [])
        if not isinstance(null, list) or not all(
                isinstance(v, dict) and v and all(_number(x) for x in v.values())
                for v in null):
            raise bad("unidentified", null, "a list of tables of name = cycles")
        return Coverage(inputs, ranges, tuple({k: float(x) for k, x in v.items()}
                                              for v in null))

    def outside(self, builder, values: dict[str, int], user_input,
                backend: str = "auto") -> str | None:
        """Why ``user_input`` lies outside what the calibration covered (one line), or
        None; ``builder(values)`` builds the model, ``values`` the calibrated delays."""
        from .sim import simulate
        base = simulate(builder(values), user_input, backend=backend).latency
        if base <= 0:
            return None
        g = {}
        for name in self.share:
            if name not in values:
                continue
            moved = simulate(builder({**values, name: values[name] + 1}), user_input,
                             backend=backend).latency
            g[name] = moved - base
        for name, (_, hi) in self.share.items():
            share = g.get(name, 0) / base
            if share > hi * (1 + SLACK) + 1e-12:
                return (f"{name} weighs {share:.3g} of its latency per cycle, above the "
                        f"{hi:.3g} of any of the {self.inputs} calibration inputs: the "
                        f"prediction extrapolates")
        for v in self.null:
            terms = [g.get(n, 0) * c for n, c in v.items()]
            scale = sum(abs(t) for t in terms)
            if scale and abs(sum(terms)) > COLLINEAR * scale:
                return (f"its latency depends on how {', '.join(v)} split, which the "
                        f"calibration inputs could not tell: the prediction is a guess")
        return None


def coverage_of(fitter, values: dict[str, int], names: list[str], found) -> Coverage:
    """The coverage of a fit (``values`` of ``names``, by ``fitter``, identification
    ``found``) over all its measured inputs."""
    base = fitter.latencies(values)
    share = {}
    for name in names:
        if not fitter.within(name, values[name] + 1):
            continue                      # at its top bound: no upward share to measure
        s = (fitter.latencies({**values, name: values[name] + 1}) - base) / \
            np.where(base > 0, base, 1)
        share[name] = (float(s.min()), float(s.max()))
    return Coverage(len(base), share, tuple(found.null))


def _number(x) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)


def check_inputs(coverage: Coverage | None, builder, values, inputs,
                 backend: str = "auto") -> str | None:
    """The first input of ``inputs`` ((name, input) pairs) outside ``coverage``, as one
    warning line naming it and counting the others, or None (also when there is no
    coverage to check). Every input is checked: naming only the first read as if one of
    56 inputs extrapolated."""
    if coverage is None:
        return None
    first, outside, total = None, 0, 0
    for name, user_input in inputs:
        total += 1
        try:
            why = coverage.outside(builder, values, user_input, backend)
        except ModelError:
            return None                   # the command itself reports a failing input
        if why:
            outside += 1
            first = first or (name, why)
    if first is None:
        return None
    name, why = first
    others = "" if total == 1 else f" ({outside} of the {total} inputs lie outside it)"
    return f"input {name or '(default)'} lies outside what the calibration covered: " \
           f"{why}{others}"


__all__ = ["Coverage", "coverage_of", "check_inputs", "SLACK"]
