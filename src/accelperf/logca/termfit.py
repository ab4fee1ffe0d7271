"""LogCA whose terms are chosen by how well they predict sizes left out (issues 35, 36).

The model is :class:`.hierarchy.HierarchicalLogCA` (ISCA'17 eq. 1 with a host constant,
host layers and the accelerator's own kernel, see that module):

    T0(g) = c0 + C·g^β·H(g),       H(g) = 1 + Σ_k h_k·m_k(g)
    T1(g) = o + L1(g) + max(floor, C·g^β_A/A)

Plain LogCA has c0 = 0, H = 1, floor = 0, β_A = β and L1 = L (granularity-independent). Each
extension is a *term* the data must earn:

* ``host-constant``: c0, the host's per-call cost (a thread pool's wake-up, a dispatcher);
* ``floor``: the accelerator kernel's least time (launch and occupancy, ~8 µs on a GPU);
* ``accel-beta``: β_A, the accelerator running another algorithm (radix against comparison
  sort; its own BLAS);
* ``per-byte-latency``: L1 = L·g (ISCA'17 §2.3, eq. 8) when no echo run measures the copies;
  with an echo run o and L come from it (``o + L·g`` by relative least squares) and are held;
* ``layer:NAME``: a step h_k of the host's cost per byte once the data outgrow that layer of
  the hierarchy given, centred at the layer's capacity μ_k (w_k = 1: the data outgrow the
  layer when g passes it; a logistic in ln g of fixed sharpness,
  :func:`.hierarchy.miss_share`). Offered only where the layer's bend has at least
  ``MIN_SIDE`` measured sizes on each side. The bend is not fitted: with the sizes a factor
  2 or 4 apart the data cannot place it between two sizes (on the H200 data a free w moved
  the 16→32 MiB step of the scale kernel's host to 61 MiB, 94% off at 32 MiB).
* ``threshold:mmap``: a step h of the host's cost per byte once g reaches glibc's largest
  mmap threshold, ``MMAP_THRESHOLD`` = 32 MiB on a 64-bit host (``DEFAULT_MMAP_THRESHOLD_MAX``
  = 4 MiB·sizeof(long)). malloc serves a request of that size or more with a fresh mmap,
  whose pages the kernel faults in and zeroes one by one on first touch, every call; below
  it the dynamic threshold rises to the size freed and the heap reuses the same pages. A
  host operation that allocates its output (PyTorch's ``2 * x``) then pays ~0.4 µs per 4 KiB
  page: the scale kernel's host takes 168 µs at 16 MiB and 3.7 ms at 32 MiB on the H200 box
  (examples/measurements/gpu-h200-harness/), 9 GB/s, the rate of page faults, not of any
  cache. It is a host layer (:class:`.hierarchy.MemoryLayer` with ``threshold``) whose bend
  is complete at μ rather than half way there: working set ``THRESHOLD_WORKING_SET`` = √2
  centres the logistic at μ/√2, 94% of the step taken at μ and 6% at μ/2. Centred at μ, as
  a store's, half the step would be missing at 32 MiB itself (the fit on every other size
  predicted the scale kernel's 32 MiB speedup 45% low; interpolating its neighbours, 70%).
  The size is the library's, not fitted; where the host is not glibc, or the operation
  allocates no output, cross-validation leaves the term out like any other.

Choice by prediction, not in-sample fit (AIC rewarded 28 parameters on 27 residuals):
forward selection from plain LogCA, adding at each step the term, or the pair of terms, that
lowers the cross-validated speedup error most, while it lowers it by at least ``MIN_GAIN``
(relative; :mod:`.choose`).
Every fold is refitted from scratch, start values included, from its own sizes only. A
candidate with more free parameters than a fold has sizes is refused.

Each fit minimises a robust loss (``soft_l1`` in log time: a miss within its scale counts
fully, a 10x miss about as ln-linearly) of the log host time and the log accelerated time,
so a point far off the curve (a thread pool's wake-up) pulls the fit little and is named in
the warnings with what the fit expected. The scale is the fit's own: a first solve at
``F_SCALE`` (5%, the timing noise of a minimum of repeats), then one at 1.4826 times the
median absolute residual (robust regression's normalised MAD, an estimate of the residuals'
standard deviation that outliers do not inflate) when that is larger. Chosen by the
training halves' cross-validated speedup error (benchmarks/logca_gpu.py's split, seven
kernels on two H200 measurements: 29.8% mean against 32.8% at a fixed 5%). The times are fitted, not their ratio:
they are what is measured, and a fit of the log speedup lets the two times' errors cancel
(on the second H200 measurement, examples/measurements/gpu-h200-harness/, the GEMM fitted
on every other size put the accelerated time at 64 MiB 41% below its measurement, under
the copies alone, and the host's 30% below; the speedup was 18% off at the sizes held out).

Physical bounds: the host's per-call constant c0 is at most the least measured host time
(T0 = c0 + C·g^β·H > c0 at every size). Without it a fit bent by one step (a thread pool
switching on between 16 and 64 KiB on the fft kernel) put c0 = 56 µs above the 22 µs its
own 4 KiB point measured, and predicted a speedup above 1 at every size (g1 = 1 B where
its points cross 1 between 4 and 16 KiB).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
from scipy import optimize

from ..units import format_size
from .fit import (FitData, FittedParameter, GranularityEstimate, SpeedupErrors,
                  linear_accel, linear_echo, measured_crossing, power_law)
from .hierarchy import HierarchicalLogCA, MemoryLayer, miss_share
from .model import MAGNITUDE, LogCA

LN_C, BETA, LN_C0, O, LAT, LN_A, LN_FLOOR, BETA_A = range(8)
N_FIXED = 8
NAMES = ("C", "beta", "c0", "o", "L", "A", "floor", "beta_A")
SHARPNESS = 8.0              # the host step's logistic: 10% -> 90% over a factor of 1.7 in g
W_RANGE = (0.5, 2.0)         # the bend stays within a factor 2 of the layer's capacity
STEP_RANGE = (0.1, 100.0)    # 1 + h_k: the host's cost per byte beyond the layer, relative
BETA_RANGE = (0.1, 3.0)
F_SCALE = 0.05
MAD_NORMAL = 1.4826          # the MAD of a normal sample times this is its standard deviation
MIN_GAIN = 0.02
MIN_SIDE = 2
TERMS = ("host-constant", "floor", "accel-beta", "per-byte-latency")
MMAP_THRESHOLD = 32 * 2**20      # glibc's DEFAULT_MMAP_THRESHOLD_MAX on 64-bit hosts
THRESHOLD_WORKING_SET = math.sqrt(2.0)
MMAP = MemoryLayer("mmap", MMAP_THRESHOLD, threshold=True)
LN_MAGNITUDE = math.log(MAGNITUDE) - 1.0     # inside the model's limit, not on it


def term_name(layer: MemoryLayer) -> str:
    """A layer's term: ``layer:NAME`` for a store, ``threshold:NAME`` for a threshold."""
    return f"{'threshold' if layer.threshold else 'layer'}:{layer.name}"


@dataclass(frozen=True)
class Spec:
    """Which terms a candidate has (the hierarchy's layers it steps at, innermost first)."""

    host_constant: bool = False
    floor: bool = False
    accel_beta: bool = False
    per_byte_latency: bool = False
    layers: tuple[MemoryLayer, ...] = ()

    @property
    def terms(self) -> tuple[str, ...]:
        flags = (self.host_constant, self.floor, self.accel_beta, self.per_byte_latency)
        return tuple(t for t, on in zip(TERMS, flags) if on) + \
            tuple(term_name(l) for l in self.layers)

    def with_term(self, term: str, layers: tuple[MemoryLayer, ...]) -> "Spec":
        """With ``term`` added; ``layers`` are the candidates' in the order of their bends."""
        from dataclasses import replace
        if term.startswith(("layer:", "threshold:")):
            added = {term_name(l) for l in self.layers} | {term}
            return replace(self, layers=tuple(l for l in layers if term_name(l) in added))
        return replace(self, **{term.replace("-", "_"): True})

    def free(self, has_echo: bool) -> np.ndarray:
        """The free entries of the parameter vector."""
        f = np.zeros(N_FIXED + 2 * len(self.layers), bool)
        f[[LN_C, BETA, LN_A]] = True
        f[LN_C0], f[LN_FLOOR], f[BETA_A] = self.host_constant, self.floor, self.accel_beta
        f[O] = not has_echo
        f[LAT] = self.per_byte_latency and not has_echo
        f[N_FIXED::2] = True             # the steps h_k; the bends stay at the capacities
        return f


@dataclass(frozen=True)
class Solved:
    """One fitted candidate: its vector, which entries were free, and the model."""

    spec: Spec
    x: np.ndarray = field(repr=False)
    free: np.ndarray = field(repr=False)
    dependent: bool
    model: HierarchicalLogCA
    at_bound: tuple[str, ...]

    def model_parameters(self) -> list[tuple[str, float]]:
        """(name, value) of every vector entry in the model's units: C, c0, A and floor
        are fitted as logarithms, a step as ln(1 + h), a working set as ln w."""
        logs = {"C", "c0", "A", "floor"}
        out = [(n, math.exp(v) if n in logs else float(v)) for n, v in zip(NAMES, self.x)]
        for i in range(N_FIXED, self.x.size):
            name = _vector_name(i, self.spec)
            out.append((name, math.expm1(self.x[i]) if name.startswith("h[")
                        else math.exp(self.x[i])))
        return out


# ---------------------------------------------------------------------- the times
def bend_working_set(layer: MemoryLayer) -> float:
    """The working set w a fit holds a layer's bend at: 1 for a store (half way at its
    capacity), ``THRESHOLD_WORKING_SET`` for a threshold (complete at its size)."""
    return THRESHOLD_WORKING_SET if layer.threshold else 1.0


def shares(x, spec: Spec, g) -> list[np.ndarray]:
    """Each layer's miss share m_k(g) at the bend that x places (a solve holds the bends)."""
    return [miss_share(g, layer.capacity_bytes, math.exp(x[N_FIXED + 2 * k + 1]), SHARPNESS)
            for k, layer in enumerate(spec.layers)]


def _pieces(x, spec: Spec, g, dependent: bool, m: list[np.ndarray]):
    """The pieces of both times, the one definition :func:`times` and
    :func:`log_times_and_jacobian` share: ln g, the host's C·g^β, H, c0, the kernel's own
    C·g^β_A/A, the floor (0 without one) and the copies' o + L(g)."""
    lng = np.log(g)
    host = np.exp(x[LN_C] + x[BETA] * lng)
    H = 1.0 + sum((math.exp(x[N_FIXED + 2 * k]) - 1) * mk for k, mk in enumerate(m))
    c0 = math.exp(x[LN_C0]) if spec.host_constant else 0.0
    kernel = np.exp(x[LN_C] - x[LN_A] + x[BETA_A if spec.accel_beta else BETA] * lng)
    floor = math.exp(x[LN_FLOOR]) if spec.floor else 0.0
    copies = x[O] + (x[LAT] * g if dependent else x[LAT])
    return lng, host, H, c0, kernel, floor, copies


def times(x, spec: Spec, g, dependent: bool):
    """(T0, T1) of vector x at g, as :class:`.hierarchy.HierarchicalLogCA` computes them
    (tests check the two agree), without building a model at each solver step."""
    _, host, H, c0, kernel, floor, copies = _pieces(x, spec, g, dependent, shares(x, spec, g))
    return c0 + host * H, copies + np.maximum(floor, kernel)


def log_times_and_jacobian(x, spec: Spec, g, dependent: bool, m: list[np.ndarray]):
    """(ln T0, ln T1, ∂ln T0/∂x, ∂ln T1/∂x) at g, the miss shares ``m`` given
    (:func:`shares`): the derivatives in closed form, where finite differences took half of
    a fit's time (one model evaluation per free entry per step). With a floor the kernel is
    the larger of two pieces; the derivative is the piece that is larger at g."""
    lng, host, H, c0, kernel, floor, copies = _pieces(x, spec, g, dependent, m)
    t0 = c0 + host * H
    t1 = copies + np.maximum(floor, kernel)
    on = (kernel >= floor).astype(float)        # the kernel's own piece is the larger
    j0 = np.zeros((g.size, x.size))
    j0[:, LN_C] = host * H / t0
    j0[:, BETA] = host * H * lng / t0
    j0[:, LN_C0] = c0 / t0
    for k, mk in enumerate(m):
        j0[:, N_FIXED + 2 * k] = host * (math.exp(x[N_FIXED + 2 * k]) * mk) / t0
    j1 = np.zeros((g.size, x.size))
    moving = on * kernel / t1
    j1[:, LN_C] = moving
    j1[:, LN_A] = -moving
    j1[:, BETA_A if spec.accel_beta else BETA] += moving * lng
    j1[:, LN_FLOOR] = (1.0 - on) * floor / t1
    j1[:, O] = 1.0 / t1
    j1[:, LAT] = (g if dependent else 1.0) / t1
    return np.log(t0), np.log(t1), j0, j1


def model_of(x, spec: Spec, dependent: bool, name: str | None = None) -> HierarchicalLogCA:
    base = LogCA(L=max(x[LAT], 0.0), o=max(x[O], 0.0), C=math.exp(x[LN_C]),
                 A=math.exp(x[LN_A]), beta=x[BETA],
                 latency="dependent" if dependent else "independent", unit="seconds",
                 name=name)
    n = len(spec.layers)
    return HierarchicalLogCA(
        base, spec.layers + (MemoryLayer("beyond", math.inf),),
        host_steps=tuple(math.exp(x[N_FIXED + 2 * k]) - 1 for k in range(n)),
        working_set=tuple(math.exp(x[N_FIXED + 2 * k + 1]) for k in range(n)) or 1.0,
        sharpness=SHARPNESS,
        host_constant=math.exp(x[LN_C0]) if spec.host_constant else 0.0,
        floor=math.exp(x[LN_FLOOR]) if spec.floor else 0.0,
        accel_beta=float(x[BETA_A]) if spec.accel_beta else None, name=name)


def _bounds(d: FitData, spec: Spec):
    t_lo, t_hi = float(min(d.t0.min(), d.t1.min())), float(max(d.t0.max(), d.t1.max()))
    # C within what LogCA accepts (model.MAGNITUDE): on the H100 layernorm and sum of
    # examples/measurements/gpu-h100-second/ a fold's β went to its bound and C underflowed
    # to 0, which the model refused: the whole fit ended in a ModelError
    lower = [-LN_MAGNITUDE, BETA_RANGE[0], math.log(t_lo * 1e-3), 0.0, 0.0, -30.0,
             math.log(t_lo * 1e-3), BETA_RANGE[0]]
    # c0 <= the least host time: T0 = c0 + C·g^β·H exceeds c0 at every size
    upper = [LN_MAGNITUDE, BETA_RANGE[1], math.log(float(d.t0.min())), np.inf, np.inf, 30.0,
             math.log(t_hi), BETA_RANGE[1]]
    for _ in spec.layers:
        lower += [math.log(STEP_RANGE[0]), math.log(W_RANGE[0])]
        upper += [math.log(STEP_RANGE[1]), math.log(W_RANGE[1])]
    return np.array(lower), np.array(upper)


def _start(d: FitData, spec: Spec, dependent: bool) -> np.ndarray:
    """Start values from this data set alone (a fold's sizes in cross-validation)."""
    g, t0, t1 = d.g, d.t0, d.t1
    inner = g < spec.layers[0].capacity_bytes if spec.layers else np.ones(g.size, bool)
    inner = inner if inner.sum() >= 3 else np.ones(g.size, bool)
    gi, ti = g[inner], t0[inner]
    upper_half = slice(gi.size // 2, None) if spec.host_constant else slice(None)
    C, beta, _, _ = power_law(gi[upper_half], ti[upper_half])
    beta = float(np.clip(beta, *BETA_RANGE))
    c0 = max(float(t0[0] - C * g[0] ** beta), 0.05 * float(t0[0]))
    x = np.zeros(N_FIXED + 2 * len(spec.layers))
    x[LN_C], x[BETA], x[LN_C0] = math.log(C), beta, math.log(c0)
    host = C * g ** beta
    if d.echo is not None:
        o, L, _, _ = linear_echo(g, d.echo, dependent)
    else:
        o, L, inv_a = linear_accel(g, host, t1, dependent)
    x[O], x[LAT] = max(o, 1e-3 * float(t1.min())), max(L, 0.0)
    x = kernel_start(x, d, spec, dependent)
    # Each step relative to the steps inside it (H multiplies them): taken alone, two
    # layers' ratios of 0.2 started H at 1 − 0.8 − 0.8 < 0, a negative host time.
    H = np.ones_like(g)
    for k, layer in enumerate(spec.layers):
        above = g > layer.capacity_bytes
        ratio = np.median(t0[above] / (host[above] * H[above])) if above.any() else 1.0
        step = float(np.clip(ratio, 0.2, 50)) * float(np.min(H)) - float(np.min(H))
        x[N_FIXED + 2 * k] = math.log1p(step)
        x[N_FIXED + 2 * k + 1] = math.log(bend_working_set(layer))
        H = H + step * miss_share(g, layer.capacity_bytes, math.exp(x[N_FIXED + 2 * k + 1]),
                                  SHARPNESS)
    return x


def kernel_start(x, d: FitData, spec: Spec, dependent: bool) -> np.ndarray:
    """x with the kernel's floor, β_A and A started from what the accelerated times leave
    after the copies, against the host's C·g^β as x has it. :func:`solve` calls it again,
    with the host's terms fitted, when the accelerator's stage ends with the kernel under
    its floor at every size, where the floor's max() leaves A no gradient: started from
    the first guess of C and β (the sizes inside the first layer only), the H100 GEMM's
    fit stepped there and stayed with A = 8e10, its accelerated time the copies alone, 43%
    under its 128 MiB point."""
    x = x.copy()
    g, t1 = d.g, d.t1
    kernel = np.clip(t1 - x[O] - (x[LAT] * g if dependent else x[LAT]), 0.05 * t1, None)
    x[LN_FLOOR] = math.log(float(np.median(kernel[:3])))
    big = slice(g.size // 2, None)
    K, beta_k, _, _ = power_law(g[big], kernel[big])
    x[BETA_A] = float(np.clip(beta_k, *BETA_RANGE))
    ln_host = x[LN_C] + x[BETA] * np.log(g[big])
    x[LN_A] = (x[LN_C] - math.log(K)) if spec.accel_beta else \
        float(np.median(ln_host - np.log(kernel[big])))
    x[LN_A] = float(np.clip(x[LN_A], -29, 29))
    return x


def solve(d: FitData, spec: Spec, name: str | None = None,
          host_stages: HostStages | None = None) -> Solved:
    """The robust least-squares fit of one candidate to ``d`` (log host and accelerated
    times). ``host_stages``: the host's stages already solved on these sizes (the same for
    every candidate with the same host terms, :class:`HostStages`)."""
    dependent = d.echo is not None or spec.per_byte_latency
    free = spec.free(d.echo is not None)
    x0 = _start(d, spec, dependent)
    lower, upper = _bounds(d, spec)
    # Inside the bounds (a solver's start must be) without moving the held entries: L may be
    # 2.6e-11 s/B, which an absolute margin would swamp.
    with np.errstate(invalid="ignore"):
        margin = np.where(np.isfinite(upper - lower), 1e-9 * (upper - lower), 0.0)
    x0[free] = np.clip(x0[free], (lower + margin)[free], (upper - margin)[free])
    ln_t0, ln_t1 = np.log(d.t0), np.log(d.t1)
    host_part = np.zeros(free.size, bool)
    host_part[[LN_C, BETA, LN_C0]] = True
    host_part[N_FIXED:] = True

    m = shares(x0, spec, d.g)                   # the bends are held: one set per solve

    def residuals(x, which, parts):
        """The log-time residuals and their Jacobian as functions of the ``which``
        entries of x."""
        last = {}

        def evaluate(v):
            if last.get("v") is None or not np.array_equal(last["v"], v):
                y = x.copy()
                y[which] = v
                l0, l1, j0, j1 = log_times_and_jacobian(y, spec, d.g, dependent, m)
                if parts == "host":
                    r = (l0 - ln_t0, j0)
                elif parts == "accel":
                    r = (l1 - ln_t1, j1)
                else:
                    r = (np.concatenate([l0 - ln_t0, l1 - ln_t1]), np.vstack([j0, j1]))
                last["v"], last["r"] = np.array(v, copy=True), r
            return last["r"]
        return (lambda v: evaluate(v)[0]), (lambda v: evaluate(v)[1][:, which])

    def run(x, which, parts, scale=F_SCALE):
        """(x with its ``which`` entries solved, the solve's final cost)."""
        fun, jac = residuals(x, which, parts)
        with np.errstate(all="ignore"):
            sol = optimize.least_squares(fun, x[which], jac=jac,
                                         bounds=(lower[which], upper[which]), loss="soft_l1",
                                         f_scale=scale, max_nfev=300)
        y = x.copy()
        y[which] = sol.x
        return y, sol.cost

    # The host's terms first (its own times), then the accelerator's with the host held,
    # then everything on both log times: each start comes from the step before, so the
    # joint solve begins near both curves.
    host_free = free & host_part
    key = None if host_stages is None else HostStages.key(d, spec)
    if key is not None and key in host_stages:
        x = x0.copy()
        x[host_free] = host_stages[key]
    else:
        x, _ = run(x0, host_free, "host")
        if key is not None:
            host_stages[key] = x[host_free]
    accel = free & ~host_part
    y, cost = run(x, accel, "accel")
    _, _, _, _, kernel, floor, _ = _pieces(y, spec, d.g, dependent, m)
    if spec.floor and np.all(kernel < floor):
        # The kernel ended under its floor at every size, where the max() leaves A no
        # gradient: a step can land there from a start made with the host's first guess.
        # Again from the kernel's start against the host as fitted; the lower cost wins.
        x[accel] = np.clip(kernel_start(x, d, spec, dependent), lower + margin,
                           upper - margin)[accel]
        again, cost_again = run(x, accel, "accel")
        y = again if cost_again < cost else y
    x, _ = run(y, free, "both")
    # Refit with the loss's scale at the fit's own typical miss (robust regression's
    # normalised MAD), at least F_SCALE: a kernel whose times all lie 15% about the curve
    # is not 15%-outliers everywhere, and only points beyond that are discounted.
    with np.errstate(all="ignore"):
        r = residuals(x, free, "both")[0](x[free])
    x, _ = run(x, free, "both", max(F_SCALE, MAD_NORMAL * float(np.median(np.abs(r)))))
    span = upper - lower
    near = free & np.isfinite(span) & ((x - lower < 1e-4 * span) | (upper - x < 1e-4 * span))
    return Solved(spec, x, free, dependent, model_of(x, spec, dependent, name),
                  tuple(_vector_name(i, spec) for i in np.flatnonzero(near)))


class HostStages(dict):
    """The host's stage of :func:`solve` (its terms fitted to the host's times alone), kept
    per data set and host terms. Candidates that differ only in the accelerator's terms (a
    floor, β_A) start the host's stage from the same values, within the same bounds, on the
    same residuals (ln T0 reads no accelerator entry), so they reach the same vector: the
    stage is solved once. It was 43% of a forward selection's time, and half of its solves
    repeated one already made (the H200 scale kernel: 613 solves, 301 distinct stages)."""

    @staticmethod
    def key(d: FitData, spec: Spec) -> tuple:
        """What the host's stage reads: the sizes and both times (the bounds take the least
        of either), the host constant and the layers."""
        return (spec.host_constant, spec.layers, d.g.tobytes(), d.t0.tobytes(),
                d.t1.tobytes())


def _vector_name(i: int, spec: Spec) -> str:
    if i < N_FIXED:
        return NAMES[i]
    layer = spec.layers[(i - N_FIXED) // 2].name
    return f"h[{layer}]" if (i - N_FIXED) % 2 == 0 else f"w[{layer}]"


def free_count(spec: Spec, has_echo: bool) -> int:
    return int(spec.free(has_echo).sum())


def subset(d: FitData, idx) -> FitData:
    return FitData(d.g[idx], d.t0[idx], d.t1[idx], None if d.echo is None else d.echo[idx], ())
