"""Level 2: Latency Petri Nets (Chen et al., OSDI'24): model, simulate, inspect."""

from .expr import TraceError, both, either, maximum, minimum, negate, where
from .net import Model, Net, NetError, Out, Place, TokenType
from .sim import DeadlockError, LimitError, SimResult, SimulationError, simulate

__all__ = ["Net", "Model", "Out", "Place", "TokenType", "NetError", "TraceError", "where",
           "minimum", "maximum", "both", "either", "negate", "simulate", "SimResult",
           "SimulationError", "DeadlockError", "LimitError"]
