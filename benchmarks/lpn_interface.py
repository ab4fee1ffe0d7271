"""Accuracy of performance interfaces against accelperf's own simulation of the same LPN
(OSDI'24 Table 3 style), plain (the paper's max over transitions) and by phase, and how
long extraction takes per model.

Inputs are large enough to fill the pipeline (§4.2 assumption 1): streams of at least
THRESHOLD tokens (blocks; Darwin: 250+ stripes). Not a timed test: run it by hand.

Run: .venv/bin/python benchmarks/lpn_interface.py
"""

from __future__ import annotations

import random
import time

from accelperf.errors import ModelError
from accelperf.lpn import simulate
from accelperf.lpn.analysis.accuracy import check
from accelperf.lpn.analysis.emit import load_module, module_source
from accelperf.lpn.analysis.interface import extract_interface
from accelperf.lpn.analysis.space import default_space
from accelperf.lpn.library import LIBRARY, build

THRESHOLD = 1000        # tokens in the input stream, at least


def block_pipeline_inputs():
    """Images of several sizes and compression levels (mean non-zero coefficients per
    block), plus images whose halves compress differently (the bottleneck moves)."""
    out = []
    for w, h in ((160, 120), (320, 240), (640, 480)):
        for mean in (4, 10, 14, 25, 40):
            out.append({"width": w, "height": h, "mean_nnz": mean, "seed": w + mean})
    rng = random.Random(7)
    for _ in range(6):
        a, b = rng.randint(1, 10), rng.randint(14, 60)
        n1, n2 = rng.randint(500, 3000), rng.randint(500, 3000)
        out.append([a] * n1 + [b] * n2 if rng.random() < 0.5 else [b] * n1 + [a] * n2)
    return out


def darwin_inputs():
    rng = random.Random(11)
    return [{"ref_len": rng.randint(100, 2000), "query_len": 4 * rng.randint(250, 2000),
             "steps": rng.randint(100, 5000)} for _ in range(12)]


def jpeg_decoder_inputs():
    """Real 4:2:0 JPEG files of at least THRESHOLD blocks (the shipped 256x192 photo at
    q50 and q95, and the authors' test images when their checkout is at /tmp/lpnsrc),
    and generated block streams: per-block AC-symbol counts around several means, and
    images whose halves compress differently."""
    import glob
    from pathlib import Path

    from accelperf.lpn.inputs import read_jpeg
    files = sorted(glob.glob(str(Path(__file__).parents[1] / "src/accelperf/data/jpeg/*420*.jpg")))
    files += sorted(glob.glob("/tmp/lpnsrc/**/test_imgs/420/*.jpg", recursive=True))
    out = []
    for f in files:
        image = read_jpeg(f)
        if len(image.symbols) >= THRESHOLD:
            out.append(image)
    rng = random.Random(5)
    for mean in (3, 8, 15, 25, 30, 40, 55):
        n = 6 * rng.randint(170, 900)
        out.append([max(1, min(63, round(rng.gauss(mean, mean / 4)))) for _ in range(n)])
    for _ in range(4):
        a, b = rng.randint(1, 10), rng.randint(35, 63)
        out.append([a] * (6 * rng.randint(100, 400)) + [b] * (6 * rng.randint(100, 400)))
    return out


WORKLOADS = {"darwin": darwin_inputs, "block-pipeline": block_pipeline_inputs,
             "jpeg-decoder": jpeg_decoder_inputs}


def main():
    rows, skipped = [], []
    for name in LIBRARY:
        if name not in WORKLOADS:
            skipped.append(name)
            continue
        model = build(name)
        start = time.perf_counter()
        iface = extract_interface(model, default_space(model))
        extract_s = time.perf_counter() - start
        inputs = WORKLOADS[name]()
        start = time.perf_counter()
        simulate(model, inputs[-1])
        sim_s = time.perf_counter() - start
        module = load_module(module_source(iface, model, name))
        plain, phased = check(model, module, inputs, phases=False), \
            check(model, module, inputs, phases=True)
        rows.append((name, len(inputs), plain, phased, extract_s, sim_s))
    print(f"{'model':16} {'inputs':>6} {'plain mean':>10} {'plain max':>10} "
          f"{'phases mean':>11} {'phases max':>10} {'extract s':>9} {'x one sim':>9}")
    for name, n, plain, phased, extract_s, sim_s in rows:
        print(f"{name:16} {n:6d} {plain.mean_error:10.3%} {plain.max_error:10.3%} "
              f"{phased.mean_error:11.3%} {phased.max_error:10.3%} {extract_s:9.2f} "
              f"{extract_s / sim_s:9.1f}")
    print("paper (Table 3, vs RTL): JPEG 7.04% / 23.39%, Protoacc 2.40% / 3.83%, "
          "Darwin 0.05% / 0.06%, Menshen 9.43%, VTA 19.49% / 58.93%")
    for name in skipped:
        try:
            model = build(name)
            extract_interface(model, default_space(model), max_classes=8)
            reason = "no workload in this benchmark yet"
        except ModelError as exc:
            reason = str(exc)
        print(f"not measured: {name}: {reason[:150]}")
    by_name = {r[0]: r for r in rows}
    if "jpeg-decoder" in by_name:
        print(f"jpeg_decoder_max_error: {by_name['jpeg-decoder'][3].max_error:.4f}")
    else:
        print("jpeg_decoder_max_error: nan  (no interface for jpeg-decoder yet; see above)")


if __name__ == "__main__":
    main()
