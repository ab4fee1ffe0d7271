"""Which sizes of a measured curve to measure again: a minimum that breaks the curve.

A timing on a shared machine is only ever slowed down, and a sweep's minimum over its
repeats is usually a smooth curve in g. A size whose minimum lies far above the curve its
neighbours draw was slowed by something other than the work: a thread pool waking up, a
page-fault storm, a clock change (issue 36 item 4: 1.9 ms at 256 KiB on the host against
11 us at the sizes beside it, in the minimum of 5 repeats). The harness measures such a
size again, a bounded number of times, before writing it; it never drops a timing.

The rule, for a size i with a neighbour on each side (the two ends have one neighbour and
are not judged):

* expected t_i: the neighbours' minima interpolated linearly in (log g, log t), i.e.
  log t̂_i = log t_{i-1} + (log t_{i+1} - log t_{i-1}) · (log g_i - log g_{i-1}) /
  (log g_{i+1} - log g_{i-1}), the geometric mean of the two at powers of two;
* noise: the largest spread max/min of the repeats at i and at its two neighbours (how far
  the machine moved a timing there on its own);
* i breaks the curve when t_i / t̂_i > BREAK_FACTOR · noise and t_i > t_{i+1}: a spike,
  slower than the next larger size too. The second condition tells a spike from a step:
  the host's 32x step of the shipped H200 scale data between 16 MiB (82 us) and 32 MiB
  (2.6 ms) puts 32 MiB at 4.1x its neighbours' interpolation, but below 64 MiB (5.0 ms).

Only a break upwards counts (nothing on a machine makes work faster than itself). A spike
that stays after MAX_REMEASURES new measurements is kept and named in the CSV's header.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

from .crypto import Sample

BREAK_FACTOR = 3.0
MAX_REMEASURES = 2


@dataclass(frozen=True)
class CurveBreak:
    """One size whose minimum lies above its neighbours' interpolation."""

    granularity: int
    measured_s: float         # the size's minimum over its repeats
    expected_s: float         # the neighbours' minima, interpolated in log-log
    noise: float              # largest max/min of the repeats here and beside it

    @property
    def ratio(self) -> float:
        return self.measured_s / self.expected_s

    def __str__(self) -> str:
        return (f"{self.granularity} B: minimum {self.measured_s:.3g} s was {self.ratio:.3g}x "
                f"the {self.expected_s:.3g} s its neighbours give (repeats' spread there "
                f"{self.noise:.3g}x)")


def _spread(seconds) -> float:
    return max(seconds) / min(seconds)


def curve_breaks(curve: dict[int, tuple[float, ...]],
                 factor: float = BREAK_FACTOR) -> list[CurveBreak]:
    """The sizes of ``{granularity: repeats' seconds}`` that break the curve (see above)."""
    sizes = sorted(curve)
    found = []
    for left, g, right in zip(sizes, sizes[1:], sizes[2:]):
        t0, t, t1 = min(curve[left]), min(curve[g]), min(curve[right])
        w = math.log(g / left) / math.log(right / left)
        expected = math.exp(math.log(t0) + w * (math.log(t1) - math.log(t0)))
        noise = max(_spread(curve[k]) for k in (left, g, right))
        if t / expected > factor * noise and t > t1:
            found.append(CurveBreak(g, t, expected, noise))
    return found


def remeasure_breaks(samples: dict[int, Sample], again: Callable[[int], Sample],
                     limit: int = MAX_REMEASURES) -> tuple[dict[int, Sample], list[str]]:
    """Measure each breaking size again (``again(g)``, at most ``limit`` times) until it
    no longer breaks the curve; of a size's measurements the one with the lower minimum is
    kept. Returns the samples and one note per size measured again."""
    samples = dict(samples)
    first: dict[int, CurveBreak] = {}
    tries: dict[int, int] = {}

    def breaks():
        return curve_breaks({g: s.seconds for g, s in samples.items()})

    while True:
        pending = [b for b in breaks() if tries.get(b.granularity, 0) < limit]
        if not pending:
            break
        for b in pending:
            first.setdefault(b.granularity, b)
            tries[b.granularity] = tries.get(b.granularity, 0) + 1
            new = again(b.granularity)
            if new.minimum < samples[b.granularity].minimum:
                samples[b.granularity] = new
    still = {b.granularity for b in breaks()}
    notes = [f"{first[g]}; measured again {tries[g]} time{'s' * (tries[g] > 1)}: minimum now "
             f"{samples[g].minimum:.3g} s" + (", still breaking the curve (kept)"
                                                if g in still else "")
             for g in sorted(first)]
    return samples, notes
