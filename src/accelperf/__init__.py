"""accelperf: will offloading this work to that accelerator pay off, by how much, and why?

Three published models at three levels of detail: LogCA (``accelperf.logca``),
computational density and, in later releases, Latency Petri Nets.
"""

from .errors import ModelError
from .logca import LogCA, preset

__version__ = "0.1.0"
__all__ = ["ModelError", "LogCA", "preset", "__version__"]
