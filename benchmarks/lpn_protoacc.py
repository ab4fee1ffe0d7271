"""Protoacc LPN simulation speed: commits per second on a generated Hyperprotobench-like
message set, against the JPEG pipeline's rate measured in the same process (the ratio says
what Protoacc's data-dependent weights, guards and round-robin routing cost per commit).
With the authors' repository checked out (ACCELPERF_LPN_SRC, default /tmp/lpnsrc) it also
runs their six processed Hyperprotobench inputs.

Run: .venv/bin/python benchmarks/lpn_protoacc.py
"""

from __future__ import annotations

import json
import os
import random
from pathlib import Path

from _timing import best_of

from accelperf.lpn import simulate
from accelperf.lpn.library import build

BASELINE_IMAGE = {"width": 512, "height": 512, "mean_nnz": 12, "seed": 3}


def generated_messages(count: int, seed: int = 7) -> list:
    """``count`` top-level messages of 10..40 fields: scalars, strings of 1 B..4 KiB,
    repeated fields and nested submessages, reproducibly."""
    rng = random.Random(seed)

    def message(depth):
        fields = {}
        for i in range(rng.randint(10, 40) if depth == 0 else rng.randint(2, 8)):
            roll = rng.random()
            if roll < 0.1 and depth < 3:
                fields[f"m{i}"] = {"type": "submessage", "is_repeated": False,
                                   "data": message(depth + 1)}
                continue
            kind = "scalar" if roll < 0.55 else "nonscalar"
            n = rng.choice([1, 1, 1, 1, 2, 5])
            sizes = [8 if kind == "scalar" else rng.randint(1, 4096) for _ in range(n)]
            fields[f"v{i}"] = {"type": kind, "is_repeated": n > 1, "data": sizes}
        return fields
    return [message(0) for _ in range(count)]


def rate(model, doc, repeats=3):
    result = simulate(model, doc)
    seconds = best_of(repeats, lambda: simulate(model, doc))
    return result, result.total_commits / seconds


def main():
    model = build("protoacc")
    _, base = rate(build("block-pipeline"), BASELINE_IMAGE)
    print(f"baseline block pipeline: {base:.0f} commits/s")
    src = Path(os.environ.get("ACCELPERF_LPN_SRC", "/tmp/lpnsrc"))
    bench_dir = src / "lpn_examples/protoacc/hyperprotobench_processed"
    for path in sorted(bench_dir.glob("bench*-ser.json")) if bench_dir.is_dir() else []:
        result, r = rate(model, json.loads(path.read_text()))
        print(f"protoacc {path.stem}: {result.total_commits} commits, latency "
              f"{result.latency} cycles, {r:.0f} commits/s")
    result, r = rate(model, generated_messages(200))
    print(f"protoacc, 200 generated messages: {result.total_commits} commits, latency "
          f"{result.latency} cycles, {r:.0f} commits/s = {r / base:.2f} x the baseline")
    print(f"commits_per_second: {r:.0f}")


if __name__ == "__main__":
    main()
