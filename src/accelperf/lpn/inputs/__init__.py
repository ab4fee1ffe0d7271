"""Readers of accelerators' real input formats (the Ψ side of the library models).

Each reader turns decoded JSON (or text) into small frozen dataclasses and rejects
malformed input with one ModelError naming the entry at fault; the models turn those
into tokens.
"""


class _Abridged(str):
    """A long value shown cut short in an error message (printed without quotes)."""

    def __repr__(self) -> str:
        return str(self)


def abridged(value):
    """``value`` itself for an error message, or the start of its text when that is long."""
    text = repr(value)
    return value if len(text) <= 60 else _Abridged(text[:57] + "...")


# Imported last: a reader may use the helpers above.
from .jpeg import JpegBlocks, JpegSample, scan_jpeg  # noqa: E402
from .jpeg_read import read_jpeg  # noqa: E402

__all__ = ["abridged", "JpegBlocks", "JpegSample", "read_jpeg", "scan_jpeg"]
