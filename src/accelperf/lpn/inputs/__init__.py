"""Readers of accelerators' real input formats (the Ψ side of the library models).

Each reader turns decoded JSON (or text) into small frozen dataclasses and rejects
malformed input with one ModelError naming the entry at fault; the models turn those
into tokens.
"""


import json


class _Abridged(str):
    """A long value shown cut short in an error message (printed without quotes)."""

    def __repr__(self) -> str:
        return str(self)


def abridged(value):
    """``value`` itself for an error message, or the start of its text when that is long;
    a dict or list as the JSON it was written in (``{"width": 65535}``, not Python's
    ``{'width': 65535}``)."""
    text = _as_written(value)
    if len(text) > 60:
        return _Abridged(text[:57] + "...")
    return _Abridged(text) if isinstance(value, (dict, list)) else value


def _as_written(value) -> str:
    if isinstance(value, (dict, list)):
        try:
            return json.dumps(value, separators=(", ", ": "))
        except (TypeError, ValueError):     # not JSON (a model's own Python input)
            pass
    return repr(value)


# Imported last: a reader may use the helpers above.
from .jpeg import JpegBlocks, JpegSample, scan_jpeg  # noqa: E402
from .jpeg_read import read_jpeg  # noqa: E402

__all__ = ["abridged", "JpegBlocks", "JpegSample", "read_jpeg", "scan_jpeg"]
