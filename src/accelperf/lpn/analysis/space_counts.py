"""How a space file writes a place's token count, and what a count range means.

A place's ``count`` is a number of tokens ``N`` or a range ``"lo..hi"`` (or ``[lo, hi]``).
A range can mean two things, and the file says which with ``count_range``:

* ``count_range = "stream"`` — the place is a *stream* of ``n_P`` tokens, lo <= n_P <= hi:
  a performance interface describes it by ``n_P`` and the mean of each property, so a
  property's range bounds the tokens' mean (OSDI'24 §4.1's ``img.num_blocks``) and
  ``sum(P.p)`` is ``n_P·mean_P_p``. Verification, which gives every token its own
  variables (§4.4), still checks it count by count, so one file serves both commands.
* ``count_range = "each"`` — every count of the range is a space of its own, each token
  with its own values: what verification does; an interface or class analysis, which
  needs a stream's symbols, refuses such a space.

A range without ``count_range`` is read as ``"stream"`` (what every command did before the
key existed) with a one-line :class:`SpaceFormatWarning` saying so.
"""

from __future__ import annotations

import warnings

from ...errors import FormatNote, ModelError, invalid

COUNT_RANGES = ("stream", "each")
"""The values of ``count_range``."""


class SpaceFormatWarning(FormatNote):
    """A space file written in a form that is read, but whose meaning it leaves unsaid."""


def integer_range(where: str, value) -> tuple[int, int]:
    """``N`` or ``[lo, hi]`` with integers lo <= hi, as (lo, hi)."""
    ok_int = lambda v: isinstance(v, int) and not isinstance(v, bool)   # noqa: E731
    if ok_int(value):
        return value, value
    if isinstance(value, list) and len(value) == 2 and all(map(ok_int, value)) \
            and value[0] <= value[1]:
        return value[0], value[1]
    raise invalid(where, value, "an integer or [lo, hi] with integers lo <= hi")


def token_count(where: str, value) -> tuple[int, int]:
    """A token count: N, [lo, hi] or "lo..hi"."""
    if isinstance(value, str) and ".." in value:
        lo, _, hi = value.partition("..")
        try:
            value = [int(lo), int(hi)]
        except ValueError:
            pass
    if isinstance(value, list) or (isinstance(value, int) and not isinstance(value, bool)):
        try:
            lo, hi = integer_range(where, value)
        except ModelError:
            lo = hi = -1
        if 0 <= lo <= hi:
            return lo, hi
    raise invalid(where, value, 'a number of tokens >= 0, or a range "lo..hi" (or [lo, hi]) '
                  'with 0 <= lo <= hi')


def count_range(where: str, entry: dict, lo: int, hi: int) -> bool:
    """Whether the count range of the place table ``entry`` (at ``where``) is enumerated
    count by count (``count_range = "each"``) rather than a stream; see the module
    docstring. A range without the key warns that it is read as a stream."""
    meaning = entry.get("count_range")
    if meaning is None:
        if lo != hi:
            warnings.warn(f"{where}.count = {entry.get('count')!r} is read as count_range = "
                          f"\"stream\" (an interface's stream of n tokens whose property "
                          f"ranges bound their mean; verification checks each count): "
                          f"write count_range = \"stream\" or \"each\" to say which",
                          SpaceFormatWarning, stacklevel=3)
        return False
    if meaning not in COUNT_RANGES or lo == hi:
        raise invalid(f"{where}.count_range", meaning, "\"stream\" (an interface's stream, "
                      "verified count by count) or \"each\" (every count its own space), "
                      "for a place whose count is a range")
    if meaning == "each" and (entry.get("probe") is not None or entry.get("by_token")):
        raise invalid(f"{where}.count_range", meaning, "\"stream\" with probe or by_token "
                      "(they price a stream)")
    return meaning == "each"


__all__ = ["COUNT_RANGES", "SpaceFormatWarning", "integer_range", "token_count",
           "count_range"]
