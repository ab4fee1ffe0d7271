"""LPN backends: the compiled engine against the Python engine, and batch simulation.

1. One large input: the JPEG-style decoder on a generated 2560x1440 image (172,800 blocks,
   691,200 commits), both engines on the same prepared marking (the compiled time
   includes passing the marking to C and building the result): the ratio, commits per
   second of each, and the one-time compile seconds of the net (into an empty cache).
2. 1,000 inputs of mixed size (images from 16x16 to 256x256, as block lists): a loop of
   single Python-engine runs against simulate_many with the compiled engine, on 1 and 2
   workers (each row's latency checked against the loop's).

Run: .venv/bin/python benchmarks/lpn_backends.py
"""

from __future__ import annotations

import random
import tempfile
import time
from pathlib import Path

from _timing import best_of

from accelperf.lpn import simulate
from accelperf.lpn.batch import simulate_many
from accelperf.lpn.compiled import CompiledEngine, compiler_missing
from accelperf.lpn.library import build

LARGE_IMAGE = {"width": 2560, "height": 1440, "mean_nnz": 12, "seed": 5}


def mixed_inputs(n: int, seed: int = 7) -> list[tuple[str, list]]:
    """Images from 16x16 to 256x256 as the block lists an image reader gives Ψ (the
    per-block non-zero counts), so that the batch times simulation, not image making."""
    rng = random.Random(seed)
    out = []
    for i in range(n):
        w, h = rng.choice([16, 32, 64, 128, 256]), rng.choice([16, 32, 64, 128, 256])
        blocks = (w // 8) * (h // 8) * 3
        out.append((f"img{i:04d}-{w}x{h}", [rng.randint(0, 40) for _ in range(blocks)]))
    return out


def _spin(n: int) -> int:
    total = 0
    for i in range(n):
        total += i
    return total


def machine_scaling(n: int = 3_000_000) -> float:
    """How much faster two processes do two equal pure-Python jobs than one process: the
    most any 2-worker batch can gain on this machine now (other load included)."""
    import multiprocessing
    began = time.perf_counter()
    _spin(n), _spin(n)
    serial = time.perf_counter() - began
    with multiprocessing.get_context("fork").Pool(2) as pool:
        began = time.perf_counter()
        pool.map(_spin, [n, n])
        parallel = time.perf_counter() - began
    return serial / parallel


def main():
    if compiler_missing():
        raise SystemExit(f"lpn_backends: {compiler_missing()}")
    model = build("jpeg")
    with tempfile.TemporaryDirectory() as cache:         # the first, uncached compile
        compile_seconds = CompiledEngine(model, cache=Path(cache)).compile_seconds
    print(f"compile once per net: {compile_seconds:.2f} s (gcc -O2, empty cache)")

    marking = model.marking(LARGE_IMAGE)
    py = simulate(model, marking)
    c = simulate(model, marking, backend="compiled")
    assert (c.latency, c.total_commits, c.commits) == (py.latency, py.total_commits,
                                                       py.commits)
    t_py = best_of(2, lambda: simulate(model, marking))
    t_c = best_of(5, lambda: simulate(model, marking, backend="compiled"))
    n = py.total_commits
    speedup = t_py / t_c
    print(f"jpeg {LARGE_IMAGE['width']}x{LARGE_IMAGE['height']}: {n} commits, latency "
          f"{py.latency} cycles")
    print(f"  python engine   {t_py:.3f} s  {n / t_py / 1e6:6.2f} M commits/s")
    print(f"  compiled engine {t_c:.3f} s  {n / t_c / 1e6:6.2f} M commits/s  "
          f"({speedup:.1f}x)")

    inputs = mixed_inputs(1000)
    began = time.perf_counter()
    loop_latencies = [simulate(model, x).latency for _, x in inputs]
    t_loop = time.perf_counter() - began
    batches = {workers: simulate_many(model, inputs, backend="compiled", workers=workers)
               for workers in (1, 2)}
    for result in batches.values():
        assert [r.latency for r in result.rows] == loop_latencies and not result.failures
    commits = sum(r.commits for r in batches[1].rows)
    t1, t2 = batches[1].seconds, batches[2].seconds
    print(f"1,000 mixed inputs ({commits} commits): python loop {t_loop:.2f} s, compiled "
          f"batch 1 worker {t1:.2f} s ({t_loop / t1:.1f}x), 2 workers {t2:.2f} s "
          f"({t_loop / t2:.1f}x); scaling 1 -> 2 workers {t1 / t2:.2f}x (two spinning "
          f"processes on this machine now: {machine_scaling():.2f}x)")
    print(f"compiled_speedup: {speedup:.1f}")


if __name__ == "__main__":
    main()
