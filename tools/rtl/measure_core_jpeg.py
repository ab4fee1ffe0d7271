"""Measure JPEG decode latency on the ultraembedded/core_jpeg RTL under Verilator.

    python tools/rtl/measure_core_jpeg.py --core /path/to/core_jpeg IMAGES... --out CSV
        [--trace-dir DIR] [--trace-max-blocks N] [--build-dir DIR]

Builds tb_core_jpeg.v (a wrapper of the core's jpeg_core) with tb_core_jpeg.cpp (the cycle
counter) once, runs every image through it and writes one CSV row per image:

    input          the image's path relative to the CSV's folder (what `--measured` takes)
    cycles         clock edges from the one taking the file's first byte to the one of the
                   last pixel of the file's blocks (AXI-stream fed as fast as the core
                   accepts, sink always ready)
    width,height,blocks,bytes   the image (blocks = 8x8 blocks in the scan)
    rtl_blocks     blocks the core's entropy decoder emitted (> blocks: it decoded the
                   scan's padding bits as extra blocks, see keep_real_blocks)
    header_bytes   bytes before the first entropy-coded byte (markers, tables, SOS header)
    header_cycles  the edge on which the first entropy-coded byte enters the bit buffer
    idle_at_end    1 if the core signalled the end of the image (see tools/rtl/README.md)
    pixel_error    mean |core's RGB - Pillow's decoding| over the image, in levels (0..255):
                   a check that the core decoded the file (a row over 8 is refused)

With --trace-dir, images of at most --trace-max-blocks blocks also get DIR/<name>.csv of
`event,cycle` rows (events listed in tb_core_jpeg.cpp and tools/rtl/README.md).

Inputs are checked before the (minute-long) build: the core folder, verilator on PATH, each
image a readable 4:2:0 baseline JPEG (the parser the LPN's Ψ uses) with the standard
Huffman tables, the output folders.
A bad one is a one-line message and exit status 2.
"""

from __future__ import annotations

import argparse
import csv
import io
import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import numpy as np
from PIL import Image

from accelperf.errors import ModelError, invalid
from accelperf.lpn.inputs import JpegBlocks, read_jpeg
from accelperf.lpn.inputs.jpeg import scan_layout

HERE = Path(__file__).resolve().parent
WRAPPER, DRIVER = HERE / "tb_core_jpeg.v", HERE / "tb_core_jpeg.cpp"
COLUMNS = ("input", "cycles", "width", "height", "blocks", "rtl_blocks", "bytes",
           "header_bytes", "header_cycles", "idle_at_end", "pixel_error")
PIXELS_PER_Y_BLOCK = 64
MARKER_SOS = 0xDA
MCU_WIDTH = 16
MAX_PIXEL_ERROR = 8      # levels: correct decodes measured 1.4..4.5 (see pixel_error)


@dataclass(frozen=True)
class Measurement:
    """One image's run on the RTL."""

    image: Path
    cycles: int
    width: int
    height: int
    blocks: int
    rtl_blocks: int
    bytes: int
    header_bytes: int
    header_cycles: int
    idle_at_end: bool
    pixel_error: float


def header_bytes(data: bytes) -> int:
    """Offset of the first entropy-coded byte: just past the SOS segment."""
    pos = 2
    while pos + 4 <= len(data):
        if data[pos] != 0xFF:
            raise ModelError(f"JPEG marker expected at byte {pos}")
        kind = data[pos + 1]
        length = int.from_bytes(data[pos + 2:pos + 4], "big")
        pos += 2 + length
        if kind == MARKER_SOS:
            return pos
    raise ModelError("no SOS marker")


def check_core(core: Path) -> Path:
    sources = core / "src_v"
    if not (sources / "jpeg_core.v").is_file():
        raise invalid("--core", str(core), "a clone of ultraembedded/core_jpeg (a folder "
                      "holding src_v/jpeg_core.v)")
    return sources


def check_image(path: Path) -> JpegBlocks:
    if not path.is_file() or not os.access(path, os.R_OK):
        raise invalid("image", str(path), "a readable JPEG file")
    image = read_jpeg(path)
    if image.chroma != "4:2:0":
        raise invalid("image", str(path), f"a 4:2:0 JPEG (it is {image.chroma})")
    if image.width % MCU_WIDTH:
        # jpeg_mcu_id counts a row's MCUs as width/16 rounded down: it would never stop.
        raise invalid("image", str(path), f"a width that is a multiple of {MCU_WIDTH} "
                      f"(it is {image.width}): core_jpeg mis-decodes other 4:2:0 widths")
    if not uses_standard_tables(path):
        # The default build has no writable tables: it would decode the scan with the
        # wrong codes and, minutes later, send too few or wrong pixels.
        raise invalid("image", str(path), "a JPEG coded with the standard Huffman tables "
                      "(ITU-T T.81 Annex K.3; this one has its own, optimised tables, which "
                      "core_jpeg's default build ignores): save it with optimize=False")
    return image


@cache
def standard_tables() -> tuple[tuple, tuple]:
    """The (DC, AC) Huffman tables of ITU-T T.81 Annex K.3 for luma and for chroma, as
    ``scan_layout`` gives a table: (counts per code length, symbol values). core_jpeg's
    default build (SUPPORT_WRITABLE_DHT = 0) decodes with these and ignores a file's own;
    libjpeg writes them unless asked to optimise, so they are read off its output."""
    buffer = io.BytesIO()
    Image.new("RGB", (16, 16)).save(buffer, "JPEG", subsampling="4:2:0", optimize=False)
    layout = scan_layout(buffer.getvalue())
    return tuple((layout.huffman[dc], layout.huffman[ac])
                 for _, _, dc, ac in layout.components[:2])


def uses_standard_tables(path: Path) -> bool:
    """Whether every component of the file's scan is coded with Annex K.3's tables (the
    first component with luma's, the others with chroma's), as the core assumes."""
    layout = scan_layout(path.read_bytes(), str(path))
    luma, chroma = standard_tables()
    return all((layout.huffman.get(dc), layout.huffman.get(ac)) ==
               (luma if i == 0 else chroma)
               for i, (_, _, dc, ac) in enumerate(layout.components))


def check_writable_folder(name: str, folder: Path, may_create: bool) -> None:
    """``folder`` must be a writable folder, or (``may_create``) one that can be made in
    an existing writable folder."""
    if folder.exists() and not folder.is_dir():
        raise invalid(name, str(folder), "a folder (this is a file)")
    probe = folder.parent if may_create and not folder.exists() else folder
    if not probe.is_dir() or not os.access(probe, os.W_OK):
        raise invalid(name, str(folder), "a path in an existing, writable folder")


def build(sources: Path, build_dir: Path) -> Path:
    """Verilate and compile the testbench (incremental: make rebuilds what changed)."""
    verilator = shutil.which("verilator")
    command = [verilator, "--cc", "--exe", "--build", "-O3", "-Wno-fatal", "-Wno-lint",
               "-Wno-style", "--top-module", "tb_core_jpeg", "-y", str(sources),
               str(WRAPPER), str(DRIVER), "-Mdir", str(build_dir), "-o", "tb_core_jpeg"]
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode:
        sys.stderr.write(done.stdout[-3000:] + done.stderr[-3000:])
        raise ModelError(f"the Verilator build failed (exit {done.returncode}): "
                         f"{' '.join(command)}")
    return build_dir / "tb_core_jpeg"


def run(binary: Path, path: Path, image: JpegBlocks, trace: Path | None) -> Measurement:
    # 4 of every 6 blocks are luma and each yields 64 RGB pixels, padding included.
    expected_pixels = image.blocks * 4 // 6 * PIXELS_PER_Y_BLOCK
    with tempfile.TemporaryDirectory() as tmp:
        rgb = Path(tmp) / "pixels.bin"
        command = [str(binary), str(path), str(expected_pixels), str(trace or os.devnull),
                   str(rgb)]
        done = subprocess.run(command, capture_output=True, text=True)
        if done.returncode:
            raise ModelError(f"{path}: the RTL run failed: {done.stderr.strip()}")
        error = pixel_error(rgb, path, expected_pixels)
    if error > MAX_PIXEL_ERROR:
        raise ModelError(f"{path}: the core's pixels differ from Pillow's decoding by "
                         f"{error:.1f} levels on average (at most {MAX_PIXEL_ERROR} for a "
                         f"correct decode): the core mis-decodes this file")
    out = dict(line.split("=", 1) for line in done.stdout.split())
    if int(out["blocks"]) < image.blocks or int(out["pixels"]) < expected_pixels:
        raise ModelError(f"{path}: the core decoded {out['blocks']} blocks and sent "
                         f"{out['pixels']} pixels; the file has {image.blocks} blocks "
                         f"({expected_pixels} pixels)")
    if trace:
        keep_real_blocks(trace, image.blocks)
    data = path.read_bytes()
    return Measurement(path, int(out["cycles"]), image.width, image.height, image.blocks,
                       int(out["blocks"]), len(data), header_bytes(data),
                       int(out["header_cycles"]), out["idle_at_end"] == "1", error)


def pixel_error(rgb: Path, path: Path, pixels: int) -> float:
    """Mean absolute difference (0..255) between the first ``pixels`` pixels the core sent
    (7-byte records: x, y as 16-bit little-endian, r, g, b) and Pillow's decoding of the
    file, over the image's area. The two IDCTs and chroma upsamplings differ, so a correct
    decode is a few levels off; a desynchronised bitstream is tens of levels off."""
    raw = np.fromfile(rgb, dtype=np.uint8).reshape(-1, 7)[:pixels]
    x = raw[:, 0].astype(np.int64) | raw[:, 1].astype(np.int64) << 8
    y = raw[:, 2].astype(np.int64) | raw[:, 3].astype(np.int64) << 8
    with Image.open(path) as img:
        reference = np.asarray(img.convert("RGB"), dtype=np.int64)
    height, width = reference.shape[:2]
    inside = (x < width) & (y < height)
    decoded = np.zeros_like(reference)
    seen = np.zeros((height, width), dtype=bool)
    decoded[y[inside], x[inside]] = raw[inside, 4:7]
    seen[y[inside], x[inside]] = True
    if not seen.all():
        raise ModelError(f"{path}: the core sent no pixel for {int((~seen).sum())} of the "
                         f"image's {width * height} positions")
    return float(np.abs(decoded - reference).mean())


def keep_real_blocks(trace: Path, blocks: int) -> None:
    """Drop the events of blocks the file does not have.

    When the parser has not met EOI by the time the last MCU's Cr block starts (the
    input waits on a full bit buffer), the core does not know the scan has ended and
    decodes the bits after the scan as more blocks (a few luma blocks, or a whole MCU
    whose pixels it sends). Their events come after every real block's and are cut here.
    """
    per_unit = {"entropy_decode": blocks, "idct_y": blocks * 4 // 6, "idct_cb": blocks // 6,
                "idct_cr": blocks // 6, "colour_convert": blocks * 4 // 6, "header_end": 1}
    lines = trace.read_text().splitlines()
    seen: dict[str, int] = {}
    kept = [lines[0]]
    for line in lines[1:]:
        event = line.split(",", 1)[0]
        seen[event] = seen.get(event, 0) + 1
        if seen[event] <= per_unit[event]:
            kept.append(line)
    trace.write_text("\n".join(kept) + "\n")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("images", nargs="+", type=Path, metavar="IMAGE")
    parser.add_argument("--core", type=Path, required=True,
                        help="clone of github.com/ultraembedded/core_jpeg")
    parser.add_argument("--out", type=Path, required=True, help="CSV to write")
    parser.add_argument("--trace-dir", type=Path, help="write event,cycle traces here")
    parser.add_argument("--trace-max-blocks", type=int, default=400,
                        help="trace only images of at most this many blocks (400)")
    parser.add_argument("--build-dir", type=Path, default=Path("build/core_jpeg_verilator"),
                        help="Verilator's output folder (build/core_jpeg_verilator)")
    args = parser.parse_args(argv)
    try:
        sources = check_core(args.core)
        if args.trace_max_blocks < 1:
            raise invalid("--trace-max-blocks", args.trace_max_blocks, "a positive integer")
        images = {path: check_image(path) for path in args.images}
        check_writable_folder("--out", args.out.resolve().parent, may_create=False)
        if args.out.is_dir():
            raise invalid("--out", str(args.out), "a CSV file path (this is a folder)")
        if args.trace_dir:
            check_writable_folder("--trace-dir", args.trace_dir.resolve(), may_create=True)
        if shutil.which("verilator") is None:
            raise invalid("verilator", None, "the verilator program on PATH "
                          "(Debian/Ubuntu: apt-get install verilator)")
        if args.trace_dir:
            args.trace_dir.mkdir(exist_ok=True)
        args.build_dir.mkdir(parents=True, exist_ok=True)
        built = (args.build_dir / "tb_core_jpeg").exists()
        print(f"building the testbench in {args.build_dir}"
              + (" (up to date: a moment)" if built else " (a minute or two)"), file=sys.stderr)
        binary = build(sources, args.build_dir.resolve())
    except ModelError as exc:
        print(f"measure_core_jpeg: {exc}", file=sys.stderr)
        return 2
    rows, failed = measure_all(binary, images, args.trace_dir, args.trace_max_blocks)
    write_rows(args.out, rows)
    print(f"wrote {args.out} ({len(rows)} images)", file=sys.stderr)
    if failed:
        print(f"measure_core_jpeg: {len(failed)} image(s) not measured, left out of "
              f"{args.out}:", file=sys.stderr)
        for path, why in failed:
            print(f"  {why}", file=sys.stderr)
        return 1
    return 0


def measure_all(binary: Path, images: dict, trace_dir: Path | None, trace_max_blocks: int,
                measure=None) -> tuple[list[Measurement], list[tuple[Path, str]]]:
    """Every image through the testbench: (the measurements, (image, why) for each that
    failed). One image the core mis-decodes no longer throws away the rows measured before
    it; its trace, written before the check failed, is removed."""
    measure = measure or run
    rows, failed = [], []
    for path, image in images.items():
        trace = None
        if trace_dir and image.blocks <= trace_max_blocks:
            trace = trace_dir / (path.stem + ".csv")
        try:
            m = measure(binary, path, image, trace)
        except ModelError as exc:
            failed.append((path, str(exc)))
            print(f"{path}: not measured: {exc}", file=sys.stderr)
            if trace is not None:
                trace.unlink(missing_ok=True)
            continue
        print(f"{path}: {m.cycles} cycles, {m.blocks} blocks", file=sys.stderr)
        rows.append(m)
    return rows, failed


def write_rows(out: Path, rows: list[Measurement]) -> None:
    folder = out.resolve().parent
    with open(out, "w", newline="") as f:
        writer = csv.writer(f, lineterminator="\n")
        writer.writerow(COLUMNS)
        for m in rows:
            writer.writerow([os.path.relpath(m.image.resolve(), folder), m.cycles, m.width,
                             m.height, m.blocks, m.rtl_blocks, m.bytes, m.header_bytes,
                             m.header_cycles, int(m.idle_at_end), f"{m.pixel_error:.2f}"])


if __name__ == "__main__":
    sys.exit(main())
