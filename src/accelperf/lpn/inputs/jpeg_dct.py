"""Ψ's JPEG reader at C speed: the symbol counts from the DCT coefficients libjpeg decodes.

:func:`.jpeg.scan_jpeg` decodes every Huffman code word in Python (the reference). Here
libjpeg (through ``jpeglib``, ``pip install 'accelperf[libjpeg]'``) decodes the quantised DCT
coefficients of every block, and NumPy turns them into the same counts (ITU-T T.81
F.1.2.2): a block's AC symbols are its non-zero AC coefficients in zig-zag order, one ZRL
for every 16 zeros in a run before one of them, and an EOB unless coefficient 63 is
non-zero. The same coefficients give each block's coded length (the code length of every
symbol from the file's own Huffman tables plus the value bits, F.1.2.1-2), hence the file
offset where each block ends (:attr:`.jpeg.JpegBlocks.ends`).

libjpeg's arrays leave out the padding blocks that fill the last MCU column and row; a
libjpeg-written file codes each as the block before it (DC difference 0, then EOB), which
is what is assumed here. The assumptions are checked: the coded length of each restart
interval must fill its segment to the byte, and the padding bits after it must be the
1-bits T.81 requires; a file that fails a check (another encoder's padding blocks, a
truncated scan) is read again by the reference scanner. On well-formed files this gives
the reference's counts and ends (tests/test_jpeg_fast.py); on a corrupt scan libjpeg
patches over the damage (and prints a warning on stderr), and the patched coefficients
can pass the checks, so :func:`.jpeg_read.read_jpeg` uses the C decoder instead, which is
also faster (``benchmarks/lpn_end_to_end.py`` measures both).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from .jpeg import JpegBlocks, ScanLayout, layout_or_none, scan_jpeg

# Natural (row-major) index of each zig-zag position (T.81 Figure A.6).
ZIGZAG = np.array([0, 1, 8, 16, 9, 2, 3, 10, 17, 24, 32, 25, 18, 11, 4, 5, 12, 19, 26, 33,
                   40, 48, 41, 34, 27, 20, 13, 6, 7, 14, 21, 28, 35, 42, 49, 56, 57, 50, 43,
                   36, 29, 22, 15, 23, 30, 37, 44, 51, 58, 59, 52, 45, 38, 31, 39, 46, 53,
                   60, 61, 54, 47, 55, 62, 63])


def available() -> bool:
    """Whether libjpeg's coefficients can be had here (the optional ``jpeglib``)."""
    try:
        import jpeglib  # noqa: F401
    except ImportError:
        return False
    return True


def read_jpeg_dct(path: str | Path, data: bytes) -> JpegBlocks:
    """The blocks of the JPEG file at ``path`` whose bytes are ``data``: libjpeg's
    coefficients counted in NumPy, or the reference scanner's answer when a check fails."""
    name = str(path)
    layout = layout_or_none(data, name)
    if layout is None:
        return scan_jpeg(data, name)
    blocks = _from_coefficients(path, data, layout)
    return blocks if blocks is not None else scan_jpeg(data, name)


def _from_coefficients(path, data: bytes, layout: ScanLayout) -> JpegBlocks | None:
    import jpeglib
    try:
        dct = jpeglib.read_dct(str(path))
        planes = [dct.Y] + ([dct.Cb, dct.Cr] if len(layout.components) == 3 else [])
    except Exception:    # noqa: BLE001 - libjpeg refused it: the reference says why
        return None
    if any(p is None for p in planes):
        return None
    interleaved = len(layout.components) > 1
    hmax = max(h for h, _, _, _ in layout.components)
    vmax = max(v for _, v, _, _ in layout.components)
    mcux = -(-layout.width // (8 * hmax)) if interleaved else planes[0].shape[1]
    mcuy = -(-layout.height // (8 * vmax)) if interleaved else planes[0].shape[0]
    if mcux * mcuy != layout.mcus:
        return None
    symbols, bits = [], []
    for plane, (h, v, dc, ac) in zip(planes, layout.components):
        if not interleaved:
            h = v = 1
        counted = _component(plane, h, v, mcux, mcuy, code_lengths(*layout.huffman[dc]),
                             code_lengths(*layout.huffman[ac]), layout)
        if counted is None:
            return None
        symbols.append(counted[0])
        bits.append(counted[1])
    # bitstream order: MCU by MCU, each component's h x v blocks in turn
    symbols = np.concatenate(symbols, axis=1).ravel()
    bits = np.concatenate(bits, axis=1).ravel()
    ends = _block_ends(data, layout, bits, symbols.size // layout.mcus)
    if ends is None:
        return None
    return JpegBlocks(layout.name, layout.width, layout.height, layout.sampling, symbols,
                      ends, layout.size)


def code_lengths(counts: bytes, values: bytes):
    """The code length of each of a Huffman table's 256 symbols (0: no code)."""
    lengths = np.zeros(256, np.int64)
    lengths[np.frombuffer(values, np.uint8)] = np.repeat(np.arange(1, 17),
                                                         np.frombuffer(counts, np.uint8))
    return lengths


def _component(plane, h, v, mcux, mcuy, dc_lengths, ac_lengths, layout):
    """(symbols, bits), each shaped (MCUs, h*v) in coding order, of one component, with
    the padding blocks added; None when a symbol has no code in its table."""
    rows, cols = plane.shape[:2]
    grid_rows, grid_cols = mcuy * v, mcux * h
    if rows > grid_rows or cols > grid_cols:
        return None
    ac = plane.reshape(rows * cols, 64)[:, ZIGZAG[1:]]
    dc = plane.reshape(rows * cols, 64)[:, 0].astype(np.int64)
    dc_len, ac_len = dc_lengths, ac_lengths

    nonzero = ac != 0
    block, pos = np.nonzero(nonzero)                      # row-major: block, then k
    value = ac[block, pos].astype(np.int64)
    previous = np.empty_like(pos)
    previous[0:1] = -1
    previous[1:] = np.where(block[1:] == block[:-1], pos[:-1], -1)
    run = pos - previous - 1
    size = np.frexp(np.abs(value))[1].astype(np.int64)    # bits of |value| (T.81 F.1.2.2)
    code = ac_len[((run & 15) << 4) | size]
    zrl = run >> 4
    eob = ~nonzero[:, 62]
    n = rows * cols
    if (code == 0).any() or (zrl.any() and ac_len[0xF0] == 0) or \
            (eob.any() and ac_len[0x00] == 0):
        return None
    symbols = np.bincount(block, minlength=n) + np.bincount(block, zrl, n).astype(np.int64) \
        + eob
    ac_bits = np.bincount(block, code + size + zrl * ac_len[0xF0], n).astype(np.int64) \
        + eob * ac_len[0x00]

    # padding blocks (absent from libjpeg's arrays): one EOB, DC equal to the block
    # coded before them, so real blocks' DC differences skip them
    real = np.zeros((grid_rows, grid_cols), bool)
    real[:rows, :cols] = True
    sym_grid = np.ones((grid_rows, grid_cols), np.int64)
    sym_grid[:rows, :cols] = symbols.reshape(rows, cols)
    acb_grid = np.full((grid_rows, grid_cols), ac_len[0x00], np.int64)
    acb_grid[:rows, :cols] = ac_bits.reshape(rows, cols)
    dc_grid = np.zeros((grid_rows, grid_cols), np.int64)
    dc_grid[:rows, :cols] = dc.reshape(rows, cols)

    def coding_order(grid):
        return grid.reshape(mcuy, v, mcux, h).transpose(0, 2, 1, 3).reshape(mcuy * mcux,
                                                                              v * h)
    real_o, dc_o = coding_order(real).ravel(), coding_order(dc_grid).ravel()
    if not real_o.all():
        last_real = np.maximum.accumulate(np.where(real_o, np.arange(real_o.size), 0))
        dc_o = dc_o[last_real]
    diff = np.diff(dc_o, prepend=0)
    per_interval = (layout.segments[0][2] if len(layout.segments) > 1 else layout.mcus)
    first = np.arange(0, dc_o.size, per_interval * v * h)   # DC prediction restarts at 0
    diff[first] = dc_o[first]
    dc_size = np.frexp(np.abs(diff))[1].astype(np.int64)
    if (dc_size > 11).any() or (dc_len[dc_size] == 0).any():
        return None
    bits = coding_order(acb_grid).ravel() + dc_len[dc_size] + dc_size
    return coding_order(sym_grid), bits.reshape(mcuy * mcux, v * h)


def _block_ends(data: bytes, layout: ScanLayout, bits, per_mcu: int):
    """File offset past each block's last byte, or None when the coded lengths do not
    fill the segments exactly (then the coefficients are not what the file codes)."""
    raw = np.frombuffer(data, np.uint8)
    ends = np.empty(bits.size, np.int64)
    at = 0
    for start, stop, mcus in layout.segments:
        seg = raw[start:stop]
        stuffed = np.flatnonzero((seg[:-1] == 0xFF) & (seg[1:] == 0))   # 0xFF 0x00 pairs
        unstuffed = stuffed - np.arange(stuffed.size)      # their index without the 0x00s
        nbytes = seg.size - stuffed.size
        blocks = bits[at:at + mcus * per_mcu]
        cum = np.cumsum(blocks)
        total = int(cum[-1]) if cum.size else 0
        if -(-total // 8) != nbytes:
            return None
        pad = 8 * nbytes - total
        if pad and nbytes:
            last = 0xFF if stuffed.size and stuffed[-1] == seg.size - 2 else int(seg[-1])
            if last & ((1 << pad) - 1) != (1 << pad) - 1:
                return None
        byte_end = (cum + 7) // 8
        ends[at:at + blocks.size] = start + byte_end + np.searchsorted(unstuffed, byte_end)
        at += blocks.size
    return ends if at == bits.size else None
