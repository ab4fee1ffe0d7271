"""Buffer sizing with proofs (OSDI'24 §5.2.4): the smallest size of a buffer for which a
budget holds on every input of a space.

A buffer's size is the number of tokens in the place that bounds it: the capacity place
the builder made for a place declared with a capacity, or the place's own initial tokens
(credits, slots). Every size in the range is a separate model; each is proved with
:func:`.verify.prove` over the whole input space, smallest size first, so the answer is
the smallest size that meets the budget even where latency is not monotone in the size.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, replace

from ...errors import invalid
from ..net import Model
from .inputspace import InputSpace
from .verify import _Budget, prove


@dataclass(frozen=True)
class SizingResult:
    """The smallest size of a buffer meeting a latency budget on every input (§5.2.4)."""

    place: str
    budget: str
    size: int | None                       # None: no size in the range meets it
    tried: tuple                           # ((size, holds, counterexample latency), ...)
    seconds: float
    status: str = "proved"

    def to_dict(self) -> dict:
        return {"place": self.place, "budget": self.budget, "size": self.size,
                "tried": [{"size": s, "holds": "unknown" if h is None else h,
                           "counterexample_latency": c} for s, h, c in self.tried],
                "seconds": round(self.seconds, 3), "status": self.status}


def with_size(model: Model, place: str, size: int) -> tuple[Model, str]:
    """``model`` with ``size`` tokens in the place that bounds ``place``: its capacity
    place when it was declared with a capacity, else its own initial tokens (credits,
    slots). Returns the model and the name of the place resized."""
    pid = model.place_id(place)
    cap = next((i for i, p in enumerate(model.places) if p.capacity_of == place), None)
    target = pid if cap is None else cap
    given = model.initial.get(target, [])
    if not given:
        raise invalid("--size", place, "a place declared with a capacity, or one holding "
                      "initial tokens (credits, slots) whose number is its size")
    if len(set(given)) != 1:
        raise invalid("--size", place, "a place whose initial tokens are all alike")
    initial = {**model.initial, target: [given[0]] * size}
    return replace(model, initial=initial), model.places[target].name


def size_buffer(model: Model, space: InputSpace, place: str, sizes: range, budget: str,
                *, timeout: float | None = None, progress=None) -> SizingResult:
    """The smallest size in ``sizes`` for which ``budget`` (a property such as
    ``latency <= 2000``) is proved on every input of ``space``."""
    began, clock = time.monotonic(), _Budget(timeout)
    if len(sizes) == 0 or sizes[0] < 1:
        raise invalid("--range", f"{sizes.start}..{sizes.stop - 1}", "lo..hi with 1 <= lo <= hi")
    tried = []
    for n in sizes:
        sized, _ = with_size(model, place, n)
        result = prove(sized, space, budget, timeout=clock.left_ms() and clock.left_ms() / 1000)
        latency = None if result.counterexample is None else result.counterexample.simulated
        tried.append((n, result.holds, latency))
        if progress:
            progress(f"{place} = {n}: {'holds' if result.holds else result.holds}")
        if result.holds is None:
            return SizingResult(place, budget, None, tuple(tried),
                                time.monotonic() - began, "unknown")
        if result.holds:
            return SizingResult(place, budget, n, tuple(tried), time.monotonic() - began)
    return SizingResult(place, budget, None, tuple(tried), time.monotonic() - began)


__all__ = ["SizingResult", "with_size", "size_buffer"]
