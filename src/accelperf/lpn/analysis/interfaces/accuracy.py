"""How far an interface is from the simulation of the same LPN (Table 3 of OSDI'24), and
which of its two forms (plain §4.2 max, or by phase) is the more accurate on the space's
own samples (:func:`choose_form`)."""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Iterable

from ...net import Model
from ...sim import SimulationError, simulate
from ..membership import is_tokens


@dataclass(frozen=True)
class ErrorSummary:
    """Mean and largest absolute relative error over some inputs: how far a prediction
    (an interface, a calibrated model) is from its reference (simulation, hardware)."""

    mean: float
    max: float

    @staticmethod
    def of(errors: Iterable[float]) -> "ErrorSummary":
        """The summary of relative errors (signed or not; no inputs: zero error)."""
        errors = [abs(e) for e in errors] or [0.0]
        return ErrorSummary(sum(errors) / len(errors), max(errors))

    def to_dict(self) -> dict:
        return {"mean": self.mean, "max": self.max}

    def __repr__(self) -> str:
        return f"ErrorSummary(mean {self.mean:.3%}, max {self.max:.3%})"


@dataclass(frozen=True)
class CheckRow:
    input: object
    predicted: float
    simulated: int
    error: float                 # |predicted - simulated| / simulated


@dataclass(frozen=True)
class Accuracy:
    rows: tuple
    mean_error: float
    max_error: float

    def __repr__(self) -> str:
        return f"Accuracy({len(self.rows)} inputs: mean {self.mean_error:.2%}, " \
               f"max {self.max_error:.2%})"

    def to_dict(self) -> dict:
        return {"inputs": [{"input": r.input, "predicted": r.predicted,
                            "simulated": r.simulated, "error": r.error} for r in self.rows],
                "mean_error": self.mean_error, "max_error": self.max_error}


def simulated_latency(model: Model, x):
    """The simulated latency of ``x``: an input for Ψ, or tokens (:func:`is_tokens`)."""
    from .classes import marking_of
    return simulate(model, marking_of(model, x) if is_tokens(model, x) else x).latency


def check(model: Model, module, inputs, *, phases: bool | None = None,
          advance=None) -> Accuracy:
    """Relative error of ``module.latency`` against ``simulate(model, x)`` for each input;
    ``advance(label)`` is called after each (a progress bar)."""
    rows = []
    for x in inputs:
        simulated = simulated_latency(model, x)
        predicted = float(module.latency(x, phases))
        rows.append(CheckRow(x, predicted, simulated,
                             abs(predicted - simulated) / simulated if simulated else
                             float(predicted != 0)))
        if advance is not None:
            advance(f"checked {len(rows)} input(s)")
    return _accuracy(rows)


FORM_SAMPLES = 4
"""Random inputs drawn per input class (besides its own sample) to choose the form."""


@dataclass(frozen=True)
class FormChoice:
    """Which form of an interface a module uses by default, and why: both forms' errors
    against simulation on the same sampled inputs of the space."""

    phases: bool                 # True: by phase; False: plain
    plain: Accuracy
    phased: Accuracy

    @property
    def name(self) -> str:
        return "by phase" if self.phases else "plain"

    def describe(self) -> str:
        """One line: the form chosen and both errors, e.g. for the module's docstring."""
        n = len(self.plain.rows)
        return (f"{self.name}: on {n} sampled input(s) of the space, mean/max error by "
                f"phase {self.phased.mean_error:.2%}/{self.phased.max_error:.2%}, plain "
                f"{self.plain.mean_error:.2%}/{self.plain.max_error:.2%}")

    def __repr__(self) -> str:
        return f"FormChoice({self.describe()})"

    def to_dict(self) -> dict:
        return {"form": "phases" if self.phases else "plain", "inputs": len(self.plain.rows),
                "phases_mean_error": self.phased.mean_error,
                "phases_max_error": self.phased.max_error,
                "plain_mean_error": self.plain.mean_error,
                "plain_max_error": self.plain.max_error}


def sampled_inputs(model: Model, interface, per_class: int = FORM_SAMPLES,
                   seed: int = 0) -> list:
    """Inputs of the interface's space as tokens ({place: [{property: value}]}): each
    class's own sample and ``per_class`` random members (streams of at most 400 tokens,
    :func:`.classes.random_member`, of :func:`whole_periods`, so that they run to the
    end)."""
    from .classes import random_member
    from .solver import Solver
    from ..space import space_constraints
    rng = random.Random(seed)
    solver = Solver(space_constraints(interface.space))
    out = []
    for ci in interface.classes:
        cls = ci.input_class
        out.append(cls.sample)
        for _ in range(per_class):
            member = random_member(cls, model, rng, solver, multiples=whole_periods(ci))
            if member is not None and member[0] not in out:
                out.append(member[0])
    return out


def whole_periods(ci) -> dict:
    """{stream place: a multiple its length must be} for inputs of a class (a
    ClassInterface) that run to the end: its recurrence's period where one is derived
    (an MCU of 6 blocks), else a probe's length (the symbolic run finished it, so it is
    whole periods). A JPEG stream of a partial MCU deadlocks."""
    out = {p.place: p.probe for p in ci.input_class.space.places if p.probe}
    if ci.schedule is not None:
        out[ci.schedule.stream] = ci.schedule.period
    return out


def choose_form(model: Model, interface, module, inputs=None) -> FormChoice:
    """Issue 23 item 1: measure the plain and the phase-aware form of ``module`` (the
    generated module of ``interface``) against simulation on ``inputs`` (default: the
    space's samples, :func:`sampled_inputs`; for a typed module, ``interface`` is its
    {type: Interface} and the samples are every type's, so one form is chosen over all
    types) and choose the one with the lower mean error (the larger error breaks a tie;
    by phase on an exact tie, as its fill term is the pipeline's own). Inputs the model
    cannot simulate are left out."""
    if inputs is not None:
        tokens = inputs
    elif isinstance(interface, dict):
        tokens = [x for iface in interface.values() for x in sampled_inputs(model, iface)]
    else:
        tokens = sampled_inputs(model, interface)
    plain_rows, phased_rows = [], []
    for toks in tokens:
        try:
            simulated = simulated_latency(model, toks)
        except SimulationError:
            continue
        for rows, by_phase in ((plain_rows, False), (phased_rows, True)):
            predicted = float(module.latency(toks, by_phase))
            rows.append(CheckRow(toks, predicted, simulated, abs(predicted - simulated) /
                                 simulated if simulated else float(predicted != 0)))
    plain, phased = _accuracy(plain_rows), _accuracy(phased_rows)
    key = lambda a: (round(a.mean_error, 12), round(a.max_error, 12))
    return FormChoice(key(phased) <= key(plain), plain, phased)


def _accuracy(rows) -> Accuracy:
    summary = ErrorSummary.of(r.error for r in rows)
    return Accuracy(tuple(rows), summary.mean, summary.max)


__all__ = ["Accuracy", "CheckRow", "ErrorSummary", "FormChoice", "check", "choose_form",
           "sampled_inputs", "simulated_latency", "is_tokens", "whole_periods", "FORM_SAMPLES"]
