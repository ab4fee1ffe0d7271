"""An interface as an executable, readable, standard-library-only Python module (§4.2,
Figs. 4–7).

The module has ``latency(x)`` (cycles), ``seconds(x, frequency_hz)``, ``throughput(x,
frequency_hz)`` (stream tokens per second) and ``phases(x)`` (which transition bounds each
phase). ``x`` is what ``accelperf lpn simulate MODEL --input`` takes: the parsed JSON
value (turned into tokens by a standalone copy of the model's Ψ where accelperf has one,
see :mod:`.adapters`), a file path (read by accelperf, when it is installed), or tokens
``{place: [{property: value}]}``. An input outside the extracted classes raises
``OutsideClasses`` naming the condition it breaks.
"""

from __future__ import annotations

import inspect
import re
import textwrap

import sympy

from .adapters import ADAPTERS
from .interface import ClassInterface, Interface
from .space import constraint_exprs, count_symbol, symbol_ranges, token_symbol

# The run splitter is the same text in every module: kept here as source, run there.
RUNS_SOURCE = '''
def _runs(stream, gaps, period, first, ahead):
    """Cycles of a stream, one period (the tokens after which every stage has done
    whole commits, e.g. an MCU) at a time, grouped into runs with one bottleneck.

    A period costs its bottleneck: the largest sum of its tokens' gaps over the stages.
    When the stages after ``first`` (the one reading the stream) bound a period, ``first``
    uses its slack to work ahead on the next period's tokens: at most ``ahead`` of them
    (the buffer between the stages), and only in the time the bottleneck spends on the
    period's last ``ahead`` tokens (before, their slots are still taken). The next
    period's own work for ``first`` is that much shorter. Without this hand-over term a
    slow-first period after a back-end-bound one would be over-counted."""
    chunks = []
    for i in range(0, len(stream), period):
        gs = [gaps(tok) for tok in stream[i:i + period]]
        chunks.append((gs, {t: sum(g[t] for g in gs) for t in gs[0]}))
    runs, lead = [], 0
    for k, (gs, total) in enumerate(chunks):
        rest = max((t for t in total if t != first), key=total.get, default=None)
        own = total.get(first, 0) - lead
        if rest is None or own >= total[rest]:
            top, cycles, lead = first, own, 0
        else:
            top, cycles = rest, total[rest]
            following = chunks[k + 1][0][:ahead] if k + 1 < len(chunks) else []
            window = sum(g[top] for g in gs[len(gs) - ahead:]) if ahead else 0
            lead = min(sum(g[first] for g in following), cycles - own, window)
        if runs and runs[-1][0] == top:
            runs[-1][1] += len(gs)
            runs[-1][2] += cycles
        else:
            runs.append([top, len(gs), cycles])
    return [tuple(r) for r in runs]
'''


def _code(expr) -> str:
    return sympy.pycode(sympy.sympify(expr), fully_qualified_modules=True)


def _unpack(expr, indent="    ") -> str:
    names = sorted(str(s) for s in sympy.sympify(expr).free_symbols)
    if not names:
        return ""
    return f"{indent}{', '.join(names)} = " \
           f"{', '.join(f'a[{n!r}]' for n in names)}\n"


def _class_block(i: int, ci: ClassInterface, model) -> str:
    cls = ci.input_class
    conds = [c for c in cls.conditions]
    text = f"\n# ---- class {i}: {' and '.join(map(str, conds)) or 'the whole space'}\n"
    cond_code = " and ".join(f"({_code(c)})" for c in conds) or "True"
    used = sympy.And(*conds) if conds else sympy.true
    text += f"def _in_class_{i}(a):\n{_unpack(used)}    return {cond_code}\n\n\n"
    text += f"def _latency_{i}(a):\n"
    text += f"    # bottleneck: {ci.bottleneck} (on the class's sample input)\n"
    text += _unpack(ci.latency) + f"    return {_code(ci.latency)}\n\n\n"
    everything = sympy.Add(*[g.gap for g in ci.gaps], *[ph.latency for ph in ci.phases])
    text += f"def _phases_{i}(a, toks):\n{_unpack(everything)}    out = []\n"
    for k, ph in enumerate(ci.phases):
        text += f"    # phase {k + 1}: {' -> '.join(ph.transitions)}; bottleneck " \
                f"{ph.bottleneck}\n"
        gaps = {g.transition: g.gap for g in ci.gaps if g.transition in ph.transitions}
        if ph.stream is not None:
            # cycles each stream token adds to a transition: its gap x commits per token
            n = count_symbol(ph.stream)
            gaps = {g.transition: sympy.simplify(g.gap * g.commits / n) for g in ci.gaps
                    if g.transition in ph.transitions}
            prefix = f"mean_{ph.stream}_"
            means = sorted({str(s) for g in gaps.values() for s in sympy.sympify(g).free_symbols
                            if str(s).startswith(prefix)})
            lets = "".join(f"        {m} = tok[{m[len(prefix):]!r}]\n" for m in means)
            fill = _code(ph.fill)
            text += f"    def gaps_{k}(tok):\n{lets}"
            text += "        return {" + ", ".join(f"{t!r}: {_code(g)}" for t, g in
                                                  gaps.items()) + "}\n"
            period, first, ahead = _stream_shape(model, ci, ph, n)
            text += f"    # periods of {period} token(s); {first} reads the stream and may " \
                    f"run {ahead} token(s) ahead\n"
            text += f"    for top, n, cycles in _runs(toks[{ph.stream!r}], gaps_{k}, " \
                    f"{period}, {first!r}, {ahead}):\n"
            text += "        out.append((top, n, cycles))\n"
            text += f"    out.append(('fill of phase {k + 1}', 0, {fill}))\n"
        else:
            text += f"    out.append(({ph.bottleneck!r}, 1, {_code(ph.latency)}))\n"
    text += "    return out\n"
    return text


def _stream_shape(model, ci: ClassInterface, phase, n) -> tuple:
    """(period, first, ahead) of a streamed phase, from the net: the period is the fewest
    stream tokens after which every stage has made whole commits (the least common
    denominator of its commits per token: 6 blocks, one MCU, for the JPEG decoder); first
    is the one stage that takes the stream's tokens; ahead is how many tokens of the next
    period it may take while the stages after it are the bottleneck: the S slots of
    first's A.3 loop (the buffer between them, 4 coefficient slots for the decoder) less
    the one the period's last token holds, S − 1."""
    from .interface import find_loops
    period = 1
    for g in ci.gaps:
        per_token = sympy.simplify(g.commits / n)
        if g.transition in phase.transitions and per_token.is_Rational:
            period = sympy.ilcm(period, per_token.q)
    stream = next(i for i, p in enumerate(model.places) if p.name == phase.stream)
    readers = [t.name for t in model.transitions
               if stream in t.inputs[:t.user_inputs] and t.name in phase.transitions]
    first = readers[0] if len(readers) == 1 else None
    slots = [lp.tokens for lp in find_loops(model) if lp.transitions[0] == first]
    ahead = max(0, min(slots) - 1) if slots else 0
    return int(period), first, ahead


def module_source(interface: Interface, model, model_spec: str,
                  frequency_hz: float = 1e9, *, phases: bool = False) -> str:
    """The Python source of the interface module (see the module docstring)."""
    space = interface.space
    streams = {p.place: tuple(p.properties) for p in space.places if p.stream}
    fixed = {p.place: (p.count[0], tuple(p.properties)) for p in space.places
             if not p.stream}
    head = f'''"""Performance interface of the LPN model {model.name!r}: latency from a formula.

Extracted by accelperf (`accelperf lpn interface {model_spec}`), after lpn2pi (OSDI'24 §4.2,
appendix A.3): per input class, latency = max over transitions of N_T x g_T (commits x
mean commit gap, with loops), and a phase-aware variant that adds phases with one stable
bottleneck each. It assumes a full pipeline (inputs large enough that filling it is
negligible), one bottleneck per class (or per phase) and the classes below; it is an
estimate of the LPN, not the RTL.

latency(x) -> cycles    seconds(x, frequency_hz)    throughput(x, frequency_hz)
phases(x) -> [(bounding transition, tokens, cycles)]
x: the input of `accelperf lpn simulate {model_spec} --input` (parsed JSON), a file path
(needs accelperf installed), or tokens {{place: [{{property: value}}]}}.
"""

import math

MODEL = {model_spec!r}
FREQUENCY_HZ = {float(frequency_hz)!r}
PHASES = {bool(phases)!r}     # what latency() uses by default
STREAMS = {streams!r}          # place: properties; read as count and means
FIXED = {fixed!r}              # place: (tokens, properties); read token by token


class OutsideClasses(ValueError):
    """The input is outside the input space or classes this interface was extracted for."""
'''
    adapter = ADAPTERS.get(model.name)
    if adapter is not None:
        src = textwrap.dedent(inspect.getsource(adapter))
        src = src.replace(f"def {adapter.__name__}(", "def _psi(", 1)
        head += "\n\n# The model's Ψ (its tokens_from_input), standalone.\n" + src
    else:
        head += "\n\n_psi = None\n"
    head += '''

def tokens(x):
    """The input's tokens, {place: [{property: value}]}."""
    places = set(STREAMS) | set(FIXED)
    if isinstance(x, dict) and x and set(x) <= places and \\
            all(isinstance(v, list) for v in x.values()):
        return x
    if isinstance(x, (list, dict, int, float)) and _psi is not None:
        return _psi(x)                  # parsed JSON: the standalone Ψ
    try:
        from accelperf.lpn.loader import load_input, load_model
    except ImportError:
        raise OutsideClasses(f"input {x!r:.60}: reading it needs accelperf installed "
                             f"(pip install accelperf), or give tokens "
                             f"{{place: [{{property: value}}]}}") from None
    model = load_model(MODEL)
    marking = model.marking(load_input(x) if isinstance(x, str) else x)
    out = {}
    for pid, toks in marking.tokens.items():
        place = model.places[pid]
        if place.name in places:
            out[place.name] = [dict(zip(place.token_type.properties, t)) for t in toks]
    return out


def properties(toks):
    """The named properties the formulas read: n_P and mean_P_p of each stream, P_i_p of
    each token of a fixed-count place."""
    a = {}
    for place, props in STREAMS.items():
        ts = toks.get(place, [])
        a["n_" + place] = len(ts)
        for p in props:
            a["mean_" + place + "_" + p] = sum(t[p] for t in ts) / max(1, len(ts))
    for place, (count, props) in FIXED.items():
        ts = toks.get(place, [])
        if len(ts) != count:
            raise OutsideClasses(f"{place} has {len(ts)} tokens; this interface was "
                                 f"extracted for exactly {count}")
        for i, t in enumerate(ts):
            for p in props:
                a[place + "_" + str(i) + "_" + p] = t[p]
    return a
'''
    checks = []
    probed = {token_symbol(p.place, i, q) for p in space.places if p.probe
              for i in range(p.probe) for q in p.properties}
    for sym, (lo, hi) in symbol_ranges(space).items():
        if sym in probed:                 # the probe's own tokens: not the input's
            continue
        checks.append((f"{lo} <= {sym} <= {hi}", f"{lo} <= a[{str(sym)!r}] <= {hi}"))
    for c in space.constraints:
        rel = constraint_exprs(space, c)
        names = sorted(str(s) for s in rel.free_symbols)
        body = _code(rel)
        for n in names:
            body = re.sub(rf"\b{n}\b", f"a[{n!r}]", body)
        checks.append((c, body))
    head += "\n\nSPACE = [  # (condition, test) of the input space\n"
    head += "".join(f"    ({label!r}, lambda a: {body}),\n" for label, body in checks)
    head += "]\n"
    head += RUNS_SOURCE
    for i, ci in enumerate(interface.classes):
        head += "\n" + _class_block(i, ci, model)
    head += "\nCLASSES = [" + ", ".join(f"(_in_class_{i}, _latency_{i}, _phases_{i})"
                                         for i in range(len(interface.classes))) + "]\n"
    head += '''

def _which(x):
    toks = tokens(x)
    a = properties(toks)
    for label, test in SPACE:
        if not test(a):
            raise OutsideClasses(f"input outside the extracted space: {label} fails")
    for in_class, plain, by_phase in CLASSES:
        if in_class(a):
            return a, toks, plain, by_phase
    raise OutsideClasses("input in none of the extracted input classes")


def phases(x):
    """[(bounding transition, tokens, cycles)] per phase (streams split into runs)."""
    a, toks, _, by_phase = _which(x)
    return by_phase(a, toks)


def latency(x, phases=None):
    """Cycles the accelerator takes for input x (plain interface, or by phase)."""
    a, toks, plain, by_phase = _which(x)
    if PHASES if phases is None else phases:
        return sum(cycles for _, _, cycles in by_phase(a, toks))
    return plain(a)


def seconds(x, frequency_hz=FREQUENCY_HZ, phases=None):
    return latency(x, phases) / frequency_hz


def throughput(x, frequency_hz=FREQUENCY_HZ, phases=None):
    """Stream tokens (or inputs, without a stream) per second."""
    toks = tokens(x)
    n = sum(len(toks.get(p, [])) for p in STREAMS) or 1
    return n / seconds(x, frequency_hz, phases)


if __name__ == "__main__":
    import json
    import sys
    for arg in sys.argv[1:]:
        try:
            value = json.loads(arg)
        except ValueError:
            value = arg
        print(json.dumps({"input": arg, "cycles": latency(value)}))
'''
    return head


def load_module(source: str, name: str = "lpn_interface"):
    """Run a generated module's source and return it as a module object."""
    import types
    module = types.ModuleType(name)
    exec(compile(source, f"<{name}>", "exec"), module.__dict__)
    return module


__all__ = ["module_source", "load_module"]
