"""Level 2: Latency Petri Nets (Chen et al., OSDI'24): model, simulate, inspect.

The firing rules are defined once, in :mod:`accelperf.lpn.semantics`; :func:`simulate` is
the fast engine that follows them.
"""

from .expr import TraceError, both, count, either, maximum, minimum, negate, where
from .net import Marking, Model, Net, NetError, Out, Place, TokenType
from .sim import (DeadlockError, Interrupted, LimitError, SimResult, SimulationError,
                  simulate)

__all__ = ["Net", "Model", "Marking", "Out", "Place", "TokenType", "NetError", "TraceError",
           "where", "minimum", "maximum", "both", "either", "negate", "count", "simulate",
           "SimResult", "SimulationError", "DeadlockError", "LimitError", "Interrupted"]
