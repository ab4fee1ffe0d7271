"""LPN backends: the compiled engine against the Python engine, and batch simulation.

1. One large input: the OSDI'24 JPEG decoder (`jpeg-decoder`) on a generated 3840x2160
   4:2:0 image (32,400 MCUs, 194,400 blocks, 518,400 commits; each block's AC-symbol
   count drawn from 1..40, as the JPEG reader would give them), both engines on the same
   prepared marking (the compiled time includes passing the marking to C and building the
   result): the ratio, commits per second of each, and the one-time compile seconds of
   the net (into an empty cache).
2. 1,000 inputs of mixed size (32x32 to 512x512 images as block lists): a loop of single
   Python-engine runs against simulate_many with the compiled engine, on 1 and 2 workers
   (each row's latency checked against the loop's).

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

LARGE = (3840, 2160)


def blocks_of(width: int, height: int, rng: random.Random) -> list[int]:
    """A 4:2:0 image as the JPEG reader gives it to Ψ: per block, its AC-symbol count
    (6 blocks per 16x16 MCU)."""
    return [rng.randint(1, 40) for _ in range((width // 16) * (height // 16) * 6)]


def mixed_inputs(n: int, seed: int = 7) -> list[tuple[str, list]]:
    """Images from 32x32 to 512x512, so that the batch times simulation, not decoding."""
    rng = random.Random(seed)
    out = []
    for i in range(n):
        w, h = rng.choice([32, 64, 128, 256, 512]), rng.choice([32, 64, 128, 256, 512])
        out.append((f"img{i:04d}-{w}x{h}", blocks_of(w, h, rng)))
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
    model = build("jpeg-decoder")
    with tempfile.TemporaryDirectory() as cache:         # the first, uncached compile
        compile_seconds = CompiledEngine(model, cache=Path(cache)).compile_seconds
    print(f"compile once per net: {compile_seconds:.2f} s (gcc -O2, empty cache)")

    marking = model.marking(blocks_of(*LARGE, random.Random(5)))
    py = simulate(model, marking)
    c = simulate(model, marking, backend="compiled")
    assert (c.latency, c.total_commits, c.commits) == (py.latency, py.total_commits,
                                                       py.commits)
    t_py = best_of(2, lambda: simulate(model, marking))
    t_c = best_of(5, lambda: simulate(model, marking, backend="compiled"))
    n = py.total_commits
    speedup = t_py / t_c
    print(f"jpeg-decoder {LARGE[0]}x{LARGE[1]} 4:2:0: {n} commits, latency {py.latency} "
          f"cycles")
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
