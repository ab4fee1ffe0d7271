"""Named delay parameters: a model's tunable constants, declared once, overridable by name.

A model declares them while it is built::

    idct = net.parameter("idct_cycles", 66, doc="cycles of one 8x8 inverse DCT")
    net.transition("idct", ..., delay=idct)                  # or inside any function:
    net.transition("decode", ..., delay=lambda b: per_symbol * b.symbols + base)

and a caller picks other values without editing code: ``build("jpeg-decoder",
params={"idct_cycles": 70})``, ``--param idct_cycles=70`` or ``--params FILE.toml``.

Design (why a named constant, and not a free symbol)
----------------------------------------------------
:meth:`Net.parameter` returns a constant leaf of the expression tree that carries its name
(``Expr("const", (value, name))``): every backend (reference evaluation, the Python engine,
the C engine, SymPy, Z3, text) reads ``args[0]`` of a constant and so works unchanged, and
the name stays on the tree for anyone who wants it. Other values mean building the model
again with :func:`build_with` (a few milliseconds), not patching a built one: the built
model stays immutable, its checks (negative constant delays, capacities) run on the real
values, and the engines take each value from the model they run. The compiled engine
still shares one library across values: :mod:`.csource` writes a named constant as a read
of the run's parameter array, not as a literal, and each run passes the model's values.
The cost: the interface (lpn2pi) sees numbers, so a fit cannot read latency as a closed
form in the parameters; the calibration (:mod:`accelperf.lpn.calibrate`) therefore fits
by simulation (see its docstring).

How values reach the net
------------------------
Passed, not ambient: ``Net(name, params=...)`` holds the values ({name: int} or a
:class:`~accelperf.parameters.Parameters`) and :meth:`Net.parameter` reads its value from
them. Every library builder takes ``params`` and hands it to its ``Net``;
``build(name, params=...)``, :func:`~accelperf.lpn.loader.load_model` and
:func:`build_with` call a builder that takes ``params`` with them. What is left of the
old context variable: a build function that takes no values (a user's
``file.py:function()``, ``lambda: credit_link(flight_cycles=60)``) creates its ``Net``
without them, so for that call only :func:`build_with` makes the values the default of
a ``Net`` created without ``params`` (:data:`_UNPASSED`); a ``Net`` given ``params``
never reads it.

The parameter itself is :class:`accelperf.parameters.Parameter` (one type for LogCA and
LPN; ``Parameter.declared`` makes a delay's).
"""

from __future__ import annotations

import contextvars
import inspect
from collections.abc import Mapping

from ..errors import ModelError, invalid
from ..parameters import Parameter, Parameters, nearest

# The values for a Net created without ``params`` while :func:`build_with` runs a build
# function that takes none (module docstring); None outside such a call.
_UNPASSED: contextvars.ContextVar[dict | None] = contextvars.ContextVar(
    "accelperf_lpn_unpassed_parameter_values", default=None)


def values_given(params: Mapping | None) -> dict:
    """{name: value} of what a Net was created with: ``params`` when given, else the
    values of a :func:`build_with` call around a build function without ``params``."""
    if params is None:
        params = _UNPASSED.get()
    if isinstance(params, Parameters):
        return params.valuesdict()
    return dict(params or {})


def declare(name: str, default: int, minimum: int | None, maximum: int | None, doc: str,
            given: Mapping) -> Parameter:
    """The parameter ``name`` as a model being built with the values ``given`` uses it:
    the given value, else its default (checked either way)."""
    if not isinstance(name, str) or not name.isidentifier():
        raise ModelError(f"parameter name = {name!r} is invalid: a Python identifier")
    spec = Parameter.declared(name, 0, minimum=minimum, maximum=maximum, doc=doc)
    default = spec.check(default, "default of parameter")
    value = spec.check(given[name]) if name in given else default
    return Parameter.declared(name, default, value, minimum, maximum, doc)


def takes_params(builder) -> bool:
    """Whether ``builder`` has a ``params`` argument (library builders do)."""
    try:
        return "params" in inspect.signature(builder).parameters
    except (TypeError, ValueError):
        return False


def call_builder(builder, values: Mapping | None):
    """``builder`` called with ``values``: as ``params=`` when it takes them, else with
    them as the default of the Nets it creates (module docstring)."""
    values = values_given(values if values is not None else {})
    if takes_params(builder):
        return builder(params=values)
    token = _UNPASSED.set(values)
    try:
        return builder()
    finally:
        _UNPASSED.reset(token)


def build_with(builder, values: Mapping | None, source: str = "parameter"):
    """Call ``builder`` (a function returning a built model) with the parameter
    ``values`` in place of the defaults; a name the model does not declare is an error
    that lists the ones it does."""
    values = values_given(values if values is not None else {})
    model = call_builder(builder, values)
    declared = sorted(p.name for p in getattr(model, "parameters", ()))
    for name in values:
        if name not in declared:
            raise invalid(source, name, f"model {getattr(model, 'name', '?')!r} declares "
                          f"{', '.join(declared) or 'no parameters'}{nearest(name, declared)}")
    return model


def parse_assignment(text: str) -> tuple[str, int]:
    """``name=value`` (``--param``) as (name, integer value)."""
    name, sep, value = text.partition("=")
    name, value = name.strip(), value.strip()
    if not sep or not name:
        raise invalid("param", text, "write NAME=VALUE, e.g. idct_cycles=70")
    try:
        number = int(value)
    except ValueError:
        raise invalid(f"param {name}", value, "an integer (cycles)") from None
    return name, number


def values_of(model) -> dict[str, int]:
    """{name: value} of the parameters ``model`` was built with."""
    return {p.name: p.value for p in getattr(model, "parameters", ())}


__all__ = ["Parameter", "build_with", "call_builder", "declare", "values_given", "parse_assignment",
           "values_of"]
