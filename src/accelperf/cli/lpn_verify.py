"""`accelperf lpn verify`: proved latency bounds, properties, an interface's accuracy and
buffer sizes over an input space (its exit status says proved, refuted or undecided)."""

from __future__ import annotations

from pathlib import Path

import click

from ..errors import ModelError
from ..report import dump_json
from .common import StrictCommand, console, param_options, read_params
from .stopping import DEFAULT_BUDGET, duration, run_stopping


def _sizes(text: str) -> range:
    import re
    m = re.fullmatch(r"\s*(\d+)\s*\.\.\s*(\d+)\s*", text or "")
    if not m or not 1 <= int(m.group(1)) <= int(m.group(2)):
        raise ModelError(f"--range = {text!r} is invalid: lo..hi with 1 <= lo <= hi, "
                         f"e.g. 1..32")
    return range(int(m.group(1)), int(m.group(2)) + 1)


def _interface(path: Path, model, space):
    """The ``latency(x)`` of a performance-interface module for the accuracy proof. A
    module written by `accelperf lpn interface --out` is parsed, not run: its types'
    per-class formulas become one Z3 term over the space's tokens
    (formula.generated_interface). Any other module is run with max/min/abs that also
    take Z3 terms."""
    import importlib.util
    if not path.is_file() or path.suffix != ".py":
        raise ModelError(f"--interface = '{path}' is invalid: an existing .py file with a "
                         f"latency(x) function")
    source = path.read_text()
    from ..lpn.analysis.formula import generated_interface, is_generated_interface
    if is_generated_interface(source):
        return generated_interface(source, space.variables(model), f"--interface = '{path}'")
    spec = importlib.util.spec_from_file_location(f"_interface_{path.stem}", path)
    module = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(module)
    except Exception as exc:
        raise ModelError(f"--interface = '{path}' is invalid: it fails on import "
                         f"({type(exc).__name__}: {exc})") from None
    if not callable(getattr(module, "latency", None)):
        raise ModelError(f"--interface = '{path}' is invalid: it defines no latency(x)")
    import z3

    def pick(better, builtin):
        def choose(*xs):
            xs = list(xs[0]) if len(xs) == 1 else list(xs)
            if not any(isinstance(x, z3.ExprRef) for x in xs):
                return builtin(xs)
            best = xs[0]
            for x in xs[1:]:
                best = z3.If(better(x, best), x, best)
            return best
        return choose
    for name, f in (("max", pick(lambda a, b: a > b, max)),
                    ("min", pick(lambda a, b: a < b, min)),
                    ("abs", lambda a: z3.If(a >= 0, a, -a) if isinstance(a, z3.ExprRef)
                     else abs(a))):
        module.__dict__.setdefault(name, f)
    return module.latency


@click.command("verify", cls=StrictCommand)
@click.argument("model_spec", metavar="MODEL")
@click.option("--space", "space_path", type=click.Path(dir_okay=False, path_type=Path),
              required=True, help="The input space (TOML; see examples/spaces/).")
@click.option("--bound", type=click.Choice(["max", "min"]),
              help="Prove the worst (max) or best (min) case latency, with its witness.")
@click.option("--prove", "prop", metavar="EXPR",
              help="Prove a property, e.g. 'latency <= 2300' or "
                   "'latency <= 30 * sum(blocks.symbols) + 2000'.")
@click.option("--interface", "iface", type=click.Path(path_type=Path),
              help="A performance-interface module: latency(x), or one written by "
                   "`lpn interface --plain --out` (one input type or several; a phase-aware "
                   "one is a loop, not a formula); with --within.")
@click.option("--within", type=float, help="Prove |E - latency| < WITHIN * latency.")
@click.option("--size", "size_place", metavar="PLACE",
              help="Buffer sizing: the place whose size (capacity or initial tokens) to "
                   "choose; with --range and --budget.")
@click.option("--range", "size_range", metavar="LO..HI", help="Sizes to consider.")
@click.option("--budget", metavar="EXPR", help="Budget for --size: a latency property, "
              "e.g. 'latency <= 2000', or a stall ratio of the buffer's producers, e.g. "
              "'stall <= 0.05'.")
@click.option("--optimise", is_flag=True, help="With --size and --range: the smallest size "
                                              "with the least worst-case latency.")
@click.option("--timeout", metavar="DURATION", default=DEFAULT_BUDGET, show_default=True,
              help="Time budget: stop with 'unknown' (and what was learned) after e.g. 60s.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
@param_options
def lpn_verify(model_spec, space_path, bound, prop, iface, within, size_place, size_range,
               budget, optimise, timeout, as_json, params_file=None, param_list=()):
    """Prove latency bounds, properties or buffer sizes of MODEL over an input space
    (OSDI'24 §4.4, §5.2.4, §5.3.4), with Z3. Every witness and counterexample is
    re-simulated."""
    from ..lpn.analysis.proofs import sizing
    from ..lpn.analysis.proofs import verify as v
    from ..lpn.analysis.space import load_space
    from ..lpn.loader import load_model
    if size_place is None:
        # read only by the sizing query: without --size they would be dropped unparsed
        for flag, value in (("--range", size_range), ("--budget", budget)):
            if value is not None:
                raise ModelError(f"{flag} = {value!r} is invalid without --size: it "
                                 f"belongs to buffer sizing; add --size PLACE or leave it out")
        if optimise:
            raise ModelError("--optimise is invalid without --size: it belongs to buffer "
                             "sizing; add --size PLACE --range LO..HI or leave it out")
    queries = [q for q in (bound, prop, iface or within, size_place) if q]
    if len(queries) != 1:
        raise ModelError("give exactly one query: --bound max|min, --prove EXPR, "
                         "--interface FILE --within X, or --size PLACE --range LO..HI "
                         "--budget EXPR")
    seconds = duration(timeout)
    model = load_model(model_spec, read_params(params_file, param_list, model_spec))
    space = load_space(model, space_path)
    if bound:
        run = lambda tick: v.latency_bound(model, space, bound, timeout=seconds,  # noqa
                                           progress=tick)
    elif prop:
        run = lambda tick: v.prove(model, space, prop, timeout=seconds,  # noqa: E731
                                   progress=tick)
    elif size_place:
        if not size_range or bool(budget) == optimise:
            raise ModelError("--size needs --range LO..HI and either --budget EXPR or "
                             "--optimise")
        sizes = _sizes(size_range)
        sizing.with_size(model, size_place, sizes[0])             # a bad place fails now
        if budget and sizing.stall_budget(budget) is None:        # and a bad budget
            v.check_property(model, space, budget, what="budget")
        if optimise:
            run = lambda tick: sizing.optimal_size(model, space, size_place, sizes,  # noqa
                                                   timeout=seconds, progress=tick)
        else:
            run = lambda tick: sizing.size_buffer(model, space, size_place, sizes,  # noqa
                                                  budget, timeout=seconds, progress=tick)
    else:
        if iface is None or within is None:
            raise ModelError("--interface FILE and --within X go together")
        latency_fn = _interface(iface, model, space)
        run = lambda tick: v.within(latency_fn, space, model, within,  # noqa: E731
                                    timeout=seconds, progress=tick)
    # the proofs stop at the budget themselves, with what they learned; the hard stop
    # after a grace is for a step that does not look at the clock
    result = run_stopping("lpn verify", "verifying", seconds + max(5.0, seconds / 10), run)
    if as_json:
        click.echo(dump_json(result.to_dict()))
    else:
        _print_verdict(model.name, result)
    raise SystemExit(verdict_status(result.to_dict()))


# Exit statuses of `lpn verify` (README, "Errors and exit statuses"): a script tells a proof
# from a refutation by the status alone; 2 stays bad input, as everywhere.
PROVED, REFUTED, UNDECIDED = 0, 1, 3


def verdict_status(d: dict) -> int:
    """The exit status for a verification result's JSON form: PROVED when the bound, the
    property or the size is established; REFUTED when a counterexample shows it is not (a
    property that fails, an input that never finishes, no size in the range meeting the
    budget); UNDECIDED when the solver ran out of time or could not pin a class down."""
    if "holds" in d:                                   # --prove, --interface --within
        return {True: PROVED, False: REFUTED}.get(d["holds"], UNDECIDED)
    if d.get("status") == "does not finish":
        return REFUTED
    if d.get("status") != "proved":
        return UNDECIDED
    key = "bound" if "bound" in d else "size"
    return REFUTED if key == "size" and d[key] is None else \
        UNDECIDED if d[key] is None else PROVED


SIZE_WORDS_BUDGET = {True: "meets the budget", False: "fails", "unknown": "unknown"}
SIZE_WORDS_OPTIMISE = {True: "least worst case", False: "no better", "unknown": "unknown"}
"""How a tried size reads (``Trial.holds``): against a budget, or when optimising."""


def _how(d: dict) -> str:
    # no class is encoded where every input was simulated ("0 class(es)" read as nothing)
    return f"{d['classes']} class(es)" if d["classes"] else "every input simulated"


def _print_verdict(name, result) -> None:
    d = result.to_dict()
    if "bound" in d and d["bound"] is None:
        console.print(f"[bold]{name}[/bold]: {d['which']} latency unknown: {d['note']}")
        return
    if "bound" in d:
        # an undecided bound is only what the classes solved reached: never a plain number
        sign, status = ("", d["status"]) if d["status"] != "unknown" else \
            ("≥ ", "a lower bound: undecided") if d["which"] == "max" else \
            ("≤ ", "an upper bound: undecided")
        console.print(f"[bold]{name}[/bold]: {d['which']} latency {sign}[bold]{d['bound']}"
                      f"[/bold] cycles ({status}, {_how(d)}, {d['seconds']} s)")
        console.print(f"witness: {d['witness'] if d['witness'] is not None else d['witness_tokens']}"
                      f" simulates to {d['simulated']} cycles")
    elif "holds" in d:
        console.print(f"[bold]{name}[/bold]: {d['property']!r} "
                      f"[bold]{ {True: 'holds', False: 'fails'}.get(d['holds'], 'unknown')}"
                      f"[/bold] ({_how(d)}, {d['seconds']} s)")
        if d["counterexample"] is not None or d["counterexample_tokens"] is not None:
            values = ", ".join(f"{k} = {'—' if v is None else v}"
                               for k, v in d["values"].items())
            console.print(f"counterexample: {d['counterexample'] or d['counterexample_tokens']}"
                          f" with {values}")
    else:
        tried = [row["size"] for row in d["tried"]]
        size = d["size"] if d["size"] is not None else \
            f"none of {min(tried)}..{max(tried)}" if tried else "none"
        console.print(f"[bold]{name}[/bold]: smallest {d['place']} for {d['budget']!r}: "
                      f"[bold]{size}[/bold] ({d['status']}, {d['seconds']} s)")
        words = (SIZE_WORDS_OPTIMISE if d["budget"].startswith("optimise")
                 else SIZE_WORDS_BUDGET)
        for row in d["tried"]:
            value = "" if row["value"] is None else \
                f"; {d['measure']} {row['value']:.4g} on {row['witness'] or row['witness_tokens']}"
            word = words[row["holds"]]
            if words is SIZE_WORDS_OPTIMISE and row["holds"] is False and None not in (
                    row["value"], d["value"]) and row["value"] > d["value"]:
                word = "worse"
            console.print(f"  {d['place']} = {row['size']}: {word}{value}"
                          + (f" ({row['note']})" if row["note"] else ""))
    if d.get("note"):
        console.print(d["note"])

