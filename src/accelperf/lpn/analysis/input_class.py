"""One input class (OSDI'24 §4.1, appendix A.1–A.2): a set of inputs whose runs have the
same abstract trace, the conditions that say which inputs they are, and a sample input.

Two analyses find classes, and each fills its part of the one type:

* symbolic execution (:func:`.classes.input_classes`, for interfaces, §4.2):
  ``conditions`` are SymPy relations over the space's symbols beyond the space's own,
  ``commits`` the symbolic run's commit records, ``stuck`` the places left holding work
  (the run deadlocks);
* refinement (:func:`.refine.partition`, for proofs, §4.4): ``conditions`` are Z3 terms
  on the input's variables, ``order`` the timing conditions under which the class's
  inputs route tokens as its sample did, ``timing`` the constraints defining its commit
  times and ``latency`` its latency (a Z3 Int), with what the sample's run showed
  (``sample_latency``, ``routing``, ``firings``); ``gaps`` name what the conditions could
  not pin down (then the class's formula is exact for its sample, not proved for the rest
  of it).

In both, ``sample`` is an input of the class as tokens, {place: [{property: value}]}.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import sympy

if TYPE_CHECKING:
    from .space import InputSpace


@dataclass(frozen=True)
class InputClass:
    """One input class: its conditions, its abstract trace and a sample input (see the
    module docstring for which analysis fills which fields)."""

    index: int
    conditions: tuple                   # SymPy relations, or Z3 terms (refinement)
    commits: tuple = field(default=(), repr=False)  # the symbolic run's commit records
    sample: dict = field(default_factory=dict)   # {place: [{prop: value}]}: tokens
    stuck: tuple = ()                   # places left holding work (the run deadlocks)
    space: InputSpace = field(default=None, repr=False, compare=False)
    # refinement's (lpn2smt): what a proof over the class needs
    order: tuple = field(default=(), repr=False)    # Z3 conditions on commit/start times
    timing: tuple = field(default=(), repr=False)   # Z3 constraints defining the times
    latency: object = field(default=None, repr=False)   # Z3 Int
    sample_latency: int = 0
    routing: tuple = field(default=(), repr=False)
    firings: int = 0
    gaps: tuple = ()

    def __repr__(self) -> str:
        if self.latency is not None:     # refinement's: Z3 terms, too long to print
            return (f"InputClass({self.index}: {self.firings} firings, "
                    f"{len(self.conditions)} condition(s), {len(self.order)} timing "
                    f"condition(s), sample latency {self.sample_latency}"
                    f"{'' if self.exact else ', not exact'})")
        conds = " and ".join(self.readable_conditions()) or "the whole space"
        counts = ", ".join(f"{t} x {n}" for t, n in self.commit_counts().items())
        return f"InputClass({self.index}: {conds}; commits {counts})"

    @property
    def exact(self) -> bool:
        """Nothing is left that the conditions could not pin down."""
        return not self.gaps

    def constraints(self) -> list:
        """Membership and timing: every model is an input of the class with its times."""
        return list(self.conditions) + list(self.order) + list(self.timing)

    def readable_conditions(self) -> list[str]:
        return [str(c) for c in self.conditions]

    def commit_counts(self) -> dict:
        """Commits per transition (SymPy where they depend on the input)."""
        out = {}
        for c in self.commits:
            out[c.transition] = sympy.simplify(out.get(c.transition, 0) + c.times)
        return out

    def abstract_trace(self, values: dict | None = None) -> dict:
        """Per transition, the (tokens taken per input arc, tokens given per output arc)
        of each commit in order — A.1's α(e) with harmless reorderings factored out.
        ``values`` ({symbol: value}) makes input-dependent counts concrete."""
        values = values or {}
        out: dict = {}
        for c in self.commits:
            n = int(sympy.sympify(c.times).subs(values))
            conv = lambda v: int(sympy.sympify(v).subs(values))
            step = (tuple(conv(v) for v in c.consumed),
                    tuple((p, conv(v)) for p, v in c.produced))
            out.setdefault(c.transition, []).extend([step] * n)
        return out

    def holds(self, values: dict) -> bool:
        """Whether the input with these symbol values is in the class (SymPy
        conditions)."""
        return all(bool(sympy.sympify(c).subs(values)) for c in self.conditions)

    def to_dict(self) -> dict:
        return {"index": self.index, "conditions": self.readable_conditions(),
                "commits": {t: str(n) for t, n in self.commit_counts().items()},
                "sample": self.sample, "stuck": list(self.stuck)}


__all__ = ["InputClass"]
