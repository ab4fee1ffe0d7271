"""Make the sample JPEGs that ship in src/accelperf/data/jpeg/ (for the demo and the tests)
and the batch example set in examples/images/ (run from the repository).

The photographs come with matplotlib, a dependency already installed: Grace Hopper's
portrait (mpl-data/sample_data/grace_hopper.jpg, 512x600) and the Minduka present pack
(Minduka_Present_Blue_Pack.png, 128x128). Pillow (matplotlib's own dependency) re-encodes
them as baseline, Huffman-coded JPEGs at several sizes and qualities, in 4:2:0 (what the
OSDI'24 decoder model takes) and 4:4:4 (which it refuses, with a clear message).

    .venv/bin/python tools/make_sample_images.py

The files are committed: the demo and the tests need nothing downloaded. Re-running with
another Pillow/libjpeg may change bytes (and so the simulated cycles) slightly.
"""

from __future__ import annotations

from pathlib import Path

from matplotlib import cbook
from PIL import Image

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "src" / "accelperf" / "data" / "jpeg"
EXAMPLES = ROOT / "examples" / "images"

# (source, output name, size, quality, subsampling)
SAMPLES = [
    ("grace_hopper.jpg", "hopper_64x48_q90_420.jpg", (64, 48), 90, "4:2:0"),
    ("grace_hopper.jpg", "hopper_128x96_q75_420.jpg", (128, 96), 75, "4:2:0"),
    ("grace_hopper.jpg", "hopper_256x192_q50_420.jpg", (256, 192), 50, "4:2:0"),
    ("grace_hopper.jpg", "hopper_256x192_q95_420.jpg", (256, 192), 95, "4:2:0"),
    ("grace_hopper.jpg", "hopper_128x96_q75_444.jpg", (128, 96), 75, "4:4:4"),
    ("Minduka_Present_Blue_Pack.png", "present_128x128_q85_420.jpg", (128, 128), 85, "4:2:0"),
    ("Minduka_Present_Blue_Pack.png", "present_100x100_q85_444.jpg", (100, 100), 85, "4:4:4"),
]

# `accelperf lpn simulate jpeg-decoder --inputs 'examples/images/*.jpg' --out r.csv`:
# several sizes and qualities of one photograph (so latencies and bottlenecks differ), all
# 4:2:0 (the failure of a 4:4:4 file in its own row is shown by the shipped set's tests).
EXAMPLE_SET = [("grace_hopper.jpg", f"hopper_{w}x{h}_q{q}_420.jpg", (w, h), q, "4:2:0")
               for (w, h) in ((64, 48), (128, 96), (256, 192), (512, 384))
               for q in (50, 90)] + [
    ("Minduka_Present_Blue_Pack.png", "present_128x128_q85_420.jpg", (128, 128), 85, "4:2:0"),
]


def main() -> None:
    for folder, samples in ((OUT, SAMPLES), (EXAMPLES, EXAMPLE_SET)):
        write(folder, samples)


def write(out: Path, samples: list) -> None:
    out.mkdir(parents=True, exist_ok=True)
    for source, name, size, quality, subsampling in samples:
        with Image.open(cbook.get_sample_data(source, asfileobj=False)) as img:
            save_jpeg(img, size, out / name, quality, subsampling)
        print(f"{out.name}/{name}: {(out / name).stat().st_size} bytes")


def save_jpeg(img: Image.Image, size: tuple[int, int], path: Path, quality: int,
              subsampling: str) -> None:
    """Crop ``img`` to the aspect ratio of ``size`` around its centre, scale it (Lanczos)
    and write a baseline JPEG with the standard Huffman tables (``optimize=False``: the
    OSDI'24 decoder model and core_jpeg's default build take only those)."""
    img = img.convert("RGB")
    w, h = img.size
    target = size[0] / size[1]
    if w / h > target:
        cw = round(h * target)
        img = img.crop(((w - cw) // 2, 0, (w - cw) // 2 + cw, h))
    else:
        ch = round(w / target)
        img = img.crop((0, (h - ch) // 2, w, (h - ch) // 2 + ch))
    img.resize(size, Image.LANCZOS).save(path, "JPEG", quality=quality,
                                         subsampling=subsampling, optimize=False,
                                         progressive=False)

if __name__ == "__main__":
    main()
