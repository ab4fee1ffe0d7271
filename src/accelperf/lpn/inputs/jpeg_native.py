"""Ψ's JPEG reader in C: the reference scanner's steps compiled once (``jpeg_scan.c``).

:func:`.jpeg.scan_jpeg` decodes every Huffman code word in Python, about a microsecond a
symbol. The same decoding (T.81 F.2.2: one DC code, then AC codes to EOB or the 63rd
coefficient; ZRL skips 16) in C, on the same 16-bit lookup tables, gives the same counts
and block ends some fifty times faster; the headers are still checked in Python
(:func:`.jpeg.scan_layout`), so a bad header gives the reference's error. When the C
decoder meets something it cannot decode (a code missing from a table, data that stops
early) it stops, and the reference scanner reads the file again to say what is wrong in
its own words. Built with the system C compiler into the user's cache on first use; no
compiler: :func:`available` is False and :func:`.jpeg_read.read_jpeg` uses another reader.
"""

from __future__ import annotations

import ctypes
from functools import lru_cache
from importlib import resources

import numpy as np

from .jpeg import JpegBlocks, layout_or_none, scan_jpeg


@lru_cache(maxsize=1)
def _library():
    from ...measure.native import build_shared
    source = resources.files("accelperf.lpn.inputs").joinpath("jpeg_scan.c").read_text("utf-8")
    try:
        path = build_shared("jpeg_scan", source)
        lib = ctypes.CDLL(str(path)) if path is not None else None
    except OSError:                    # an unwritable cache, an unloadable library
        return None
    if lib is None:
        return None
    p, i64 = ctypes.c_void_p, ctypes.c_int64
    lib.jpeg_table.argtypes, lib.jpeg_table.restype = [p, p, p], ctypes.c_int
    lib.jpeg_scan.argtypes = [p, i64, p, p, p, p, p, p, i64, p, p, p, p]
    lib.jpeg_scan.restype = ctypes.c_int
    return lib


def available() -> bool:
    """Whether the C decoder is built (or can be) here."""
    return _library() is not None


def _ptr(a: np.ndarray) -> int:
    return a.ctypes.data


def scan_jpeg_native(data: bytes, name: str = "<bytes>") -> JpegBlocks:
    """What :func:`.jpeg.scan_jpeg` returns for ``data`` (or raises), decoded in C."""
    lib = _library()
    layout = layout_or_none(data, name)
    if layout is None or lib is None:
        return scan_jpeg(data, name)
    used = sorted({t for _, _, dc, ac in layout.components for t in (dc, ac)})
    tables = np.empty((len(used), 65536), np.uint32)
    for i, key in enumerate(used):
        counts, values = (np.frombuffer(b, np.uint8) for b in layout.huffman[key])
        if lib.jpeg_table(_ptr(counts), _ptr(values), _ptr(tables[i])) != 0:
            return scan_jpeg(data, name)             # the reference names the bad table
    one = len(layout.components) == 1                # one component: one block per MCU
    dc, ac = [], []
    for h, v, dc_key, ac_key in layout.components:
        n = 1 if one else h * v
        dc += [used.index(dc_key)] * n
        ac += [used.index(ac_key)] * n
    dc, ac = np.array(dc, np.int32), np.array(ac, np.int32)
    seg = np.array(layout.segments, np.int64).reshape(-1, 3)
    start, stop, mcus = (np.ascontiguousarray(seg[:, i]) for i in range(3))
    longest = int((stop - start).max()) if seg.size else 0
    work, ff = np.empty(longest + 8, np.uint8), np.empty(longest + 1, np.int64)
    blocks = layout.mcus * dc.size
    symbols, ends = np.empty(blocks, np.int64), np.empty(blocks, np.int64)
    raw = np.frombuffer(data, np.uint8)
    if lib.jpeg_scan(_ptr(raw), len(start), _ptr(start), _ptr(stop), _ptr(mcus),
                     _ptr(tables), _ptr(dc), _ptr(ac), dc.size, _ptr(work), _ptr(ff),
                     _ptr(symbols), _ptr(ends)) != 0:
        return scan_jpeg(data, name)                 # the reference says what is wrong
    return JpegBlocks(layout.name, layout.width, layout.height, layout.sampling, symbols,
                      ends, layout.size)
