"""jpeg-decoder against the OSDI'24 authors' own simulator, image by image.

For each 4:2:0 test image of dslab-epfl/lpn (test_imgs/420/*.jpg) that the authors' runner
was measured on (tests/data/authors/jpeg_420.json), read the JPEG with accelperf's Ψ,
compare the per-block AC-symbol counts with the authors' driver (SHA-256 of the list),
simulate, and compare the latency with the authors' cycles.

Run: .venv/bin/python benchmarks/lpn_jpeg_exact.py [IMAGE_DIR]

IMAGE_DIR defaults to $ACCELPERF_AUTHORS_IMAGES, else the authors' checkout at
/tmp/lpnsrc/lpn_family/accel_lib/jpeg_decoder/no_guard_threshold/test_imgs/420; when
neither exists, it says so and stops (the images are the authors' data, not shipped).
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from accelperf.lpn import simulate
from accelperf.lpn.inputs import read_jpeg
from accelperf.lpn.library import build

ROOT = Path(__file__).resolve().parents[1]
RECORDS = ROOT / "tests" / "data" / "authors" / "jpeg_420.json"
AUTHORS = Path("/tmp/lpnsrc/lpn_family/accel_lib/jpeg_decoder/no_guard_threshold/"
               "test_imgs/420")


def image_dir() -> Path:
    if len(sys.argv) > 1:
        return Path(sys.argv[1])
    env = os.environ.get("ACCELPERF_AUTHORS_IMAGES")
    if env:
        return Path(env)
    if not AUTHORS.is_dir():
        sys.exit(f"the authors' test images are not at {AUTHORS}: give their folder as the "
                 f"first argument or in ACCELPERF_AUTHORS_IMAGES (dslab-epfl/lpn, "
                 f"lpn_family/accel_lib/jpeg_decoder/no_guard_threshold/test_imgs/420)")
    return AUTHORS


def main():
    folder = image_dir()
    records = json.loads(RECORDS.read_text("utf-8"))["images"]
    present = [r for r in records if (folder / r["name"]).is_file()]
    print(f"images from {folder}: {len(present)} of the {len(records)} the authors were run on")
    model = build("jpeg-decoder")
    counts_exact = cycles_exact = 0
    for r in present:
        blocks = read_jpeg(folder / r["name"])
        same_counts = blocks.digest() == r["counts_sha256"]
        latency = simulate(model, blocks).latency
        counts_exact += same_counts
        cycles_exact += latency == r["cycles"]
        note = "" if same_counts else \
            (f"  counts differ: last MCU {list(blocks.symbols[-6:])}, authors' driver "
             f"{r['last_mcu_counts']}")
        print(f"{r['name']:>10} {r['width']:5d}x{r['height']:<5d} {r['blocks']:7d} blocks  "
              f"authors {r['cycles']:9d}  accelperf {latency:9d}  "
              f"{'exact' if latency == r['cycles'] else 'DIFFERS'}{note}")
    print(f"counts_exact: {counts_exact}/{len(present)}")
    print(f"images_exact: {cycles_exact}/{len(present)}")


if __name__ == "__main__":
    main()
