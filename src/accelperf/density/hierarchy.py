"""Memory hierarchies and the rate bound they impose (Steffen 2007, §4 and appendix A).

A layer moves data into a local store of μ bytes at β bytes/s after a start-up latency λ.
Feeding an algorithm of density ρ through it allows at most

    σ = ρ(μ) · β / (1 + βλ/μ)          (eq. 6)

computations per second. βλ/μ is the latency's share of the time to fill the layer once;
a well-balanced layer has βλ/μ ≪ 1, and then σ ≈ ρ(μ)·β (eq. 7). The slowest layer bounds
the algorithm on that hardware and is its bottleneck.
"""

from __future__ import annotations

import math
import tomllib
from dataclasses import dataclass
from importlib import resources
from pathlib import Path


import numpy as np

from ..errors import ModelError, invalid
from ..parameters import nearest
from ..validate import real_number
from .algorithms import Algorithm

MAX_FILE_BYTES = 1 << 20    # a hierarchy file is a few layers; anything larger is a mistake
_SMALLEST_STORE = float(np.finfo(float).tiny)


@dataclass(frozen=True)
class Layer:
    """One level of a memory hierarchy: local-store size μ (bytes), bandwidth β (bytes/s,
    may be inf), latency λ (s)."""

    name: str
    size_bytes: float
    bandwidth_bytes_per_s: float
    latency_s: float = 0.0

    def __post_init__(self):
        if not isinstance(self.name, str) or not self.name.strip():
            raise invalid("layer name", self.name, "must be a non-empty string")
        where = f"layer {self.name!r}"
        object.__setattr__(self, "size_bytes",
                           real_number(f"{where}: size_bytes", self.size_bytes, positive=False))
        object.__setattr__(self, "bandwidth_bytes_per_s",
                           real_number(f"{where}: bandwidth_bytes_per_s",
                                       self.bandwidth_bytes_per_s, positive=True,
                                       allow_inf=True))
        object.__setattr__(self, "latency_s",
                           real_number(f"{where}: latency_s", self.latency_s, positive=False))

    @property
    def unbounded(self) -> bool:
        """Unbounded bandwidth and no latency (the paper's layer 0): it caps nothing."""
        return math.isinf(self.bandwidth_bytes_per_s) and self.latency_s == 0

    @property
    def latency_factor(self) -> float:
        """βλ/μ: the latency as a fraction of the time to fill the layer once."""
        if self.latency_s == 0:
            return 0.0
        if self.size_bytes == 0 or math.isinf(self.bandwidth_bytes_per_s):
            return math.inf
        return self.bandwidth_bytes_per_s * self.latency_s / self.size_bytes

    def density(self, algorithm: Algorithm) -> float:
        """ρ(μ), the algorithm's density with this layer's store; for μ = 0 the limit
        α → 0+ (η(0)/0 itself is 0/0), taken at the smallest positive double."""
        return float(algorithm.rho(self.size_bytes or _SMALLEST_STORE))

    def rate(self, algorithm: Algorithm) -> float:
        """σ for this layer (eq. 6); inf for an unbounded layer."""
        if self.unbounded:
            return math.inf
        if self.size_bytes == 0 and self.latency_s > 0:
            return 0.0      # nothing is held: with a latency per (empty) chunk no work gets through
        rho = self.density(algorithm)
        with np.errstate(all="ignore"):     # an overflow is judged by rate_bound, by name
            if self.size_bytes == 0:
                return float(np.float64(rho) * self.bandwidth_bytes_per_s)
            if math.isinf(self.bandwidth_bytes_per_s):      # latency-limited only
                return float(np.float64(rho) * self.size_bytes / self.latency_s)
            return float(np.float64(rho) * self.bandwidth_bytes_per_s / (1 + self.latency_factor))

    def to_dict(self) -> dict:
        return {"name": self.name, "size_bytes": self.size_bytes,
                "bandwidth_bytes_per_s": self.bandwidth_bytes_per_s,
                "latency_s": self.latency_s}


HIERARCHY_KEYS = ("name", "layer")
LAYER_KEYS = ("name", "size_bytes", "bandwidth_bytes_per_s", "latency_s", "note", "method")


@dataclass(frozen=True)
class Hierarchy:
    """Layers ordered from the compute units outwards (layer 0 first)."""

    name: str
    layers: tuple[Layer, ...]
    source: str = ""

    def __post_init__(self):
        if not isinstance(self.name, str) or not self.name.strip():
            raise invalid("hierarchy name", self.name, "must be a non-empty string")
        layers = tuple(self.layers) if isinstance(self.layers, (list, tuple)) else None
        if layers is None or not all(isinstance(l, Layer) for l in layers):
            raise invalid(f"hierarchy {self.name!r}: layers", layers, "must be Layer objects")
        if not layers:
            raise ModelError(f"hierarchy {self.name!r} is invalid: it has no layers")
        names = [l.name for l in layers]
        dupes = sorted({n for n in names if names.count(n) > 1})
        if dupes:
            raise ModelError(f"hierarchy {self.name!r} is invalid: layer name(s) {dupes} "
                             f"appear twice")
        object.__setattr__(self, "layers", layers)

    @classmethod
    def from_dict(cls, name: str, data: dict, source: str = "") -> "Hierarchy":
        """A hierarchy from a table ``{name, layer: [{name, size_bytes,
        bandwidth_bytes_per_s, latency_s}, ...]}``. Every key is checked: a misspelt one is
        named with the nearest valid one (``[[layers]]`` was ignored, and a layer with it)."""
        if not isinstance(data, dict):
            raise invalid(f"hierarchy {name!r}", data, "a table with a list of [[layer]]s")
        for key in data:
            if key not in HIERARCHY_KEYS:
                raise ModelError(f"hierarchy {name!r}: key {key!r} is invalid: a hierarchy "
                                 f"has {', '.join(HIERARCHY_KEYS)} (as [[layer]] tables)"
                                 f"{nearest(key, HIERARCHY_KEYS)}")
        raw = data.get("layer")
        if not isinstance(raw, list) or not raw:
            raise ModelError(f"hierarchy {name!r} is invalid: expected a list of "
                             f"[[layer]] tables with name, size_bytes, bandwidth_bytes_per_s, "
                             f"latency_s")
        layers = []
        for i, item in enumerate(raw, start=1):
            if not isinstance(item, dict):
                raise ModelError(f"hierarchy {name!r}: layer {i} (counting from 1) is not "
                                 f"a table")
            label = f"layer {item['name']!r}" if isinstance(item.get("name"), str) else \
                f"layer {i} (counting from 1)"
            for key in item:
                if key not in LAYER_KEYS:
                    raise ModelError(f"hierarchy {name!r}: {label} has unknown key {key!r}"
                                     f"{nearest(key, LAYER_KEYS)}; a layer has "
                                     f"{', '.join(LAYER_KEYS[:4])}")
            missing = [k for k in LAYER_KEYS[:3] if k not in item]
            if missing:
                raise ModelError(f"hierarchy {name!r}: {label} lacks {', '.join(missing)}")
            layers.append(Layer(item["name"], item["size_bytes"],
                                item["bandwidth_bytes_per_s"], item.get("latency_s", 0.0)))
        return cls(data.get("name", name), tuple(layers), source)

    @classmethod
    def from_toml(cls, path: str | Path) -> "Hierarchy":
        """A hierarchy from a TOML file; a missing, unreadable, non-regular, oversized,
        binary or malformed file is a ModelError naming the path."""
        path = Path(path)
        if not path.exists():
            raise invalid("hierarchy", str(path), "no such file (or use a built-in: "
                          + ", ".join(built_in_hierarchies()) + ")")
        if path.is_dir():
            raise invalid("hierarchy", str(path), "is a directory; give a .toml file")
        if not path.is_file():
            raise invalid("hierarchy", str(path), "is not a regular file; give a .toml file")
        if path.stat().st_size > MAX_FILE_BYTES:
            raise invalid("hierarchy", str(path), f"is {path.stat().st_size} bytes: a "
                          f"hierarchy file is at most {MAX_FILE_BYTES} bytes")
        try:
            data = tomllib.loads(path.read_text("utf-8-sig"))
        except OSError as exc:
            raise invalid("hierarchy", str(path), f"cannot be read: {exc.strerror}") from None
        except UnicodeDecodeError:
            raise invalid("hierarchy", str(path), "is not a text file (not UTF-8); give a "
                                                  ".toml file") from None
        except tomllib.TOMLDecodeError as exc:
            raise invalid("hierarchy", str(path), f"not valid TOML: {exc}") from None
        if isinstance(data.get("hierarchy"), dict) and "layer" in data:
            # [hierarchy] name = ... with [[layer]] tables below it
            data = {**{k: v for k, v in data.items() if k != "hierarchy"},
                    **data["hierarchy"]}
        elif "hierarchy" in data and isinstance(data["hierarchy"], dict):
            # [[hierarchy.NAME.layer]] tables, one hierarchy per file
            tables = data["hierarchy"]
            if len(tables) > 1:
                raise invalid("hierarchy", str(path), f"it defines {len(tables)} hierarchies "
                              f"({', '.join(map(str, tables))}); put one in each file")
            if len(tables) == 1 and isinstance(next(iter(tables.values())), dict):
                name, body = next(iter(tables.items()))
                return cls.from_dict(name, body, str(path))
        return cls.from_dict(path.stem, data, str(path))

    def to_toml(self, header: str = "") -> str:
        def num(x):
            return "inf" if math.isinf(x) else repr(float(x))
        lines = [f"# {line}" for line in header.splitlines()] + [f'name = "{self.name}"', ""]
        for layer in self.layers:
            lines += ["[[layer]]", f'name = "{layer.name}"',
                      f"size_bytes = {num(layer.size_bytes)}",
                      f"bandwidth_bytes_per_s = {num(layer.bandwidth_bytes_per_s)}",
                      f"latency_s = {num(layer.latency_s)}", ""]
        return "\n".join(lines)


def built_in_hierarchies() -> dict[str, Hierarchy]:
    text = resources.files("accelperf.density").joinpath("hierarchies.toml").read_text("utf-8")
    data = tomllib.loads(text)
    return {name: Hierarchy.from_dict(name, body, "built-in")
            for name, body in data["hierarchy"].items()}


def hierarchy(name_or_path: str, also: str = "") -> Hierarchy:
    """A built-in hierarchy by name (``src-map-c``) or one loaded from a TOML file. ``also``:
    the caller's other choices, named first when the name is none of these (`logca fit
    --hierarchy` takes ``data`` too)."""
    builtins = built_in_hierarchies()
    if str(name_or_path) in builtins:
        return builtins[str(name_or_path)]
    if not str(name_or_path).strip():
        raise invalid("hierarchy", name_or_path, f"give a built-in ({', '.join(builtins)}) "
                                                 f"or a path to a .toml file")
    if str(name_or_path).endswith(".toml") or Path(str(name_or_path)).exists():
        return Hierarchy.from_toml(name_or_path)
    if also:
        raise invalid("hierarchy", name_or_path, f"{also}, a built-in ({', '.join(builtins)}) "
                                                 f"or a path to a .toml file")
    raise invalid("hierarchy", name_or_path, f"valid built-ins are {', '.join(builtins)}, or "
                                             f"a path to a .toml file")


# ---------------------------------------------------------------------- the bound
@dataclass(frozen=True)
class LayerRate:
    name: str
    sigma: float             # computations per second this layer allows (eq. 6)
    latency_factor: float    # βλ/μ
    rho: float | None        # ρ(μ)
    layer: Layer

    def to_dict(self) -> dict:
        return {"name": self.name, "sigma": self.sigma, "latency_factor": self.latency_factor,
                "rho": self.rho, "size_bytes": self.layer.size_bytes,
                "bandwidth_bytes_per_s": self.layer.bandwidth_bytes_per_s,
                "latency_s": self.layer.latency_s, "unbounded": self.layer.unbounded}


@dataclass(frozen=True)
class DensityBound:
    """The rate an algorithm can reach on a hierarchy, and what limits it."""

    algorithm: Algorithm
    hierarchy: Hierarchy
    layers: tuple[LayerRate, ...]
    bound: float                       # min σ over the layers
    bottleneck: str                    # the layer that sets it
    compute_ceiling: float | None
    limited_by: str                    # "memory" or "compute"
    margin: float | None               # how far the other limit is above the binding one

    @property
    def attainable(self) -> float:
        return self.bound if self.compute_ceiling is None else min(self.bound,
                                                                   self.compute_ceiling)

    @property
    def warnings(self) -> tuple[str, ...]:
        """What the numbers mean when they are degenerate: no limit at all, a bound of 0,
        a margin too large for a double."""
        out = []
        if math.isinf(self.bound):
            out.append("no layer limits the rate: every layer is unbounded (infinite "
                       "bandwidth, no latency), so the bound is infinite"
                       + ("" if self.compute_ceiling is not None else
                          "; give `compute_ceiling` for a finite answer"))
        elif self.bound == 0:
            why = next(r for r in self.layers if r.sigma == 0)
            out.append(f"the bound is 0: layer {why.name!r} lets no computation through ("
                       + ("it holds nothing and has a latency" if why.layer.size_bytes == 0
                          and why.layer.latency_s > 0 else
                          f"ρ(μ) = {why.rho:.3g} computations per byte")
                       + ")")
        if self.margin is not None and math.isinf(self.margin) and self.bound > 0:
            out.append("the ratio of the memory bound to the compute ceiling is beyond the "
                       "range of a double (margin reported as infinite)")
        sizes = [l.size_bytes for l in self.hierarchy.layers]
        if any(b < a for a, b in zip(sizes, sizes[1:])):
            # harmless to the bound (a minimum over the layers), but the table reads inwards
            out.append("the layers' stores shrink outwards: a hierarchy lists them innermost "
                       "first (the bound, a minimum over the layers, is the same either way)")
        return tuple(out)

    def to_dict(self) -> dict:
        return {"algorithm": {"name": self.algorithm.name, "formula": self.algorithm.formula},
                "hierarchy": self.hierarchy.name,
                "layers": [l.to_dict() for l in self.layers], "bound": self.bound,
                "bottleneck": self.bottleneck, "compute_ceiling": self.compute_ceiling,
                "limited_by": self.limited_by, "margin": self.margin,
                "attainable": self.attainable, "warnings": list(self.warnings)}

    def __repr__(self) -> str:
        ceiling = "" if self.compute_ceiling is None else \
            f", {self.limited_by}-bound (margin {self.margin:.3g}x)"
        return (f"DensityBound({self.algorithm.name} on {self.hierarchy.name}: "
                f"{self.bound:.4g} computations/s, bottleneck {self.bottleneck}{ceiling})")


def rate_bound(algorithm: Algorithm, hierarchy: Hierarchy,
               compute_ceiling: float | None = None) -> DensityBound:
    """σ per layer (eq. 6), the bound, the bottleneck layer and, given the compute ceiling
    (functional units × clock, §5), whether memory or compute limits the algorithm.

    >>> from accelperf.density import algorithm, hierarchy
    >>> rate_bound(algorithm("matmul", 4), hierarchy("src-map-c")).bottleneck
    'obm-to-block-ram'
    """
    if compute_ceiling is not None:
        compute_ceiling = real_number("compute_ceiling", compute_ceiling, positive=True)
    if not isinstance(algorithm, Algorithm):
        raise invalid("algorithm", algorithm, "an Algorithm (dot_product(), matmul(), "
                                              "all_pairs(), algorithm('...'))")
    if not isinstance(hierarchy, Hierarchy):
        raise invalid("hierarchy", hierarchy, "a Hierarchy (hierarchy('src-map-c'), "
                                              "Hierarchy.from_toml(path))")
    rates = []
    for layer in hierarchy.layers:
        rho = None if layer.unbounded else layer.density(algorithm)
        sigma = layer.rate(algorithm)
        _check_layer(algorithm, layer, rho, sigma)
        rates.append(LayerRate(layer.name, sigma, layer.latency_factor, rho, layer))
    slowest = min(rates, key=lambda r: r.sigma)
    bound = slowest.sigma
    if compute_ceiling is None:
        limited_by, margin = "memory", None
    elif compute_ceiling < bound:
        limited_by, margin = "compute", bound / compute_ceiling
    else:
        limited_by, margin = "memory", (compute_ceiling / bound if bound > 0 else math.inf)
    return DensityBound(algorithm, hierarchy, tuple(rates), bound, slowest.name,
                        compute_ceiling, limited_by, margin)


def _check_layer(algorithm: Algorithm, layer: Layer, rho: float | None, sigma: float) -> None:
    """Refuse what eq. 6 cannot mean: a density that is negative, NaN or infinite at the
    layer's store, or a rate that overflows a double."""
    what = algorithm.formula or algorithm.name
    if rho is not None and not (math.isfinite(rho) and rho >= 0):
        at = f"μ = {layer.size_bytes:g} B" if layer.size_bytes else "μ → 0"
        raise ModelError(f"density ρ = {rho!r} computations per byte at layer {layer.name!r} "
                         f"({at}) is invalid: a density must be a finite number >= 0; check "
                         f"the algorithm '{what}' and its operand size")
    if math.isnan(sigma) or (math.isinf(sigma) and not layer.unbounded):
        raise ModelError(f"rate σ = {sigma!r} at layer {layer.name!r} is invalid: ρ(μ) = "
                         f"{rho:.3g} times β = {layer.bandwidth_bytes_per_s:.3g} B/s is beyond "
                         f"the range of a double; check the algorithm '{what}' and its "
                         f"operand size")
