"""The layout of :mod:`accelperf.lpn.analysis` (issue 37 item 5): interfaces and proofs in
packages of their own, and the old module names kept for users' scripts as aliases of the
moved modules (the table ``MOVED`` in ``lpn/analysis/__init__.py``)."""
from __future__ import annotations

import importlib

import pytest

from accelperf.lpn.analysis import MOVED
from test_structure import MODULES, _graph, _imports


@pytest.mark.parametrize("old, new", sorted(MOVED.items()))
def test_an_old_name_is_the_moved_module_itself(old, new):
    module = importlib.import_module(old)
    assert module is importlib.import_module(new)
    assert module.__name__ == new and module.__spec__.name == new
    assert old not in MODULES and new in MODULES     # no file left at the old path


def test_a_patch_through_the_old_name_reaches_the_code(monkeypatch):
    from accelperf.lpn.analysis.proofs import verify
    sentinel = object()
    monkeypatch.setattr("accelperf.lpn.analysis.verify.partition", sentinel)
    assert verify.partition is sentinel


def test_the_package_imports_nothing_by_an_old_name():
    """An old name is for users: inside the package every import names the module where it
    lives, so the import graph (tests/test_structure.py) sees every arrow."""
    found = [f"{module} imports {target}" for module, path in MODULES.items()
             for target, _ in _imports(module, path) if target in MOVED]
    assert not found


def test_the_net_reaches_nothing_of_the_analyses():
    """``Net.build`` runs the cheap checks of :mod:`accelperf.lpn.check`; nothing that
    :mod:`accelperf.lpn.net` imports, directly or further on, is an analysis."""
    graph, seen, stack = _graph(), set(), ["accelperf.lpn.net"]
    while stack:
        for target in graph[stack.pop()] - seen:
            seen.add(target)
            stack.append(target)
    assert "accelperf.lpn.check" in seen
    assert not [m for m in seen if m.startswith("accelperf.lpn.analysis")]


def test_interfaces_do_not_import_proofs():
    """Arrows run interfaces -> shared and proofs -> shared (and proofs -> interfaces for
    the class analysis), never interfaces -> proofs."""
    graph = _graph()
    back = [f"{a} -> {b}" for a, targets in graph.items() for b in targets
            if a.startswith("accelperf.lpn.analysis.interfaces")
            and b.startswith("accelperf.lpn.analysis.proofs")]
    shared = [f"{a} -> {b}" for a, targets in graph.items() for b in targets
              if a.startswith("accelperf.lpn.analysis.") and a.count(".") == 3
              and b.startswith(("accelperf.lpn.analysis.interfaces",
                                "accelperf.lpn.analysis.proofs"))]
    assert not back and not shared
