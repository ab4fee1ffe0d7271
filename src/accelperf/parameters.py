"""One parameter type and one collection for every model: LogCA fits and LPN delays alike.

Styled on lmfit's ``Parameter``/``Parameters``: a :class:`Parameter` is a named value with
its bounds, whether it is free or fixed (``vary``), its standard error and interval when a
fit estimated them, and a note saying why a value is what it is; a :class:`Parameters` is
an ordered, read-only mapping of them by name, with the params file (TOML) round trip.

Design
------
*One record, two kinds of number.* A LogCA fit's values are real (seconds, cycles,
ratios: ``value`` a float, bounds ``(0.0, inf)`` unless narrowed); an LPN model's named
delays are whole cycles (``integer=True``: ``value`` an int, bounds ``(minimum,
maximum)`` with ``None`` for "unbounded"). Each keeps its own number type, so the JSON
and the printed values stay what they were; what both share (value, bounds, stderr,
interval, vary, note, the check of a new value against the bounds) is written once here.
The repr follows what the record is: a real-valued fit ``<A = 3.2 ± 0.1>`` (lmfit's
angle form), a declared delay ``Parameter(idct_cycles = 70 (default 66))``, a calibrated
delay ``FittedParameter(idct_cycles: 66 → 70 ± 0.5 [70, 71])``.

*Where each former type went.* LogCA's ``FittedParameter`` (``logca.fit``) *is*
:class:`Parameter` (same field order: name, value, stderr, vary, bounds, note). The LPN
calibration's ``FittedParameter`` (``lpn.calibrate``) is a :class:`Parameter` with
``default``, ``start``, ``vary`` (fitted here or held), ``identified`` and its uncertainty
in ``stderr``/``interval``; ``fitted``, ``fitted_here`` and ``uncertainty`` read those.
The declared delay (``lpn.params.Parameter``) is a :class:`Parameter` with ``default`` and
bounds, ``minimum``/``maximum``/``doc`` reading ``bounds``/``note``. The uncertainty
methods' result, :class:`Estimate` (``lpn.uncertainty``), is the uncertainty part of a
parameter: ``stderr``, the interval ``(low, high)`` and whether the search left it open;
:meth:`Parameter.with_estimate` stores one on a parameter.

*Values are passed, not ambient.* An LPN ``Net`` is created with the values to build
(``Net(name, params=...)``) and ``net.parameter(...)`` reads them from it
(:mod:`accelperf.lpn.params` says what is left for build functions that take no values).

The params file
---------------
What ``lpn calibrate --out`` writes and ``--params`` reads::

    # comment lines
    model = "jpeg-decoder"

    [parameters]
    idct_cycles = 70  # a note, when the parameter has one

read strictly by :func:`read_params_file`: top-level ``model``, ``source`` and ``command``
(strings) and, the old layout, ``name = integer`` lines; tables ``[parameters]`` and
``[coverage]`` (the calibration inputs' coverage, handed back untouched). Any other key
or table is refused with the nearest valid name (a misspelled ``[params]`` would
otherwise run the model at its defaults without a word), and :meth:`ParamsFile.check`
refuses a file naming another model or a parameter that model does not declare. The
messages name the file as :data:`FILE_FIELD`; the command line puts its option there.
"""

from __future__ import annotations

import difflib
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path

from .errors import invalid

FILE_FIELD = "params file"            # how refusals name the file (the CLI: --params)
FILE_KEYS = ("model", "source", "command")
FILE_TABLES = ("parameters", "coverage")


@dataclass(frozen=True)
class Estimate:
    """The uncertainty part of a parameter: a standard error and a 68.27 % interval
    (whole cycles for a delay; ``open`` when the search reached its limit on a side)."""

    stderr: float
    low: int
    high: int
    open: bool = False

    def __repr__(self) -> str:
        return f"Estimate(± {self.stderr:.3g}, [{self.low}, {self.high}]" \
               f"{', open' if self.open else ''})"


@dataclass(frozen=True)
class Parameter:
    """One named value (module docstring): ``value`` within ``bounds`` (lower, upper;
    ``None`` or ±inf: unbounded), free or fixed (``vary``), with the ``stderr`` and
    ``interval`` a fit gave (None: not estimated), a ``note``, the ``default`` it was
    declared with and the ``start`` a fit began from."""

    name: str
    value: float | int
    stderr: float | None = None
    vary: bool = True
    bounds: tuple = (0.0, math.inf)
    note: str | None = None
    default: float | int | None = None
    start: float | int | None = None
    interval: tuple | None = None
    open: bool = False                  # the interval reached the search limit
    identified: bool = True             # False: the data do not determine it
    integer: bool = False               # a whole number (an LPN delay in cycles)

    # ------------------------------------------------------------------ constructors
    @classmethod
    def declared(cls, name: str, default: int, value: int | None = None,
                 minimum: int | None = 0, maximum: int | None = None,
                 doc: str = "") -> Parameter:
        """A model's named integer delay: its default, the value it is built with, its
        bounds and what it is (``doc``)."""
        return cls(name, default if value is None else value, bounds=(minimum, maximum),
                   note=doc, default=default, integer=True)

    def with_estimate(self, estimate: Estimate | None) -> Parameter:
        """This parameter with ``estimate``'s standard error and interval (None: none)."""
        if estimate is None:
            return replace(self, stderr=None, interval=None, open=False)
        return replace(self, stderr=estimate.stderr, interval=(estimate.low, estimate.high),
                       open=estimate.open)

    # ------------------------------------------------------------------ readings
    @property
    def minimum(self):
        return self.bounds[0]

    @property
    def maximum(self):
        return self.bounds[1]

    @property
    def doc(self) -> str:
        return self.note or ""

    @property
    def fitted(self):
        """The value a fit ended at (a calibration's name for ``value``)."""
        return self.value

    @property
    def fitted_here(self) -> bool:
        """Whether the fit moved it (False: held at its start value)."""
        return self.vary

    @property
    def uncertainty(self) -> Estimate | None:
        """The standard error and interval as one :class:`Estimate` (None: none)."""
        if self.interval is None or self.stderr is None:
            return None
        return Estimate(self.stderr, self.interval[0], self.interval[1], self.open)

    def allowed(self) -> str:
        """The values this parameter takes, in words."""
        lo = "" if self.minimum in (None, -math.inf) else f" >= {self.minimum}"
        hi = "" if self.maximum in (None, math.inf) else f" <= {self.maximum}"
        return f"{'an integer' if self.integer else 'a real number'}" \
               f"{lo}{' and' if lo and hi else ''}{hi}"

    def check(self, value, source: str = "parameter"):
        """``value`` as this parameter's number, or a one-line error naming it."""
        where = f"{source} {self.name}"
        if self.integer:
            if isinstance(value, bool) or not isinstance(value, int):
                if isinstance(value, float) and value.is_integer():
                    value = int(value)
                else:
                    raise invalid(where, value, self.allowed())
        elif isinstance(value, bool) or not isinstance(value, (int, float)) or \
                not math.isfinite(value):
            raise invalid(where, value, self.allowed())
        low, high = self.minimum, self.maximum
        if low is not None and value < low:
            raise invalid(where, value, f"{self.allowed()} (a smaller value would make a "
                                        f"delay negative)" if self.integer else self.allowed())
        if high is not None and value > high:
            raise invalid(where, value, self.allowed())
        return value

    def to_dict(self) -> dict:
        """The JSON of a fitted value (``logca fit --json``'s parameter_details)."""
        return {"value": self.value, "stderr": self.stderr, "vary": self.vary,
                "bounds": list(self.bounds), "note": self.note}

    def __repr__(self) -> str:
        if not self.integer:
            err = "" if self.stderr is None else f" ± {self.stderr:.3g}"
            return f"<{self.name} = {self.value:.6g}{err}{'' if self.vary else ' (fixed)'}>"
        if self.start is None:
            changed = "" if self.value == self.default else f" (default {self.default})"
            return f"Parameter({self.name} = {self.value}{changed})"
        u = self.uncertainty
        err = "" if u is None else f" ± {u.stderr:.3g} [{u.low}, {u.high}]"
        mark = "" if self.identified else ", not identified"
        return f"FittedParameter({self.name}: {self.default} → {self.value}{err}{mark})"


class Parameters(Mapping):
    """Parameters by name, in declaration order (read-only; lmfit's ``Parameters``):
    ``params["idct_cycles"].value``, :meth:`valuesdict`, and the params file round trip
    (:meth:`dumps`/:meth:`save`, :meth:`load`)."""

    def __init__(self, parameters: Iterable[Parameter] = ()):
        self._by_name: dict[str, Parameter] = {}
        for p in parameters:
            if p.name in self._by_name:
                raise invalid("parameter", p.name, "each name once")
            self._by_name[p.name] = p

    @classmethod
    def from_values(cls, values: Mapping | None, integer: bool = True) -> Parameters:
        """Bare values ({name: value}) as parameters (what a caller hands a model)."""
        if isinstance(values, Parameters):
            return values
        return cls(Parameter(n, v, integer=integer, bounds=(None, None))
                   for n, v in (values or {}).items())

    def __getitem__(self, name: str) -> Parameter:
        return self._by_name[name]

    def __iter__(self):
        return iter(self._by_name)

    def __len__(self) -> int:
        return len(self._by_name)

    def valuesdict(self) -> dict:
        """{name: value} (lmfit's name)."""
        return {n: p.value for n, p in self._by_name.items()}

    def __repr__(self) -> str:
        return "Parameters(" + ", ".join(f"{n}={p.value!r}" for n, p in
                                         self._by_name.items()) + ")"

    # ------------------------------------------------------------------ the params file
    def dumps(self, model: str, comment: str = "") -> str:
        """The params file of these values (module docstring): ``comment`` as ``#`` lines,
        the model's name, then ``[parameters]``, each note after its value."""
        lines = [f"# {line}" for line in comment.splitlines()]
        lines += [f'model = "{model}"', "", "[parameters]"]
        lines += [f"{p.name} = {p.value}" + (f"  # {p.note}" if p.note else "")
                  for p in self._by_name.values()]
        return "\n".join(lines) + "\n"

    def save(self, path: Path | str, model: str, comment: str = "") -> None:
        Path(path).write_text(self.dumps(model, comment), "utf-8")

    @classmethod
    def load(cls, path: Path | str) -> Parameters:
        """The values of the params file ``path``, read strictly (:func:`read_params_file`)."""
        return read_params_file(Path(path)).parameters


@dataclass(frozen=True)
class ParamsFile:
    """A params file, read strictly: the model it names (None when it names none), its
    ``{name: cycles}`` values and its ``[coverage]`` table, handed back untouched."""

    model: str | None
    values: dict
    coverage: dict | None

    @property
    def parameters(self) -> Parameters:
        return Parameters.from_values(self.values)

    def check(self, text: str, names: tuple[str, ...], model_name: str,
              declared: list[str]) -> ParamsFile:
        """This file, refused when it names a model other than ``names`` (the command's
        MODEL and the built model's name) or a parameter not in ``declared``."""
        if self.model is not None and self.model not in names:
            raise invalid(f"{FILE_FIELD} {text}: model", self.model,
                          f"the command's model is {model_name!r}: give a params file of "
                          f"that model (or remove its model line)")
        for name in self.values:
            if name not in declared:
                raise invalid(f"{FILE_FIELD} {text}: parameter", name,
                              f"model {model_name!r} declares "
                              f"{', '.join(declared) or 'no parameters'}"
                              f"{nearest(name, declared)}")
        return self

    def __repr__(self) -> str:
        return (f"ParamsFile(model={self.model!r}, {len(self.values)} values"
                f"{', coverage' if self.coverage is not None else ''})")


def nearest(name: str, choices) -> str:
    """`` (did you mean X?)`` for the closest of ``choices``, or nothing."""
    close = difflib.get_close_matches(name, list(choices), n=1, cutoff=0.6)
    return f" (did you mean {close[0]!r}?)" if close else ""


def read_params_file(path: Path) -> ParamsFile:
    """The params file ``path`` read strictly (module docstring); a refusal names the file
    as :data:`FILE_FIELD`."""
    import tomllib
    text = str(path)
    if not path.is_file():
        raise invalid(FILE_FIELD, text, "no such file (give a .toml file of name = value)")
    try:
        data = tomllib.loads(path.read_text("utf-8-sig"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise invalid(FILE_FIELD, text, f"not valid TOML ({exc})") from None
    where = f"{FILE_FIELD} {text}"
    values: dict[str, int] = {}
    named = [(k, v) for k, v in data.items() if not isinstance(v, dict) and k not in FILE_KEYS]
    for key, value in data.items():
        if isinstance(value, dict) and key not in FILE_TABLES:
            raise invalid(f"{where}: table", f"[{key}]", f"the tables are [parameters] and "
                                                        f"[coverage]{nearest(key, FILE_TABLES)}")
        if not isinstance(value, dict) and key in FILE_KEYS and not isinstance(value, str):
            raise invalid(f"{where}: {key}", value, "a string")
    table = data.get("parameters", {})
    if not isinstance(table, dict):
        raise invalid(FILE_FIELD, text, "[parameters] must be a table of name = value")
    for name, value in [*named, *table.items()]:
        if isinstance(value, bool) or not isinstance(value, int):
            hint = "" if name in table else nearest(name, FILE_KEYS)
            if hint:                                  # a misspelled model/source/command
                raise invalid(f"{where}: key", name, f"the top-level keys are "
                                                     f"{', '.join(FILE_KEYS)}{hint}")
            raise invalid(f"{where}: {name}", value, "an integer (cycles)")
        values[name] = value
    return ParamsFile(data.get("model"), values, data.get("coverage"))


__all__ = ["Parameter", "Parameters", "Estimate", "ParamsFile", "read_params_file", "nearest",
           "FILE_FIELD", "FILE_KEYS", "FILE_TABLES"]
