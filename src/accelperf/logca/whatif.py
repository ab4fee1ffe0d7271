"""What-if: one design before and after changing some of its parameters (ISCA'17 §3)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import numpy as np

from ..errors import ModelError, invalid
from ..units import powers_of_two
from .metrics import GranularityResult
from .model import DEFAULT_RANGE, LogCA

NUMERIC = ("L", "o", "C", "A", "beta")
_CHANGE = re.compile(r"^\s*([A-Za-z_]+)\s*=\s*([*/x]?)\s*(\S+)\s*$")


def parse_change(text: str) -> tuple[str, str, str]:
    """``"o=435"`` → ("o", "", "435"); ``"A=*2"`` multiplies, ``"L=/10"`` divides."""
    match = _CHANGE.match(str(text))
    if not match:
        raise invalid("changes", text, "expected NAME=VALUE, NAME=*FACTOR or NAME=/FACTOR, "
                                       "with NAME one of L, o, C, A, beta, latency")
    name, op, value = match.groups()
    op = "*" if op == "x" else op
    if name not in NUMERIC + ("latency",):
        raise invalid("changes", text, "NAME must be one of L, o, C, A, beta, latency")
    if name == "latency" and op:
        raise invalid("changes", text, "latency takes 'independent' or 'dependent'")
    return name, op, value


def apply_changes(model: LogCA, changes) -> tuple[LogCA, dict]:
    """The model with ``changes`` (strings like ``"o=435"``) applied, and what changed."""
    updates: dict = {}
    for text in changes:
        name, op, value = parse_change(text)
        if name == "latency":
            updates[name] = value
            continue
        try:
            number = float(value)
        except ValueError:
            raise invalid("changes", text, f"{value!r} is not a number") from None
        current = updates.get(name, getattr(model, name))
        if op and (not np.isfinite(number) or number <= 0):
            raise invalid("changes", text, "a factor must be a finite number > 0")
        updates[name] = current * number if op == "*" else current / number if op == "/" \
            else number
    if not updates:
        raise ModelError("changes is missing: give at least one change, e.g. 'o=435'",
                         field="changes")
    after = model.with_parameters(**updates, name=f"{model.label} (what-if)")
    return after, updates


@dataclass(frozen=True)
class WhatIf:
    """Speedup, g1 and g_A/2 of a design before and after a change."""

    before: LogCA
    after: LogCA
    changes: dict
    g1: tuple[GranularityResult, GranularityResult]
    g_half: tuple[GranularityResult, GranularityResult]
    samples: np.ndarray = field(repr=False)
    speedup_before: np.ndarray = field(repr=False)
    speedup_after: np.ndarray = field(repr=False)

    def to_dict(self) -> dict:
        return {"before": self.before.parameters(), "after": self.after.parameters(),
                "changes": self.changes,
                "g1": {"before": self.g1[0].to_dict(), "after": self.g1[1].to_dict()},
                "g_half": {"before": self.g_half[0].to_dict(),
                           "after": self.g_half[1].to_dict()},
                "speedup": {"granularity": self.samples.tolist(),
                            "before": self.speedup_before.tolist(),
                            "after": self.speedup_after.tolist()}}

    def __repr__(self) -> str:
        fmt = lambda r: "none" if r.root is None else f"{r.root:.4g} B"
        return (f"WhatIf({self.changes}: g1 {fmt(self.g1[0])} → {fmt(self.g1[1])}, "
                f"g_A/2 {fmt(self.g_half[0])} → {fmt(self.g_half[1])})")


def what_if(model: LogCA, changes, samples=None) -> WhatIf:
    """Compare a design with a changed copy of itself.

    >>> from accelperf.logca import preset
    >>> what_if(preset("sparc-t3", "aes"), ["o=435", "L=500"])
    WhatIf({'o': 435.0, 'L': 500.0}: g1 326 B → 11.06 B, g_A/2 3502 B → 118.9 B)
    """
    after, updates = apply_changes(model, changes)
    g = powers_of_two(*DEFAULT_RANGE) if samples is None else np.asarray(samples, float)
    return WhatIf(before=model, after=after, changes=updates,
                  g1=(model.g1(), after.g1()), g_half=(model.g_half(), after.g_half()),
                  samples=g, speedup_before=model.speedup(g), speedup_after=after.speedup(g))
