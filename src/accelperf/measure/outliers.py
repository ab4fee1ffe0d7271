"""Which sizes of a measured curve to measure again: a minimum that breaks the curve.

A timing on a shared machine is only ever slowed down, and a sweep's minimum over its
repeats is usually a smooth curve in g. A size whose minimum lies far above the curve its
neighbours draw was slowed by something other than the work: a thread pool waking up, a
page-fault storm, a clock change (issue 36 item 4: 1.9 ms at 256 KiB on the host against
11 us at the sizes beside it, in the minimum of 5 repeats). The harness measures such a
size again, a bounded number of times, before writing it; it never drops a timing.

The rule, for a run of up to ``MAX_RUN`` consecutive sizes i..j with a neighbour on each
side (the two ends have one neighbour and are not judged), on the minima t of the repeats:

* noise: the largest spread median/min of the repeats in the run and at its two neighbours
  (how far the machine moved a timing there on its own; the median, not the maximum, since
  one slow phase that hits one repeat of a neighbour is what this rule looks for, and a
  spread max/min counted it as the machine's noise and let the spike beside it pass);
* the run breaks the curve when every t_k in it is > BREAK_FACTOR · noise ·
  max(t_{i-1}, t_{j+1}): it stands far above both neighbours, a spike (each of its sizes is
  a break).

Runs, not single sizes: on a fresh H100 machine (examples/measurements/gpu-h100-second/)
the host's minimum of five interleaved repeats of the sum was 2.5 and 2.4 ms at 256 and
512 KiB between 13 us at 128 KiB and 91 us at 1 MiB, and the layer norm's 3.0 and 2.5 ms at
64 and 128 KiB between 66 and 78 us: two slow sizes side by side, each with a slow
neighbour, which a rule that judged one size at a time let through into the CSV. Their
neighbours' max/min was 68x (one repeat at 1 MiB took 6.2 ms), their median/min 6.7x: with
this rule the sum's two sizes are found (28x and 26x against 3 · 6.7 = 20x), and no size of
the other eleven measurement directories, steps and noisy GPU runs included. The layer
norm's two are not: beside them, at 32 KiB, the repeats' median is 78x their minimum, which
the rule takes as the machine's own noise.

A step of the curve is not a spike: the size after it is as slow. On the shipped H200
scale data the host steps 32x between 16 MiB (82 us) and 32 MiB (2.6 ms), and 64 MiB takes
5.0 ms; on the 2-core development VM under load, torch's CPU rfft stepped from 27 us at
32 KiB to 55 ms at 64 KiB and 48 ms at 128 KiB (its thread pool waiting for the cores): a
rule that compared a size with its neighbours' interpolation alone (48x there) flagged
that step. Only a break upwards counts (nothing on a machine makes work faster than
itself). A spike that stays after MAX_REMEASURES new measurements is kept and named in the
CSV's header.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass
from typing import Callable

from .crypto import Sample

BREAK_FACTOR = 3.0
MAX_REMEASURES = 2
MAX_RUN = 3             # the longest run of slow sizes that is a spike; a longer one is a step


@dataclass(frozen=True)
class CurveBreak:
    """One size whose minimum stands far above both its neighbours'."""

    granularity: int
    measured_s: float         # the size's minimum over its repeats
    neighbour_s: float        # the slower of its two neighbours' minima
    noise: float              # largest median/min of the repeats here and beside it

    @property
    def ratio(self) -> float:
        return self.measured_s / self.neighbour_s

    def __str__(self) -> str:
        return (f"{self.granularity} B: minimum {self.measured_s:.3g} s was {self.ratio:.3g}x "
                f"its slower neighbour's {self.neighbour_s:.3g} s (repeats' median/min there "
                f"{self.noise:.3g}x)")


def _spread(seconds) -> float:
    return statistics.median(seconds) / min(seconds)


def curve_breaks(curve: dict[int, tuple[float, ...]],
                 factor: float = BREAK_FACTOR) -> list[CurveBreak]:
    """The sizes of ``{granularity: repeats' seconds}`` that break the curve (see above),
    each judged by the shortest run it breaks in, in the order of the sizes."""
    sizes = sorted(curve)
    found: dict[int, CurveBreak] = {}
    for length in range(1, MAX_RUN + 1):
        for i in range(1, len(sizes) - length):
            run = sizes[i:i + length]
            left, right = sizes[i - 1], sizes[i + length]
            neighbour = max(min(curve[left]), min(curve[right]))
            noise = max(_spread(curve[k]) for k in (left, *run, right))
            if all(min(curve[g]) > factor * noise * neighbour for g in run):
                for g in run:
                    found.setdefault(g, CurveBreak(g, min(curve[g]), neighbour, noise))
    return [found[g] for g in sorted(found)]


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
