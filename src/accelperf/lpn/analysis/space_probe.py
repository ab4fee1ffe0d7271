"""Where a default space's range may start (:func:`.space.default_space`): the least
value at which a token of the model's example input, alone, reaches the done place. A
user's request of 0 bytes makes no beats and never finishes; a space holding it gave an
interface that failed on it, for inputs the model cannot run at all."""

from __future__ import annotations

from ...errors import ModelError
from ..net import Model
from ..sim import Interrupted, simulate

PROBE_COMMITS = 100_000
"""Commits a token alone may take while a range's low end is probed."""


def lowest_runnable(model: Model, example: dict, place: str, index: int,
                    candidates: tuple) -> int:
    """The first of ``candidates`` (ending with the example's own least value) at which
    the example's first token of ``place``, property ``index`` set to it, reaches the
    done place alone, the other places as in the example. When even the example's value
    does not (a net that never stops on its own), the probe says nothing and the first
    candidate stays."""
    def runs(value) -> bool:
        token = list(example[place][0])
        token[index] = value
        given = {**example, place: [tuple(token)]}
        try:
            return simulate(model, model.with_tokens(given),
                            max_commits=PROBE_COMMITS).latency is not None
        except Interrupted:
            raise
        except ModelError:           # stuck, runs away, or a function fails at the value
            return False
    if not runs(candidates[-1]):
        return candidates[0]
    return next(v for v in candidates if v == candidates[-1] or runs(v))


__all__ = ["PROBE_COMMITS", "lowest_runnable"]
