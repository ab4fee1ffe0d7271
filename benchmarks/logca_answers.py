"""LogCA answers: how long advise, design and the Monte-Carlo band take, and what the
vectorised Monte Carlo buys over evaluating one drawn model at a time (same draws, same
results, measured in this process).

Run: .venv/bin/python benchmarks/logca_answers.py
"""

from __future__ import annotations

import numpy as np
from _timing import best_of

from accelperf.logca import DEFAULT_RANGE, preset
from accelperf.logca.advise import rank
from accelperf.logca.design import feasibility_curve, solve_design
from accelperf.logca.uncertainty import monte_carlo, parse_parameter

DRAWS = 2000


def one_at_a_time(model, distributions, g, seed):
    """The baseline: the same draws, one LogCA model and one g1 root search per draw."""
    rng = np.random.default_rng(seed)
    draws = {k: d.sample(rng, DRAWS) for k, d in distributions.items()}
    curves, g1 = [], []
    for i in range(DRAWS):
        m = model.with_parameters(**{k: float(v[i]) for k, v in draws.items()})
        curves.append(m.speedup(g))
        g1.append(m.g1().root)
    return np.quantile(np.array(curves), 0.05, axis=0), np.array(g1)


def main():
    t2 = preset("ultrasparc-t2", "aes")
    sparc = [preset(d, "aes") for d in ("ultrasparc-t2", "sparc-t3", "sparc-t4-engine",
                                        "sparc-t4-instr")]
    t = best_of(5, lambda: rank(sparc, 4096))
    print(f"advise, 4 designs ranked at 4 KiB: {t * 1e3:.1f} ms")
    for target in ("g1<=64B", "speedup(64KiB)>=5"):
        t = best_of(3, lambda: solve_design(t2, target))
        print(f"design {target}, four parameters by exact bisection: {t * 1e3:.0f} ms")
    t = best_of(1, lambda: feasibility_curve(t2, "g1<=64B", "o", "L", points=60))
    print(f"design feasibility curve (o, L), 60 points: {t:.2f} s")

    d = {"L": parse_parameter("L", "1500±20%"), "o": parse_parameter("o", "lognormal(2.9e4, 0.2)")}
    g = np.geomspace(*DEFAULT_RANGE, 200)
    vec = best_of(3, lambda: monte_carlo(t2, d, g, samples=DRAWS, seed=1))
    base = best_of(1, lambda: one_at_a_time(t2, d, g, 1))
    r = monte_carlo(t2, d, g, samples=DRAWS, seed=1)
    p5, g1 = one_at_a_time(t2, d, g, 1)
    same = np.allclose(r.band["p5"], p5, rtol=1e-12) and np.allclose(r.g1.samples, g1,
                                                                     rtol=1e-9)
    print(f"Monte Carlo, {DRAWS} draws x 200 granularities + g1 + g_A/2: vectorised "
          f"{vec * 1e3:.0f} ms, one model at a time {base:.2f} s (same results: {same})")
    print(f"monte_carlo_speedup_over_per_draw_loop: {base / vec:.0f}x")


if __name__ == "__main__":
    main()
