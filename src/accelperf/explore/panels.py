"""What each panel of the explorer starts from: plain data the page's script reads.

A panel is a small frozen dataclass with ``to_dict()``; the page (:mod:`.page`) embeds it
as JSON beside the JavaScript printed by :mod:`.formulas`. Models are validated by their
own constructors (LogCA, Hierarchy, the LPN library), so a bad value fails here, before
any page is written.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..errors import ModelError, invalid
from .formulas import InterfaceFormulas, interface_formulas

POINTS = 400                    # the LogCA curve's granularities (issue 25: 400 points)
# The designs a page overlays when none are named: the four SPARC AES designs of ISCA'17
# Table 5, the demo report's "does it pay at my size?" comparison.
DEFAULT_DESIGNS = ("ultrasparc-t2", "sparc-t3", "sparc-t4-engine", "sparc-t4-instr")
DENSITY_ALGORITHMS = ("dot", "matmul", "allpairs")


@dataclass(frozen=True)
class LogcaPanel:
    """Several LogCA models overlaid; the first is the one the sliders edit."""

    models: tuple
    at: float = 4096.0
    lo: float = 16.0
    hi: float = float(2**25)
    points: int = POINTS
    factor: float = 10.0
    threshold: float = 0.2

    def __post_init__(self):
        if not self.models:
            raise ModelError("models = () is invalid: no LogCA model to explore, give at "
                             "least one", field="models")
        if not (0 < self.lo < self.hi):
            raise invalid("granularity range", f"{self.lo:g}..{self.hi:g}",
                          "need 0 < from < to (bytes)")

    def to_dict(self) -> dict:
        return {"models": [logca_dict(m) for m in self.models],
                "at": self.at, "range": [self.lo, self.hi], "points": self.points,
                "factor": self.factor, "threshold": self.threshold}


def logca_dict(model) -> dict:
    """A model as the page reads it: LogCA's parameters and, for a
    :class:`~accelperf.logca.hierarchy.HierarchicalLogCA` (a `logca fit --select` model),
    its host constant c0, kernel floor, β_A and host steps ``[capacity, h, w, s]``. The page
    has no per-layer accelerator or copy costs: a model with them is refused."""
    from ..logca.hierarchy import HierarchicalLogCA
    if not isinstance(model, HierarchicalLogCA):
        return dict(model.parameters(), name=model.label)
    if any(model.accel_steps) or any(model.link_steps):
        raise invalid("model", model.label, "the explorer follows the host's steps at the "
                                            "layers, not the accelerator's or the copies'")
    out = dict(model.base.parameters(), name=model.label, c0=model.host_constant,
               floor=model.floor, beta_A=model.accel_beta)
    out["steps"] = [[l.capacity_bytes, h, w, sh] for l, h, w, sh in
                    zip(model.layers, model.host_steps, model.working_set, model.sharpness)]
    return out


@dataclass(frozen=True)
class DensityPanel:
    """A hierarchy's layers (editable in the page) and the algorithms to choose from."""

    hierarchy: object               # density.Hierarchy
    algorithm: str                  # key of ``algorithms``
    algorithms: dict = field(default_factory=dict)   # key -> density.Algorithm

    def __post_init__(self):
        if self.algorithm not in self.algorithms:
            raise invalid("algorithm", self.algorithm,
                          f"must be one of {', '.join(self.algorithms)}")

    def to_dict(self) -> dict:
        # what --hierarchy takes: the file it came from (its `name` inside is no option)
        source = self.hierarchy.source
        option = source if source and source != "built-in" else self.hierarchy.name
        return {"hierarchy": self.hierarchy.name, "hierarchy_option": option,
                "algorithm": self.algorithm,
                "algorithms": {k: a.description or a.name for k, a in self.algorithms.items()},
                "layers": [{"name": l.name, "size": l.size_bytes,
                            "bandwidth": _json_number(l.bandwidth_bytes_per_s),
                            "latency": l.latency_s} for l in self.hierarchy.layers]}


def density_panel(hierarchy_name: str, algorithm: str = "matmul") -> DensityPanel:
    """A built-in hierarchy (or a TOML file) with the three built-in algorithms of Steffen
    2007 (the page switches between them), starting with ``algorithm``."""
    from ..density import algorithm as density_algorithm, hierarchy
    return DensityPanel(hierarchy(hierarchy_name), algorithm,
                        {k: density_algorithm(k) for k in DENSITY_ALGORITHMS})


def _json_number(v: float):
    """JSON has no infinity: the page reads the string back as Infinity."""
    return "inf" if v == float("inf") else v


@dataclass(frozen=True)
class LpnPanel:
    """An LPN model's performance interface, or why the page has none. ``delays`` are the
    named delays the page has sliders for (their symbols are in the classes' formulas:
    :mod:`.delays`); ``fixed_delays`` the others, with their values and why they are
    fixed; ``declared`` each parameter's declared default (the command line names only
    the ones set otherwise); ``corners`` the check of the delay box's corners (a
    :class:`~.delays.CornerCheck`, or None)."""

    model: str
    classes: tuple[InterfaceFormulas, ...] = ()
    ranges: dict = field(default_factory=dict)        # symbol -> (lo, hi)
    defaults: dict = field(default_factory=dict)      # symbol -> start value
    frequency_hz: float = 1e9
    stream_unit: str = "tokens"
    svg: str = ""
    missing: str | None = None      # the reason the panel is empty
    delays: tuple = ()              # DelaySlider
    fixed_delays: tuple = ()        # (name, value, why)
    declared: dict = field(default_factory=dict)      # parameter -> declared default
    corners: object = None          # CornerCheck of the delay sliders' box, or None

    @property
    def slider_symbols(self) -> list[str]:
        return sorted({s for c in self.classes for s in c.symbols})

    @property
    def input_symbols(self) -> list[str]:
        delays = {d.name for d in self.delays}
        return [s for s in self.slider_symbols if s not in delays]

    def to_dict(self) -> dict:
        if self.missing:
            return {"model": self.model, "missing": self.missing}
        counts = [s for s in self.input_symbols if s.startswith("n_")]
        return {"model": self.model, "classes": [c.to_dict() for c in self.classes],
                "ranges": {s: list(self.ranges[s]) for s in self.slider_symbols},
                "defaults": {s: self.defaults[s] for s in self.slider_symbols},
                "slider_symbols": self.input_symbols, "frequency_hz": self.frequency_hz,
                "stream_symbol": counts[0] if counts else None,
                "stream_unit": self.stream_unit, "sweep": counts[0] if counts else None,
                "delays": [{"name": d.name, "start": d.start, "lo": d.lo, "hi": d.hi,
                            "doc": d.doc, "note": d.note} for d in self.delays],
                "fixed_delays": [list(f) for f in self.fixed_delays],
                "declared": dict(self.declared),
                "corners": None if self.corners is None else {
                    "total": self.corners.total, "checked": self.corners.checked,
                    "failures": [{"values": dict(values), "why": why}
                                 for values, why in self.corners.failures]}}


def _start_value(lo, hi):
    """A slider's first position: a thousand stream tokens where the range allows, else
    the middle of a small range."""
    lo, hi = float(lo), float(hi)
    if hi / max(lo, 1e-9) > 1000:
        return max(lo, min(hi, 1200.0))
    return round((lo + hi) / 2)


def lpn_panel(name: str, model=None, space=None, frequency_hz: float = 1e9,
              params: dict | None = None, delays: bool = False, progress=None) -> LpnPanel:
    """The interface panel of a library model (``name``) or of ``model`` over ``space``
    (default: the model's default space), built with the parameter values ``params``. With
    ``delays``, the model's named delays get sliders: the interface is extracted a few
    more times to keep them as symbols (:mod:`.delays`; ``name`` must then be what
    :func:`~accelperf.lpn.loader.load_model` reads). A model whose interface cannot be
    extracted gives a panel that says why (the page shows it instead of an empty chart)."""
    from ..lpn.analysis.interfaces.classes import values_of
    from ..lpn.analysis.interfaces.interface import extract_interface
    from ..lpn.analysis.space import default_space, symbol_ranges
    from ..lpn.analysis.interfaces.token_stream import StreamInterface, interface_for
    from ..lpn.analysis.interfaces.symexec import AnalysisError
    from ..lpn.loader import load_model
    from ..lpn.viz import net_svg
    from .delays import symbolic_interface

    params = dict(params or {})
    model = model if model is not None else load_model(name, params)
    symbolic = None
    try:
        space = space if space is not None else default_space(model)
        if delays and getattr(model, "parameters", ()):
            symbolic = symbolic_interface(lambda p: load_model(name, dict(params, **p)),
                                          lambda m: extract_interface(m, space),
                                          symbol_ranges(space), progress=progress)
            interface = symbolic.interface
        else:
            interface = interface_for(model, space)
    except (AnalysisError, ModelError) as exc:
        return LpnPanel(model=name, missing=f"no performance interface for {name}: {exc}")
    if isinstance(interface, StreamInterface):
        return _stream_panel(name, model, interface, frequency_hz)
    classes = interface_formulas(interface)
    ranges = {str(s): (float(lo), float(hi)) for s, (lo, hi) in symbol_ranges(space).items()}
    sliders = symbolic.sliders if symbolic else ()
    for d in sliders:
        ranges[d.name] = (float(d.lo), float(d.hi))
    used = {s for c in classes for s in c.symbols}
    unranged = sorted(used - set(ranges))
    if unranged:
        return LpnPanel(model=name, missing=f"the interface of {name} uses {', '.join(unranged)}"
                                            f", which its input space gives no range")
    counts = [s for s in sorted(used) if s.startswith("n_") and s not in
              {d.name for d in sliders}]
    unit = counts[0][2:] if counts else "tokens"
    # Fixed tokens start at the first class's sample input (inside a class); streams longer
    # than the sample's, with mid-range means; delays at the model's values.
    sample = {str(k): float(v) for k, v in values_of(space, interface.classes[0].input_class
                                                     .sample).items()} if classes else {}
    starts = {d.name: d.start for d in sliders}
    defaults = {s: starts[s] if s in starts else
                sample[s] if s in sample and not s.startswith(("n_", "mean_"))
                else _start_value(*ranges[s]) for s in used}
    values = {p.name: p.value for p in getattr(model, "parameters", ())}
    fixed = () if symbolic is None else tuple((n, values[n], why) for n, why in symbolic.fixed)
    if symbolic is None and values:
        fixed = tuple((n, v, "no sliders asked for")
                      for n, v in values.items())
    return LpnPanel(model=name, classes=classes, ranges={s: ranges[s] for s in used},
                    defaults=defaults, frequency_hz=frequency_hz, stream_unit=unit,
                    svg=net_svg(model), delays=sliders, fixed_delays=fixed,
                    corners=symbolic.corners if symbolic else None,
                    declared={p.name: p.default for p in getattr(model, "parameters", ())})


def _stream_panel(name: str, model, interface, frequency_hz: float) -> LpnPanel:
    """The panel of a stream priced token by token: sliders for the token count and the
    token's properties (tokens alike), starting at the first class's sample."""
    from ..lpn.analysis.space import count_symbol
    from ..lpn.viz import net_svg
    from .formulas import stream_formulas
    classes = stream_formulas(interface)
    ps = interface.space.place(interface.place)
    n = str(count_symbol(interface.place))
    ranges = {n: (float(ps.count[0]), float(ps.count[1]))}
    ranges |= {str(interface.symbol(p)): tuple(map(float, ps.properties[p]))
               for p in interface.properties if p in ps.properties}
    used = {s for c in classes for s in c.symbols} | {n}
    sample = interface.classes[0].sample.get(interface.place, [{}])[0]
    defaults = {s: _start_value(*ranges[s]) for s in used if s in ranges}
    defaults |= {str(interface.symbol(p)): float(v) for p, v in sample.items()
                 if str(interface.symbol(p)) in used}
    values = {p.name: p.value for p in getattr(model, "parameters", ())}
    return LpnPanel(model=name, classes=classes, ranges={s: ranges[s] for s in used},
                    defaults=defaults, frequency_hz=frequency_hz,
                    stream_unit=interface.place, svg=net_svg(model),
                    fixed_delays=tuple((k, v, "no sliders asked for")
                                       for k, v in values.items()),
                    declared={p.name: p.default for p in getattr(model, "parameters", ())})


__all__ = ["LogcaPanel", "DensityPanel", "LpnPanel", "lpn_panel", "density_panel", "POINTS",
           "DEFAULT_DESIGNS", "DENSITY_ALGORITHMS"]
