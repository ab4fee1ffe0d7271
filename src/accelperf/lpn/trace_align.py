"""Line up a hardware trace with a model's commits, event by event (``lpn compare
--trace``, issue 21): the k-th hardware event against the k-th commit of the transition
that models it; where the gap first exceeds a tolerance, and where it first moves."""

from __future__ import annotations

from dataclasses import dataclass, field

from ..errors import ModelError


@dataclass(frozen=True)
class TraceAlignment:
    """The k-th hardware event against the k-th commit of the transition that models it
    (``lpn compare --trace``): ``gaps[k]`` = model − hardware, in cycles."""

    hardware_label: str
    model_label: str
    hardware_events: int
    model_events: int
    gaps: tuple[int, ...] = field(repr=False)
    tolerance: int = 0

    @property
    def first_divergence(self) -> int | None:
        """The first event whose gap exceeds the tolerance (None: they agree throughout)."""
        return next((k for k, g in enumerate(self.gaps) if abs(g) > self.tolerance), None)

    @property
    def first_change(self) -> int | None:
        """The first event where the gap moves from the previous event's by more than the
        tolerance: where a per-event delay differs, beyond a constant offset."""
        return next((k for k in range(1, len(self.gaps))
                     if abs(self.gaps[k] - self.gaps[k - 1]) > self.tolerance), None)

    def to_dict(self) -> dict:
        k, c = self.first_divergence, self.first_change
        return {"hardware": self.hardware_label, "model": self.model_label,
                "hardware_events": self.hardware_events, "model_events": self.model_events,
                "first_divergence": None if k is None else {"event": k, "gap": self.gaps[k]},
                "first_change": None if c is None else
                {"event": c, "gap_before": self.gaps[c - 1], "gap": self.gaps[c]},
                "final_gap": self.gaps[-1] if self.gaps else None,
                "gaps": list(self.gaps)}

    def summary(self) -> str:
        n = len(self.gaps)
        parts = [f"{n} {self.hardware_label} aligned with {self.model_label}"]
        if self.hardware_events != self.model_events:
            parts.append(f"counts differ: {self.hardware_events} in the hardware, "
                         f"{self.model_events} in the model")
        k, c = self.first_divergence, self.first_change
        if k is None:
            parts.append(f"they agree within {self.tolerance} cycle(s) throughout")
            return "; ".join(parts)
        parts.append(f"first diverges at event {k} by {self.gaps[k]:+d} cycles "
                     f"(model − hardware)")
        if c is not None:
            parts.append(f"the gap first moves at event {c}, {self.gaps[c - 1]:+d} → "
                         f"{self.gaps[c]:+d}")
        parts.append(f"{self.gaps[-1]:+d} cycles at the last event")
        return "; ".join(parts)

    def __repr__(self) -> str:
        return f"TraceAlignment({self.summary()})"


def align_trace(hardware: list[int], model: list[int], hardware_label: str = "events",
                model_label: str = "commits", tolerance: int = 0) -> TraceAlignment:
    """Pair the hardware's event times with the model's commit times in order."""
    if not hardware or not model:
        raise ModelError(f"trace alignment needs events on both sides: {len(hardware)} "
                         f"{hardware_label}, {len(model)} {model_label}")
    n = min(len(hardware), len(model))
    gaps = tuple(int(model[k]) - int(hardware[k]) for k in range(n))
    return TraceAlignment(hardware_label, model_label, len(hardware), len(model), gaps,
                          tolerance)


__all__ = ["TraceAlignment", "align_trace"]
