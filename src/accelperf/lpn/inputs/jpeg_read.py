"""Ψ's JPEG reader: the C decoder when a C compiler is at hand, else the reference.

1. :mod:`.jpeg_native`: the reference scanner's decoding compiled to C;
2. :func:`.jpeg.scan_jpeg`: the reference, in Python.

Both give the same blocks or raise the same error (tests/test_jpeg_fast.py). A third
design, libjpeg's DCT coefficients counted in NumPy (:mod:`.jpeg_dct`), gives the same
counts on every well-formed file but is slower than the C decoder and cannot match the
reference on damaged files (libjpeg patches over corrupt data and prints warnings on
stderr), so it is measured (``benchmarks/lpn_end_to_end.py``), not used here.
"""

from __future__ import annotations

from pathlib import Path

from . import jpeg_native
from .jpeg import JpegBlocks, read_bytes, scan_jpeg


def read_jpeg(path: str | Path) -> JpegBlocks:
    """The blocks of the JPEG file at ``path`` (see :mod:`.jpeg` for what is accepted)."""
    data = read_bytes(path)
    if jpeg_native.available():
        return jpeg_native.scan_jpeg_native(data, str(path))
    return scan_jpeg(data, str(path))
