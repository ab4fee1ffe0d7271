"""LPN backends: the compiled engine against the Python engine, and batch simulation.

1. One large input: the OSDI'24 JPEG decoder (`jpeg-decoder`) on a generated 3840x2160
   4:2:0 image (32,400 MCUs, 194,400 blocks, 518,400 commits; each block's AC-symbol
   count drawn from 1..40, as the JPEG reader would give them). Both engines run on the
   same prepared marking in this process, in interleaved rounds (one Python-engine run,
   then several compiled runs), so that a change of load on the machine hits both. A
   compiled run is all the user pays per input: turning the marking's tokens into int64
   arrays, the run in C and building the result. Printed: median and min wall-clock
   seconds of each, commits per second, the ratio of the medians (the headline), of the
   mins and of the median CPU seconds (what the run cost when other processes took turns
   on the core), the load average before and after, and the one-time compile seconds of
   the net (empty cache).
2. 1,000 inputs of mixed size (32x32 to 512x512 images as block lists): a loop of single
   Python-engine runs against simulate_many with the compiled engine, on 1 and 2 workers
   (each row's latency checked against the loop's).

Run: .venv/bin/python benchmarks/lpn_backends.py
"""

from __future__ import annotations

import os
import random
import statistics
import tempfile
import time
from pathlib import Path

from accelperf.lpn import simulate
from accelperf.lpn.batch import simulate_many
from accelperf.lpn.compiled import CFLAGS, CompiledEngine, compiler_missing
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


def interleaved(slow, fast, rounds: int = 5, fast_per_round: int = 5):
    """Wall-clock and CPU seconds of each run of ``slow`` and ``fast``, timed in turn:
    each round one run of ``slow`` then ``fast_per_round`` runs of ``fast``."""
    wall: dict = {slow: [], fast: []}
    cpu: dict = {slow: [], fast: []}
    for _ in range(rounds):
        for func in [slow] + [fast] * fast_per_round:
            began, began_cpu = time.perf_counter(), time.process_time()
            func()
            wall[func].append(time.perf_counter() - began)
            cpu[func].append(time.process_time() - began_cpu)
    return (wall[slow], cpu[slow]), (wall[fast], cpu[fast])


def main():
    if compiler_missing():
        raise SystemExit(f"lpn_backends: {compiler_missing()}")
    model = build("jpeg-decoder")
    with tempfile.TemporaryDirectory() as cache:         # the first, uncached compile
        compile_seconds = CompiledEngine(model, cache=Path(cache)).compile_seconds
    print(f"compile once per net: {compile_seconds:.2f} s ({' '.join(CFLAGS)}, empty cache)")

    marking = model.marking(blocks_of(*LARGE, random.Random(5)))
    py = simulate(model, marking)
    c = simulate(model, marking, backend="compiled")
    assert (c.latency, c.total_commits, c.commits) == (py.latency, py.total_commits,
                                                       py.commits)
    load_before = os.getloadavg()
    (t_py, cpu_py), (t_c, cpu_c) = interleaved(
        lambda: simulate(model, marking), lambda: simulate(model, marking, backend="compiled"))
    load_after = os.getloadavg()
    n = py.total_commits
    median = statistics.median
    speedup = median(t_py) / median(t_c)
    print(f"jpeg-decoder {LARGE[0]}x{LARGE[1]} 4:2:0: {n} commits, latency {py.latency} "
          f"cycles; load average {load_before[0]:.2f} before, {load_after[0]:.2f} after")
    for name, times, cpu in (("python engine  ", t_py, cpu_py), ("compiled engine", t_c, cpu_c)):
        print(f"  {name} {len(times):2d} runs: median {median(times):.4f} s, min "
              f"{min(times):.4f} s ({n / median(times) / 1e6:6.2f} M commits/s at the "
              f"median); CPU median {median(cpu):.4f} s")
    print(f"  ratio of medians {speedup:.1f}x, of mins {min(t_py) / min(t_c):.1f}x, of CPU "
          f"medians {median(cpu_py) / median(cpu_c):.1f}x (CPU time leaves out the time "
          f"other processes held the core)")

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
