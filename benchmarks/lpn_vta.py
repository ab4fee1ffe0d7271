"""VTA LPN speed: commits per second on a long instruction stream (the shipped default
stream repeated), against a plain 12-transition chain with the same number of
commits measured in the same process (what VTA's data-dependent weights, guards and
delays cost per commit).

Run: .venv/bin/python benchmarks/lpn_vta.py
"""

from __future__ import annotations

from _timing import best_of
from lpn_sim import chain

from accelperf.lpn import simulate
from accelperf.lpn.inputs.vta import DEFAULT_STREAM, read_instructions
from accelperf.lpn.library.vta import vta

REPEATS = 750          # 14,250 instructions


def main():
    model = vta()
    stream = read_instructions(DEFAULT_STREAM) * REPEATS
    result = simulate(model, stream)
    seconds = best_of(3, lambda: simulate(model, stream))
    rate = result.total_commits / seconds
    print(f"vta, {len(stream)} instructions: {result.total_commits} commits in "
          f"{seconds:.3f} s (including Ψ), latency {result.latency} cycles")
    stages = len(model.transitions)
    baseline = chain(stages)
    jobs = result.total_commits // stages
    base_seconds = best_of(3, lambda: simulate(baseline, jobs))
    base_rate = stages * jobs / base_seconds
    print(f"chain of {stages} transitions, {stages * jobs} commits: {base_rate:.0f} commits/s")
    print(f"vta / chain commit rate: {rate / base_rate:.2f}")
    print(f"commits_per_second: {rate:.0f}")


if __name__ == "__main__":
    main()
