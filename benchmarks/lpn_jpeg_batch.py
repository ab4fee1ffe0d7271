"""A batch of 1-MCU JPEGs: how fast rows come out, and what the Python Huffman tables cost.

Issue 34 found 1-MCU JPEG batches spending most of their time building 65,536-entry
Python lookup tables (T.81 Annex C) for each of a file's Huffman tables, in the header
parse that the C scanner (:mod:`accelperf.lpn.inputs.jpeg_native`) runs first, and then
never using them: the C scanner builds its own. The layout-only parse now skips them.

This script writes N copies of a 16x16 4:2:0 JPEG (one MCU: four Y blocks, Cb, Cr) and
runs them as ``accelperf lpn simulate jpeg-decoder --inputs DIR --out rows.csv`` does (the
inputs read by name in the workers, the CLI's default Python engine, two workers), best of
3, then the same batch with the table building put back (the baseline, in this process,
its workers forked from it), and prints both rates and their ratio; the headline last.

Run: .venv/bin/python benchmarks/lpn_jpeg_batch.py [N] [--backend python|compiled|auto]
"""

from __future__ import annotations

import io
import os
import sys
import tempfile
from pathlib import Path

from _timing import best_of
from accelperf.lpn.batch import BatchRun
from accelperf.lpn.inputs import jpeg, jpeg_native


def one_mcu_jpeg() -> bytes:
    from PIL import Image
    image = Image.new("RGB", (16, 16))
    image.putdata([(17 * x % 256, 13 * y % 256, (x * y) % 256) for y in range(16)
                   for x in range(16)])
    buf = io.BytesIO()
    image.save(buf, "JPEG", quality=90, subsampling="4:2:0")
    return buf.getvalue()


def batch(names: list[str], backend: str, workers: int) -> int:
    run = BatchRun("jpeg-decoder", ((n, n) for n in names), backend=backend, by_name=True,
                   workers=workers)
    rows = [row for _, row in run]
    bad = [r for r in rows if not r.ok]
    assert not bad and len(rows) == len(names), bad[:2]
    return len(rows)


class TablesBuilt:
    """The parse as it was: every Huffman table turned into a Python lookup table, also
    when only the layout is wanted (the C scanner's path)."""

    def __enter__(self):
        self.original = original = jpeg._Parser._huffman_tables

        def with_tables(parser, body):
            before = dict(parser.huffman)
            original(parser, body)
            for key, value in parser.huffman.items():
                if before.get(key) != value or key not in parser.tables:
                    parser.tables[key] = jpeg._lookup(*value)
        jpeg._Parser._huffman_tables = with_tables
        return self

    def __exit__(self, *exc):
        jpeg._Parser._huffman_tables = self.original


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    n = int(args[0]) if args else 600
    backend = sys.argv[sys.argv.index("--backend") + 1] if "--backend" in sys.argv \
        else "python"
    workers = 2
    if not jpeg_native.available():
        sys.exit("no C compiler: the JPEG reader falls back to the Python scanner, which "
                 "needs the tables; nothing to measure")
    data = one_mcu_jpeg()
    assert jpeg.scan_layout(data).mcus == 1
    with tempfile.TemporaryDirectory() as tmp:
        names = []
        for i in range(n):
            path = Path(tmp) / f"mcu{i:05d}.jpg"
            path.write_bytes(data)
            names.append(str(path))
        batch(names[:20], backend, workers)                 # warm: the C scanner built
        now = best_of(3, lambda: batch(names, backend, workers))
        with TablesBuilt():
            before = best_of(3, lambda: batch(names, backend, workers))
        read_now = best_of(3, lambda: [jpeg_native.scan_jpeg_native(data) for _ in range(200)])
        with TablesBuilt():
            read_before = best_of(3, lambda: [jpeg_native.scan_jpeg_native(data)
                                              for _ in range(200)])
    load = os.getloadavg()[0]
    print(f"{n} 1-MCU JPEGs (16x16 4:2:0, {len(data)} bytes), jpeg-decoder, {backend} "
          f"engine, {workers} workers, by name; load average {load:.1f} on "
          f"{os.cpu_count()} cores")
    print(f"  reading one file (C scanner): {read_now / 200 * 1e6:.0f} us, with the Python "
          f"tables {read_before / 200 * 1e6:.0f} us")
    print(f"  batch with the Python tables built (before): {n / before:,.0f} rows/s")
    print(f"  batch without them (now):                    {n / now:,.0f} rows/s")
    print(f"jpeg_1mcu_batch_speedup_vs_tables: {before / now:.2f}")
    print(f"jpeg_1mcu_batch_rows_per_s: {n / now:.0f}")


if __name__ == "__main__":
    main()
