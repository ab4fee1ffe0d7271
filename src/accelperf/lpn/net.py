"""Latency Petri Nets: token types, places, transitions, and the builder that checks them.

A model is an ordinary object made by a function::

    def pipeline():
        net = Net("two-stage")
        job = net.token_type("Job", "size")
        start = net.place("start", job)
        mid = net.place("mid", job, capacity=2)        # backpressure in one call
        done = net.place("done", job)
        net.transition("load", inputs={start: 1}, outputs={mid: 1}, delay=lambda j: j.size)
        net.transition("store", inputs={mid: 1}, outputs={done: 1}, delay=3)
        net.start, net.done = start, done
        net.tokens_from_input = lambda sizes: [{"size": s} for s in sizes]
        return net.build()

``build()`` validates the net, expands capacities into capacity places (OSDI'24 §3.3
step 4), traces every function into an expression tree, and returns an immutable
:class:`Model` that the simulator runs.

One module because the builder, its validation and the immutable types it returns are one
contract: every check names a place or transition as the builder spelled it.
"""

from __future__ import annotations

import inspect
import numbers
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from operator import itemgetter

from ..errors import ModelError
from ..parameters import nearest
from .declared import NOTHING, Declared
from .expr import Expr, TraceError, counted_places, tokens_needed, trace
from .params import Parameter, declare, values_given


class NetError(ModelError):
    """An LPN that cannot be built, with the transition or place at fault named."""


@dataclass(frozen=True)
class TokenType:
    """A kind of token: a name and its integer properties."""

    name: str
    properties: tuple[str, ...] = ()


@dataclass(frozen=True)
class Place:
    name: str
    token_type: TokenType
    capacity: int | None = None
    resource: bool = False         # leftover tokens here are state, not stuck work
    capacity_of: str | None = None  # set on the capacity place made for a bounded place

    def __repr__(self) -> str:
        cap = "" if self.capacity is None else f", capacity={self.capacity}"
        return f"Place({self.name!r}: {self.token_type.name}{cap})"


@dataclass(frozen=True)
class Out:
    """What a transition puts in one output place.

    ``count`` tokens (an int or a function of the input tokens); their properties come
    from ``props`` (a function returning a dict, or a dict of functions/ints), or are
    copied one by one from the tokens consumed from input place ``copy``.
    """

    count: object = 1
    props: object = None
    copy: str | None = None


@dataclass
class _TransitionSpec:
    name: str
    inputs: list            # [(place name, weight spec)]
    outputs: list           # [(place name, Out)]
    routes: list            # [(place name, condition spec, Out)]
    delay: object
    guard: object
    concurrency: int | None
    initiation_interval: object
    reads: list = field(default_factory=list)       # [(place name, n spec)]
    inhibits: list = field(default_factory=list)    # [(place name, n spec)]


@dataclass(frozen=True)
class OutputArc:
    place: int
    count: Expr
    props: tuple[Expr, ...] | None      # one per property of the place's token type
    copy_from: int | None               # input arc index whose tokens are copied
    condition: Expr | None = None       # for routes


@dataclass(frozen=True)
class Transition:
    """A built transition: its traced expressions, ready for the engines.

    Its functions see ``arg_places``: the user's input places, then its read places; a
    ``prop`` node's first argument indexes that tuple."""

    id: int
    name: str
    inputs: tuple[int, ...]            # place ids; user inputs first, capacity arcs after
    user_inputs: int                    # how many of ``inputs`` the user declared
    weights: tuple[Expr, ...]          # tokens consumed from each input (>= 0)
    guard: Expr | None
    delay: Expr
    outputs: tuple[OutputArc, ...]
    routes: tuple[OutputArc, ...]
    concurrency: int | None
    initiation_interval: Expr           # cycles from one start to the next (0: no limit)
    reads: tuple[tuple[int, Expr], ...] = ()      # (place, n): needs n free tokens there
    inhibits: tuple[tuple[int, Expr], ...] = ()   # (place, n): needs fewer than n tokens
    arg_places: tuple[int, ...] = ()   # the places functions read, by argument index
    needs: tuple[tuple[int, int], ...] = ()       # (arg, k): k free tokens must be present
    counted: tuple[int, ...] = ()      # places whose token count a function reads
    # An engine's generated code for this transition, made on first use.
    compiled: dict = field(repr=False, compare=False, default_factory=dict)

    def expressions(self) -> list[Expr]:
        """Every expression of the transition (weights, reads, inhibitors, guard, delay,
        initiation interval, output counts, properties and route conditions)."""
        exprs = list(self.weights) + [n for _, n in self.reads + self.inhibits]
        exprs += [self.delay, self.initiation_interval]
        if self.guard is not None:
            exprs.append(self.guard)
        for arc in self.outputs + self.routes:
            exprs.append(arc.count)
            exprs.extend(arc.props or ())
            if arc.condition is not None:
                exprs.append(arc.condition)
        return exprs


@dataclass(frozen=True)
class Model:
    """A validated, immutable LPN ready to simulate."""

    name: str
    places: tuple[Place, ...]
    transitions: tuple[Transition, ...]
    start: int | None
    done: int
    initial: dict                      # place id -> list of property tuples
    tokens_from_input: object = field(repr=False, compare=False, default=None)
    default_input: object = field(repr=False, compare=False, default=None)
    description: str = ""
    ticks_per_cycle: int = 1           # delays count ticks; results are reported in cycles
    input_reader: object = field(repr=False, compare=False, default=None)  # file -> input
    input_format: str = ""             # what Ψ takes, in words
    declared: Declared = field(repr=False, compare=False, default=NOTHING)  # for analyses
    parameters: tuple[Parameter, ...] = ()   # named delays (net.parameter), as built

    def __repr__(self) -> str:
        # the generated repr printed every place and transition, 2.6k characters for Fig. 2
        ends = (f"start {self.places[self.start].name!r}, " if self.start is not None
                else "") + f"done {self.places[self.done].name!r}"
        named = f", parameters {', '.join(p.name for p in self.parameters)}" \
            if self.parameters else ""
        return (f"Model({self.name!r}: {len(self.places)} places, {len(self.transitions)} "
                f"transitions, {ends}{named})")

    def parameter(self, name: str) -> Parameter:
        """The declared parameter ``name``."""
        for p in self.parameters:
            if p.name == name:
                return p
        raise NetError(f"parameter = {name!r} is invalid: model {self.name!r} declares "
                       f"{', '.join(p.name for p in self.parameters) or 'no parameters'}")

    def place_id(self, name: str) -> int:
        for i, p in enumerate(self.places):
            if p.name == name:
                return i
        names = [p.name for p in self.places]
        raise NetError(f"place = {name!r} is invalid: the net has {', '.join(names)}"
                       f"{nearest(name, names)}", field="place")

    def consumers(self) -> list[list[int]]:
        """For every place, the ids of the transitions that take tokens from it (sorted)."""
        out = [[] for _ in self.places]
        for t in self.transitions:
            for p in t.inputs:
                if t.id not in out[p]:
                    out[p].append(t.id)
        return [sorted(c) for c in out]

    def watchers(self) -> list[list[int]]:
        """For every place, the transitions whose enabling can change when it changes:
        those that take from it, read it, are inhibited by it or count its tokens."""
        out = [set() for _ in self.places]
        for t in self.transitions:
            for p in t.inputs + tuple(p for p, _ in t.reads + t.inhibits) + t.counted:
                out[p].add(t.id)
        return [sorted(w) for w in out]

    def sinks(self) -> set[int]:
        """Places no transition takes tokens from: what lands there stays, by design."""
        return {i for i, c in enumerate(self.consumers()) if not c}

    def marking(self, user_input=None) -> "Marking":
        """The initial marking for ``user_input`` through Ψ (tokens_from_input), checked
        once; pass it to ``simulate`` to run the same input many times."""
        tokens = {p: list(ts) for p, ts in self.initial.items()}
        if user_input is None:
            user_input = self.default_input
        if user_input is not None:
            if self.tokens_from_input is None:
                raise NetError(f"model {self.name!r} has no tokens_from_input (Ψ) to turn an "
                               f"input into tokens")
            try:
                produced = self.tokens_from_input(user_input)
            except ModelError:
                raise
            except Exception as exc:     # a user model's Ψ that did not check its input
                raise NetError(f"input = {_short(user_input)} is invalid for model "
                               f"{self.name!r}: its Ψ (tokens_from_input) failed with "
                               f"{type(exc).__name__}: {exc}", field="input") from None
            if not isinstance(produced, dict):
                if self.start is None:
                    raise NetError(f"model {self.name!r}: Ψ returned a list but the net has "
                                   f"no start place")
                produced = {self.places[self.start].name: produced}
            tokens = self.with_tokens(produced).tokens
            made = sum(map(len, tokens.values())) - sum(map(len, self.initial.values()))
            if not made:
                raise NetError(f"input = {_short(user_input)} is invalid for model "
                               f"{self.name!r}: it gives no tokens, so nothing would run",
                               field="input")
        return Marking(self.name, {p: ts if isinstance(ts, TokenArray) else tuple(ts)
                                   for p, ts in tokens.items()})

    def with_tokens(self, given: dict) -> "Marking":
        """The one rule every initial marking is built by: the net's own initial tokens,
        then ``given`` ({place name: tokens}, in that order; a token is a dict of exactly
        its type's properties or a tuple of them, all integers, or a place's tokens a
        NumPy array), checked in bulk. :meth:`marking` passes Ψ's tokens; the analyses
        pass the tokens of an input space's sample."""
        tokens = {p: list(ts) for p, ts in self.initial.items()}
        for place_name, toks in given.items():
            pid = self.place_id(place_name)
            converted = _token_tuples(self.places[pid].token_type, toks, place_name)
            if isinstance(converted, TokenArray) and not tokens.get(pid):
                tokens[pid] = converted           # kept whole for the compiled engine
            else:
                tokens.setdefault(pid, [])
                if isinstance(tokens[pid], TokenArray):
                    tokens[pid] = list(tokens[pid])
                tokens[pid].extend(converted)
        return Marking(self.name, {p: ts if isinstance(ts, TokenArray) else tuple(ts)
                                   for p, ts in tokens.items()})

    def initial_tokens(self, user_input=None) -> dict:
        """Initial marking for ``user_input`` as {place id: [property tuples]}."""
        return {p: list(ts) for p, ts in self.marking(user_input).tokens.items()}

    @staticmethod
    def _token_tuple(ttype: TokenType, tok, place: str) -> tuple:
        return _token_tuples(ttype, [tok], place)[0]


def _short(value) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


class TokenArray(Sequence):
    """One place's tokens as an (n, properties) int64 NumPy array, as Ψ may give them:
    the compiled engine copies the array as it is; everything else (the Python engine,
    reports, analyses) sees the same tokens as property tuples of ints."""

    __slots__ = ("array",)

    def __init__(self, array):
        self.array = array

    def __len__(self) -> int:
        return self.array.shape[0]

    def __getitem__(self, i):
        if isinstance(i, slice):
            return [tuple(row) for row in self.array[i].tolist()]
        return tuple(self.array[i].tolist())

    def __iter__(self):
        return map(tuple, self.array.tolist())

    def __eq__(self, other) -> bool:
        return list(self) == list(other) if isinstance(other, Sequence) else NotImplemented

    def __repr__(self) -> str:
        return f"TokenArray({len(self)} tokens x {self.array.shape[1]} properties)"


def _token_array(ttype: TokenType, tokens, place: str) -> TokenArray:
    """Ψ's tokens given as a NumPy array of whole numbers: (n,) for a one-property type,
    else (n, properties)."""
    import numpy as np
    n = len(ttype.properties)
    array = tokens.reshape(-1, 1) if tokens.ndim == 1 and n == 1 else tokens
    if array.ndim != 2 or array.shape[1] != n or array.dtype.kind not in "iub" or \
            (array.dtype.kind == "u" and array.dtype.itemsize == 8 and array.size and
             int(array.max()) > 2**63 - 1):
        raise NetError(f"Ψ gave place {place!r} an array of shape {tokens.shape} and type "
                       f"{tokens.dtype}: tokens of {ttype.name} as an array are whole "
                       f"numbers shaped (n, {n})")
    return TokenArray(np.ascontiguousarray(array, dtype=np.int64))


@dataclass(frozen=True)
class Marking:
    """A checked initial marking of one model: {place id: tuple of property tuples, or a
    :class:`TokenArray` when Ψ gave an array}."""

    model: str
    tokens: dict = field(repr=False)

    def __repr__(self) -> str:
        return f"Marking({self.model}: {sum(map(len, self.tokens.values()))} tokens)"


def _token_tuples(ttype: TokenType, tokens, place: str) -> list[tuple] | TokenArray:
    """Ψ's tokens for one place as property tuples, checked in bulk.

    The common case (every token a dict with exactly the type's properties, or a tuple of
    the right length, of plain ints) is checked with a few passes at C speed; anything else
    falls back to a token-by-token check that names the first bad token."""
    if type(tokens).__module__ == "numpy" and hasattr(tokens, "ndim"):
        return _token_array(ttype, tokens, place)
    props = ttype.properties
    n = len(props)
    try:
        tokens = list(tokens)
    except TypeError:
        raise NetError(f"Ψ gave place {place!r} {tokens!r}: a list of tokens") from None
    if not tokens:
        return []
    first = tokens[0]
    if isinstance(first, dict) and n and all(type(t) is dict and len(t) == n for t in tokens):
        try:
            values = list(map(itemgetter(*props), tokens))
        except KeyError:
            values = None
        if values is not None:
            if n == 1:
                values = [(v,) for v in values]
            if all(type(v) is int for tup in values for v in tup):
                return values
    elif isinstance(first, tuple) and all(type(t) is tuple and len(t) == n for t in tokens):
        if all(type(v) is int for tup in tokens for v in tup):
            return tokens
    return [_one_token(ttype, tok, place) for tok in tokens]


def _one_token(ttype: TokenType, tok, place: str) -> tuple:
    props = ttype.properties
    if isinstance(tok, dict):
        missing = [p for p in props if p not in tok]
        extra = [k for k in tok if k not in props]
        if missing or extra:
            raise NetError(f"Ψ gave place {place!r} a token {tok!r}: {ttype.name} tokens "
                           f"have exactly the properties {list(props)}")
        values = tuple(tok[p] for p in props)
    else:
        values = tuple(tok) if isinstance(tok, (tuple, list)) else (tok,)
        if len(values) != len(props):
            raise NetError(f"Ψ gave place {place!r} the token {tok!r}: {ttype.name} "
                           f"tokens have {len(props)} properties")
    out = []
    for v in values:
        if isinstance(v, bool) or not isinstance(v, numbers.Integral):
            raise NetError(f"Ψ gave place {place!r} a token with value {v!r}: token "
                           f"properties are integers")
        out.append(int(v))
    return tuple(out)


class Net:
    """Builder for a Latency Petri Net (see the module docstring)."""

    def __init__(self, name: str, description: str = "", ticks_per_cycle: int = 1,
                 input_format: str = "", params=None):
        """``ticks_per_cycle`` > 1 lets delays count fractions of a cycle (the simulator
        reports cycles); ``input_reader``, set later, reads the model's own input file
        format for ``--input FILE``; ``params`` ({name: value} or a ``Parameters``): the
        values of the named delays to build with (:mod:`accelperf.lpn.params`)."""
        if isinstance(ticks_per_cycle, bool) or not isinstance(ticks_per_cycle, int) or \
                ticks_per_cycle < 1:
            raise NetError(f"ticks_per_cycle = {ticks_per_cycle!r} is invalid: an integer >= 1")
        self.name = name
        self.description = description
        self.ticks_per_cycle = ticks_per_cycle
        self.input_format = input_format      # what --input takes, in words (lpn list)
        self.input_reader = None
        self.declared = NOTHING               # what the analyses need (accelperf.lpn.declared)
        self._types: dict[str, TokenType] = {}
        self._places: dict[str, Place] = {}
        self._initial: dict[str, list] = {}
        self._transitions: list[_TransitionSpec] = []
        self.start: Place | str | list | None = None    # where Ψ puts tokens (first: default)
        self.done: Place | str | None = None
        self.tokens_from_input = None
        self.default_input = None
        self._parameters: dict[str, Parameter] = {}
        self._given = values_given(params)

    # ------------------------------------------------------------------ declarations
    def parameter(self, name: str, default: int, *, minimum: int | None = 0,
                  maximum: int | None = None, doc: str = "") -> Expr:
        """A named integer constant (a delay the paper names) for use in any function or as
        a delay: its default, or the value this net was created with (``Net(...,
        params=...)``, ``build(..., params=...)``, ``--param`` or ``--params``; see
        :mod:`accelperf.lpn.params`). ``minimum`` (0 by
        default) keeps delays built from it non-negative."""
        if name in self._parameters:
            raise NetError(f"parameter {name!r} is declared twice in net {self.name!r}")
        spec = declare(name, default, minimum, maximum, doc, self._given)
        self._parameters[name] = spec
        return Expr("const", (spec.value, name), "int")

    def token_type(self, name: str, *properties: str) -> TokenType:
        if name in self._types:
            raise NetError(f"token type {name!r} is declared twice in net {self.name!r}")
        for p in properties:
            if not p.isidentifier() or p.startswith("_"):
                raise NetError(f"token type {name!r}: property {p!r} must be a Python "
                               f"identifier not starting with '_'")
        if len(set(properties)) != len(properties):
            raise NetError(f"token type {name!r} lists a property twice")
        t = TokenType(name, tuple(properties))
        self._types[name] = t
        return t

    def place(self, name: str, token_type: TokenType | None = None, capacity: int | None = None,
              resource: bool = False, initial=None) -> Place:
        """A FIFO place. ``capacity`` bounds it with a capacity place; ``initial`` tokens
        (dicts or tuples) sit in it before any input arrives."""
        if name in self._places:
            raise NetError(f"place {name!r} is declared twice in net {self.name!r}")
        if token_type is None:
            token_type = self._types.get("Signal") or self.token_type("Signal")
        if not isinstance(token_type, TokenType):
            raise NetError(f"place {name!r}: token_type must come from net.token_type(...)")
        if capacity is not None and (isinstance(capacity, bool) or not isinstance(capacity, int)
                                     or capacity < 1):
            raise NetError(f"place {name!r}: capacity = {capacity!r} is invalid: must be an "
                           f"integer >= 1 (or None for unbounded)")
        p = Place(name, token_type, capacity, resource)
        self._places[name] = p
        if initial:
            self._initial[name] = list(initial)
        return p

    def transition(self, name: str, inputs: dict, outputs: dict | None = None, delay=0,
                   guard=None, route=None, concurrency: int | None = 1,
                   initiation_interval=None, read: dict | None = None,
                   inhibit: dict | None = None) -> str:
        """A transition.

        inputs : {place: weight}
            Tokens taken per firing: an int >= 1, or a function of the tokens that may
            give 0 (take nothing from that place this time).
        outputs : {place: count | Out} or [(place, count | Out), ...]
            Tokens produced on every commit (the list form allows two arcs into one place).
        delay : int or function
            Cycles between start and commit (>= 0).
        guard : function, optional
            Condition on the tokens that must hold to start.
        route : [(place, condition) or (place, condition, count | Out)], optional
            Alternative outputs: the first whose condition holds gets the tokens.
        concurrency : int or None
            Firings in flight at once: 1 (one item at a time, default), k, or None
            (unbounded).
        initiation_interval : int or function, optional
            Minimum cycles from one start to the next (a pipelined unit: concurrency None
            with initiation_interval 1 accepts one item per cycle); a function computes it
            from the tokens of the firing that starts.
        read : {place: n}, optional
            Read arcs: start only while ``place`` holds at least ``n`` free tokens (int or
            function); they are neither locked nor consumed. A read on one of the
            transition's input places is a threshold: needs n, takes the weight.
        inhibit : {place: n}, optional
            Inhibitor arcs: start only while ``place`` holds fewer than ``n`` tokens (free
            and locked; n an int >= 1 or a function).

        Functions take the input places' tokens then the read places', one parameter each,
        or only some of them, each parameter named after its place (see ``accelperf.lpn.expr``).
        """
        if any(t.name == name for t in self._transitions):
            raise NetError(f"transition {name!r} is declared twice in net {self.name!r}")
        if not isinstance(inputs, dict) or not inputs:
            raise NetError(f"transition {name!r} has no input place: it would fire forever; "
                           f"give inputs={{place: weight}}")
        if concurrency is not None and (isinstance(concurrency, bool) or
                                        not isinstance(concurrency, int) or concurrency < 1):
            raise NetError(f"transition {name!r}: concurrency = {concurrency!r} is invalid: "
                           f"an integer >= 1 or None for unbounded")
        if initiation_interval is not None and not callable(initiation_interval) and \
                not isinstance(initiation_interval, Expr) and (
                isinstance(initiation_interval, bool) or
                not isinstance(initiation_interval, int) or initiation_interval < 1):
            raise NetError(f"transition {name!r}: initiation_interval = "
                           f"{initiation_interval!r} is invalid: an integer >= 1 or a function")
        arcs = {}
        for label, given in (("read", read), ("inhibit", inhibit)):
            if given is not None and not isinstance(given, dict):
                raise NetError(f"transition {name!r}: {label} = {given!r} is invalid: "
                               f"{{place: n}}")
            arcs[label] = [(self._name(p), n) for p, n in (given or {}).items()]
        norm_out = []
        pairs = outputs.items() if isinstance(outputs, dict) else (outputs or [])
        for place, spec in pairs:
            norm_out.append((self._name(place), spec if isinstance(spec, Out) else Out(spec)))
        norm_routes = []
        for entry in route or []:
            if not isinstance(entry, (tuple, list)) or len(entry) not in (2, 3):
                raise NetError(f"transition {name!r}: each route is (place, condition) or "
                               f"(place, condition, count|Out)")
            spec = entry[2] if len(entry) == 3 else 1
            norm_routes.append((self._name(entry[0]), entry[1],
                                spec if isinstance(spec, Out) else Out(spec)))
        self._transitions.append(_TransitionSpec(
            name, [(self._name(p), w) for p, w in inputs.items()], norm_out, norm_routes,
            delay, guard, concurrency, initiation_interval, arcs["read"], arcs["inhibit"]))
        return name

    @staticmethod
    def _name(place) -> str:
        return place.name if isinstance(place, Place) else str(place)

    # ------------------------------------------------------------------ build
    def build(self) -> Model:
        places = dict(self._places)
        specs = [self._copy_spec(s) for s in self._transitions]
        for s in specs:                       # arcs to nowhere
            for arc in [p for p, _ in s.inputs + s.outputs + s.reads + s.inhibits] + \
                    [p for p, _, _ in s.routes]:
                if arc not in places:
                    raise NetError(f"transition {s.name!r} refers to place {arc!r}, which the "
                                   f"net does not declare (places: {', '.join(places) or 'none'})")
        if self.done is None:
            raise NetError(f"net {self.name!r} has no done place: set net.done")
        done_name = self._name(self.done)
        starts = [] if self.start is None else [self._name(p) for p in (
            self.start if isinstance(self.start, (list, tuple)) else [self.start])]
        start_name = starts[0] if starts else None
        for label, n in [("done", done_name)] + [("start", n) for n in starts]:
            if n not in places:
                raise NetError(f"net {self.name!r}: the {label} place {n!r} is not declared")
        self._expand_capacities(places, specs)
        order = list(places)
        index = {n: i for i, n in enumerate(order)}
        transitions = tuple(self._build_transition(i, s, places, index)
                            for i, s in enumerate(specs))
        for t in transitions:
            for e in t.expressions():
                for counted in counted_places(e):
                    if counted not in places:
                        raise NetError(f"transition {t.name!r} counts the tokens of place "
                                       f"{counted!r}, which the net does not declare")
        self._check_types_and_weights(transitions, places, order)
        initial = {}
        for name, tokens in self._initial.items():
            initial[index[name]] = [Model._token_tuple(places[name].token_type, t, name)
                                    for t in tokens]
        for name, p in places.items():
            if p.capacity_of is not None:
                initial[index[name]] = [()] * p.capacity
        fed = {a.place for t in transitions for a in t.outputs + t.routes}
        for name, p in places.items():
            pid = index[name]
            if pid not in fed and pid not in initial and name not in starts:
                # an input arc takes from the place, a read arc only reads it
                takers = [t.name for t in transitions if pid in t.inputs]
                readers = [t.name for t in transitions if pid in (q for q, _ in t.reads)]
                if takers or readers:
                    users = " and ".join(
                        [f"taken from by {', '.join(takers)}"] * bool(takers) +
                        [f"read by {', '.join(readers)}"] * bool(readers))
                    raise NetError(f"place {name!r} is {users} but nothing ever puts a "
                                   f"token in it (no producer, no initial tokens, not the "
                                   f"start place)")
        model = Model(self.name, tuple(places.values()), transitions,
                      None if start_name is None else index[start_name], index[done_name],
                      initial, self.tokens_from_input, self.default_input, self.description,
                      self.ticks_per_cycle, self.input_reader, self.input_format, self.declared,
                      tuple(self._parameters.values()))
        from .check import warn_findings   # the cheap checks of `lpn check`
        warn_findings(model)
        return model

    @staticmethod
    def _copy_spec(s: _TransitionSpec) -> _TransitionSpec:
        return _TransitionSpec(s.name, list(s.inputs), list(s.outputs), list(s.routes), s.delay,
                               s.guard, s.concurrency, s.initiation_interval, list(s.reads),
                               list(s.inhibits))

    def _expand_capacities(self, places: dict, specs: list) -> None:
        """OSDI'24 §3.3 step 4: a bounded place P gets a capacity place P.cap holding C
        tokens; producers into P take tokens from P.cap, consumers of P return them."""
        captype = self._types.get("Capacity") or TokenType("Capacity")
        for name, p in list(places.items()):
            if p.capacity is None:
                continue
            cap_name = f"{name}.cap"
            places[cap_name] = Place(cap_name, captype, p.capacity, True, capacity_of=name)
            for s in specs:
                user_inputs = len(s.inputs)
                for out_place, out in s.outputs:
                    if out_place == name:
                        s.inputs.append((cap_name, ("same-as-output", out.count, user_inputs)))
                for in_place, weight in s.inputs[:user_inputs]:
                    if in_place == name:
                        s.outputs.append((cap_name, Out(("same-as-input", weight, user_inputs))))
                if any(r[0] == name for r in s.routes):
                    raise NetError(f"transition {s.name!r} routes into bounded place {name!r}: "
                                   f"give the route targets no capacity, or bound them with an "
                                   f"explicit capacity place")

    def _build_transition(self, tid: int, s: _TransitionSpec, places: dict, index: dict):
        user = [(p, w) for p, w in s.inputs if not (isinstance(w, tuple) and len(w) == 3
                                                     and w[0] == "same-as-output")]
        arg_types = [(p, places[p].token_type) for p, _ in user + s.reads]
        what = lambda part: f"{part} of transition {s.name!r}"

        def traced(spec, part, want="int", origin=None):
            if isinstance(spec, tuple) and len(spec) == 3 and spec[0] in ("same-as-output",
                                                                          "same-as-input"):
                return traced(spec[1], part, want)
            return trace(spec, arg_types, what(part), want, origin)

        def whole(spec, part, least):
            e = traced(spec, part)
            if e.op == "const" and e.args[0] < least:
                raise NetError(f"{what(part)} is {e.args[0]}: a constant must be >= {least}")
            return e

        weights = [whole(w, f"weight on input {p!r}", 1) for p, w in s.inputs]
        reads = tuple((index[p], whole(n, f"read arc on {p!r}", 1)) for p, n in s.reads)
        inhibits = tuple((index[p], whole(n, f"inhibitor arc on {p!r}", 1))
                         for p, n in s.inhibits)
        guard = None if s.guard is None else traced(s.guard, "guard", "bool")
        delay = traced(s.delay, "delay")
        if delay.op == "const" and delay.args[0] < 0:
            raise NetError(f"{what('delay')} = {delay.args[0]} is invalid: delays are "
                           f"integer cycles >= 0")
        interval = traced(s.initiation_interval or 0, "initiation interval")
        outputs = tuple(self._output_arc(s, place, out, places, index, user, traced, None)
                        for place, out in s.outputs)
        routes = tuple(self._output_arc(s, place, out, places, index, user, traced,
                                        traced(cond, f"route condition to {place!r}", "bool"))
                       for place, cond, out in s.routes)
        t = Transition(tid, s.name, tuple(index[p] for p, _ in s.inputs), len(user),
                       tuple(weights), guard, delay, outputs, routes, s.concurrency, interval,
                       reads, inhibits, tuple(index[p] for p, _ in user + s.reads))
        exprs = t.expressions()
        counted = set().union(*(counted_places(e) for e in exprs))
        return replace(t, needs=tuple(sorted(tokens_needed(exprs).items())),
                       counted=tuple(sorted(index[c] for c in counted if c in index)))

    def _output_arc(self, s, place, out: Out, places, index, user, traced, condition):
        ttype = places[place].token_type
        count = traced(out.count, f"count into {place!r}")
        if count.op == "const" and count.args[0] < 0:
            raise NetError(f"transition {s.name!r}: count {count.args[0]} into {place!r} is "
                           f"negative")
        copy_from, props = None, None
        if out.copy is not None:
            names = [p for p, _ in user]
            if out.copy not in names:
                raise NetError(f"transition {s.name!r}: copy={out.copy!r} is not one of its "
                               f"input places ({', '.join(names)})")
            copy_from = names.index(out.copy)
            src = places[out.copy].token_type
            if src != ttype:
                raise NetError(f"place {place!r} holds {ttype.name} tokens but transition "
                               f"{s.name!r} feeds it {src.name} tokens copied from {out.copy!r}")
        elif out.props is not None:
            props = self._props(s, place, ttype, out.props, traced)
        elif ttype.properties:
            same = [i for i, (p, _) in enumerate(user) if places[p].token_type == ttype]
            if len(same) != 1:
                raise NetError(f"transition {s.name!r} puts {ttype.name} tokens (properties "
                               f"{list(ttype.properties)}) into {place!r} but does not say "
                               f"what they hold: give Out(count, props=...) or "
                               f"Out(count, copy=INPUT)")
            copy_from = same[0]
        return OutputArc(index[place], count, props, copy_from, condition)

    @staticmethod
    def _props(s, place, ttype, spec, traced):
        if callable(spec):
            # A function returning a dict: trace each entry through a small wrapper.
            probe_names = ttype.properties

            def entry(key):
                def f(*tokens):
                    result = spec(*tokens)
                    if not isinstance(result, dict):
                        raise TraceError(f"the producer must return a dict of properties, "
                                         f"not {type(result).__name__}")
                    _check_keys(result)
                    return result[key]
                f.__signature__ = inspect.signature(spec)
                return f

            def _check_keys(result):
                if set(result) != set(probe_names):
                    raise TraceError(f"tokens of {place!r} are {ttype.name} tokens with "
                                     f"properties {list(probe_names)}, but the producer gives "
                                     f"{sorted(result)}")
            return tuple(traced(entry(k), f"producer for {place!r}", origin=spec)
                         for k in probe_names)
        if isinstance(spec, dict):
            if set(spec) != set(ttype.properties):
                raise NetError(f"transition {s.name!r}: tokens of {place!r} are {ttype.name} "
                               f"tokens with properties {list(ttype.properties)}, but the "
                               f"producer gives {sorted(spec)}")
            return tuple(traced(spec[k], f"producer property {k!r} for {place!r}")
                         for k in ttype.properties)
        raise NetError(f"transition {s.name!r}: props for {place!r} must be a dict or a "
                       f"function returning one")

    @staticmethod
    def _check_types_and_weights(transitions, places: dict, order: list) -> None:
        plist = [places[n] for n in order]
        for t in transitions:
            for pid, w in zip(t.inputs, t.weights):
                cap = plist[pid].capacity if plist[pid].capacity_of is None else None
                if w.op == "const" and cap is not None and w.args[0] > cap:
                    raise NetError(f"transition {t.name!r} needs {w.args[0]} tokens from "
                                   f"{plist[pid].name!r} at once, but its capacity is {cap}: "
                                   f"it can never fire")
            for arc in t.outputs:
                cap = plist[arc.place].capacity if plist[arc.place].capacity_of is None else None
                if arc.count.op == "const" and cap is not None and arc.count.args[0] > cap:
                    raise NetError(f"transition {t.name!r} puts {arc.count.args[0]} tokens "
                                   f"into {plist[arc.place].name!r} at once, but its capacity "
                                   f"is {cap}: it can never fire")
