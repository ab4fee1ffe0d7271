"""How far an interface is from the simulation of the same LPN (Table 3 of OSDI'24)."""

from __future__ import annotations

from dataclasses import dataclass

from ..net import Model
from ..sim import simulate


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


def check(model: Model, module, inputs, *, phases: bool | None = None,
          advance=None) -> Accuracy:
    """Relative error of ``module.latency`` against ``simulate(model, x)`` for each input;
    ``advance(label)`` is called after each (a progress bar)."""
    rows = []
    for x in inputs:
        simulated = simulate(model, x).latency
        predicted = float(module.latency(x, phases))
        rows.append(CheckRow(x, predicted, simulated,
                             abs(predicted - simulated) / simulated if simulated else
                             float(predicted != 0)))
        if advance is not None:
            advance(f"checked {len(rows)} input(s)")
    errors = [r.error for r in rows] or [0.0]
    return Accuracy(tuple(rows), sum(errors) / len(errors), max(errors))


__all__ = ["Accuracy", "CheckRow", "check"]
