"""The records of a symbolic run (:mod:`.symexec`): its tokens, commit records and paths,
and the errors the symbolic analyses raise."""

from __future__ import annotations

from dataclasses import dataclass, field

from ....errors import ModelError


class AnalysisError(ModelError):
    """A net (or a part of it) that the symbolic analyses cannot handle, and why."""


class StreamValueError(AnalysisError):
    """A stream bundle cannot stand for the stream: a per-token value sets a count or a
    weight (:mod:`.token_stream` prices such a stream token by token)."""


def steered_by_values(what: str, transition: str, value) -> AnalysisError:
    """The refusal of a value of a stream's tokens that steers the net: a count or weight
    per token is priced token by token (:class:`StreamValueError`, :mod:`.token_stream`),
    a guard, route or read per token stays refused. by_token's classes are of one token,
    whose values are its own symbols, so they take a count or weight too."""
    counted = what.startswith(("count", "weight"))
    return (StreamValueError if counted else AnalysisError)(
        f"the {what} of transition {transition!r} depends on a stream's token values "
        f"({value}): give that place a fixed count in the space, so each token has its "
        f"own symbols" + (" (or by_token = true on it: the classes of one token)"
                          if counted else ""))


def busiest(commits) -> str:
    """The transitions with the most of ``commits`` (records): on a path that does not
    end, the loop that keeps firing."""
    from collections import Counter
    top = Counter(c.transition for c in commits).most_common(3)
    return ", ".join(f"{name} ({n:,})" for name, n in top)


class ExplosionError(ModelError):
    """The input space splits into more paths than the configured limit."""


@dataclass
class SymToken:
    values: tuple               # SymPy expression per property
    mult: object = 1            # tokens this entry stands for: int or SymPy (a bundle)
    source: int = -1            # index of the commit record that produced it (-1: initial)


@dataclass(frozen=True)
class Commit:
    """One commit record of a symbolic run; ``times`` firings when it is bundled."""

    transition: str
    tid: int
    consumed: tuple             # tokens taken from each input arc, per firing
    produced: tuple             # ((place name, tokens), ...) per output arc, per firing
    delay: object               # SymPy: cycles of one firing
    interval: object            # SymPy: its initiation interval
    times: object               # 1, or SymPy for a bundled record
    sources: tuple              # records whose tokens it consumed (-1: initial tokens)
    bundled: bool = False
    waited: tuple = ()          # records whose tokens its read arcs waited for (-1: initial)

    def __repr__(self) -> str:
        n = "" if self.times == 1 else f" x {self.times}"
        return f"Commit({self.transition}{n}: in {self.consumed}, out {self.produced})"


@dataclass
class Path:
    """One path of the exploration: its conditions and commit records."""

    queues: list
    conditions: list = field(default_factory=list)
    commits: list = field(default_factory=list)
    stuck: tuple = ()

    def copy(self) -> "Path":
        return Path([list(q) for q in self.queues], list(self.conditions),
                    list(self.commits), self.stuck)


__all__ = ["AnalysisError", "StreamValueError", "ExplosionError", "SymToken", "Commit",
           "Path"]
