"""`accelperf logca ...`: the LogCA model, its analyses and fits.

The group is defined here; its commands live in one module per family and register
themselves on import: :mod:`.curves` (show, curve, bounds, times, whatif), :mod:`.analysis`
(regions, case-study, advise, design, presets) and :mod:`.fitting` (fit, from-lpn).
"""

from __future__ import annotations

from ..app import cli


@cli.group()
def logca():
    """LogCA: speedup, break-even and half-acceleration granularities, bound type.

    Every command that computes prints --json; with --out it also writes its file (the
    JSON still goes to stdout, "wrote FILE" to stderr). Output paths are checked before
    any work starts.
    """


from . import analysis, curves, fitting  # noqa: E402,F401  (register the commands)
