"""Which g1 to quote, and in what words (issue 36: one answer to "from what size does it pay
off?", with what it rests on).

A `logca fit --select` gives three g1s: where the measured speedups pass 1 (interpolated
between two sizes), the model's, and the model's curve anchored at the measured points
(:mod:`.anchored`). They answer differently well:

* where the measured speedups pass 1, the anchored g1 lies between the two sizes that
  bracket the crossing and follows the model's shape there: it is the one to quote (on the
  held-out sizes of the shipped and user GPU data it is closer to the measured crossing
  than the model's, whose jackknife interval leaves out the model's own shape error);
* where every measured speedup is below 1, nothing measured shows a crossing: the model's
  g1, if it has one, lies beyond the largest size measured, an extrapolation, and is said
  to be one; without one the answer is "never", within the sizes measured and as far as
  the model reaches;
* where every measured speedup is at or above 1, the offload pays off from below the least
  size measured; the model's g1 there is again an extrapolation;
* where a single size measures above 1 between two below it, there is no g1 to quote: one
  size is no crossing (the H100 box's 64 MiB gemv, whose host was 7x slower in that run
  than in the next).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..units import format_size


@dataclass(frozen=True)
class QuotedG1:
    """The g1 to quote (None: no size pays off, as far as data and model go) and why."""

    granularity: float | None
    basis: str      # "anchored", "model", "model, extrapolated", "unreliable" or "none"
    reason: str

    def to_dict(self) -> dict:
        return {"granularity_bytes": self.granularity, "basis": self.basis,
                "reason": self.reason}

    def __str__(self) -> str:
        if self.granularity is not None:
            size = format_size(self.granularity)
        else:
            size = {"none": "none", "unreliable": "no reliable g1"}.get(
                self.basis, "below the sizes measured")
        return f"{size} ({self.reason})"

    def __repr__(self) -> str:
        return f"QuotedG1({self})"


def g1_to_quote(granularity, measured, model_g1: float | None,
                anchored_g1: float | None) -> QuotedG1:
    """The g1 to quote from a fit's measured speedups, its model's g1 and its anchored g1
    (see the module docstring)."""
    g = np.asarray(granularity, float)
    s = np.asarray(measured, float)
    order = np.argsort(g)
    g, s = g[order], s[order]
    up = np.flatnonzero((s[:-1] < 1) & (s[1:] >= 1))
    if up.size and up[0] + 2 < s.size and s[up[0] + 2] < 1:
        i = int(up[0])
        above = np.flatnonzero(s >= 1)
        if above.size == 1:
            return QuotedG1(None, "unreliable",
                            f"only {format_size(g[i + 1])} measures a speedup above 1 "
                            f"({s[i + 1]:.3g}), with {format_size(g[i])} ({s[i]:.3g}) and "
                            f"{format_size(g[i + 2])} ({s[i + 2]:.3g}) below it: one size is "
                            f"no crossing (an outlier?); measure those sizes again")
        # a noisy run (a loaded CPU) crosses 1 back and forth: name every size above it
        shown = ", ".join(f"{format_size(g[k])} ({s[k]:.3g})" for k in above[:6])
        return QuotedG1(None, "unreliable",
                        f"the measured speedup passes 1 back and forth: above it at "
                        f"{shown}{', ...' if above.size > 6 else ''}, first at "
                        f"{format_size(g[i + 1])} between {format_size(g[i])} ({s[i]:.3g}) "
                        f"and {format_size(g[i + 2])} ({s[i + 2]:.3g}) below it: no single "
                        f"crossing (outliers?); measure those sizes again")
    if up.size and anchored_g1 is not None:
        i = int(up[0])
        back = np.flatnonzero(s[i + 1:] < 1)
        again = "" if back.size == 0 else (
            f"; it is below 1 again at {format_size(g[i + 1 + back[0]])} "
            f"({s[i + 1 + back[0]]:.3g}): check the sizes between for an outlier")
        return QuotedG1(anchored_g1, "anchored",
                        f"the measured speedup passes 1 between {format_size(g[i])} "
                        f"({s[i]:.3g}) and {format_size(g[i + 1])} ({s[i + 1]:.3g}); the "
                        f"model's curve anchored at the measured points crosses there{again}")
    if np.all(s < 1):
        top = f"{s[-1]:.3g} at the largest size measured, {format_size(g[-1])}"
        if model_g1 is None or model_g1 <= g[-1]:
            return QuotedG1(None, "none", f"the measured speedup stays below 1 ({top}) and "
                                          f"the model never reaches 1 beyond it")
        return QuotedG1(model_g1, "model, extrapolated",
                        f"the model's, beyond every size measured: the measured speedup "
                        f"stays below 1 ({top}); measure larger sizes to confirm it")
    if np.all(s >= 1):
        below = model_g1 if model_g1 is not None and model_g1 < g[0] else None
        return QuotedG1(below, "model, extrapolated",
                        f"pays off at every size measured ({s[0]:.3g} at the least, "
                        f"{format_size(g[0])}); the model's g1 lies below it, unmeasured")
    return QuotedG1(model_g1, "model",
                    "the measured speedup passes 1 only downwards or back and forth; the "
                    "model's g1, read with its warnings")
