"""accelperf: will offloading this work to that accelerator pay off, by how much, and why?

Three published models at three levels of detail: LogCA (``accelperf.logca``),
computational density (``accelperf.density``) and Latency Petri Nets (``accelperf.lpn``:
modelling API, reference simulator, library of accelerators). ``accelperf.measure`` times
this machine's crypto accelerators and memory hierarchy to feed them.

Invalid input anywhere raises :class:`ModelError`, whose message names the parameter, the
value and what is allowed.
"""

from .errors import ModelError
from .logca import LogCA, preset

__version__ = "0.1.0"
__all__ = ["ModelError", "LogCA", "preset", "__version__"]
