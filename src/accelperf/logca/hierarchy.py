"""LogCA whose per-byte costs depend on the memory layer that holds the working set.

LogCA (ISCA'17 §2) charges the host ``C·g^β`` and the accelerator ``o + L1(g) + C·g^β/A`` at
every granularity alike. The density model (Steffen 2007 §4) instead serves data from the
smallest layer whose local store μ holds it, each layer at its own rate. This module puts the
two together: the per-byte parts of both times are scaled by how much of the working set has
outgrown each layer,

* ``T0(g) = c0 + C·g^β · H(g)``,                    ``H(g) = 1 + Σ_k h_k·m_k(g)``
* ``T1(g) = o + L·g · R(g) + C·g^β/A · Q(g)``,       ``Q(g) = 1 + Σ_k a_k·m_k(g)``,
  ``R(g) = 1 + Σ_k l_k·m_k(g)``

with granularity-dependent latency; with a constant L the transfer term is L itself, unscaled.
``h_k``, ``a_k`` and ``l_k`` are the relative extra cost per byte of the host, of the
accelerator's computation and of the transfer (LogCA's L·g: the copies) once the data live
beyond layer k. They differ: a computation that is slow per byte hides most of its memory
traffic behind it, a copy does not.

The transition. ``m_k`` is the share of accesses that miss layer k for a working set of
``W = w·g`` bytes (w: bytes touched per byte offloaded, e.g. source and destination buffers):

    m_k(g) = 1 / (1 + (μ_k / (w·g))^s)

a logistic in ln W centred on the layer's capacity μ_k. Its limit s → ∞ is the density
model's assignment (all data served from the layer that holds W); a finite s follows what
measured miss-ratio curves show, that a set-associative cache with (pseudo-)LRU starts to
miss before W reaches μ and keeps some hits well past it (conflict misses, other processes
sharing the last level, prefetchers hiding part of the misses), so that the cost moves from
one layer's rate to the next's over a factor of a few in size, symmetrically in log size.
w and s may be one number for all layers or one per layer: a fit finds them per layer,
because a layer's effective capacity differs from its nominal one (a last level shared with
other processes or a virtual machine's neighbours, a victim cache that holds what the level
inside it evicts), and ``μ_k/w_k`` is where the speedup is half way through layer k's bend.

The copies bend on their own. The transfer factor R uses its own ``m'_k`` (working set w'_k,
sharpness s'_k) rather than the computations' m_k: a copy streams at memory speed and meets
the next layer's bandwidth limit as soon as a share of its lines miss, while a computation
slower per byte than the layer's bandwidth (AES at ~0.8 ns/B against a copy's ~0.1) leaves
time for the hardware prefetchers, so its bend starts at another size and has another
width. Measured on this machine (the shipped AES dataset) the accelerated run's cost per
byte rises between 1 and 4 MiB while the echo run's copies rise between 4 and 16 MiB; one
shared bend per layer could follow only one of them (speedup error 8.9% at worst, against
4.8% with the copies' own bend). This is Gables' (HPCA'19) point that each engine sees the
memory system through its own operational intensity, applied per layer.

With a single layer there is no transition, H = Q = 1, and every time, speedup and metric is
the plain model's, computed by the plain model itself (exact, not approximately equal).

The accelerator's own kernel (issue 36; an extension beyond both papers). ISCA'17 eq. 1
charges the accelerator ``C·g^β/A``: the host's algorithm, A times faster, at every size. On
a discrete GPU neither half holds (shipped H200 data, examples/measurements/gpu-h200/): the
kernel takes a launch- and occupancy-bound ~5-30 µs however little data it gets until the
GPU fills, and the GPU runs another algorithm than the host (a radix sort against a
comparison sort, cuBLAS against a CPU BLAS), so its time grows with its own exponent.
Two named parameters carry this:

* ``floor`` (the unit of o): the kernel's least time, launch and occupancy;
* ``accel_beta`` β_A: the accelerator's complexity exponent (None: the host's β),

      T1(g) = o + L1(g)·R(g) + max(floor, C·g^β_A/A · Q(g)).

A is then the acceleration at g = 1 byte (C/A the kernel's cost coefficient), equal to the
paper's A when β_A = β. With floor = 0 and β_A = β the kernel term is the paper's and, with
one layer and no host constant, the model is plain LogCA and every metric is the plain
model's own. Otherwise the metrics are found numerically (a scan of the speedup in log g,
then Brent's method to 1e-12): the max() makes T1 piecewise, and in the floor piece the
model is LogCA with o + floor and A → ∞ (ISCA'17 eq. 2's Amdahl limit), in the other the
paper's with β_A for the kernel, so a closed form exists only piecewise: with the floor
alone (β_A = β, one layer, no host constant) the speedup is the smaller of two plain LogCA
curves and g1, g_A/2 are the larger of their closed-form roots
(:meth:`HierarchicalLogCA.closed_form_granularity`, checked against the numeric root).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

import numpy as np
from scipy import optimize

from ..errors import ModelError, invalid
from ..units import format_size
from .model import MAGNITUDE, LogCA

# The bracket the metrics search (bytes): from one byte to far past any memory.
SEARCH_RANGE = (1.0, 1e15)


def scan_grid(lo: float = SEARCH_RANGE[0], hi: float = SEARCH_RANGE[1]) -> np.ndarray:
    """The sizes a numeric metric scans before it refines: 64 points a decade in log g."""
    return np.geomspace(lo, hi, int(64 * math.log10(hi / lo)) + 1)


@dataclass(frozen=True)
class MemoryLayer:
    """A layer's name and the capacity μ (bytes) of its store; the outermost may be inf.

    ``threshold``: not a store but a size at or above which the host's cost per byte steps,
    set by its software (glibc maps an allocation of 32 MiB or more fresh from the kernel,
    :data:`.termfit.MMAP_THRESHOLD`). A store's bend is half way at μ (the data outgrow it
    past μ); a threshold's is complete at μ, so a fit gives it the working set
    ``THRESHOLD_WORKING_SET``."""

    name: str
    capacity_bytes: float
    threshold: bool = False

    def __repr__(self) -> str:
        size = "unbounded" if math.isinf(self.capacity_bytes) else \
            format_size(self.capacity_bytes)
        return f"<{'threshold' if self.threshold else 'layer'} {self.name}: {size}>"


def layers_from_hierarchy(hierarchy) -> tuple[MemoryLayer, ...]:
    """The stores of a density :class:`~accelperf.density.hierarchy.Hierarchy` (from a TOML
    file or ``density probe``), innermost first, then the unbounded memory beyond
    the outermost store.

    A density layer is a store of μ bytes and the link that fills it (Steffen 2007 §4; the
    probe names it ``inner<-outer``): a working set beyond every store lives where the
    outermost link reads from (``DRAM`` for ``L3<-DRAM``). Stores must grow outwards: one no
    larger than the store inside it is an error naming the layer (the hierarchy is unsorted
    or two layers overlap). A store of 0 bytes holds nothing and is skipped.
    """
    layers = [MemoryLayer(l.name, float(l.size_bytes)) for l in hierarchy.layers
              if l.size_bytes > 0]
    if not layers:
        raise invalid("hierarchy", hierarchy.name, "needs at least one layer with a store "
                                                   "larger than 0 bytes")
    for inner, outer in zip(layers, layers[1:]):
        if not outer.capacity_bytes > inner.capacity_bytes:
            raise invalid(f"hierarchy {hierarchy.name!r}: layer {outer.name!r}",
                          f"{outer.capacity_bytes:g} B",
                          f"layers must be sorted from the innermost outwards, each larger "
                          f"than the one inside it ({inner.name!r} holds "
                          f"{inner.capacity_bytes:g} B): unsorted or overlapping layers")
    last = layers[-1].name
    beyond = last.split("<-", 1)[1] if "<-" in last else f"beyond {last}"
    return tuple(layers) + (MemoryLayer(beyond, math.inf),)


def miss_share(g, capacity: float, working_set: float, sharpness: float):
    """``m(g) = 1/(1 + (μ/(w·g))^s)``: the share of the working set beyond a store of μ bytes
    (see the module docstring); 0 for an unbounded store."""
    g = np.asarray(g, float)
    if math.isinf(capacity):
        return np.zeros_like(g)
    with np.errstate(divide="ignore", over="ignore"):
        z = sharpness * (np.log(capacity) - np.log(working_set * g))
        return 1.0 / (1.0 + np.exp(np.clip(z, -700, 700)))


@dataclass(frozen=True)
class HierarchicalLogCA:
    """LogCA with per-layer costs (see the module docstring for the equations).

    ``base`` holds the costs when the working set fits the innermost layer; ``host_steps[k]``,
    ``accel_steps[k]`` and ``link_steps[k]`` (h_k, a_k, l_k) are the relative extra per-byte
    costs once it has outgrown layer k (one per layer but the outermost). ``host_constant`` is the host's
    per-call constant c0 (0 in the paper's model).

    >>> base = LogCA(L=0, o=1e-5, C=1e-9, A=4, unit="seconds")
    >>> layers = (MemoryLayer("L3", 32 * 2**20), MemoryLayer("DRAM", math.inf))
    >>> m = HierarchicalLogCA(base, layers, host_steps=(0.1,), accel_steps=(0.2,))
    >>> round(float(m.speedup(2**40)), 3)      # A·(1 + h)/(1 + a) far past the cache
    3.667
    """

    base: LogCA
    layers: tuple[MemoryLayer, ...]
    host_steps: tuple[float, ...] = ()
    accel_steps: tuple[float, ...] = ()
    link_steps: tuple[float, ...] = ()
    working_set: float | tuple[float, ...] = 1.0
    sharpness: float | tuple[float, ...] = 4.0
    host_constant: float = 0.0
    link_working_set: float | tuple[float, ...] | None = None
    link_sharpness: float | tuple[float, ...] | None = None
    name: str | None = field(default=None, compare=False)
    floor: float = 0.0
    accel_beta: float | None = None

    def __post_init__(self) -> None:
        set_ = object.__setattr__
        if not isinstance(self.base, LogCA):
            raise invalid("base", self.base, "a LogCA model")
        set_(self, "layers", tuple(self.layers))
        n = len(self.layers) - 1
        if n < 0:
            raise ModelError("a hierarchical LogCA model needs at least one layer")
        set_(self, "host_steps", tuple(float(x) for x in self.host_steps) or (0.0,) * n)
        set_(self, "accel_steps", tuple(float(x) for x in self.accel_steps) or (0.0,) * n)
        set_(self, "link_steps", tuple(float(x) for x in self.link_steps) or (0.0,) * n)
        for label, steps in (("host_steps", self.host_steps), ("accel_steps", self.accel_steps),
                             ("link_steps", self.link_steps)):
            if len(steps) != n:
                raise invalid(label, steps, f"one step per layer but the outermost ({n})")
            for layer, x in zip(self.layers, steps):
                if not (math.isfinite(x) and x > -1):
                    raise invalid(f"{label} of layer {layer.name!r}", x,
                                  "a finite relative change > -1 (the cost stays positive)")
        if self.link_working_set is None:
            set_(self, "link_working_set", self.working_set)
        if self.link_sharpness is None:
            set_(self, "link_sharpness", self.sharpness)
        for label in ("working_set", "sharpness", "link_working_set", "link_sharpness"):
            value = getattr(self, label)
            values = tuple(value) if isinstance(value, (tuple, list)) else (value,) * max(n, 1)
            if len(values) != max(n, 1):
                raise invalid(label, value, f"one number, or one per layer but the outermost "
                                            f"({n})")
            for x in values:
                if not (isinstance(x, (int, float)) and math.isfinite(x) and x > 0):
                    raise invalid(label, x, "a finite number > 0")
            set_(self, label, tuple(float(x) for x in values))
        if not (math.isfinite(self.host_constant) and self.host_constant >= 0):
            raise invalid("host_constant", self.host_constant, "a finite number of seconds >= 0")
        if not (isinstance(self.floor, (int, float)) and math.isfinite(self.floor)
                and self.floor >= 0):
            raise invalid("floor", self.floor, "the kernel's least time, a finite number >= 0")
        if self.accel_beta is not None:
            from .model import BETA_RANGE
            if not (isinstance(self.accel_beta, (int, float))
                    and BETA_RANGE[0] <= self.accel_beta <= BETA_RANGE[1]):
                raise invalid("accel_beta", self.accel_beta,
                              f"between {BETA_RANGE[0]:g} and {BETA_RANGE[1]:g}, or None "
                              f"(the host's β)")
            set_(self, "accel_beta", float(self.accel_beta))

    # ------------------------------------------------------------------ identity
    @property
    def plain(self) -> bool:
        """True when the model is plain LogCA: one layer, no host constant, no kernel floor
        and the host's β for the kernel."""
        return (len(self.layers) == 1 and self.host_constant == 0 and not self.kernel_extended)

    @property
    def kernel_extended(self) -> bool:
        """True when the accelerator's kernel has a floor or its own exponent β_A."""
        return self.floor > 0 or (self.accel_beta is not None
                                  and self.accel_beta != self.base.beta)

    @property
    def beta_A(self) -> float:
        """The accelerator's complexity exponent (the host's β unless given)."""
        return self.base.beta if self.accel_beta is None else self.accel_beta

    @property
    def label(self) -> str:
        return self.name or f"{self.base.label} over {len(self.layers)} layer(s)"

    @property
    def A(self) -> float:
        """The innermost layer's acceleration (the A of g_A/2)."""
        return self.base.A

    def parameters(self) -> dict:
        return {"base": self.base.parameters(),
                "layers": [{"name": l.name, "capacity_bytes": l.capacity_bytes,
                            "threshold": l.threshold} for l in self.layers],
                "host_steps": list(self.host_steps), "accel_steps": list(self.accel_steps),
                "link_steps": list(self.link_steps),
                "working_set": self.working_set, "sharpness": self.sharpness,
                "link_working_set": self.link_working_set,
                "link_sharpness": self.link_sharpness,
                "host_constant": self.host_constant, "floor": self.floor,
                "accel_beta": self.accel_beta}

    # ------------------------------------------------------------------ tunable parameters
    def tunable(self) -> tuple[str, ...]:
        """The parameters regions and design vary: LogCA's L, o, C and A, then per layer but
        the outermost the accelerator's extra cost ``a[layer]`` and, with dependent latency,
        the copies' ``l[layer]`` (the host's h_k is the host's, like C's work, not a
        design choice of the accelerator); the kernel's ``floor`` when it has one (a
        launch cut is a design choice like o)."""
        names = ["L", "o", "C", "A"] + (["floor"] if self.floor > 0 else []) + \
            [f"a[{l.name}]" for l in self.layers[:-1]]
        if self.base.dependent:
            names += [f"l[{l.name}]" for l in self.layers[:-1]]
        return tuple(names)

    def _step_index(self, name: str) -> tuple[str, int]:
        kinds = {"a": "accel_steps", "l": "link_steps"}
        for k, layer in enumerate(self.layers[:-1]):
            for letter, attr in kinds.items():
                if name == f"{letter}[{layer.name}]" and name in self.tunable():
                    return attr, k
        raise invalid("parameter", name, f"one of {', '.join(self.tunable())}")

    def value_of(self, name: str) -> float:
        """A tunable parameter's value (a step is the relative extra cost, e.g. 0.3)."""
        if name in ("L", "o", "C", "A"):
            return float(getattr(self.base, name))
        if name == "floor" and name in self.tunable():
            return self.floor
        attr, k = self._step_index(name)
        return getattr(self, attr)[k]

    def with_value(self, name: str, value: float) -> "HierarchicalLogCA":
        """A copy with one tunable parameter set (validated like a new model)."""
        if name in ("L", "o", "C", "A"):
            return replace(self, base=self.base.with_parameters(**{name: value}))
        if name == "floor" and name in self.tunable():
            return replace(self, floor=value)
        attr, k = self._step_index(name)
        steps = list(getattr(self, attr))
        steps[k] = value
        return replace(self, **{attr: tuple(steps)})

    def improved(self, name: str, factor: float) -> "HierarchicalLogCA":
        """The model with one parameter improved ``factor``-fold, as ISCA'17 §3.2 improves
        LogCA's: L and o divided, C and A multiplied — each at every layer, since the
        per-layer factors H, Q, R multiply them (C·g^β·H, C·g^β/A·Q, L·g·R) — and a
        per-layer step divided (the layer's extra cost cut ``factor``-fold; a step below 0,
        a layer that is faster beyond, moves towards 0 and the gain is negative)."""
        value = self.value_of(name)
        return self.with_value(name, value * factor if name in ("C", "A") else value / factor)

    # ------------------------------------------------------------------ the cost factors
    def host_factor(self, g):
        """H(g) = 1 + Σ h_k·m_k(g)."""
        return self._factor(g, self.host_steps)

    def accel_factor(self, g):
        """Q(g) = 1 + Σ a_k·m_k(g)."""
        return self._factor(g, self.accel_steps)

    def link_factor(self, g):
        """R(g) = 1 + Σ l_k·m'_k(g), m' with the copies' own working set and sharpness."""
        return self._factor(g, self.link_steps, self.link_working_set, self.link_sharpness)

    def _factor(self, g, steps, working_set=None, sharpness=None):
        g = np.asarray(g, float)
        total = np.ones_like(g)
        for layer, step, w, s in zip(self.layers, steps, working_set or self.working_set,
                                     sharpness or self.sharpness):
            total = total + step * miss_share(g, layer.capacity_bytes, w, s)
        return total

    def layer_at(self, g: float) -> MemoryLayer:
        """The innermost layer whose store holds the working set w·g."""
        return next((l for l, w in zip(self.layers, self.working_set)
                     if w * g <= l.capacity_bytes), self.layers[-1])

    def transition(self, k: int) -> float:
        """The granularity (bytes) half way through layer k's bend: ``μ_k/w_k``."""
        return self.layers[k].capacity_bytes / self.working_set[k]

    # ------------------------------------------------------------------ times
    def T0(self, g):
        """Host time ``c0 + C·g^β·H(g)``."""
        if self.plain:
            return self.base.T0(g)
        return self.host_constant + self.base.T0(g) * self.host_factor(g)

    def T1(self, g):
        """Accelerated time ``o + L·g·R(g) + max(floor, C·g^β_A/A·Q(g))`` (``o + L + ...``
        with constant L; the kernel term is the paper's ``C·g^β/A`` without a floor or β_A)."""
        if self.plain:
            return self.base.T1(g)
        b = self.base
        link = b.latency_time(g) * self.link_factor(g) if b.dependent else b.L
        return b.o + link + self.kernel_time(g)

    def kernel_time(self, g):
        """The accelerator's computation ``max(floor, C·g^β_A/A·Q(g))``."""
        b = self.base
        g = np.asarray(g, float)
        with np.errstate(over="ignore"):
            compute = b.C * np.power(g, self.beta_A) / b.A * self.accel_factor(g)
        return np.maximum(self.floor, compute)

    def speedup(self, g):
        """``T0/T1``; the plain model's own speedup (eqs. 2, 8) when there is one layer."""
        if self.plain:
            return self.base.speedup(g)
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            return self.T0(g) / self.T1(g)

    def local_model(self, g: float) -> LogCA:
        """The plain LogCA that agrees with this model at granularity g: the host's cost
        per byte there (its constant included) as C, A scaled so that C/A is the
        accelerator's cost per byte there, and, with dependent latency, L·R(g). The speedup
        at g is the same; what ISCA'17 §3 asks at one size (bound, limiting parameter) is
        asked of it."""
        if self.plain:
            return self.base
        b = self.base
        host = float(self.T0(g))
        scale = float(np.power(g, b.beta))
        C = host / scale                                 # T0(g) = C·g^β exactly
        A = C * scale / float(self.kernel_time(g))        # C·g^β/A = the kernel's time at g
        L = b.L * float(self.link_factor(g)) if b.dependent else b.L
        return b.with_parameters(C=C, A=A, L=L, name=f"{b.label} at {format_size(g)} "
                                                      f"({self.layer_at(g).name})")

    def layer_model(self, k: int) -> LogCA:
        """Plain LogCA with the costs of data that live in layer k: every bend inside it
        passed, none beyond it (the density model's step, s → ∞): C·H_k, A·H_k/Q_k and,
        with dependent latency, L·R_k, where ``H_k = 1 + Σ_{j<k} h_j`` and Q_k, R_k alike.
        The host's per-call constant is left out: per byte it vanishes as g grows. For the
        outermost layer this is the model far past every cache, whose limit (eqs. 3, 9) is
        the hierarchical model's own.

        The kernel's floor is left out too (it binds only at small g). With the
        accelerator's own exponent β_A ≠ β no plain LogCA has the layer's large-g behaviour
        (the speedup grows or falls as g^(β−β_A)); the layer is then represented by
        :meth:`local_model` at its largest size (the next bend, or 1e15 B for the
        outermost): the paper's questions asked where the data leave the layer."""
        if not 0 <= k < len(self.layers):
            raise invalid("layer index", k, f"0 to {len(self.layers) - 1}")
        if self.beta_A != self.base.beta:
            end = self.transition(k) if k < len(self.layers) - 1 else SEARCH_RANGE[1]
            return self.local_model(min(max(end, SEARCH_RANGE[0]), SEARCH_RANGE[1]))
        H = 1 + sum(self.host_steps[:k])
        Q = 1 + sum(self.accel_steps[:k])
        R = 1 + sum(self.link_steps[:k])
        b = self.base
        return b.with_parameters(C=b.C * H, A=b.A * H / Q, L=b.L * R if b.dependent else b.L,
                                 name=f"{b.label} in {self.layers[k].name}")

    # ------------------------------------------------------------------ metrics
    def granularity_for(self, target: float, lo: float = SEARCH_RANGE[0],
                        hi: float = SEARCH_RANGE[1]) -> float | None:
        """The smallest g in [lo, hi] where the speedup reaches ``target`` (None if it never
        does): a scan of 64 points per decade in log g, then Brent's method on the first
        bracket, to a relative tolerance of 1e-12."""
        if self.plain:
            return None                 # the plain model's metrics answer exactly instead
        grid = scan_grid(lo, hi)
        s = self.speedup(grid) - target
        above = np.flatnonzero(s >= 0)
        if above.size == 0:
            return None
        i = above[0]
        if i == 0:
            return float(lo)
        f = lambda x: float(self.speedup(math.exp(x))) - target   # noqa: E731
        x = optimize.brentq(f, math.log(grid[i - 1]), math.log(grid[i]), xtol=1e-14, rtol=1e-12)
        return math.exp(x)

    def floor_pieces(self) -> tuple[LogCA, LogCA] | None:
        """With a kernel floor alone (one layer, no host constant, β_A = β) the model is
        two plain LogCA pieces, ``T1 = max(o + L1 + floor, o + L1 + C·g^β/A)``, so its
        speedup is the smaller of the floor piece's (o + floor, A → ∞, eq. 2's Amdahl
        limit; A = 1e100 carries it in double precision) and the paper's. None otherwise."""
        if not (len(self.layers) == 1 and self.host_constant == 0 and self.floor > 0
                and self.beta_A == self.base.beta):
            return None
        b = self.base
        return b.with_parameters(o=b.o + self.floor, A=MAGNITUDE), b

    def closed_form_granularity(self, target: float) -> float | None:
        """The first g with speedup ``target`` from the floor pieces' closed forms (ISCA'17
        eqs. 2, 8 and their roots): where both speedups rise with g (constant latency, or
        β >= 1), ``min(S_floor, S_paper) >= target`` from the larger of the two pieces'
        crossings on; None where a piece never reaches it. Raises ValueError where it does
        not apply (:meth:`granularity_for` answers numerically)."""
        from .metrics import granularity_for_speedup
        pieces = self.floor_pieces()
        if pieces is None or (self.base.dependent and self.base.beta < 1):
            raise ValueError("no closed form: not a floor-only model with rising pieces")
        roots = []
        for piece in pieces:
            if not target < piece.A:
                return None
            r = granularity_for_speedup(piece, target)
            if not r.exists:
                return None
            roots.append(r.root)
        return max(roots)

    def _first(self, target: float) -> float | None:
        try:
            return self.closed_form_granularity(target)
        except ValueError:
            return self.granularity_for(target)

    def g1(self) -> float | None:
        """Break-even granularity: the first g with speedup 1 (ISCA'17 g1); the floor
        pieces' closed form where it applies."""
        if self.plain:
            if self.base.A <= 1:
                return None             # never faster than the host: it never breaks even
            r = self.base.g1()
            return r.root if r.exists else None
        return self._first(1.0)

    def g_half(self) -> float | None:
        """The first g with speedup A/2, A the innermost layer's acceleration."""
        if self.plain:
            r = self.base.g_half()
            return r.root if r.exists else None
        return self._first(self.A / 2)

    def g_A(self) -> float | None:
        """The first g with speedup A (the innermost layer's); None if it never gets there."""
        if self.plain:
            r = self.base.g_A()
            return r.root if r.exists else None
        return self.granularity_for(self.A)

    def peak(self) -> tuple[float, float] | tuple[None, None]:
        """(g, speedup) of the highest speedup in the search range: a scan of 64 points per
        decade in log g, then a bounded scalar search (Brent) between the neighbours of the
        best point. The curve of a hierarchy rises and falls at each bend, so this is the
        global maximum only to the scan's resolution of which bump is highest. (None, None)
        when the curve still rises at the range's end: the highest point there is no peak
        (plain LogCA's ``peak()`` is None then too)."""
        lo, hi = SEARCH_RANGE
        grid = scan_grid(lo, hi)
        s = np.asarray(self.speedup(grid), float)
        i = int(np.nanargmax(s))
        if i == grid.size - 1:
            return None, None
        a, b = math.log(grid[max(i - 1, 0)]), math.log(grid[min(i + 1, grid.size - 1)])
        best = optimize.minimize_scalar(lambda x: -float(self.speedup(math.exp(x))),
                                        bounds=(a, b), method="bounded",
                                        options={"xatol": 1e-10})
        g = math.exp(best.x)
        return (g, float(self.speedup(g))) if -best.fun >= s[i] else (float(grid[i]),
                                                                       float(s[i]))

    def large_g_limit(self) -> float:
        """lim_{g→∞} T0/T1, exactly (eqs. 3 and 9 with one layer). Past every bend H, Q and
        R are the constants ``1 + Σh``, ``1 + Σa``, ``1 + Σl``; the host constant and the
        kernel's floor vanish against terms that grow. The limit is then decided by the
        largest power of g in T1 (0 for o and a constant L, 1 for the copies L·g·R, β_A for
        the kernel) against the host's β: 0 below it, ∞ above it (the speedup grows as
        g^(β−e) without end), and at it the ratio of the leading coefficients. The speedup
        at any finite size can be far from it (β a hair above 1): :func:`.metrics.bound_reach`
        and ``speedup(1e15)`` say how far."""
        if self.plain:
            return self.base.large_g_limit()
        b = self.base
        terms = [(0.0, b.o + (0.0 if b.dependent else b.L)),
                 (1.0, b.L * (1 + sum(self.link_steps)) if b.dependent else 0.0),
                 (self.beta_A, b.C * (1 + sum(self.accel_steps)) / b.A)]
        top = max(e for e, c in terms if c > 0)
        if b.beta != top:
            return 0.0 if b.beta < top else math.inf
        host = b.C * (1 + sum(self.host_steps)) + (self.host_constant if top == 0 else 0.0)
        return host / sum(c for e, c in terms if e == top)

    def bound(self):
        """Compute- or latency-bound (ISCA'17 §3.1) far past every cache: the bound of the
        outermost layer's plain model (:meth:`layer_model`), as ``LogCA.bound()`` gives
        it. (``g1()`` and the other metrics here return sizes, not LogCA's result
        objects: they are roots of this curve, which has no closed form.)"""
        from .metrics import bound_type
        return bound_type(self.layer_model(len(self.layers) - 1))

    def __repr__(self) -> str:
        steps = ", ".join(f"{l.name}: host {h:+.1%}, accel {a:+.1%}, link {k:+.1%}"
                          for l, h, a, k in zip(self.layers, self.host_steps, self.accel_steps,
                                                self.link_steps))
        return (f"HierarchicalLogCA({self.label}; beyond {steps or 'no layer'}; "
                f"w = {', '.join(f'{w:.3g}' for w in self.working_set)}, "
                f"s = {', '.join(f'{s:.3g}' for s in self.sharpness)}{self._copies_repr()})")

    def _copies_repr(self) -> str:
        if (self.link_working_set, self.link_sharpness) == (self.working_set, self.sharpness):
            return ""
        return (f"; the copies' w' = {', '.join(f'{w:.3g}' for w in self.link_working_set)}, "
                f"s' = {', '.join(f'{s:.3g}' for s in self.link_sharpness)}")
