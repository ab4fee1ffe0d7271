"""Analyses of an LPN over a whole input space, reading its rules from
:mod:`accelperf.lpn.semantics`, in two packages over one shared vocabulary:

* this package — what both share: input spaces and their files (:mod:`.space`,
  :mod:`.space_counts`, the shipped ``spaces/``), the space's formulas (:mod:`.formula`),
  whether an input lies in a space (:mod:`.membership`), and the input class both analyses
  share (:mod:`.input_class`; the models' standalone readers are declared by each model,
  :mod:`accelperf.lpn.declared`, and :mod:`.adapters` only lists them for tests);
* :mod:`.interfaces` — performance interfaces (lpn2pi, OSDI'24 §4.1–4.2, A.1–A.3) and their
  phase-aware extension: symbolic execution and input classes, critical paths, loops,
  the period schedule and steady state, hand-over, token streams, the interface, its
  emitted module and its accuracy;
* :mod:`.proofs` — verification (lpn2smt, §4.4): the Z3 encoding, the class partition,
  witnesses, exhaustive simulation of a small space, bounds and properties, buffer sizing.

Arrows run interfaces → shared and proofs → shared, plus one from proofs to interfaces
(:mod:`.proofs.exhaustive` asks the class analysis whether a space's counts vary); nothing
here imports back from them, and :mod:`accelperf.lpn.net` imports nothing from analysis
(its build-time checks are :mod:`accelperf.lpn.check`).

Old names, kept for users' scripts: before issue 37 every module lived directly in this
package. :data:`MOVED` maps each old name to its module now; importing an old name (``import
accelperf.lpn.analysis.emit``, ``from accelperf.lpn.analysis import verify``) gives the
*same* module object as the new path, so a monkeypatch through either name reaches the
code. New code imports the new paths.

====================  ============================================
old name              module now
====================  ============================================
``accuracy``          ``accelperf.lpn.analysis.interfaces.accuracy``
``assumptions``       ``accelperf.lpn.analysis.interfaces.assumptions``
``classes``           ``accelperf.lpn.analysis.interfaces.classes``
``critical``          ``accelperf.lpn.analysis.interfaces.critical``
``emit``              ``accelperf.lpn.analysis.interfaces.emit``
``handover``          ``accelperf.lpn.analysis.interfaces.handover``
``interface``         ``accelperf.lpn.analysis.interfaces.interface``
``loops``             ``accelperf.lpn.analysis.interfaces.loops``
``module_text``       ``accelperf.lpn.analysis.interfaces.module_text``
``one_shot``          ``accelperf.lpn.analysis.interfaces.one_shot``
``schedule``          ``accelperf.lpn.analysis.interfaces.schedule``
``solver``            ``accelperf.lpn.analysis.interfaces.solver``
``steady``            ``accelperf.lpn.analysis.interfaces.steady``
``stream_emit``       ``accelperf.lpn.analysis.interfaces.stream_emit``
``symexec``           ``accelperf.lpn.analysis.interfaces.symexec``
``symrecords``        ``accelperf.lpn.analysis.interfaces.symrecords``
``token_stream``      ``accelperf.lpn.analysis.interfaces.token_stream``
``encoding``          ``accelperf.lpn.analysis.proofs.encoding``
``exhaustive``        ``accelperf.lpn.analysis.proofs.exhaustive``
``refine``            ``accelperf.lpn.analysis.proofs.refine``
``sizing``            ``accelperf.lpn.analysis.proofs.sizing``
``verify``            ``accelperf.lpn.analysis.proofs.verify``
``witness``           ``accelperf.lpn.analysis.proofs.witness``
``check``             ``accelperf.lpn.check``
====================  ============================================

The aliases are resolved on first import (a finder on :data:`sys.meta_path`), so importing
this package loads none of them: ``import accelperf.lpn.analysis.space`` stays as cheap as
before.
"""
from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import sys

_INTERFACES = ("accuracy", "assumptions", "classes", "critical", "emit", "handover",
               "interface", "loops", "module_text", "one_shot", "schedule", "solver",
               "steady", "stream_emit", "symexec", "symrecords", "token_stream")
_PROOFS = ("encoding", "exhaustive", "refine", "sizing", "verify", "witness")

MOVED: dict[str, str] = {
    **{f"{__name__}.{m}": f"{__name__}.interfaces.{m}" for m in _INTERFACES},
    **{f"{__name__}.{m}": f"{__name__}.proofs.{m}" for m in _PROOFS},
    f"{__name__}.check": "accelperf.lpn.check",
}
"""Old dotted module name -> the module's name now (the table above)."""


class _Alias(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Finds an old name of :data:`MOVED` and loads it as the module under its new name:
    the import system files that one object under both names."""

    def __init__(self):
        self._own = {}

    def find_spec(self, fullname, path=None, target=None):
        if fullname not in MOVED:
            return None
        return importlib.util.spec_from_loader(fullname, self)

    def create_module(self, spec):
        module = importlib.import_module(MOVED[spec.name])
        self._own[spec.name] = module.__spec__
        return module

    def exec_module(self, module):
        # The import system stamped the old name's spec on the module; give it back its
        # own, so that reloading or pickling by module still names the new path.
        module.__spec__ = self._own.pop(module.__spec__.name)


if not any(isinstance(finder, _Alias) for finder in sys.meta_path):
    sys.meta_path.insert(0, _Alias())
