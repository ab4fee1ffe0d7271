"""An interface as an executable, readable, standard-library-only Python module (§4.2,
Figs. 4–7).

The module has ``latency(x)`` (cycles), ``seconds(x, frequency_hz)``, ``throughput(x,
frequency_hz)`` (stream tokens per second) and ``phases(x)`` (which transition bounds each
phase). ``x`` is what ``accelperf lpn simulate MODEL --input`` takes: the parsed JSON
value (turned into tokens by a standalone copy of the model's Ψ where the model declares
one, :mod:`accelperf.lpn.declared`), a file path (read by accelperf, when it is installed), or tokens
``{place: [{property: value}]}``. An input outside the extracted classes raises
``OutsideClasses`` naming the condition it breaks.

A module may hold several input *types* (:func:`typed_module_source`; OSDI'24 §5.3.1,
Fig. 5): one interface per fixed structure (a Protoacc message format), matched by the
structure of the input's tokens; with the model's splitter the input is priced unit by
unit (message by message) and the cycles add up. Sums of one function of a property over
many tokens are named (``sum_0``) and computed from the tokens, so a fixed structure's
formula stays as short as Fig. 5's.
"""

from __future__ import annotations

import inspect
import re
import textwrap

import sympy

from ...expr import parameter_name
from .critical import ASSUMPTION
from .handover import ASSUMPTION as HANDOVER_ASSUMPTION
from .handover import handover
from .module_text import (API_SOURCE, HELPERS_SOURCE, RUNS_SOURCE, reader_gives_list,
                          rotation_source)
from .interface import COUPLING, PATH, ClassInterface, Interface
from .schedule import REPLAY_SOURCE
from .simplify import simplified
from .steady import ASSUMPTION as STEADY_ASSUMPTION
from ..space import (constraint_exprs, count_symbol, mean_symbol, symbol_ranges,
                    token_symbol)



def _code(expr) -> str:
    return sympy.pycode(sympy.sympify(expr), fully_qualified_modules=True)


def _unpack(expr, indent="    ") -> str:
    names = sorted(str(s) for s in sympy.sympify(expr).free_symbols)
    if not names:
        return ""
    return f"{indent}{', '.join(names)} = " \
           f"{', '.join(f'a[{n!r}]' for n in names)}\n"


class _Sums:
    """Per-token sums, named: a fixed structure's formula adds the same function of one
    property over many tokens (Protoacc's ``floor(field_data_i_bytes/16)`` for every
    element written); the module computes ``sum_k`` from the tokens, so the formula reads
    ``max(70, sum_0 + 22)`` like Fig. 5's ``max(1468, msg.total_bytes/16 + 310)``."""

    MIN_TERMS = 3

    def __init__(self, space, prefix: str = ""):
        self.prefix, self.defs = prefix, []       # (name, place, prop, template, indices)
        self.of = {}                              # token symbol -> (place, index, prop)
        for ps in space.places:
            if not ps.stream:
                for i in range(ps.count[0]):
                    for q in ps.properties:
                        self.of[token_symbol(ps.place, i, q)] = (ps.place, i, q)

    def rewrite(self, expr):
        expr = sympy.sympify(expr)
        if not expr.args or not self.of:
            return expr
        args = [self.rewrite(a) for a in expr.args]
        if not isinstance(expr, sympy.Add):
            return expr.func(*args)
        groups, rest = {}, []
        x = sympy.Symbol("TOKEN_VALUE")
        for term in args:
            syms = term.free_symbols
            if len(syms) == 1 and next(iter(syms)) in self.of:
                (sym,) = syms
                place, i, q = self.of[sym]
                coeff, body = term.as_coeff_Mul()
                groups.setdefault((place, q, coeff, body.subs(sym, x)), []).append(i)
            else:
                rest.append(term)
        for (place, q, coeff, template), indices in groups.items():
            if len(indices) < self.MIN_TERMS:
                rest += [coeff * template.subs(x, token_symbol(place, i, q)) for i in indices]
                continue
            key = (place, q, template, tuple(sorted(indices)))
            name = next((d[0] for d in self.defs if d[1:] == key), None)
            if name is None:
                name = f"{self.prefix}sum_{len(self.defs)}"
                self.defs.append((name, *key))
            rest.append(coeff * sympy.Symbol(name))
        return sympy.Add(*rest)

    def source(self, indent="    ") -> str:
        """Code that sets a['sum_k'] from the tokens ``toks`` (for properties())."""
        out = ""
        for name, place, q, template, indices in self.defs:
            code = _code(template).replace("TOKEN_VALUE", f"t[{q!r}]")
            every = len(indices) == len(set(indices)) and \
                indices == tuple(range(len(indices)))
            out += f"{indent}# {name}: {code} summed over " \
                   f"{'every token' if every else f'{len(indices)} tokens'} t of {place}\n"
            pick = f"toks[{place!r}]" if every else \
                f"(toks[{place!r}][i] for i in {indices!r})"
            out += f"{indent}a[{name!r}] = sum({code} for t in {pick})\n"
        return out


def _class_block(i: int, ci: ClassInterface, model, sums=None, prefix: str = "") -> str:
    cls = ci.input_class
    rw = sums.rewrite if sums is not None else sympy.sympify
    conds = [c for c in cls.conditions]
    text = f"\n# ---- {prefix}class {i}: {' and '.join(map(str, conds)) or 'the whole space'}\n"
    cond_code = " and ".join(f"({_code(rw(c))})" for c in conds) or "True"
    used = rw(sympy.And(*conds)) if conds else sympy.true
    fn = f"{prefix}{i}"
    text += f"def _in_class_{fn}(a):\n{_unpack(used)}    return {cond_code}\n\n\n"
    latency = rw(ci.latency)
    text += f"def _latency_{fn}(a):\n"
    text += f"    # bottleneck: {ci.bottleneck} (on the class's sample input)\n"
    text += "".join(f"    # {g.transition}: {g.bound}\n" for g in ci.gaps
                    if g.bound.startswith(("loop", "critical path", "critical cycle")))
    text += _unpack(latency) + f"    return {_code(latency)}\n\n\n"
    everything = sympy.Add(*[rw(g.gap) for g in ci.gaps],
                           *[rw(ph.latency) for ph in ci.phases])
    text += f"def _phases_{fn}(a, toks):\n{_unpack(everything)}    out = []\n"
    for k, ph in enumerate(ci.phases):
        text += f"    # phase {k + 1}: {' -> '.join(ph.transitions)}; bottleneck " \
                f"{ph.bottleneck}\n"
        gaps = {g.transition: g.gap for g in ci.gaps if g.transition in ph.transitions}
        if ph.stream is not None:
            # cycles each stream token adds to a transition: its gap x commits per token
            n = count_symbol(ph.stream)
            gaps = {g.transition: simplified(g.gap * g.commits / n) for g in ci.gaps
                    if g.transition in ph.transitions}
            prefix_ = f"mean_{parameter_name(ph.stream)}_"
            means = sorted({str(s) for g in gaps.values() for s in sympy.sympify(g).free_symbols
                            if str(s).startswith(prefix_)})
            lets = "".join(f"        {m} = tok[{m[len(prefix_):]!r}]\n" for m in means)
            fill = _code(ph.fill)
            text += f"    def gaps_{k}(tok):\n{lets}"
            text += "        return {" + ", ".join(f"{t!r}: {_code(g)}" for t, g in
                                                  gaps.items()) + "}\n"
            if ci.schedule is not None and ci.schedule.stream == ph.stream:
                # the stream's timing recurrence, period by period: fill included
                text += f"    for top, n, cycles in _replay(toks[{ph.stream!r}], gaps_{k}, " \
                        f"_SCHEDULE_{fn}):\n"
                text += "        out.append((top, n, cycles))\n"
                continue
            period, first, ahead = _stream_shape(model, ci, ph, n)
            text += f"    # periods of {period} token(s); {first} reads the stream and may " \
                    f"run {ahead} token(s) ahead\n"
            text += f"    for top, n, cycles in _runs(toks[{ph.stream!r}], gaps_{k}, " \
                    f"{period}, {first!r}, {ahead}):\n"
            text += "        out.append((top, n, cycles))\n"
            text += f"    out.append(('fill of phase {k + 1}', 0, {fill}))\n"
        else:
            text += f"    out.append(({ph.bottleneck!r}, 1, {_code(rw(ph.latency))}))\n"
    text += "    return out\n"
    if ci.schedule is not None:
        text += _schedule_source(ci.schedule, fn)
    return text


def _schedule_source(schedule, fn: str) -> str:
    """A :class:`.schedule.PeriodSchedule` as module data: (period, first steps, steady
    steps), each step (transition, delay(t), interval(t), after, output) with ``t`` the
    period's tokens."""
    def fn_of(expr):
        code = re.sub(r"\bt(\d+)_(\w+)\b", r"t[\1]['\2']", _code(expr))
        return f"lambda t: {code}"

    def steps(which):
        return "".join(f"    ({s.transition!r}, {fn_of(s.delay)}, {fn_of(s.interval)}, "
                       f"{s.after!r}, {s.output!r}),\n" for s in which)
    return (f"\n\n# the stream's timing recurrence: {schedule.period} token(s) a period; "
            f"(transition, delay, interval, after (kind, period offset, firing), output)\n"
            f"_SCHEDULE_{fn} = ({schedule.period}, [\n{steps(schedule.first)}], [\n"
            f"{steps(schedule.steady)}])\n")


def _stream_shape(model, ci: ClassInterface, phase, n) -> tuple:
    """(period, first, ahead) of a streamed phase, from the net: the period is the fewest
    stream tokens after which every stage has made whole commits (the least common
    denominator of its commits per token: 6 blocks, one MCU, for the JPEG decoder); first
    is the one stage that takes the stream's tokens; ahead is how many tokens of the next
    period it may take while the stages after it are the bottleneck: the S slots of
    first's A.3 loop (the buffer between them, 4 coefficient slots for the decoder) less
    the one the period's last token holds, S − 1."""
    from .loops import find_loops
    period = 1
    for g in ci.gaps:
        per_token = simplified(g.commits / n)
        if g.transition in phase.transitions and per_token.is_Rational:
            period = sympy.ilcm(period, per_token.q)
    stream = next(i for i, p in enumerate(model.places) if p.name == phase.stream)
    readers = [t.name for t in model.transitions
               if stream in t.inputs[:t.user_inputs] and t.name in phase.transitions]
    first = readers[0] if len(readers) == 1 else None
    slots = [lp.tokens for lp in find_loops(model) if lp.transitions[0] == first]
    ahead = max(0, min(slots) - 1) if slots else 0
    return int(period), first, ahead


def _type_block(name: str, k: int, interface: Interface, model,
                handover=None) -> tuple[str, str]:
    """The code of one input type (one interface: its space's structure and classes),
    and its entry in TYPES; ``handover`` is its :class:`.handover.Handover` or None."""
    space = interface.space
    streams = {p.place: tuple(p.properties) for p in space.places if p.stream}
    fixed = {p.place: (p.count[0], tuple(p.properties)) for p in space.places
             if not p.stream}
    structure = {p.place: list(p.values) for p in space.places if p.values}
    ranges = {p.place: dict(p.properties) for p in space.places if not p.stream}
    stream_syms = {count_symbol(p.place) for p in space.places if p.stream} | {
        mean_symbol(p.place, q) for p in space.places if p.stream for q in p.properties}
    checks = []
    for sym, (lo, hi) in symbol_ranges(space).items():
        if sym in stream_syms:              # fixed tokens are checked through RANGES
            checks.append((f"{lo} <= {sym} <= {hi}", f"{lo} <= a[{str(sym)!r}] <= {hi}"))
    for c in space.constraints:
        rel = constraint_exprs(space, c)
        body = _code(rel)
        for n in sorted(str(s) for s in rel.free_symbols):
            body = re.sub(rf"\b{n}\b", f"a[{n!r}]", body)
        checks.append((c, body))
    prefix = f"t{k}_" if k else ""
    sums = _Sums(space, prefix)
    classes = "".join("\n" + _class_block(i, ci, model, sums, prefix)
                      for i, ci in enumerate(interface.classes))
    text = f"\n\n# ======== input type {name!r}\n"
    text += f"STREAMS_{k} = {streams!r}   # place: properties, read as count and means\n"
    text += f"FIXED_{k} = {fixed!r}   # place: (tokens, ranged properties)\n"
    text += f"RANGES_{k} = {ranges!r}\n"
    if structure:
        text += "# the type's structure: the properties of every token that do not vary\n"
    text += f"STRUCTURE_{k} = {structure!r}\n"
    text += f"SPACE_{k} = [  # (condition, test) of the input space\n"
    text += "".join(f"    ({label!r}, lambda a: {body}),\n" for label, body in checks)
    text += "]\n"
    text += f"\n\ndef _sums_{k}(a, toks):\n{sums.source() or '    pass'}\n"
    text += classes
    if handover is None:
        text += f"HANDOVER_{k} = None   # how it follows the unit before: none derived, " \
                f"after it\n"
    else:
        latencies, rows = handover.columns()
        text += f"# (roots, cycles alone at each derivation size, {{stage: (drains, heads, " \
                f"reaches)}}), cycles before the unit's end; {handover.describe()}\n"
        text += f"HANDOVER_{k} = ({handover.roots!r}, {latencies!r}, {{\n" + "".join(
            f"    {stage!r}: {row!r},\n" for stage, row in rows.items()) + "})\n"
    entry = f"    ({name!r}, STREAMS_{k}, FIXED_{k}, RANGES_{k}, STRUCTURE_{k}, SPACE_{k}, " \
            f"_sums_{k}, HANDOVER_{k},\n     [" + ", ".join(
                f"(_in_class_{prefix}{i}, _latency_{prefix}{i}, _phases_{prefix}{i})"
                for i in range(len(interface.classes))) + "]),\n"
    return text, entry


def module_source(interface: Interface, model, model_spec: str,
                  frequency_hz: float = 1e9, *, phases: bool | None = None,
                  form_note: str = "") -> str:
    """The Python source of the interface module (see the module docstring): one type,
    priced unit by unit where the model has a splitter (a list of Protoacc messages).
    ``phases`` is the default form of its ``latency(x)``: None chooses the more accurate
    on the space's samples (:func:`typed_module_source`); ``form_note`` says in the
    module's docstring why a forced form is the default
    (:meth:`.accuracy.FormChoice.describe`)."""
    return typed_module_source({model.name: interface}, model, model_spec, frequency_hz,
                               phases=phases, form_note=form_note)


def typed_module_source(interfaces: dict, model, model_spec: str, frequency_hz: float = 1e9,
                        *, phases: bool | None = None, split: bool = True,
                        form_note: str = "") -> str:
    """One module for several input types ({name: Interface}), each with its own
    formulas (OSDI'24 §5.3.1, Fig. 5: Protoacc's message types). With ``split`` the input
    is cut into units by the model's splitter (``model.declared.units``: Protoacc's
    messages), each unit is matched to its type by the structure of its tokens, and the
    latencies add up; a unit of no extracted type raises OutsideClasses.

    ``phases`` is the default form of the module's ``latency(x)``: True by phase, False
    plain (§4.2's max), None (issue 23 item 1) the more accurate of the two against
    simulation on every type's sampled inputs (:func:`.accuracy.choose_form`: one form
    for all types, the lower mean error), its two errors written into the docstring."""
    splitter = model.declared.units if split else None
    places = sorted({p.place for iface in interfaces.values() for p in iface.space.places})
    per_unit = "" if splitter is None else "\n" + textwrap.fill(
        "The input is priced unit by unit (" +
        " ".join(splitter.__doc__.split(":")[0].split()) + "), each by the formula of its "
        "type; a unit starts while the one before drains, as far as their single-server "
        "stages let it (HANDOVER_k: per stage, when it is freed and how long its chains "
        "to the output and through itself take, derived from the records' timestamps at "
        "the type's example). It assumes " + HANDOVER_ASSUMPTION + ".", 88)
    measured = sorted({g.transition for iface in interfaces.values() for ci in iface.classes
                       for g in ci.gaps if "measured" in g.bound})
    origin = ("Measured by simulating the model, not derived: " + ", ".join(measured) +
              ".") if measured else ("No term is measured: each is derived from the "
                                     "net's delays,\ninitiation intervals, capacities and "
                                     "routing.")
    paths = "" if not any(g.transition.startswith(PATH) for iface in interfaces.values()
                          for ci in iface.classes for g in ci.gaps) else (
        "\nTerms critical_path_k are chains of commits through the net (their transitions "
        "are\nnamed at each class): each is a lower bound of the latency, exact at the "
        f"sizes where it\nis critical; they assume {ASSUMPTION}.")
    if any(g.transition == COUPLING for iface in interfaces.values() for ci in iface.classes
           for g in ci.gaps):
        paths += ("\nTerm coupling is the heaviest cycle of the stream's period recurrence, "
                  "per token (its\ntransitions are named at each class). It assumes "
                  f"{STEADY_ASSUMPTION}.")

    def head(phases: bool, form_note: str) -> str:
        return f'''"""Performance interface of the LPN model {model.name!r}: latency from a formula.

Extracted by accelperf (`accelperf lpn interface {model_spec}`), after lpn2pi (OSDI'24 §4.2,
appendix A.3): per input class, latency = max over transitions of N_T x g_T (commits x
mean commit gap, with loops), and a phase-aware variant that adds phases with one stable
bottleneck each. It assumes a full pipeline (inputs large enough that filling it is
negligible), one bottleneck per class (or per phase) and the classes below; it is an
estimate of the LPN, not the RTL. {origin}{per_unit}{paths}

Default form: {form_note or ("by phase" if phases else "plain")}; latency(x, phases=...)
takes either.

Input types: {", ".join(interfaces)}.
latency(x) -> cycles    seconds(x, frequency_hz)    throughput(x, frequency_hz)
phases(x) -> [(bounding transition, tokens, cycles)]
x: the input of `accelperf lpn simulate {model_spec} --input` (parsed JSON), a file path
(needs accelperf installed), or tokens {{place: [{{property: value}}]}}.
"""

import math

MODEL = {model_spec!r}
FREQUENCY_HZ = {float(frequency_hz)!r}
PHASES = {bool(phases)!r}     # what latency() uses by default
PLACES = {places!r}


class OutsideClasses(ValueError):
    """The input is outside the input space or classes this interface was extracted for."""
'''
    body = ""
    adapter = model.declared.reader
    if adapter is not None:
        src = textwrap.dedent(inspect.getsource(adapter))
        if reader_gives_list(model):
            start = model.places[model.start].name
            src = src.replace(f"def {adapter.__name__}(", "def _psi_start(", 1) + \
                f"\n\ndef _psi(x):\n    return {{{start!r}: _psi_start(x)}}\n"
        else:
            src = src.replace(f"def {adapter.__name__}(", "def _psi(", 1)
        body += "\n\n# The model's Ψ (its tokens_from_input), standalone.\n" + src
    else:
        body += "\n\n_psi = None\n"
    if splitter is not None:
        src = textwrap.dedent(inspect.getsource(splitter))
        body += "\n\n" + src.replace(f"def {splitter.__name__}(", "def _units(", 1)
    else:
        body += "\n\ndef _units(x):\n    return [x]\n"
    body += rotation_source(model if splitter is not None else None)
    body += HELPERS_SOURCE + RUNS_SOURCE
    if any(ci.schedule is not None for iface in interfaces.values() for ci in iface.classes):
        body += REPLAY_SOURCE
    entries = ""
    for k, (name, iface) in enumerate(interfaces.items()):
        # consecutive units share stages (Fig. 5's plain sum over-counts them)
        text, entry = _type_block(name, k, iface, model,
                                  handover(model, iface.classes[0].input_class)
                                  if splitter and iface.classes else None)
        body += text
        entries += entry
    body += "\n\nTYPES = [  # (name, streams, fixed, ranges, structure, space, sums, handover,\n" \
            "          #  classes)\n"
    body += entries + "]\n" + API_SOURCE
    if phases is None:
        # both forms are in every module: measure them on one build, then state the winner
        from .accuracy import choose_form
        form = choose_form(model, interfaces, load_module(head(False, "") + body))
        phases, form_note = form.phases, form.describe()
    return head(phases, form_note) + body


def load_module(source: str, name: str = "lpn_interface"):
    """Run a generated module's source and return it as a module object."""
    import types
    module = types.ModuleType(name)
    exec(compile(source, f"<{name}>", "exec"), module.__dict__)
    return module


__all__ = ["module_source", "typed_module_source", "load_module"]
