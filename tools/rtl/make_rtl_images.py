"""Write the 4:2:0 baseline JPEGs measured on the core_jpeg RTL (examples/measurements/
core_jpeg/), from photographs that ship inside PyPI packages, so anyone can remake them
offline:

* scikit-image's ``skimage/data`` (the files in its wheel, no download): astronaut
  (512x512), coffee (600x400), chelsea (451x300), rocket (640x427), motorcycle_left
  (741x500), hubble_deep_field (1000x872), retina (1411x1411);
* matplotlib's ``mpl-data/sample_data/grace_hopper.jpg`` (512x600).

Each is centre-cropped to the target aspect ratio, scaled with Lanczos and written by Pillow
as a baseline JPEG with the standard Huffman tables (``optimize=False``: core_jpeg's default
build, SUPPORT_WRITABLE_DHT=0, decodes only those), 4:2:0, at the listed quality.

    pip install scikit-image          # only this script needs it
    .venv/bin/python tools/rtl/make_rtl_images.py [--out DIR]

Qualities run from 30 to 100, sizes from one MCU (16x16) to 1280x720 (3,600 MCUs, 21,600 blocks). Widths are
multiples of 16: core_jpeg decodes a 4:2:0 image whose width is not (e.g. 200x150) as if
its rows had fewer MCUs, and never stops sending pixels. Two heights are not (72, 152): the
bottom MCU row is padded, which the core handles. Another Pillow/libjpeg may change the bytes.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from PIL import Image

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))
from make_sample_images import save_jpeg  # noqa: E402  (one crop-scale-encode rule)

OUT = ROOT / "examples" / "measurements" / "core_jpeg"

# (photograph, width, height, quality)
IMAGES = [
    ("astronaut", 16, 16, 30), ("astronaut", 16, 16, 75), ("astronaut", 16, 16, 95),
    ("coffee", 16, 16, 50), ("chelsea", 16, 16, 90),
    ("astronaut", 32, 32, 50), ("rocket", 32, 32, 90), ("coffee", 32, 32, 30),
    ("chelsea", 64, 64, 75), ("motorcycle_left", 64, 64, 95),
    ("coffee", 96, 72, 75),
    ("astronaut", 128, 128, 90), ("rocket", 128, 128, 30),
    ("chelsea", 208, 152, 50),
    ("astronaut", 256, 256, 30), ("astronaut", 256, 256, 95), ("hubble_deep_field", 256, 256, 75),
    ("coffee", 320, 240, 50), ("coffee", 320, 240, 90), ("motorcycle_left", 320, 240, 75),
    ("astronaut", 512, 512, 75), ("retina", 512, 512, 50), ("grace_hopper", 480, 560, 85),
    ("motorcycle_left", 640, 480, 30), ("motorcycle_left", 640, 480, 50),
    ("motorcycle_left", 640, 480, 75), ("motorcycle_left", 640, 480, 90),
    ("motorcycle_left", 640, 480, 95), ("coffee", 640, 480, 75), ("rocket", 640, 480, 60),
    ("hubble_deep_field", 800, 600, 85), ("hubble_deep_field", 992, 864, 75),
    ("retina", 1280, 720, 50), ("retina", 1280, 720, 90),
    # Second batch: more one- and few-MCU files (where the header and the pipeline fill
    # dominate) and high qualities (busy blocks, where the entropy decoder sets the pace).
    ("retina", 16, 16, 60), ("hubble_deep_field", 16, 16, 100), ("astronaut", 16, 32, 85),
    ("coffee", 48, 16, 60), ("hubble_deep_field", 32, 32, 95), ("chelsea", 48, 48, 40),
    ("grace_hopper", 64, 64, 100), ("rocket", 80, 64, 70), ("motorcycle_left", 160, 128, 85),
    ("chelsea", 448, 304, 98), ("astronaut", 512, 512, 95), ("coffee", 640, 480, 95),
    ("hubble_deep_field", 640, 480, 95),
]


def source_path(photo: str) -> Path:
    if photo == "grace_hopper":
        from matplotlib import cbook
        return Path(cbook.get_sample_data("grace_hopper.jpg", asfileobj=False))
    try:
        import skimage.data
    except ImportError:
        sys.exit("make_rtl_images: scikit-image is needed for its photographs "
                 "(pip install scikit-image)")
    folder = Path(skimage.data.__file__).parent
    matches = sorted(folder.glob(photo + ".*"))
    if not matches:
        sys.exit(f"make_rtl_images: {photo} is not in {folder} (scikit-image 0.26 ships it)")
    return matches[0]


def write(photo: str, width: int, height: int, quality: int, out: Path) -> Path:
    path = out / f"{photo.replace('_', '-')}_{width}x{height}_q{quality}_420.jpg"
    with Image.open(source_path(photo)) as img:
        save_jpeg(img, (width, height), path, quality, "4:2:0")
    return path

def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=OUT, help=f"folder (default {OUT})")
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    total = 0
    for spec in IMAGES:
        path = write(*spec, args.out)
        total += path.stat().st_size
        print(f"{path.name}: {path.stat().st_size} bytes")
    print(f"{len(IMAGES)} images, {total} bytes")


if __name__ == "__main__":
    main()
