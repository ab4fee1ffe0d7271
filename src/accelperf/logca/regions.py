"""Sensitivity analysis and optimization regions (ISCA'17 §3.2, Figs. 5, 6, 10, 11).

A parameter is a bottleneck at granularity g when improving it by ``factor`` (L and o
divided, C and A multiplied) raises the speedup there by at least ``threshold``:
``gain_p(g) = speedup_p(g) / speedup(g) − 1 >= threshold``.

The gains are smooth but not always monotone: L's gain rises and falls for super-linear
work with growing latency, and C's and A's follow the Amdahl ratio C·g^β/(A(o + L1)),
which peaks for sub-linear work with growing latency. So every boundary is found the same
way: the gain is sampled on a fine log grid (``resolution`` points per octave), each sign
change of ``gain − threshold`` brackets a boundary, and a bracketed root finder refines it
to machine precision. Boundaries are therefore exact, not grid points; two boundaries
closer than 1/resolution of an octave would be merged (never seen in practice).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
from scipy.optimize import elementwise

from ..errors import invalid
from ..units import format_size, powers_of_two
from .model import DEFAULT_RANGE, LogCA, speedup_array

PARAMETERS = ("L", "o", "C", "A")


def improved(L, o, C, A, parameter_index, factor):
    """Parameters with one of them improved by ``factor`` (index into PARAMETERS)."""
    p = np.asarray(parameter_index)
    return (np.where(p == 0, L / factor, L), np.where(p == 1, o / factor, o),
            np.where(p == 2, C * factor, C), np.where(p == 3, A * factor, A))


def gain_array(g, L, o, C, A, beta, dependent, parameter_index, factor):
    """Relative speedup gain from improving one parameter, broadcast over every argument."""
    base = speedup_array(g, L, o, C, A, beta, dependent)
    better = speedup_array(g, *improved(L, o, C, A, parameter_index, factor), beta, dependent)
    return better / base - 1.0


def _excess(x, L, o, C, A, beta, dependent, p, factor, threshold):
    return gain_array(np.exp(x), L, o, C, A, beta, dependent, p, factor) - threshold


def _check_arguments(factor: float, threshold: float, lo: float, hi: float) -> None:
    if not np.isfinite(factor) or factor < 1:
        raise invalid("factor", factor, "must be a finite number >= 1 (1 changes nothing; "
                                        "L and o are divided by it, C and A multiplied)")
    if not np.isfinite(threshold) or threshold <= 0:
        raise invalid("threshold", threshold, "must be a finite fraction > 0 (0.2 = 20% gain)")
    if not (np.isfinite(lo) and np.isfinite(hi) and 0 < lo < hi):
        raise invalid("granularity range", f"{lo:g}..{hi:g}", "need 0 < from < to (bytes)")


@dataclass(frozen=True)
class RegionBatch:
    """Boundaries for many designs: ``boundaries[d][p]`` is a sorted array of crossings of
    parameter p's gain through the threshold inside [lo, hi]; ``inside_at_lo[d, p]`` says
    whether the parameter is a bottleneck at the range's lower end."""

    lo: float
    hi: float
    boundaries: list
    inside_at_lo: np.ndarray


def regions_batch(L, o, C, A, beta, dependent, factor: float = 10.0, threshold: float = 0.2,
                  lo: float = DEFAULT_RANGE[0], hi: float = DEFAULT_RANGE[1],
                  resolution: int = 16) -> RegionBatch:
    """Exact region boundaries for arrays of designs at once (see the module docstring)."""
    _check_arguments(factor, threshold, lo, hi)
    arrays = np.broadcast_arrays(*(np.atleast_1d(np.asarray(a, float)) for a in (L, o, C, A,
                                                                                  beta)),
                                 np.atleast_1d(np.asarray(dependent, bool)))
    L, o, C, A, beta, dep = (np.ravel(a) for a in arrays)
    n, m = L.size, int(np.ceil(np.log2(hi / lo) * resolution)) + 1
    x = np.linspace(np.log(lo), np.log(hi), m)
    # shape (design, parameter, grid)
    P = np.arange(4)[None, :, None]
    args = [a[:, None, None] for a in (L, o, C, A, beta, dep)]
    excess = _excess(x[None, None, :], *args[:4], args[4], args[5], P, factor, threshold)
    above = excess >= 0
    d_idx, p_idx, k_idx = np.nonzero(above[:, :, 1:] != above[:, :, :-1])
    if d_idx.size:
        res = elementwise.find_root(
            _excess, (x[k_idx], x[k_idx + 1]),
            args=(L[d_idx], o[d_idx], C[d_idx], A[d_idx], beta[d_idx], dep[d_idx], p_idx,
                  factor, threshold))
        roots = np.exp(res.x)
    else:
        roots = np.zeros(0)
    boundaries = [[[] for _ in PARAMETERS] for _ in range(n)]
    for d, p, r in zip(d_idx.tolist(), p_idx.tolist(), roots.tolist()):
        boundaries[d][p].append(r)
    boundaries = [[np.array(sorted(b)) for b in per_design] for per_design in boundaries]
    return RegionBatch(lo=lo, hi=hi, boundaries=boundaries, inside_at_lo=above[:, :, 0])


# ---------------------------------------------------------------------- result objects
@dataclass(frozen=True)
class ParameterRegion:
    """Where improving one parameter pays (ISCA'17 §3.2).

    ``intervals`` are the granularity ranges where the gain reaches the threshold; ``start``
    and ``end`` span them. ``cutoff`` is the boundary inside the analysed range where the
    gain drops below the threshold (the paper's arrow): the upper end for o and C, the lower
    end for A, whichever is interior for L; None when the region has no interior boundary.
    """

    parameter: str
    present: bool
    intervals: tuple[tuple[float, float], ...]
    cutoff: float | None
    max_gain: float
    max_gain_at: float

    @property
    def start(self) -> float | None:
        return self.intervals[0][0] if self.intervals else None

    @property
    def end(self) -> float | None:
        return self.intervals[-1][1] if self.intervals else None

    def cutoff_text(self, size=format_size) -> str:
        """The cut-off as a table shows it: "absent", "whole range" (a region without an
        interior boundary) or the size, written by ``size``."""
        if not self.present:
            return "absent"
        return "whole range" if self.cutoff is None else size(self.cutoff)

    def to_dict(self) -> dict:
        return {"present": self.present, "from": self.start, "to": self.end,
                "cutoff": self.cutoff, "intervals": [list(i) for i in self.intervals],
                "max_gain": self.max_gain, "max_gain_at": self.max_gain_at}

    def __repr__(self) -> str:
        if not self.present:
            return f"ParameterRegion({self.parameter}: absent, best gain {self.max_gain:.1%})"
        spans = ", ".join(f"{format_size(a)}–{format_size(b)}" for a, b in self.intervals)
        cut = "" if self.cutoff is None else f", cutoff {format_size(self.cutoff)}"
        return f"ParameterRegion({self.parameter}: {spans}{cut})"


@dataclass(frozen=True)
class Band:
    """A contiguous granularity range labelled by the parameters that are bottlenecks there."""

    start: float
    end: float
    parameters: str          # e.g. "oC"; "" where no parameter reaches the threshold
    members: tuple = field(default=(), compare=False, repr=False)   # the names in the label

    def to_dict(self) -> dict:
        return {"from": self.start, "to": self.end, "parameters": self.parameters}

    def __repr__(self) -> str:
        return f"Band({self.parameters or '—'}: {format_size(self.start)}–{format_size(self.end)})"


@dataclass(frozen=True)
class RegionAnalysis:
    """Optimization regions of one design (ISCA'17 Fig. 6)."""

    model: LogCA             # or a HierarchicalLogCA (:func:`hierarchical_regions`)
    factor: float
    threshold: float
    lo: float
    hi: float
    regions: dict
    bands: tuple
    samples: np.ndarray = field(repr=False)
    gains: dict = field(repr=False)

    def to_dict(self) -> dict:
        return {"model": self.model.parameters(), "factor": self.factor,
                "threshold": self.threshold, "range": {"from": self.lo, "to": self.hi},
                "regions": {p: r.to_dict() for p, r in self.regions.items()},
                "bands": [b.to_dict() for b in self.bands],
                "samples": {"granularity": self.samples.tolist(),
                            "gain": {p: g.tolist() for p, g in self.gains.items()}}}

    def __repr__(self) -> str:
        bands = ", ".join(repr(b) for b in self.bands)
        return (f"RegionAnalysis({self.model.label}; factor {self.factor:g}, threshold "
                f"{self.threshold:.0%}; {bands})")


def _intervals(crossings: np.ndarray, inside_at_lo: bool, lo: float, hi: float):
    edges = [lo] + list(crossings) + [hi]
    inside = inside_at_lo
    spans = []
    for a, b in zip(edges[:-1], edges[1:]):
        if inside and b > a:
            spans.append((float(a), float(b)))
        inside = not inside
    return tuple(spans)


def _cutoff(parameter: str, spans, lo: float, hi: float) -> float | None:
    interior = [x for span in spans for x in span if lo < x < hi]
    if not interior:
        return None
    # A and a per-layer step (which pays once the data outgrow its layer) pay above their
    # cut-off; the others pay below theirs.
    return interior[0] if parameter == "A" or "[" in parameter else interior[-1]


def _bands(regions: dict, lo: float, hi: float) -> tuple[Band, ...]:
    points = sorted({lo, hi, *(x for r in regions.values() for span in r.intervals
                               for x in span)})
    # LogCA's one-letter names read as the paper's "oC"; per-layer names need a separator
    sep = "" if all(len(p) == 1 for p in regions) else " "
    bands: list[Band] = []
    for a, b in zip(points[:-1], points[1:]):
        mid = np.sqrt(a * b)
        members = tuple(p for p in regions
                        if any(s <= mid <= e for s, e in regions[p].intervals))
        label = sep.join(members)
        if bands and bands[-1].parameters == label:
            bands[-1] = Band(bands[-1].start, b, label, members)
        else:
            bands.append(Band(a, b, label, members))
    return tuple(bands)


def _assemble(model, factor, threshold, lo, hi, crossings, inside_at_lo, samples) -> RegionAnalysis:
    regions, gains = {}, {}
    dense = np.geomspace(lo, hi, 512)
    for i, p in enumerate(PARAMETERS):
        spans = _intervals(crossings[i], bool(inside_at_lo[i]), lo, hi)
        args = (model.L, model.o, model.C, model.A, model.beta, model.dependent, i, factor)
        g_dense = gain_array(dense, *args)
        best = int(np.argmax(g_dense))
        regions[p] = ParameterRegion(parameter=p, present=bool(spans), intervals=spans,
                                     cutoff=_cutoff(p, spans, lo, hi),
                                     max_gain=float(g_dense[best]),
                                     max_gain_at=float(dense[best]))
        gains[p] = gain_array(samples, *args)
    return RegionAnalysis(model=model, factor=float(factor), threshold=float(threshold),
                          lo=lo, hi=hi, regions=regions, bands=_bands(regions, lo, hi),
                          samples=samples, gains=gains)


def optimization_regions(model: LogCA, factor: float = 10.0, threshold: float = 0.2,
                         lo: float = DEFAULT_RANGE[0], hi: float = DEFAULT_RANGE[1],
                         samples=None, resolution: int = 16) -> RegionAnalysis:
    """Optimization regions of one design.

    Parameters
    ----------
    model : LogCA
    factor : float
        Improvement applied to each parameter in turn (L, o divided; C, A multiplied).
    threshold : float
        Minimum relative speedup gain for a parameter to count as a bottleneck (0.2 = 20%).
    lo, hi : float
        Granularity range in bytes (default the paper's 16 B .. 32 MiB).
    samples : array, optional
        Granularities at which gains are tabulated (default powers of two in [lo, hi]).
        Regions themselves are exact and do not depend on them.

    Examples
    --------
    >>> from accelperf.logca import preset
    >>> optimization_regions(preset("ultrasparc-t2", "aes")).bands[0]
    Band(oC: 16 B–1.33 KiB)

    A model with a memory hierarchy, a floor or a host constant (what ``choose`` and
    ``FitResult.full_model`` give) is asked on its own curves (:func:`hierarchical_regions`).
    """
    from .hierarchy import HierarchicalLogCA
    if isinstance(model, HierarchicalLogCA):
        return hierarchical_regions(model, factor, threshold, lo, hi, samples, resolution)
    batch = regions_batch(model.L, model.o, model.C, model.A, model.beta, model.dependent,
                          factor, threshold, lo, hi, resolution)
    samples = powers_of_two(lo, hi) if samples is None else np.asarray(samples, float)
    return _assemble(model, factor, threshold, lo, hi, batch.boundaries[0],
                     batch.inside_at_lo[0], samples)


def hierarchical_regions(model, factor: float = 10.0, threshold: float = 0.2,
                         lo: float = DEFAULT_RANGE[0], hi: float = DEFAULT_RANGE[1],
                         samples=None, resolution: int = 16) -> RegionAnalysis:
    """Optimization regions (ISCA'17 §3.2, Fig. 6) of LogCA with a memory hierarchy
    (:class:`.hierarchy.HierarchicalLogCA`), on its own curves: the gain of improving a
    parameter is ``speedup_p(g)/speedup(g) − 1`` with both speedups the hierarchical model's.

    How a parameter enters (:meth:`~.hierarchy.HierarchicalLogCA.improved`): L and o are
    divided and C and A multiplied at every layer at once, because the per-layer factors
    multiply them (T1 = o + L·g·R(g) + C·g^β/A·Q(g)); a per-layer parameter ``a[layer]``
    (the accelerator's extra cost per byte once the data outgrow that layer) or
    ``l[layer]`` (the copies') is divided, so it pays only where the data have outgrown the
    layer: its region starts near the layer's bend. The host's constant c0 and its steps
    h_k are held.

    Boundaries are found as for plain LogCA (sign changes of ``gain − threshold`` on a grid
    of ``resolution`` points per octave, each refined by Brent's method to 1e-12). With one
    layer and no host constant the plain analysis is returned, so it is exact.
    """
    from scipy.optimize import brentq
    if model.plain:
        return optimization_regions(model.base, factor, threshold, lo, hi, samples, resolution)
    _check_arguments(factor, threshold, lo, hi)
    names = model.tunable()
    better = {p: model.improved(p, factor) for p in names}

    def gain(p, g):
        return np.asarray(better[p].speedup(g), float) / np.asarray(model.speedup(g), float) - 1

    x = np.linspace(np.log(lo), np.log(hi), int(np.ceil(np.log2(hi / lo) * resolution)) + 1)
    dense = np.geomspace(lo, hi, 512)
    samples = powers_of_two(lo, hi) if samples is None else np.asarray(samples, float)
    regions, gains = {}, {}
    for p in names:
        above = gain(p, np.exp(x)) >= threshold
        roots = [math.exp(brentq(lambda t: gain(p, math.exp(t)) - threshold, x[k], x[k + 1],
                                 xtol=1e-14, rtol=1e-12))
                 for k in np.flatnonzero(above[1:] != above[:-1])]
        spans = _intervals(np.array(roots), bool(above[0]), lo, hi)
        g_dense = gain(p, dense)
        best = int(np.argmax(g_dense))
        regions[p] = ParameterRegion(p, bool(spans), spans, _cutoff(p, spans, lo, hi),
                                     float(g_dense[best]), float(dense[best]))
        gains[p] = gain(p, samples)
    return RegionAnalysis(model=model, factor=float(factor), threshold=float(threshold),
                          lo=lo, hi=hi, regions=regions, bands=_bands(regions, lo, hi),
                          samples=samples, gains=gains)
