"""Each memory layer's bound (ISCA'17 §3.1, eqs. 3 and 9) on LogCA with a memory hierarchy,
and where the fitted curve reaches it (`logca bounds --hierarchy/--probe --data`).

Layer k's bound is that of its plain model (:meth:`.hierarchy.HierarchicalLogCA.layer_model`:
every bend inside the layer passed, none beyond): what the speedup would level off at if
the data stayed in layer k. Whether the speedup gets near it is asked of the hierarchical
curve itself, between the layer's start (the bend into it half way) and its end (the next
bend half way; past the outermost, :data:`.metrics.PRACTICAL_SIZE`). Asked of the layer's
plain model alone, a layer starting at 22.6 MiB read "90% of it reached at 1.87 MiB".
"""

from __future__ import annotations

from dataclasses import dataclass

from ..units import format_size
from .hierarchy import SEARCH_RANGE, MemoryLayer
from .metrics import PRACTICAL_SIZE, bound_reach, bound_type


@dataclass(frozen=True)
class LayerReach:
    """Whether the fitted curve gets within ``fraction`` of a layer's limit while the data
    are in that layer: between the layer's start and ``end`` (see the module docstring)."""

    limit: float
    fraction: float
    granularity: float | None       # None: not while the data are in the layer
    end: float
    speedup_at_end: float
    outermost: bool

    @property
    def practical(self) -> bool:
        return self.granularity is not None

    def where_it_ends(self) -> str:
        return ("at 2^48 bytes (256 TiB, the largest address space)" if self.outermost
                else f"at {format_size(self.end)}, where the data leave the layer")

    def describe(self) -> str:
        if self.limit == 0:
            return (f"the speedup falls towards 0 at large granularities; it is "
                    f"{self.speedup_at_end:.3g} {self.where_it_ends()}")
        if self.granularity is not None:
            return (f"the speedup reaches {self.fraction:.0%} of this layer's limit "
                    f"({self.fraction * self.limit:.4g}) at {format_size(self.granularity)}")
        return (f"the speedup does not reach {self.fraction:.0%} of this layer's limit while "
                f"the data are in it: it is {self.speedup_at_end:.3g} {self.where_it_ends()}")

    def to_dict(self) -> dict:
        return {"limit": self.limit, "fraction": self.fraction,
                "granularity": self.granularity, "practical": self.practical,
                "end": self.end, "speedup_at_end": self.speedup_at_end,
                "text": self.describe()}


@dataclass(frozen=True)
class LayerBound:
    """The bound (a :class:`.metrics.Bound`) of the data living in one layer, from the
    granularity where the bend into it is half way (0 for the innermost), and whether the
    fitted curve reaches it there."""

    layer: MemoryLayer
    start: float
    bound: object                  # metrics.Bound
    reach: LayerReach

    def to_dict(self) -> dict:
        return {"layer": self.layer.name, "from": self.start, **self.bound.to_dict(),
                "reach": self.reach.to_dict()}

    def __repr__(self) -> str:
        return (f"<{self.layer.name} from {format_size(self.start)}: {self.bound.kind}-bound, "
                f"speedup → {self.bound.limit:.4g}>")


def layer_bounds(model) -> tuple[LayerBound, ...]:
    """Each layer's :class:`LayerBound` of ``model`` (a
    :class:`~.hierarchy.HierarchicalLogCA`), innermost first; the last is where the data
    go past every cache. One layer: the plain model's exact root."""
    if model.plain:
        r = bound_reach(model.base)
        reach = LayerReach(r.limit, r.fraction, r.granularity if r.practical else None,
                           PRACTICAL_SIZE, r.speedup_at_practical, True)
        return (LayerBound(model.layers[0], 0.0, bound_type(model.base), reach),)
    out = []
    for k, layer in enumerate(model.layers):
        start = 0.0 if k == 0 else model.transition(k - 1)
        bound = bound_type(model.layer_model(k))
        out.append(LayerBound(layer, start, bound, layer_reach(model, k, bound.limit)))
    return tuple(out)


def layer_reach(model, k: int, limit: float, fraction: float = 0.9) -> LayerReach:
    """Where ``model``'s curve first reaches ``fraction`` of ``limit`` (layer k's) while
    the data are in layer k."""
    outermost = k == len(model.layers) - 1
    start = max(0.0 if k == 0 else model.transition(k - 1), SEARCH_RANGE[0])
    end = PRACTICAL_SIZE if outermost else min(model.transition(k), PRACTICAL_SIZE)
    g = None
    if limit > 0 and end > start:
        g = model.granularity_for(fraction * limit, start, end)
    return LayerReach(float(limit), fraction, g, float(end),
                      float(model.speedup(max(end, start))), outermost)
