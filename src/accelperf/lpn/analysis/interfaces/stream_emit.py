"""The module of a token-by-token interface (:mod:`.token_stream`): standard library only,
like :mod:`.emit`'s, with the same API (``latency(x)``, ``seconds``, ``terms``,
``bottleneck``, ``OutsideClasses``), so ``--check`` and the explorer use it alike.

Per class of a token: its condition and, per stage, four expressions of the token's
properties (work, first start, last commit, release, :mod:`.token_stream` steps 2-3);
rationals are written as ``Fraction`` so ``floor(bytes/16 + 15/16)`` stays exact. The
stream's recurrence (step 4) and its terms run over the tokens at call time.
"""

from __future__ import annotations

import inspect

import numpy as np
import sympy
from sympy.printing.pycode import PythonCodePrinter

from .exact_range import Inexact, exact_values, to_floats, whole_range
from .bottleneck import runs_label, value_runs
from .module_text import reader_gives_list
from .token_stream import StreamInterface, stream_latency


class _Printer(PythonCodePrinter):
    def _print_Rational(self, expr):
        return f"Fraction({expr.p}, {expr.q})"

    def _print_Half(self, expr):
        return "Fraction(1, 2)"


def code(expr, iface: StreamInterface) -> str:
    """``expr`` as Python over ``t``, the token's dict (exact rationals)."""
    expr = sympy.sympify(expr).xreplace(
        {iface.symbol(p): sympy.Symbol(f"t['{p}']") for p in iface.properties})
    return _Printer({"fully_qualified_modules": True}).doprint(expr)


def readable(expr):
    """``expr`` with ``floor(x/q + (q - 1)/q)`` written ``ceiling(x/q)`` (equal for the
    whole numbers token properties are): ``ceiling(packets_0_bytes/16)`` blocks."""
    def ceiling_form(e):
        if not isinstance(e, sympy.floor):
            return False
        const, rest = e.args[0].as_coeff_Add()
        coeff, _ = rest.as_coeff_Mul()
        return coeff.is_Rational and coeff > 0 and (1 / coeff).is_Integer and \
            const == 1 - coeff
    return sympy.sympify(expr).replace(
        ceiling_form, lambda e: sympy.ceiling(e.args[0].as_coeff_Add()[1]))


def bottleneck_runs(iface: StreamInterface, limit: int = 100_000) -> list:
    """[(stages, lo, hi)]: which stage works longest per token over the one varying
    property's range (ties listed together), as runs of values; [] when the token has
    several varying properties or a range past ``limit``."""
    ps = iface.space.place(iface.place)
    varying = ps.varying()
    if len(varying) != 1:
        return []
    prop = varying[0]
    lo, hi = ps.properties[prop]
    if hi - lo > limit:
        return []
    fixed = {p: ps.properties[p][0] for p in iface.properties if p != prop}
    try:
        tops = _top_stages_at_once(iface, prop, lo, hi, fixed)
    except Inexact:     # SymPy, value by value: the same floats, 100 times slower
        tops = [_top_stages({name: w[0] for name, w in iface.stage_values(
            {**fixed, prop: v}).items()}) for v in range(lo, hi + 1)]
    return value_runs(tops, lo)


def _top_stages(works: dict) -> tuple:
    top = max(works.values())
    return tuple(n for n, w in works.items() if w == top)


def _top_stages_at_once(iface: StreamInterface, prop: str, lo: int, hi: int,
                        fixed: dict) -> list:
    """Per value ``lo..hi`` of ``prop``, :func:`_top_stages` of the works that
    ``iface.stage_values`` gives, from exact whole-number arrays (:mod:`.exact_range`):
    the same floats, compared the same way. Raises :class:`Inexact` where an
    expression is not evaluated exactly there, or a value is in no class (then the
    caller's SymPy path says which)."""
    n = hi - lo + 1
    values = {iface.symbol(p): v for p, v in fixed.items()}
    values[iface.symbol(prop)] = whole_range(lo, hi)
    memo: dict = {}
    tops: list = [None] * n
    free = np.ones(n, dtype=bool)
    for c in iface.classes:                     # the first class whose conditions hold
        inside = free.copy()
        for cond in c.conditions:
            inside &= exact_values(cond, values, n, memo)
        free &= ~inside
        if not inside.any():
            continue
        works = {}
        for s in c.stages:
            # stage_values turns all four into floats: where one is not exact here,
            # the SymPy path is asked (it may fail on it)
            for e in (s.start, s.finish, s.release):
                exact_values(e, values, n, memo)
            works[s.transition] = to_floats(exact_values(s.work, values, n, memo))
        names = list(works)
        if not names:
            raise Inexact(f"token class {c.index} has no stage")
        table = np.array([works[k] for k in names])
        ties = table == table.max(axis=0)
        for i in np.flatnonzero(inside):
            tops[i] = tuple(k for k, tie in zip(names, ties[:, i]) if tie)
    if free.any():
        raise Inexact(f"{prop} = {lo + int(np.flatnonzero(free)[0])} is in no class")
    return tops


def bottleneck_label(iface: StreamInterface) -> str:
    """The stage whose work per token dominates over most of the space, then where
    another does: "ghash; header at bytes 1..64, header = ghash at 65..80"."""
    runs = bottleneck_runs(iface)
    if not runs:
        names = dict.fromkeys(c.bottleneck for c in iface.classes)
        return "; ".join(f"{n} in class(es) " + ", ".join(
            str(c.index) for c in iface.classes if c.bottleneck == n) for n in names)
    return runs_label(runs, iface.space.place(iface.place).varying()[0])


def stream_module_source(iface: StreamInterface, model, model_spec: str,
                         frequency_hz: float, label: str | None = None) -> str:
    """The module's text (see the module docstring). ``label`` is
    :func:`bottleneck_label` of ``iface`` where the caller has it already (seconds of
    work over a wide space: `lpn interface` prints it too); else it is computed here."""
    if label is None:
        label = bottleneck_label(iface)
    lines = [f'"""Performance interface of {model.name} over a stream of 1..{iface.count[1]}'
             f' tokens of {iface.place!r},',
             "priced token by token (accelperf lpn interface; docs/how-to/packet-engine.md).",
             "",
             "latency(x): the stream recurrence over the stages (fill, work, drain per token);",
             "terms(x): per stage, fill on the first token + work on all + drain on the last,",
             "each a lower bound where the stage never idles; bottleneck(x): the largest.",
             f"Bottleneck over the space: {label}.",
             f"Assumption: units fire in the order of the records (tokens in input order).",
             '"""', "", "import json", "import math", "import sys",
             "from fractions import Fraction", "",
             f"MODEL = {model_spec!r}", f"PLACE = {iface.place!r}",
             f"COUNT = {tuple(iface.count)!r}", f"FREQUENCY_HZ = {float(frequency_hz)!r}",
             f"RANGES = {dict(iface.space.place(iface.place).properties)!r}", "",
             "", "class OutsideClasses(ValueError):",
             '    """An input the interface does not cover."""', "", ""]
    for c in iface.classes:
        cond = " and ".join(f"({code(x, iface)})" for x in c.conditions) or "True"
        lines += [f"def _in_{c.index}(t):",
                  f"    # {' and '.join(str(readable(x)) for x in c.conditions) or 'every token'}",
                  f"    return bool({cond})", "", "",
                  f"def _stages_{c.index}(t):",
                  f"    # bottleneck {c.bottleneck}; alone {code(c.latency, iface)} cycles",
                  "    return {"]
        for s in c.stages:
            exprs = ", ".join(code(e, iface) for e in (s.work, s.start, s.finish, s.release))
            lines.append(f"        {s.transition!r}: ({exprs}, {s.feeds!r}, {s.timed!r}),")
        lines += ["    }", "", "", f"def _alone_{c.index}(t):",
                  f"    return {code(c.latency, iface)}", "", ""]
    lines.append("CLASSES = [" + ", ".join(f"(_in_{c.index}, _stages_{c.index}, "
                                           f"_alone_{c.index})" for c in iface.classes) + "]")
    adapter = model.declared.reader
    lines += ["", "", inspect.getsource(stream_latency).rstrip(), "", ""]
    if adapter is not None:
        lines += [inspect.getsource(adapter).rstrip(), "", ""]
        lines.append(f"def _PSI(x):\n    return {{{model.places[model.start].name!r}: "
                     f"{adapter.__name__}(x)}}" if reader_gives_list(model) else
                     f"_PSI = {adapter.__name__}")
    else:
        lines.append(_PSI_THROUGH_ACCELPERF)
    lines += ["", "", _RUNTIME]
    return "\n".join(lines)


_PSI_THROUGH_ACCELPERF = '''_LOADED = {}      # the model, built once per process


def _PSI(x):
    """The model declares no standalone Ψ: its own reads ``x`` where accelperf is
    installed."""
    try:
        from accelperf.lpn.loader import load_model
    except ImportError:
        raise OutsideClasses(f"input = {str(x)[:40]} is invalid here: reading it needs "
                             f"accelperf installed (pip install accelperf), or give "
                             f"tokens {{{PLACE!r}: [...]}}") from None
    model = _LOADED.get(MODEL) or _LOADED.setdefault(MODEL, load_model(MODEL))
    pid = model.place_id(PLACE)
    props = model.places[pid].token_type.properties
    return {PLACE: [dict(zip(props, t)) for t in model.marking(x).tokens.get(pid, ())]}'''


_RUNTIME = '''def tokens(x):
    """The stream's tokens of ``x``: parsed input (through the model's Ψ), a JSON text or
    file path, or tokens ``{place: [{prop: value}]}``."""
    if isinstance(x, str):
        try:
            x = json.loads(x)
        except ValueError:
            with open(x, encoding="utf-8") as f:
                x = json.load(f)
    if isinstance(x, dict) and PLACE in x:
        toks = x[PLACE]
    elif _PSI is not None:
        toks = _PSI(x)[PLACE]
    else:
        raise OutsideClasses(f"input = {str(x)[:40]} is invalid: give tokens {{{PLACE!r}: "
                             f"[...]}}")
    if not COUNT[0] <= len(toks) <= COUNT[1]:
        raise OutsideClasses(f"{PLACE} has {len(toks)} tokens; the space allows "
                             f"{COUNT[0]}..{COUNT[1]}")
    for i, t in enumerate(toks):
        for p, (lo, hi) in RANGES.items():
            if not lo <= t[p] <= hi:
                raise OutsideClasses(f"{PLACE}[{i}].{p} = {t[p]} is outside the space "
                                     f"({lo}..{hi})")
    return toks


def _of(t):
    for inside, stages, alone in CLASSES:
        if inside(t):
            return stages(t), alone(t)
    raise OutsideClasses(f"token {t} is in no class")


def latency(x, phases=None):
    """Cycles for the stream ``x`` (``phases`` is accepted for the common API)."""
    per = [_of(t)[0] for t in tokens(x)]
    return float(stream_latency([({k: v[:4] for k, v in s.items() if v[5]},
                                  {k: v[4] for k, v in s.items()}) for s in per]))


def terms(x):
    """{stage: fill on the first token + work on all + drain on the last} in cycles."""
    toks = tokens(x)
    first, last = _of(toks[0]), _of(toks[-1])
    out = {}
    for t in toks:
        for k, v in _of(t)[0].items():
            out[k] = out.get(k, 0) + v[0]
    for k, v in first[0].items():
        if v[5] and k in last[0] and last[0][k][5]:
            out[k] += v[1] + last[1] - last[0][k][2]
    return {k: float(v) for k, v in out.items()}


def bottleneck(x):
    """The stage whose term is largest on ``x`` (at a tie, the one with the most work:
    on one token every stage that never idles has the token's latency as its term)."""
    t, work = terms(x), {}
    for tok in tokens(x):
        for k, v in _of(tok)[0].items():
            work[k] = work.get(k, 0) + v[0]
    return max(t, key=lambda k: (t[k], work[k]))


def seconds(x, frequency_hz=FREQUENCY_HZ):
    return latency(x) / frequency_hz


def throughput(x, frequency_hz=FREQUENCY_HZ):
    """Stream tokens per second."""
    return len(tokens(x)) / seconds(x, frequency_hz)


if __name__ == "__main__":
    try:
        print(latency(sys.argv[1]))
    except (OutsideClasses, ValueError, KeyError, IndexError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        sys.exit(2)
'''


__all__ = ["stream_module_source", "bottleneck_label", "bottleneck_runs", "readable"]
