"""accelperf: will offloading this work to that accelerator pay off, by how much, and why?

Three published models at three levels of detail: LogCA (``accelperf.logca``),
computational density and, in later releases, Latency Petri Nets.
"""

from .errors import ModelError

__version__ = "0.1.0"
__all__ = ["ModelError", "LogCA", "preset", "__version__"]


def __getattr__(name: str):
    # LogCA pulls in SciPy; load it only when asked, so `import accelperf.lpn` stays light.
    if name in ("LogCA", "preset"):
        from . import logca
        return getattr(logca, name)
    raise AttributeError(f"module 'accelperf' has no attribute {name!r}")
