"""The search behind ``lpn calibrate``: integer parameters that minimise a model's squared
relative error on measured latencies (issues 21 and 35).

The cost is ``S(θ) = Σᵢ ((L(xᵢ; θ) − yᵢ) / yᵢ)²`` over the measured inputs xᵢ with cycles
yᵢ, where ``L`` is the simulated latency and θ the integer delays. ``L`` is piecewise
linear in θ (a sum of delays inside a regime, a max of such sums across regimes), so:

1. **descent**: the Jacobian by a difference of one cycle per parameter (exact inside a
   regime), the bounded linear least-squares step (SciPy's ``lsq_linear``) rounded to
   whole cycles and accepted only when ``S`` drops (else halved), then a coordinate walk
   (strides of 1, 2, 4, ... cycles while ``S`` drops, back to 1 after a miss); repeated
   while the pair lowers ``S``;
2. **neighbourhood**: where descent stops, every single move ±1..±:data:`REACH` cycles,
   then every pair of ±1 moves (two delays that trade a cycle, which no single move
   finds); the first that lowers ``S`` restarts the descent. The search ends only at a
   point no such move improves — an integer local minimum in that neighbourhood;
3. **restarts**: the same from :data:`STARTS` points (the given start and seeded points
   with each fitted delay scaled by 0.5..2), keeping the lowest ``S``; how many starts
   reach it (to a relative 1e-9) is reported: fewer than all means the landscape has
   other basins, and the best is the one found, not a proven global optimum. A start
   that reaches a cost of zero (the model meets every measurement) ends the restarts:
   nothing is lower;
4. **settling**: among equally good answers, the one nearest the start: each delay the
   best point moved is put back to its start value, the other moved delays refitted, and
   the change kept if ``S`` does not rise. A delay the data do not move stays where it
   started (a confounded pair keeps its defaults' split);
5. **across valleys** (:meth:`Fitter.across_valleys`), from the settled best point when
   its ``S`` is above 0 and some delay is quantised there (below): moves that step
   quantised delays to the edges of their plateaus — one delay by 1..:data:`REACH`
   plateaus, two by one each, and a pair whose step leaves ``S`` level walked on for up
   to :data:`VALLEY` steps — the first that strictly lowers ``S`` repeated while it
   does, then steps 1–2 again from there; until none is found or
   :data:`VALLEY_BUDGET` new points have been simulated, then step 4 again. Only a
   strictly lower ``S`` is taken, so the search never ends worse than steps 1–4 alone
   (issue 35's recovery benchmark: the PCIe decoder's second truth, where a link
   latency in ns traded one for one with colour cycles at level cost, now reaches
   ``S`` = 0). Only the best start is walked on, so when this lowers ``S`` one start
   is reported as reaching it.

**Plateaus.** A delay the latency is quantised in (a link's bytes per cycle with its
header bytes: ``⌈(h + s)/b⌉`` cycles a packet; nanoseconds of a slower clock) moves no
latency by one cycle over a run of values, so its Jacobian column is zero there and the
±1 moves are flat. :meth:`Fitter.plateau_edge` finds the end of such a run (doubling,
then bisecting; a guess of the last plateau's length first, on a walk), and
:meth:`Fitter.along_plateaus` moves a partner on a plateau by the amount that
compensates a step of another delay — what the profile interval needs to walk the run
of equally good values (:func:`~.uncertainty.profile_walk`). Steps 1–4 do not probe
plateaus: searches that did so from the start (a secant of 2..16 cycles for flat
Gauss–Newton columns; plateau-edge moves in place of the ±1 moves) lost clean cases the
plain search finds, and took 3 to 7 times as long; step 5 probes them only where the
plain search has stopped above 0. :meth:`Fitter.edge_jacobian` (a step to the plateau's
edge, per unit of the plateau's length) is the Jacobian identifiability is judged on
(:mod:`.identify`): the one-unit Jacobian calls a quantised delay dead inside its
plateau, and then the partner that makes up for it looks identified.

Latencies are cached per integer point (every input at once), so the restarts, the
cross-validation folds and the profile intervals re-use each other's simulations; each
simulation runs on the compiled engine when a C compiler is found (``backend="auto"``).
"""

from __future__ import annotations

import math
import random
import warnings
from dataclasses import dataclass

import numpy as np

from ..errors import ModelError
from .net import Marking, Model
from .sim import SimulationError, simulate

MAX_ITERATIONS = 12
MAX_COORDINATE_PASSES = 4
MAX_ROUNDS = 4             # of Gauss–Newton then coordinate search
MAX_NEIGHBOURHOOD_MOVES = 40
MAX_WALK = 64              # gains of one coordinate walk
REACH = 3                  # single moves of ±1..±REACH cycles
PLATEAU = 64               # cycles a flat delay is probed for the end of its plateau
VALLEY = 16                # steps a valley of level cost is walked
VALLEY_BUDGET = 1500       # new points the valley phase may simulate, searches included
STARTS = 3
START_SEED = 0
SAME_COST = 1e-9           # relative: two costs this close are one optimum


@dataclass(frozen=True)
class Optimum:
    """The best point of a multi-start search, its cost, and how many of the starts
    reached that cost."""

    values: dict
    cost: float
    starts: int
    agreeing: int

    def __repr__(self) -> str:
        return f"Optimum(cost {self.cost:.3g}, {self.agreeing} of {self.starts} starts agree)"


def same_cost(a: float, b: float) -> bool:
    """``a`` no worse than ``b`` up to rounding (costs are sums of squares ≥ 0)."""
    return a <= b * (1 + SAME_COST) + 1e-300


class Fitter:
    """Simulates one model family (``builder(values) -> Model``) on fixed measurements,
    caching latencies by parameter vector, on ``backend`` (:func:`~.sim.simulate`'s)."""

    def __init__(self, builder, measurements: list, backend: str = "auto"):
        self.builder, self.backend = builder, backend
        self.measurements = list(measurements)
        base = builder({})
        self.model_name = base.name
        self.spec = {p.name: p for p in base.parameters}
        self.markings = [_marking(base, m) for m in self.measurements]
        self.cycles = np.array([m.cycles for m in self.measurements], dtype=float)
        self.cache: dict[tuple, np.ndarray] = {}
        self.simulations = 0

    def latencies(self, values: dict[str, int]) -> np.ndarray:
        key = tuple(sorted(values.items()))
        if key not in self.cache:
            model = self.builder(values)
            out = []
            for m, marking in zip(self.measurements, self.markings):
                try:
                    out.append(simulate(model, marking, backend=self.backend).latency)
                except SimulationError as exc:
                    raise ModelError(f"input {m.name!r} with parameters {values}: the model "
                                     f"did not finish ({str(exc).splitlines()[0]})") from None
            self.simulations += len(out)
            self.cache[key] = np.array(out, dtype=float)
        return self.cache[key]

    def residuals(self, values, rows) -> np.ndarray:
        return (self.latencies(values)[rows] - self.cycles[rows]) / self.cycles[rows]

    def cost(self, values, rows) -> float:
        r = self.residuals(values, rows)
        cost = float(r @ r)
        return cost if cost == cost else math.inf     # NaN (no latency): never better

    def within(self, name: str, v: int) -> bool:
        spec = self.spec[name]
        return (spec.minimum is None or v >= spec.minimum) and \
            (spec.maximum is None or v <= spec.maximum)

    def jacobian(self, values, names, rows) -> np.ndarray:
        """d residual / d parameter (per cycle), by a step of one cycle (down at the top
        bound)."""
        base = self.latencies(values)[rows]
        columns = []
        for name in names:
            step = 1 if self.within(name, values[name] + 1) else -1
            moved = self.latencies({**values, name: values[name] + step})[rows]
            columns.append((moved - base) / step / self.cycles[rows])
        return np.column_stack(columns) if columns else np.zeros((len(rows), 0))

    def edge_jacobian(self, values, names, rows) -> np.ndarray:
        """d residual / d parameter by a step to the edge of each delay's plateau (the
        first value, up, else down, at which some latency of ``rows`` moves), per unit
        of the plateau's length (from the edge below to the edge above): one cycle where
        the delay has a slope; where it is quantised, the mean slope (a link's 1 ns of
        a 75 MHz clock: 1/13.3 cycle). The one-unit :meth:`jacobian` sees a quantised
        delay by chance of where on its plateau the fit lies: a zero column inside it
        (the delay looks dead) or a whole cycle's jump at its edge; either way a partner
        that makes up for it (colour cycles for link cycles) looks independent, and the
        delay identified where only the combination is (:func:`~.identify.identify`'s
        rank test). Zero only for a delay no latency moves with within :data:`PLATEAU`."""
        base = self.latencies(values)[rows]
        columns = []
        for name in names:
            up, down = (self.plateau_edge(values, name, d, rows) for d in (1, -1))
            edge = up if up is not None else down
            if edge is None:
                columns.append(np.zeros(len(rows)))
                continue
            length = up - down - 1 if up is not None and down is not None else \
                abs(edge - values[name])
            step = self.latencies({**values, name: edge})[rows] - base
            columns.append(step * np.sign(edge - values[name]) / length / self.cycles[rows])
        return np.column_stack(columns) if columns else np.zeros((len(rows), 0))

    def along_plateaus(self, values, name: str, v: int, others, rows,
                       limit: float) -> dict[str, int]:
        """``values`` with ``name`` set to ``v`` and one partner of ``others`` moved by the
        amount that compensates, refitted, where that brings the cost within ``limit``
        (else ``name = v`` alone). The partners tried are those the latency is quantised
        in at ``values`` (a unit step leaves every latency of ``rows`` unchanged: bytes
        per cycle, nanoseconds of a slower clock), over twice their plateau's length
        either way: the compensating move of a header for one more byte per cycle is
        about one plateau, and neither the descent nor the ±1 moves see a slope there."""
        moved = {**values, name: v}
        for other in others:
            edges = [self.plateau_edge(values, other, d, rows) for d in (1, -1)]
            if any(e is None for e in edges) or edges[0] - edges[1] <= 2:
                continue            # not on a plateau (or flat to the probe's end: dead)
            reach = 2 * (edges[0] - edges[1])
            for k in range(1, reach + 1):
                for d in (1, -1):
                    u = values[other] + d * k
                    if self.within(other, u) and \
                            self.cost({**moved, other: u}, rows) <= limit:
                        return self.fit({**moved, other: u}, others, rows)
        return moved

    def plateau_edge(self, values, name: str, direction: int, rows,
                     guess: int = 0) -> int | None:
        """The first value of ``name``, walking in ``direction`` from ``values``, at which
        some latency of ``rows`` differs from its value at ``values`` (None: none within
        :data:`PLATEAU` cycles or the bound). Found by doubling the offset until a
        latency moves, then bisecting: exact where each latency is monotone in the delay
        (then the run of equal latencies is contiguous), which a delay's plateau is. A
        ``guess`` of the plateau's length (the last one's, on a walk across several) is
        tried first, give or take one (the plateaus of 1 ns at 75 MHz are 13 or 14 long):
        two to four simulations where it holds."""
        base, start = self.latencies(values)[rows], values[name]
        same = lambda k: np.array_equal(                             # noqa: E731
            self.latencies({**values, name: start + direction * k})[rows], base)
        for k in (guess, guess + 1, guess - 1) if guess > 2 else ():
            if self.within(name, start + direction * k) and same(k - 1) and not same(k):
                return start + direction * k
        inside, outside = 0, None
        k = 1
        while k <= PLATEAU:
            if not self.within(name, start + direction * k):
                bound = self.spec[name].minimum if direction < 0 else self.spec[name].maximum
                k = abs(bound - start)
                if k <= inside or same(k):
                    return None
                outside = k
                break
            if not same(k):
                outside = k
                break
            inside, k = k, 2 * k
        if outside is None:
            return None
        while outside - inside > 1:
            mid = (inside + outside) // 2
            inside, outside = (mid, outside) if same(mid) else (inside, mid)
        return start + direction * outside

    # ------------------------------------------------------------ the search
    def fit(self, start: dict[str, int], names: list[str], rows) -> dict[str, int]:
        """Descent only (step 1 of the module docstring): Gauss–Newton steps then a
        coordinate walk, again while the pair lowers the error. Cheap; the profile
        intervals and the bootstrap refit with it, from a fitted point."""
        values, cost = dict(start), self.cost(start, rows)
        for _ in range(MAX_ROUNDS):
            values = self._coordinate_search(*self._gauss_newton(values, names, rows),
                                             names, rows)
            new_cost = self.cost(values, rows)
            if new_cost == 0 or new_cost >= cost:
                break
            cost = new_cost
        return values

    def search(self, start: dict[str, int], names: list[str], rows) -> dict[str, int]:
        """Descent, then the neighbourhood moves (step 2), until none lowers the cost."""
        values = self.fit(start, names, rows)
        for _ in range(MAX_NEIGHBOURHOOD_MOVES):
            better = self._better_neighbour(values, names, rows)
            if better is None:
                break
            values = self.fit(better, names, rows)
        return values

    def optimum(self, start: dict[str, int], names: list[str], rows,
                starts: int = STARTS) -> Optimum:
        """Steps 1–4 of the module docstring from ``start`` and ``starts − 1`` others."""
        ends = []
        for point in self.start_points(start, names, starts):
            ends.append(self.search(point, names, rows))
            if self.cost(ends[-1], rows) == 0:
                break                   # a zero cost is the global minimum: stop there
        costs = [self.cost(v, rows) for v in ends]
        best = min(costs)
        agreeing = [v for v, c in zip(ends, costs) if same_cost(c, best)]
        nearest = min(agreeing, key=lambda v: _distance(v, start, names))
        values = self.settle(nearest, start, names, rows)
        across = self.across_valleys(values, names, rows)
        if self.cost(across, rows) < self.cost(values, rows):
            # only the best start was walked on: the others stopped higher
            values, agreeing = self.settle(across, start, names, rows), [across]
        return Optimum(values, self.cost(values, rows), len(ends), len(agreeing))

    def across_valleys(self, values, names, rows) -> dict[str, int]:
        """Step 2b: from a point the search ended at, a move along the plateaus of a
        quantised delay (:meth:`_valley_move`) that lowers the cost, then the search
        again from there; until no such move is found or :data:`VALLEY_BUDGET` new
        points have been simulated."""
        budget = len(self.cache) + VALLEY_BUDGET
        while len(self.cache) < budget:
            better = self._valley_move(values, names, rows, budget)
            if better is None:
                break
            values = self.search(better, names, rows)
        return values

    def _valley_move(self, values, names, rows, budget: int) -> dict[str, int] | None:
        """A point of lower cost than ``values`` that a step to a plateau's edge reaches
        (one delay moved 1..:data:`REACH` plateaus, or two delays one each), or the end
        of a valley of level cost that such a pair walks for up to :data:`VALLEY` steps,
        the move repeated while it lowers the cost (:meth:`_onwards`); None where there
        is none, where no delay is quantised at ``values`` (every plateau one cycle wide:
        the ±1 moves of step 2 saw all of these), or once the cache holds ``budget``
        points."""
        cost = self.cost(values, rows)
        if cost == 0:
            return None
        edge = {(n, s): self.plateau_edge(values, n, s, rows) for n in names for s in (1, -1)}
        quantised = {n for (n, s), e in edge.items() if e is not None and abs(e - values[n]) > 1}
        if not quantised:
            return None
        for (n, s), v in edge.items():
            last = values[n]
            for _ in range(REACH if n in quantised else 0):
                if v is None or len(self.cache) > budget:
                    break
                if self.cost(trial := {**values, n: v}, rows) < cost:
                    return self._onwards(trial, ((n, s),), rows)
                last, v = v, self.plateau_edge(trial, n, s, rows, abs(v - last))
        level = []
        for i, a in enumerate(names):
            for b in names[i + 1:]:
                if a not in quantised and b not in quantised:
                    continue            # both with a slope: the ±1 pairs tried these
                for pair in (((a, sa), (b, sb)) for sa in (1, -1) for sb in (1, -1)):
                    if any(edge[m] is None for m in pair) or len(self.cache) > budget:
                        continue
                    trial = {**values, **{n: edge[n, s] for n, s in pair}}
                    trial_cost = self.cost(trial, rows)
                    if trial_cost < cost:
                        return self._onwards(trial, pair, rows)
                    if trial_cost == cost:
                        level.append((pair, trial))
        for pair, trial in level:        # a valley: walk on while the cost stays level
            last = values
            for _ in range(VALLEY - 1):
                if len(self.cache) > budget:
                    return None
                if (step := self._across(trial, pair, rows, last)) is None:
                    break
                last, trial, trial_cost = trial, step, self.cost(step, rows)
                if trial_cost < cost:
                    return self._onwards(trial, pair, rows)
                if trial_cost > cost:
                    break
        return None

    def _onwards(self, values, move, rows) -> dict[str, int]:
        """``values``, reached by ``move`` (delays and directions, each to its next
        plateau's edge), with the same move repeated while it lowers the cost: a
        valley's floor that slopes down is followed in one pass, not one search each."""
        cost, last = self.cost(values, rows), values
        for _ in range(MAX_WALK):
            trial = self._across(values, move, rows, last)
            if trial is None or (trial_cost := self.cost(trial, rows)) >= cost:
                break
            last, values, cost = values, trial, trial_cost
        return values

    def _across(self, values, move, rows, last) -> dict[str, int] | None:
        """``values`` with each delay of ``move`` at the edge of its next plateau in its
        direction (None: one has none), guessing the plateau as long as the step from
        ``last`` to ``values`` (a walk crosses plateaus of about one length)."""
        steps = {n: self.plateau_edge(values, n, s, rows, abs(values[n] - last[n]))
                 for n, s in move}
        return None if None in steps.values() else {**values, **steps}

    def start_points(self, start, names, starts: int) -> list[dict[str, int]]:
        rng = random.Random(START_SEED)
        points = [dict(start)]
        for _ in range(starts - 1):
            point = dict(start)
            for n in names:
                v = round(start[n] * rng.uniform(0.5, 2.0)) + rng.randint(0, 2)
                while not self.within(n, v):
                    v += 1 if self.spec[n].minimum is not None and \
                        v < self.spec[n].minimum else -1
                point[n] = v
            points.append(point)
        return points

    def settle(self, values, start, names, rows) -> dict[str, int]:
        """Step 4: put each moved delay back to ``start`` where the others make up for it
        at no extra cost."""
        cost = self.cost(values, rows)
        for name in names:
            if values[name] == start[name]:
                continue
            others = [n for n in names if n != name and values[n] != start[n]]
            trial = {**values, name: start[name]}
            if others:
                trial = self.fit(trial, others, rows)
            trial_cost = self.cost(trial, rows)
            if same_cost(trial_cost, cost):
                values, cost = trial, min(cost, trial_cost)
        return values

    def _better_neighbour(self, values, names, rows) -> dict[str, int] | None:
        cost = self.cost(values, rows)
        if cost == 0:
            return None
        moves = [((n, s * k),) for k in range(1, REACH + 1) for n in names for s in (1, -1)]
        moves += [((a, da), (b, db)) for i, a in enumerate(names) for b in names[i + 1:]
                  for da in (1, -1) for db in (1, -1)]
        for move in moves:
            if all(self.within(n, values[n] + d) for n, d in move):
                trial = {**values, **{n: values[n] + d for n, d in move}}
                if self.cost(trial, rows) < cost:
                    return trial
        return None

    def _gauss_newton(self, values, names, rows):
        from scipy.optimize import lsq_linear
        cost = self.cost(values, rows)
        for _ in range(MAX_ITERATIONS):
            if cost == 0:
                break
            J = self.jacobian(values, names, rows)
            live = [i for i in range(len(names)) if np.any(J[:, i])]
            if not live:
                break
            lo = [(-np.inf if self.spec[names[i]].minimum is None else
                   self.spec[names[i]].minimum - values[names[i]]) for i in live]
            hi = [(np.inf if self.spec[names[i]].maximum is None else
                   self.spec[names[i]].maximum - values[names[i]]) for i in live]
            lo = [min(a, -1e-9) for a in lo]
            hi = [max(b, 1e-9) for b in hi]
            target = -self.residuals(values, rows)
            if not (np.all(np.isfinite(J[:, live])) and np.all(np.isfinite(target))):
                break
            try:
                with np.errstate(all="ignore"), warnings.catch_warnings():
                    # SciPy's trust region warns on a rank-deficient J (confounded
                    # delays, which the calibration names itself)
                    warnings.simplefilter("ignore", RuntimeWarning)
                    step = lsq_linear(J[:, live], target, bounds=(lo, hi)).x
            except np.linalg.LinAlgError:       # an ill-conditioned step: walk instead
                break
            improved = False
            for scale in (1.0, 0.5, 0.25):
                trial = dict(values)
                for i, d in zip(live, step):
                    trial[names[i]] = values[names[i]] + int(round(d * scale))
                if trial == values or not all(self.within(n, trial[n]) for n in names):
                    continue
                trial_cost = self.cost(trial, rows)
                if trial_cost < cost:
                    values, cost, improved = trial, trial_cost, True
                    break
            if not improved:
                break
        return values, cost

    def _coordinate_search(self, values, cost, names, rows):
        for _ in range(MAX_COORDINATE_PASSES):
            moved = False
            for name in names:
                for direction in (1, -1):
                    # Walk while it helps, doubling the stride after each gain (a long
                    # way costs log₂ of its length in models built), back to one cycle
                    # after a miss.
                    stride, gains = 1, 0
                    while gains < MAX_WALK:
                        v = values[name] + direction * stride
                        trial = {**values, name: v}
                        if self.within(name, v) and \
                                (trial_cost := self.cost(trial, rows)) < cost:
                            values, cost, moved = trial, trial_cost, True
                            stride, gains = 2 * stride, gains + 1
                        elif stride > 1:
                            stride = 1
                        else:
                            break
            if not moved or cost == 0:
                break
        return values


def _distance(values, start, names) -> float:
    return sum(abs(values[n] - start[n]) / max(abs(start[n]), 1) for n in names)


def _marking(model: Model, m) -> Marking:
    try:
        return model.marking(m.input)
    except ModelError as exc:
        raise ModelError(f"row {m.name!r}: its input fails the model's Ψ: {exc}") from None


__all__ = ["Fitter", "Optimum", "same_cost", "REACH", "STARTS"]
