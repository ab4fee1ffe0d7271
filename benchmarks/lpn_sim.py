"""LPN simulator speed: commits per second on the JPEG-style pipeline for a large image,
the fast engine against the reference semantics (the same rules written plainly) on a
smaller one, and per-commit cost as a chain of identical stages grows from 10 to 1,000
transitions.

Run: .venv/bin/python benchmarks/lpn_sim.py
"""

from __future__ import annotations

from _timing import best_of

from accelperf.lpn import Net, semantics, simulate
from accelperf.lpn.library import build

LARGE_IMAGE = {"width": 2048, "height": 1024, "mean_nnz": 12, "seed": 3}   # 98,304 blocks
SMALL_IMAGE = {"width": 256, "height": 128, "mean_nnz": 12, "seed": 3}     # 1,536 blocks


def chain(stages: int):
    net = Net(f"chain-{stages}")
    job = net.token_type("Job", "size")
    places = [net.place("p0", job)] + [net.place(f"p{i + 1}", job,
                                                 capacity=2 if i + 1 < stages else None)
                                       for i in range(stages)]
    for i in range(stages):
        net.transition(f"t{i}", inputs={places[i]: 1}, outputs={places[i + 1]: 1},
                       delay=lambda j: j.size + 1)
    net.start, net.done = places[0], places[-1]
    net.tokens_from_input = lambda n: [{"size": k % 3} for k in range(n)]
    return net.build()


def main():
    model = build("block-pipeline")
    blocks = model.initial_tokens(LARGE_IMAGE)[model.start]
    result = simulate(model, LARGE_IMAGE)
    seconds = best_of(3, lambda: simulate(model, LARGE_IMAGE))
    rate = result.total_commits / seconds
    print(f"block-pipeline, {len(blocks)} blocks: {result.total_commits} commits in "
          f"{seconds:.3f} s (including Ψ), latency {result.latency} cycles")
    marking = model.marking(SMALL_IMAGE)
    small = simulate(model, marking)
    fast = best_of(3, lambda: simulate(model, marking))
    reference = best_of(1, lambda: semantics.run(model, marking.tokens))
    print(f"block-pipeline, 1,536 blocks, {small.total_commits} commits: fast engine {fast:.3f} s, "
          f"reference semantics {reference:.3f} s ({reference / fast:.0f}x)")
    for stages in (10, 100, 1000):
        m = chain(stages)
        jobs = max(200_000 // stages, 50)
        commits = stages * jobs
        t = best_of(3, lambda: simulate(m, jobs))
        print(f"chain of {stages:4d} transitions: {commits} commits, "
              f"{t / commits * 1e6:.2f} us per commit")
    print(f"commits_per_second: {rate:.0f}")


if __name__ == "__main__":
    main()
