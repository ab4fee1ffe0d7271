"""The package's structure stays findable (issue 26, item 4): no import circle among the
modules of src/accelperf, no ``from x import _private`` across modules (a shared name is
public in the module that owns the idea), and no module over 600 lines unless its docstring
says why it must be one (a line starting ``One module because``). A module split where its
idea ends may be longer (issue 37 item 5): it passes with its reason, and a warning names it,
so a long module stays visible.

Imports are read with :mod:`ast`, never executed, and every import counts, also one inside a
function (a lazy import hides a circle, it does not remove it); only imports under
``if TYPE_CHECKING:`` are left out, since they never run.
"""
from __future__ import annotations

import ast
import warnings
from pathlib import Path

import pytest

from accelperf.lpn.graph import strong_components

SRC = Path(__file__).resolve().parents[1] / "src"
PACKAGE = "accelperf"
MAX_LINES = 600
REASON_MARK = "One module because"

# Modules that other engineers are splitting or untangling (issue 26 item 4) while this
# test lands. Findings that involve them are reported as expected failures, not errors.
# >>> The lead empties this set when those branches are merged. <<<
PENDING_SPLITS: set[str] = set()


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(SRC).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _modules() -> dict[str, Path]:
    return {_module_name(p): p for p in sorted((SRC / PACKAGE).rglob("*.py"))}


MODULES = _modules()


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _runtime_imports(tree: ast.AST):
    """Every Import/ImportFrom node except those under ``if TYPE_CHECKING:``."""
    stack = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.If) and _is_type_checking(node):
            stack.extend(node.orelse)
            continue
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            yield node
        stack.extend(ast.iter_child_nodes(node))


def _resolve(module: str, path: Path, node: ast.ImportFrom) -> str:
    if not node.level:
        return node.module or ""
    package = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
    base = package[:len(package) - node.level + 1]
    return ".".join(base + ([node.module] if node.module else []))


def _imports(module: str, path: Path):
    """(target module, imported names) of each runtime import inside the package."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in _runtime_imports(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == PACKAGE:
                    yield alias.name, []
            continue
        target = _resolve(module, path, node)
        if target.split(".")[0] != PACKAGE:
            continue
        plain = []
        for alias in node.names:
            sub = f"{target}.{alias.name}"
            if sub in MODULES:   # `from . import sim` imports the module sim
                yield sub, []
            else:
                plain.append(alias.name)
        if plain:
            yield target, plain


def _graph() -> dict[str, set[str]]:
    graph = {m: set() for m in MODULES}
    for module, path in MODULES.items():
        for target, _ in _imports(module, path):
            if target in MODULES and target != module:
                graph[module].add(target)
    return graph


def _packages_of(module: str) -> set[str]:
    parts = module.split(".")
    return {".".join(parts[:i]) for i in range(1, len(parts))}


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module, each sorted.

    An edge from a module to a package that contains it (``from . import x`` reaching the
    package's ``__init__``) is left out: Python finishes a package's ``__init__`` before
    its submodules run, so such an import is the package's public face, not a circle."""
    names = sorted(graph)
    number = {name: i for i, name in enumerate(names)}
    successors = {number[v]: [number[w] for w in graph[v] if w not in _packages_of(v)]
                  for v in names}
    return [[names[i] for i in comp] for comp in strong_components(successors) if len(comp) > 1]


def _pending(*modules: str) -> bool:
    return any(m in PENDING_SPLITS for m in modules)


def _split(findings):
    """(findings to fail on, findings left to PENDING_SPLITS)."""
    real = [f for f, modules in findings if not _pending(*modules)]
    pending = [f for f, modules in findings if _pending(*modules)]
    return real, pending


def _report(real, pending, what):
    assert not real, f"{what}:\n" + "\n".join(real)
    if pending:
        pytest.xfail(f"{len(pending)} {what} left to PENDING_SPLITS: " + "; ".join(pending))


def test_the_checker_sees_a_circle_and_a_private_import(tmp_path):
    """The detectors themselves: a hand-made circle is found, an __init__ edge is not."""
    graph = {"p": {"p.a"}, "p.a": {"p.b", "p"}, "p.b": {"p.a"}, "p.c": set()}
    assert _cycles(graph) == [["p.a", "p.b"]]
    assert _cycles({"p.a": {"p.b"}, "p.b": {"p.c"}, "p.c": set()}) == []
    path = SRC / PACKAGE / "lpn" / "analysis" / "formula.py"
    node = ast.parse("from ..expr import z3_mod, _hidden").body[0]
    assert _resolve("accelperf.lpn.analysis.formula", path, node) == "accelperf.lpn.expr"


def test_no_import_circle():
    findings = [(" <-> ".join(c), c) for c in _cycles(_graph())]
    _report(*_split(findings), "import circles")


def test_no_private_name_imported_across_modules():
    findings = []
    for module, path in MODULES.items():
        for target, names in _imports(module, path):
            for name in names:
                if name.startswith("_") and not name.startswith("__"):
                    findings.append((f"{module} imports {target}.{name}", [module, target]))
    _report(*_split(findings), "private names imported across modules")


def test_no_module_over_600_lines_without_a_reason():
    findings, reasoned = [], []
    for module, path in MODULES.items():
        text = path.read_text(encoding="utf-8")
        lines = text.count("\n")
        if lines <= MAX_LINES:
            continue
        doc = ast.get_docstring(ast.parse(text)) or ""
        if REASON_MARK.lower() not in doc.lower():
            findings.append((f"{module}: {lines} lines and no '{REASON_MARK} ...' in its "
                             "docstring", [module]))
        else:
            reasoned.append(f"{module} ({lines})")
    if reasoned:
        warnings.warn(f"over {MAX_LINES} lines, each with its reason in its docstring: "
                      + ", ".join(reasoned), UserWarning)
    _report(*_split(findings), "modules over 600 lines")


def test_every_test_runs_under_a_timeout(pytestconfig):
    """Issue 33 item 5: a hung test fails alone (pytest-timeout, pyproject's
    [tool.pytest.ini_options]) instead of stopping the whole run."""
    assert pytestconfig.pluginmanager.hasplugin("timeout"), "pip install -e '.[test]'"
    assert 0 < float(pytestconfig.getini("timeout")) <= 900
