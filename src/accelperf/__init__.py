"""accelperf: will offloading this work to that accelerator pay off, by how much, and why?

Three published models at three levels of detail: LogCA (``accelperf.logca``),
computational density (``accelperf.density``) and Latency Petri Nets (``accelperf.lpn``:
modelling API, reference simulator, library of accelerators). ``accelperf.measure`` times
this machine's crypto accelerators and memory hierarchy to feed them.

Invalid input anywhere raises :class:`ModelError`, whose message names the parameter, the
value and what is allowed.
"""

from .errors import ModelError

__version__ = "0.1.0"

# In Jupyter, results show themselves as tables and pictures (accelperf.notebook); outside
# IPython this does nothing and imports nothing.
from .notebook import register_if_running as _register_notebook_display  # noqa: E402

_register_notebook_display()
__all__ = ["ModelError", "LogCA", "preset", "__version__"]


def __getattr__(name: str):
    # LogCA pulls in SciPy (most of a second): load it when it is used, so that a command
    # that fails on its first argument, or does not need LogCA, answers at once.
    if name in ("LogCA", "preset"):
        from . import logca
        return getattr(logca, name)
    raise AttributeError(f"module 'accelperf' has no attribute {name!r}")
