"""LogCA parameters of a simulated accelerator: level 2 (an LPN, OSDI'24) read through level 1.

An LPN gives the accelerated time of one offload, ``T1(g)``, in cycles, for a concrete input.
This module fits ISCA'17's ``T1 = o + L1(g) + C·g^β/A`` (eq. 1) to such times at a range of
granularities, with the host's ``C·g^β`` given (from the user, or fitted to host timings), and
says whether the latency grows with g. Where the accelerator sits behind a link that exists as
a model of its own, the link alone is simulated too and plays the "echo" run (o + L·g measured
directly), which separates L from C/A when β = 1.

The granularity → input mapping is per model and documented in :data:`MAPPINGS`; the
simulator itself is passed in as a callable, so this module imports the LPN package only to
build a model's own input type (the JPEG reader's blocks).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np
from scipy import optimize

from ..errors import ModelError, invalid
from ..units import format_size
from ..validate import real_number
from .fit import FittedParameter, extrapolation_warnings, power_law
from .model import LogCA


@dataclass(frozen=True)
class Mapping:
    """How a model's input is built for g bytes.

    ``input_at(g)`` returns (the model's input, the bytes it really carries); ``transfer``
    names a model that simulates the link alone, fed by ``transfer_input_at``."""

    model: str
    description: str
    input_at: Callable = field(repr=False)
    transfer: str | None = None
    transfer_input_at: Callable | None = field(default=None, repr=False)


BLOCK_NNZ = 12                   # non-zero coefficients per block (block_pipeline's default)
BLOCK_BYTES = 16 + 2 * BLOCK_NNZ     # a compressed block on the link (pipeline_over_link)


def _blocks(g: float) -> int:
    return max(1, int(round(g / BLOCK_BYTES)))


# A 4:2:0 JPEG like the shipped sample hopper_128x96_q75_420.jpg (accelperf/data/jpeg): its
# 288 blocks carry 13.9 AC symbols and take 10.54 bytes each on average, and its first block
# ends at byte 702, so about 692 bytes of headers precede the scan.
JPEG_HEADER_BYTES, JPEG_BLOCK_BYTES, JPEG_SYMBOLS = 692, 10.54, 14
JPEG_MCU_BLOCKS = 6                  # Y0 Y1 Y2 Y3 Cb Cr


def _jpeg_mcus(g: float) -> int:
    return max(1, int(round(g / (JPEG_MCU_BLOCKS * JPEG_BLOCK_BYTES))))


def _synthetic_jpeg(g: float):
    """(a JPEG's blocks as the decoder's reader gives them, its scan's bytes) for about g
    bytes of entropy-coded data: whole MCUs of blocks with the sample's symbols and bytes
    per block. The headers are a fixed part of every offload, so they land in o: g counts
    the data that scales (with them counted in g, T1 would extrapolate to a negative o)."""
    from ..lpn.inputs.jpeg import JpegBlocks     # the model's own input type
    n = JPEG_MCU_BLOCKS * _jpeg_mcus(g)
    ends = tuple(JPEG_HEADER_BYTES + round(JPEG_BLOCK_BYTES * (i + 1)) for i in range(n))
    size = ends[-1] + 2                                       # the EOI marker
    side = 16 * _jpeg_mcus(g)
    image = JpegBlocks(f"synthetic {size} B", side, 16, ((2, 2), (1, 1), (1, 1)),
                       (JPEG_SYMBOLS,) * n, ends, size, header_bytes=JPEG_HEADER_BYTES)
    return image, float(ends[-1] - JPEG_HEADER_BYTES)


MAPPINGS = {
    "jpeg-decoder-pcie": Mapping(
        "jpeg-decoder-pcie",
        f"a 4:2:0 JPEG read over PCIe Gen3 x16 whose scan has g bytes: whole MCUs of 6 "
        f"blocks with {JPEG_SYMBOLS} AC symbols and {JPEG_BLOCK_BYTES} B each, after "
        f"{JPEG_HEADER_BYTES} B of headers (the shipped sample's averages); no link-only "
        f"model, so L·g and C·g/A are told apart only when β ≠ 1",
        _synthetic_jpeg),
    "pipeline-over-link": Mapping(
        "pipeline-over-link",
        f"g bytes of compressed 8x8 blocks with nnz = {BLOCK_NNZ} ({BLOCK_BYTES} B each on "
        f"the link): max(1, round(g / {BLOCK_BYTES})) blocks; the link alone is the "
        f"credit-link model carrying the same {BLOCK_BYTES}-byte transactions",
        lambda g: ({"blocks": _blocks(g), "nnz": BLOCK_NNZ},
                   _blocks(g) * BLOCK_BYTES),
        "credit-link",
        lambda g: [BLOCK_BYTES] * _blocks(g)),
    "credit-link": Mapping(
        "credit-link", "one transaction of g bytes (a link with no accelerator behind it: "
                       "only o and L are meaningful)",
        lambda g: ([int(round(g))], float(int(round(g))))),
}


def mapping(model: str) -> Mapping:
    if model not in MAPPINGS:
        raise invalid("MODEL", model, f"a granularity → input mapping exists for "
                                      f"{', '.join(MAPPINGS)}; for your own net, write "
                                      f"the mapping in Python: fit_from_latency(lambda g: "
                                      f"simulate(net, input_of(g)).latency, sizes, host_C) "
                                      f"(accelperf.logca.lpn_bridge)")
    return MAPPINGS[model]


@dataclass(frozen=True)
class LpnFit:
    """LogCA fitted to simulated offloads (cycles).

    ``dependent`` says whether the latency grows with granularity and ``dependent_reason`` on
    what evidence; ``errors`` holds the mean relative T1 error of each latency kind tried;
    ``warnings`` what the simulated sizes cannot support (as :func:`.fit.fit_logca` says)."""

    model: LogCA
    parameters: dict                                 # name -> FittedParameter
    granularity: np.ndarray = field(repr=False)
    t_accel: np.ndarray = field(repr=False)          # cycles, simulated
    t_transfer: np.ndarray | None = field(repr=False, default=None)
    dependent: bool = False
    dependent_reason: str = ""
    errors: dict = field(default_factory=dict)       # latency kind -> mean |T1 error|
    method: str = ""
    warnings: tuple = ()

    @property
    def t_host(self) -> np.ndarray:
        return self.model.T0(self.granularity)

    @property
    def t1_model(self) -> np.ndarray:
        return self.model.T1(self.granularity)

    @property
    def t1_error(self) -> np.ndarray:
        return self.t1_model / self.t_accel - 1.0

    @property
    def mean_error(self) -> float:
        return float(np.mean(np.abs(self.t1_error)))

    @property
    def max_error(self) -> float:
        return float(np.max(np.abs(self.t1_error)))

    def to_dict(self) -> dict:
        transfer = self.t_transfer if self.t_transfer is not None else \
            [None] * self.granularity.size
        return {"parameters": {k: p.value for k, p in self.parameters.items()},
                "stderr": {k: p.stderr for k, p in self.parameters.items()},
                "latency": self.model.latency, "unit": "cycles",
                "granularity_dependent": self.dependent, "reason": self.dependent_reason,
                "fit_error": {"t1_mean": self.mean_error, "t1_max": self.max_error,
                              "t1_mean_by_latency": dict(self.errors)},
                "points": [{"granularity": float(g), "t1_simulated": float(t),
                            "t1_model": float(m), "t_host": float(h),
                            "t_transfer": None if e is None else float(e)}
                           for g, t, m, h, e in zip(self.granularity, self.t_accel,
                                                    self.t1_model, self.t_host, transfer)],
                "method": self.method, "warnings": list(self.warnings)}

    def __repr__(self) -> str:
        m = self.model
        kind = "dependent" if self.dependent else "independent"
        return (f"LpnFit(L={m.L:.4g}, o={m.o:.4g}, A={m.A:.4g} (host C={m.C:.4g}, "
                f"β={m.beta:g}); latency {kind}; T1 error mean {self.mean_error:.1%}, "
                f"max {self.max_error:.1%}; {len(self.warnings)} warning(s))")


def host_from_times(granularity, cycles) -> tuple[float, float]:
    """(C, β) of the host by the paper's log-log regression on measured host times."""
    g = np.asarray(granularity, float)
    t = np.asarray(cycles, float)
    if g.size < 2 or g.size != t.size or np.any(~np.isfinite(g) | ~np.isfinite(t)) or \
            np.any(g <= 0) or np.any(t <= 0):
        raise ModelError("host times are invalid: need at least 2 granularities with finite "
                         "times > 0")
    C, beta, _, _ = power_law(g, t)
    return C, beta


def _linear_fit(columns: list, t: np.ndarray):
    """Non-negative least squares of ``t`` on ``columns`` with relative weights (every size
    counts alike); returns the coefficients and their standard errors."""
    X = np.column_stack(columns) / t[:, None]
    coef, _ = optimize.nnls(X, np.ones_like(t))
    r = X @ coef - 1.0
    dof = max(t.size - len(columns), 1)
    cov = np.linalg.pinv(X.T @ X) * float(r @ r) / dof
    return coef, np.sqrt(np.clip(np.diag(cov), 0, None))


def _fit_kind(g, t1, host, dependent: bool, L_transfer: float | None):
    """(o, L, 1/A) and standard errors for one latency kind; L from the transfer run when
    given (ISCA'17 §4: L from a micro-benchmark), so only o and 1/A are fitted then."""
    if L_transfer is not None:
        L_part = L_transfer * g if dependent else np.full_like(g, L_transfer)
        (o, inv_a), (se_o, se_inv) = _linear_fit([np.ones_like(g), host], t1 - L_part)
        return o, L_transfer, inv_a, se_o, None, se_inv
    if dependent:
        (o, L, inv_a), (se_o, se_L, se_inv) = _linear_fit([np.ones_like(g), g, host], t1)
        return o, L, inv_a, se_o, se_L, se_inv
    (o, inv_a), (se_o, se_inv) = _linear_fit([np.ones_like(g), host], t1)
    return o, 0.0, inv_a, se_o, None, se_inv


def fit_from_latency(latency_at: Callable[[float], float], sizes: Sequence[float],
                     host_C: float, host_beta: float = 1.0,
                     transfer_at: Callable[[float], float] | None = None,
                     progress: Callable[[str], None] | None = None) -> LpnFit:
    """Fit L, o and A to ``latency_at(g)`` (cycles of one offload of g bytes) over ``sizes``.

    With the host's ``T0 = C·g^β`` known, ISCA'17 eq. 1 is linear in (o, L, 1/A), so each
    latency kind is a non-negative linear least-squares fit with relative weights; the kind
    with the lower Akaike criterion is kept (the dependent one must earn its parameter).

    Parameters
    ----------
    latency_at : callable
        Granularity in bytes → accelerated time T1 in cycles (e.g. a simulated LPN).
    sizes : sequence of float
        Granularities in bytes (at least 3 distinct).
    host_C, host_beta : float
        The host's ``T0 = C·g^β`` in cycles.
    transfer_at : callable, optional
        Granularity → cycles of the transfer alone, ``o_t + L·g`` or ``o_t + L``: gives L
        and decides whether it grows with g. o is still fitted from T1, because o is all
        the fixed cost of an offload (a pipeline's fill included), not only the link's.

    Examples
    --------
    >>> r = fit_from_latency(lambda g: 300 + 0.5 * g + 12.5 * g / 25, [64, 1024, 2**14, 2**20],
    ...                      host_C=12.5, transfer_at=lambda g: 40 + 0.5 * g)
    >>> round(r.model.o, 6), round(r.model.L, 6), round(r.model.A, 6), r.dependent
    (300.0, 0.5, 25.0, True)
    """
    C = real_number("host-C", host_C, positive=True)
    beta = real_number("host-beta", host_beta, positive=True)
    g = np.array(sorted({float(s) for s in sizes}))
    if g.size < 3:
        raise invalid("sizes", list(sizes), "at least 3 distinct granularities")
    t1, echo = [], []
    for x in g:
        if progress:
            progress(f"simulating {format_size(x)}")
        t1.append(_cycles("latency", latency_at(x), x))
        if transfer_at is not None:
            echo.append(_cycles("transfer latency", transfer_at(x), x))
    t1 = np.array(t1)
    echo = np.array(echo) if transfer_at is not None else None
    host = C * g**beta
    L_by_kind = {"independent": None, "dependent": None}
    if echo is not None:
        (o_t, L_t), _ = _linear_fit([np.ones_like(g), g], echo)
        # the transfer decides the kind: latency grows with g when L·g is a visible share
        dependent = L_t * g[-1] > 0.05 * (o_t + L_t * g[-1])
        L_by_kind = {"independent": float(np.median(echo)) if not dependent else 0.0,
                     "dependent": L_t}
    fits, errors, aic = {}, {}, {}
    for kind in ("independent", "dependent"):
        o, L, inv_a, se_o, se_L, se_inv = _fit_kind(g, t1, host, kind == "dependent",
                                                    L_by_kind[kind])
        if inv_a <= 0:      # this kind explains T1 without any compute: it cannot be LogCA
            errors[kind], aic[kind] = math.inf, math.inf
            continue
        m = LogCA(L=L, o=o, C=C, A=1 / inv_a, beta=beta, latency=kind, unit="cycles",
                  name="LPN fit")
        err = m.T1(g) / t1 - 1
        k = 3 if kind == "dependent" and echo is None else 2
        aic[kind] = g.size * math.log(max(float(err @ err), 1e-300) / g.size) + 2 * k
        fits[kind] = (m, se_o, se_L, se_inv)
        errors[kind] = float(np.mean(np.abs(err)))
    if not fits:
        raise ModelError("the simulated times leave no compute term (1/A = 0 with either "
                         "latency kind): T1 is all offload cost, so A is not identified; "
                         "check `host_C`, `host_beta` and the model")
    if echo is not None:
        kind = "dependent" if dependent else "independent"
        if kind not in fits:
            raise ModelError(f"with the transfer-only run's L the simulated times leave no "
                             f"compute term for {kind} latency: A is not identified")
        why = (f"the link alone takes {o_t:.4g} + {L_t:.4g}·g cycles: the transfer grows with "
               f"g ({L_t * g[-1] / (o_t + L_t * g[-1]):.0%} of it at {format_size(g[-1])})"
               if dependent else f"the link alone takes about {np.median(echo):.4g} cycles "
                                 f"whatever g: the latency does not grow with it")
    else:
        kind = "dependent" if aic["dependent"] < aic["independent"] - 2 else "independent"
        pct = lambda e: "no compute term left (A unbounded)" if math.isinf(e) else f"{e:.2%}"
        why = (f"mean T1 error {pct(errors['independent'])} with independent latency, "
               f"{pct(errors['dependent'])} with dependent; kept {kind} by AIC"
               + (" (with β = 1 and no transfer-only run L·g cannot be told apart from C·g/A)"
                  if abs(beta - 1) < 1e-9 else ""))
    m, se_o, se_L, se_inv = fits[kind]
    params = {"L": FittedParameter("L", m.L, se_L, vary=echo is None and kind == "dependent",
                                   note="from the transfer-only run" if echo is not None
                                   else None),
              "o": FittedParameter("o", m.o, se_o),
              "A": FittedParameter("A", m.A, se_inv * m.A**2),     # d(1/x) = dx/x²
              "C": FittedParameter("C", C, None, vary=False, note="host, given"),
              "beta": FittedParameter("beta", beta, None, vary=False, note="host, given")}
    method = ("ISCA'17 eq. 1 with the host's C·g^β held: o and 1/A (and L, without a "
              "transfer-only run) by non-negative linear least squares, relative weights"
              + ("; L from the transfer-only run" if echo is not None else ""))
    g1, g_half = m.g1(), m.g_half()
    warnings = extrapolation_warnings({"g1": g1.root if g1.exists else None,
                                       "g_A/2": g_half.root if g_half.exists else None},
                                      g[0], g[-1], seen="simulated")
    return LpnFit(m, params, g, t1, echo, kind == "dependent", why, errors, method,
                  tuple(warnings))


def _cycles(what: str, value, g: float) -> float:
    if value is None or isinstance(value, bool) or not isinstance(value, (int, float,
                                                                          np.number)):
        raise ModelError(f"the simulated {what} at {format_size(g)} is {value!r}: the model "
                         f"produced no end-to-end latency for this input")
    value = float(value)
    if not (math.isfinite(value) and value > 0):
        raise ModelError(f"the simulated {what} at {format_size(g)} is {value!r}: need a "
                         f"finite number of cycles > 0")
    return value
