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

The override values travel through a context variable while the model's build function
runs, so build functions keep their signature (``jpeg_decoder_420()``) and user models
loaded from ``file.py:function`` get parameters for free.
"""

from __future__ import annotations

import contextvars
import difflib
from dataclasses import dataclass

from ..errors import ModelError, invalid


@dataclass(frozen=True)
class Parameter:
    """One declared parameter of a built model: its default and the value it was built
    with (integers: LPN time and counts are whole cycles)."""

    name: str
    default: int
    value: int
    minimum: int | None = 0
    maximum: int | None = None
    doc: str = ""

    def __repr__(self) -> str:
        changed = "" if self.value == self.default else f" (default {self.default})"
        return f"Parameter({self.name} = {self.value}{changed})"

    def allowed(self) -> str:
        lo = "" if self.minimum is None else f" >= {self.minimum}"
        hi = "" if self.maximum is None else f" <= {self.maximum}"
        return f"an integer{lo}{' and' if lo and hi else ''}{hi}"

    def check(self, value, source: str = "parameter") -> int:
        """``value`` as this parameter's integer, or a one-line error naming it."""
        if isinstance(value, bool) or not isinstance(value, int):
            if isinstance(value, float) and value.is_integer():
                value = int(value)
            else:
                raise invalid(f"{source} {self.name}", value, self.allowed())
        if (self.minimum is not None and value < self.minimum) or \
                (self.maximum is not None and value > self.maximum):
            raise invalid(f"{source} {self.name}", value,
                          f"{self.allowed()} (a smaller value would make a delay negative)"
                          if self.minimum is not None and value < self.minimum
                          else self.allowed())
        return value


_OVERRIDES: contextvars.ContextVar[dict | None] = contextvars.ContextVar(
    "accelperf_lpn_parameter_overrides", default=None)


def declared_value(name: str, default: int, minimum: int | None, maximum: int | None,
                   doc: str) -> Parameter:
    """The parameter ``name`` as the model being built should use it: the override given
    to :func:`build_with`, else its default (checked either way)."""
    if not isinstance(name, str) or not name.isidentifier():
        raise ModelError(f"parameter name = {name!r} is invalid: a Python identifier")
    spec = Parameter(name, 0, 0, minimum, maximum, doc)
    default = spec.check(default, "default of parameter")
    overrides = _OVERRIDES.get()
    value = default if overrides is None or name not in overrides else \
        spec.check(overrides[name])
    return Parameter(name, default, value, minimum, maximum, doc)


def build_with(builder, values: dict | None, source: str = "parameter"):
    """Call ``builder()`` (a function returning a built model) with the parameter
    ``values`` in place of the defaults; a name the model does not declare is an error
    that lists the ones it does."""
    values = dict(values or {})
    token = _OVERRIDES.set(values)
    try:
        model = builder()
    finally:
        _OVERRIDES.reset(token)
    declared = {p.name for p in getattr(model, "parameters", ())}
    for name in values:
        if name not in declared:
            close = difflib.get_close_matches(name, sorted(declared), n=1)
            raise invalid(source, name, f"model {getattr(model, 'name', '?')!r} declares "
                          f"{', '.join(sorted(declared)) or 'no parameters'}"
                          + (f" (did you mean {close[0]!r}?)" if close else ""))
    return model


def parse_assignment(text: str) -> tuple[str, int]:
    """``name=value`` (``--param``) as (name, integer value)."""
    name, sep, value = text.partition("=")
    name, value = name.strip(), value.strip()
    if not sep or not name:
        raise invalid("--param", text, "write NAME=VALUE, e.g. idct_cycles=70")
    try:
        number = int(value)
    except ValueError:
        raise invalid(f"--param {name}", value, "an integer (cycles)") from None
    return name, number


def values_of(model) -> dict[str, int]:
    """{name: value} of the parameters ``model`` was built with."""
    return {p.name: p.value for p in getattr(model, "parameters", ())}


__all__ = ["Parameter", "build_with", "declared_value", "parse_assignment", "values_of"]
