"""Protoacc's serializer (Karandikar et al., MICRO'21) as an LPN, after OSDI'24 §5.

Source of the facts (places, transitions, token properties, delays): the OSDI'24 authors'
model ``lpn_family/accel_lib/protoacc/no_guard_threshold`` in dslab-epfl/lpn, re-modelled
here in accelperf's API. The serializer works in three parts:

* a **message front end** walks the message's descriptor: every control token (a run of
  up to 32 consecutive non-submessage fields, or a submessage) costs a has-bits load
  (``load_has_bits`` → ``advance``, one memory access ``mem_latency``) and a descriptor
  fetch; runs of fields are handed to the dispatcher (``fetch_field_descriptors``, 2
  cycles), a submessage's ADT is loaded (``load_submessage_adt``, mem_latency + 2);
* a **round-robin dispatcher** gives fields in turn to ``pipelines`` field-serializer
  pipelines (6 in the paper, 1 in its Fig. 5 alternative). A pipeline is a small state
  machine: a scalar costs 2 + mem_latency to load, a string/bytes field 4 + 2·mem_latency
  for its pointer and header then mem_latency for the data, a repeated field 3 +
  mem_latency to fetch its array, each element then serialised like a single one; every
  element is followed by its key (1 cycle), an end-of-message by 2 cycles;
* a **write-back** stage collects the pipelines' output in the same round-robin order
  (a pipeline keeps the writer until its end-of-field marker) and writes it to memory:
  ``bytes // 16 + 1`` cycles per chunk, 4 for the top-level end marker.

Named parameters (``accelperf lpn show protoacc --parameters``, :class:`SerializerDelays`):
``mem_latency`` and the fixed costs above (``descriptor_fetch_cycles`` 2,
``submessage_adt_cycles`` 2, ``scalar_load_cycles`` 2, ``string_header_cycles`` 4,
``repeated_array_cycles`` 3, ``key_cycles`` 1, ``end_of_message_cycles`` 2,
``write_bytes_per_cycle`` 16, ``write_top_end_cycles`` 4), defaults the authors' values.

Ψ (:func:`message_tokens`) walks the messages depth-first exactly as the authors' parser
does: each message gets an end-of-message pseudo field (1 byte) after its fields. (The
authors' parser stores that pseudo field under the key ``"f0"``, so a real field of that
name is silently replaced there; the reader here keeps every field.)

Table 2 (``/work/shared/reference/osdi2024.toml``): the paper's Protoacc has 97
transitions, 112 places and 365 edges; the authors' released model 106, 162 and 459.
This one has ``15 + 14·pipelines`` transitions and ``26 + 20·pipelines`` places: 99,
146 and 442 edges for 6 pipelines. The difference to the release, none of which changes
a cycle: its seven transitions that nothing ever feeds (``t7`` and the six
``f*_memconnect``) and their 14 places are left out, as are two sinks nothing reads
(``pcollect``, ``ps_hasBitsLoader_HasBitsLoad``). The release also pushes the field
descriptors and sizes it dispatches back into their input places, a rotation never read
again (every descriptor is dispatched exactly once); here they are consumed.

Timing against the authors' engine: every place here has one consumer at a time (the
pipelines' alternatives are exclusive through the ``f*_decode_idle`` and ``f*_wait_cmd``
tokens, the dispatcher's through the round-robin index), and the only transition with an
initiation interval (``hasbits_memory``, latency mem_latency, a new request every cycle:
the authors' constant ``pip`` of 1, here ``concurrency=None, initiation_interval=1``)
feeds a sink, so accelperf's lock-at-start semantics and the authors' bind-at-start,
remove-at-commit engine give the same cycles (pinned by tests/test_protoacc.py against
the authors' runs on their six Hyperprotobench inputs).
"""

from __future__ import annotations

from dataclasses import dataclass

from ..declared import Declared, RoundRobin
from ..expr import where
from ..inputs.protobuf import Message, read_messages
from ..net import Net, NetError, Out

# Field kinds carried by descriptor tokens (the authors' numbering, kept for traces).
END_OF_MESSAGE, NONSCALAR, END_OF_TOP_MESSAGE, SCALAR, SUBMESSAGE, FIELD_RUN = range(6)
_KIND = {"scalar": SCALAR, "nonscalar": NONSCALAR}
MAX_RUN = 32          # fields per control token: the has-bits chunk width

DEFAULT_MESSAGE = {
    "id": {"type": "scalar", "is_repeated": False, "data": [8]},
    "name": {"type": "nonscalar", "is_repeated": False, "data": [40]},
    "tags": {"type": "nonscalar", "is_repeated": True, "data": [12, 30]},
    "point": {"type": "submessage", "is_repeated": False, "data": {
        "x": {"type": "scalar", "is_repeated": False, "data": [8]},
        "y": {"type": "scalar", "is_repeated": True, "data": [8, 8, 8]},
        "label": {"type": "nonscalar", "is_repeated": False, "data": [300]}}},
    "checksum": {"type": "scalar", "is_repeated": False, "data": [4]},
}


@dataclass(frozen=True)
class SerializerDelays:
    """The serializer's named delays (each a named constant of the net being built; see
    the module docstring for where each one acts)."""

    mem_latency: object
    descriptor_fetch: object
    submessage_adt: object
    scalar_load: object
    string_header: object
    repeated_array: object
    key: object
    end_of_message: object
    write_bytes_per_cycle: object
    write_top_end: object

    @classmethod
    def declare(cls, net: Net, mem_latency: int) -> "SerializerDelays":
        """Declare them on ``net`` with the authors' values (``mem_latency`` as given)."""
        p = net.parameter
        return cls(
            p("mem_latency", mem_latency, doc="cycles of one memory access"),
            p("descriptor_fetch_cycles", 2,
              doc="cycles to hand a run of field descriptors to the dispatcher"),
            p("submessage_adt_cycles", 2,
              doc="cycles to load a submessage's ADT besides one memory access"),
            p("scalar_load_cycles", 2,
              doc="cycles to load a scalar field besides one memory access"),
            p("string_header_cycles", 4,
              doc="cycles for a string/bytes field's pointer and header besides two "
                  "memory accesses"),
            p("repeated_array_cycles", 3,
              doc="cycles to fetch a repeated field's array besides one memory access"),
            p("key_cycles", 1, doc="cycles to emit a field element's key"),
            p("end_of_message_cycles", 2, doc="cycles of a pipeline's end-of-message step"),
            p("write_bytes_per_cycle", 16, minimum=1,
              doc="bytes the write-back stage writes per cycle (bytes // this + 1 cycles "
                  "per chunk)"),
            p("write_top_end_cycles", 4, doc="cycles to write the top-level end marker"))


def message_tokens(messages: tuple[Message, ...]) -> dict:
    """Ψ: messages → control tokens, field descriptors and element sizes (depth-first).

    A message's fields, followed by its end-of-message pseudo field, are cut into runs of
    consecutive non-submessage fields (at most 32 per control token); a submessage closes
    the run before it, gets its own control token and is walked at once.
    """
    control, fields, sizes = [], [], []

    def walk(msg: Message, top: bool):
        run = 0

        def close():
            nonlocal run
            while run:
                n = min(run, MAX_RUN)
                control.append({"kind": FIELD_RUN, "fields": n})
                run -= n

        for f in msg.fields:
            if f.kind == "submessage":
                close()
                control.append({"kind": SUBMESSAGE, "fields": 0})
                walk(f.message, False)
            else:
                run += 1
                fields.append({"kind": _KIND[f.kind], "elements": len(f.sizes)})
                sizes.extend({"bytes": b} for b in f.sizes)
        run += 1
        fields.append({"kind": END_OF_TOP_MESSAGE if top else END_OF_MESSAGE, "elements": 1})
        sizes.append({"bytes": 1})
        close()

    for m in messages:
        walk(m, True)
    return {"message_tasks": control, "field_descriptors": fields, "field_data": sizes}


class _NotPlain(Exception):
    """Raised inside :func:`message_token_arrays` at the first entry it leaves to the
    reference reader."""


def message_token_arrays(doc) -> dict | None:
    """Ψ in one pass over decoded JSON (issue 22): the tokens :func:`message_tokens` makes
    of ``read_messages(doc)``, as NumPy arrays (control and descriptor tokens (n, 2) in
    their types' property order, element sizes (n,)), without building a Message; None
    when any entry is not plainly well formed, so that :func:`read_messages` names it."""
    import numpy as np
    if type(doc) is dict:
        messages = [doc]
    elif type(doc) is list and doc:
        messages = doc
    else:
        return None
    control, fields, sizes = [], [], []

    def close(run):
        while run:
            n = min(run, MAX_RUN)
            control.extend((FIELD_RUN, n))
            run -= n

    def walk(msg, top):
        if type(msg) is not dict or not msg:
            raise _NotPlain
        run = 0
        for spec in msg.values():
            # three keys, each holding a value of its kind, are exactly the three keys
            if type(spec) is not dict or len(spec) != 3 or \
                    type(spec.get("is_repeated")) is not bool:
                raise _NotPlain
            kind, data = spec.get("type"), spec.get("data")
            if kind == "submessage":
                close(run)
                run = 0
                control.extend((SUBMESSAGE, 0))
                walk(data, False)
            elif (kind == "scalar" or kind == "nonscalar") and type(data) is list and data \
                    and (len(data) == 1 or spec["is_repeated"]):
                run += 1
                fields.extend((_KIND[kind], len(data)))
                sizes.extend(data)
            else:
                raise _NotPlain
        fields.extend((END_OF_TOP_MESSAGE if top else END_OF_MESSAGE, 1))
        sizes.append(1)
        close(run + 1)

    try:
        for m in messages:
            walk(m, True)
        if not all(type(b) is int for b in sizes):
            return None
        data = np.array(sizes, dtype=np.int64)
    except (_NotPlain, OverflowError, RecursionError):
        return None
    if data.min() < 0:
        return None
    return {"message_tasks": np.array(control, dtype=np.int64).reshape(-1, 2),
            "field_descriptors": np.array(fields, dtype=np.int64).reshape(-1, 2),
            "field_data": data}


def protoacc_serializer(pipelines: int = 6, mem_latency: int = 10, params=None):
    """Build the serializer with ``pipelines`` field pipelines (1..6) and a memory access
    latency of ``mem_latency`` cycles (10 in the authors' model)."""
    if isinstance(pipelines, bool) or not isinstance(pipelines, int) or not 1 <= pipelines <= 6:
        raise NetError(f"pipelines = {pipelines!r} is invalid: an integer 1..6 (6 in the "
                       f"paper, 1 in its Fig. 5 alternative)")
    if isinstance(mem_latency, bool) or not isinstance(mem_latency, int) or mem_latency < 0:
        raise NetError(f"mem_latency = {mem_latency!r} is invalid: an integer >= 0 (cycles)")
    net = Net("protoacc", f"Protoacc serializer, {pipelines} field pipelines",
              input_format="protobuf message JSON, one message or a list: {field: {type: "
                           "scalar|nonscalar|submessage, is_repeated, data: [element sizes "
                           "in bytes] | nested message}}", params=params)
    d = SerializerDelays.declare(net, mem_latency)
    L = d.mem_latency
    control = net.token_type("Control", "kind", "fields")
    field = net.token_type("FieldDescriptor", "kind", "elements")
    size = net.token_type("Element", "bytes")
    count = net.token_type("Elements", "elements")
    chunk = net.token_type("Chunk", "bytes", "end_of_field", "end_of_top")
    turn = net.token_type("Turn", "index")

    def state(name, initial=0, ttype=None, tokens=None):
        """A place, with ``initial`` tokens for a lock or a state machine's state."""
        if tokens is None and initial:
            tokens = [{}] * initial
        return net.place(name, ttype, initial=tokens)

    tasks = state("message_tasks", ttype=control)
    descriptors = state("field_descriptors", ttype=field)
    data = state("field_data", ttype=size)
    # -- message front end
    load_ready = state("has_bits_idle", 1)
    hasbits_req = state("hasbits_requests")
    hasbits_resp = net.place("hasbits_responses")     # a sink: only its timing matters
    ctrl = state("control", ttype=control)
    ctrl_loaded = state("control_loaded", ttype=control)
    not_sub = state("field_run_loaded")
    advance = state("advance_ok")
    descr_q = state("descriptor_requests", ttype=control)
    split_free = state("descriptor_unit_idle", 1)
    run_descr = state("field_run_descriptor", ttype=control)
    sub_descr = state("submessage_descriptor", ttype=control)
    adt_idle = state("adt_loader_idle", 1)
    to_dispatch = state("to_dispatcher", ttype=field)
    dispatch_turn = state("dispatch_turn", ttype=turn, tokens=[{"index": 1}])
    dispatch_free = state("dispatcher_idle", 1)
    write_turn = state("write_turn", ttype=turn, tokens=[{"index": 1}])
    write_free = state("writer_idle", 1)
    writes_in = state("writes_in", ttype=chunk)
    writes_q = state("writes_queue", ttype=chunk)
    mem_free = state("memory_writer_idle", 1)
    writes_body = state("writes_body", ttype=chunk)
    writes_top = state("writes_top_end", ttype=chunk)
    written = net.place("written")

    net.transition("load_has_bits", inputs={load_ready: 1, tasks: 1},
                   outputs={hasbits_req: 1, ctrl: Out(1, copy="message_tasks")}, delay=1)
    net.transition("advance", inputs={advance: 1}, outputs={load_ready: 1}, delay=1)
    net.transition("load_control", inputs={ctrl: 1}, delay=L,
                   outputs={ctrl_loaded: Out(1, copy="control"),
                            not_sub: lambda c: where_int(c.kind != SUBMESSAGE)})
    net.transition("field_run_loaded", inputs={not_sub: 1}, outputs={advance: 1}, delay=1)
    net.transition("hasbits_memory", inputs={hasbits_req: 1}, outputs={hasbits_resp: 1},
                   delay=L, concurrency=None, initiation_interval=1)
    net.transition("request_descriptor", inputs={ctrl_loaded: 1},
                   outputs={descr_q: Out(1, copy="control_loaded")})
    net.transition("fetch_field_descriptors",
                   inputs={run_descr: 1, descriptors: lambda c, d: c.fields},
                   outputs={to_dispatch: Out(lambda c, d: c.fields, copy="field_descriptors"),
                            split_free: 1}, delay=d.descriptor_fetch)
    net.transition("load_submessage_adt", inputs={sub_descr: 1, adt_idle: 1},
                   outputs={adt_idle: 1, advance: 1, split_free: 1},
                   delay=L + d.submessage_adt)
    net.transition("issue_write", inputs={writes_in: 1},
                   outputs={writes_q: Out(1, copy="writes_in")}, delay=1)
    net.transition("write_body", inputs={writes_body: 1}, outputs={written: 1, mem_free: 1},
                   delay=lambda w: w.bytes // d.write_bytes_per_cycle + 1)
    net.transition("write_top_end", inputs={writes_top: 1}, outputs={written: 1, mem_free: 1},
                   delay=d.write_top_end)
    net.transition("route_write", inputs={writes_q: 1, mem_free: 1}, outputs=[
        (writes_body, Out(lambda w, m: where_int(w.end_of_top != 1), copy="writes_queue")),
        (writes_top, Out(lambda w, m: where_int(w.end_of_top == 1), copy="writes_queue"))])

    turns = {}
    for role, holder, free in (("dispatch", dispatch_turn, dispatch_free),
                               ("write", write_turn, write_free)):
        # The round-robin index rests in the turn place of the pipeline it points to.
        turns[role] = [net.place(f"{role}_turn_f{i}", turn, resource=True)
                       for i in range(1, pipelines + 1)]
        net.transition(f"next_{role}_turn", inputs={holder: 1, free: 1}, outputs=[
            (holder, Out(1, props={"index": lambda t, f: t.index % pipelines + 1}))] + [
            (p, Out(_is_turn(i), copy=holder.name)) for i, p in enumerate(turns[role], start=1)])
    net.transition("split_descriptor", inputs={descr_q: 1, split_free: 1}, outputs=[
        (run_descr, Out(lambda c, s: where_int(c.kind != SUBMESSAGE), copy="descriptor_requests")),
        (sub_descr, Out(lambda c, s: where_int(c.kind == SUBMESSAGE), copy="descriptor_requests"))])

    for i in range(1, pipelines + 1):
        _field_pipeline(net, i, d, to_dispatch, data, dispatch_free, writes_in, write_free,
                        turns["dispatch"][i - 1], turns["write"][i - 1], field, size, count,
                        chunk, state)

    net.start = [tasks, descriptors, data]
    net.done = written

    def tokens(doc):
        arrays = message_token_arrays(doc)
        return arrays if arrays is not None else message_tokens(read_messages(doc))

    net.tokens_from_input = tokens
    net.declared = Declared(reader=psi_protoacc, units=split_protoacc,
                            round_robin=RoundRobin(turns_protoacc, rotate_protoacc,
                                                   "f{}_dispatch"),
                            structure=TYPE_SIZES)
    net.default_input = DEFAULT_MESSAGE
    return net.build()


def _is_turn(i):
    """Count into pipeline ``i``'s turn place: 1 when the round-robin index is ``i``."""
    return lambda turn, idle: where_int(turn.index == i)


def where_int(condition):
    """1 where ``condition`` holds, else 0 (a conditional output count)."""
    return where(condition, 1, 0)


def _field_pipeline(net, i, d, to_dispatch, data, dispatch_free, writes_in, write_free,
                    my_dispatch_turn, my_write_turn, field, size, count, chunk, state):
    """Field-serializer pipeline ``i``: its state machine from dispatch to write request."""
    f, L = f"f{i}", d.mem_latency
    ops = state(f"{f}_ops", ttype=field)
    units = state(f"{f}_elements", ttype=size)
    n_units = state(f"{f}_element_count", ttype=count)
    wait_cmd = state(f"{f}_wait_cmd", 1)
    hold = state(f"{f}_memory_idle", 1)
    dist_hold = state(f"{f}_decode_idle", 1)
    finished = state(f"{f}_elements_done")
    out_q = state(f"{f}_output", ttype=chunk)
    eom = state(f"{f}_end_of_message", ttype=field)
    scalar = state(f"{f}_scalar", ttype=field)
    nonscalar = state(f"{f}_string", ttype=field)
    repeated = state(f"{f}_repeated", ttype=field)
    scalar_req = state(f"{f}_scalar_load")
    write_key = state(f"{f}_scalar_key")
    string_ptr = state(f"{f}_string_header")
    string_data = state(f"{f}_string_data", ttype=size)
    string_key = state(f"{f}_string_key")
    rep_ptr = state(f"{f}_repeated_array", ttype=field)
    key = {"bytes": 1, "end_of_field": 0, "end_of_top": 0}

    net.transition(f"{f}_dispatch", delay=1,
                   inputs={to_dispatch: 1, my_dispatch_turn: 1, data: lambda d, t, u: d.elements},
                   outputs={dispatch_free: 1, ops: Out(1, copy=to_dispatch.name),
                            units: Out(lambda d, t, u: d.elements, copy=data.name),
                            n_units: Out(1, props={"elements": lambda d, t, u: d.elements})})
    single = lambda d, h, kind: where_int((d.kind == kind) & (d.elements == 1))
    net.transition(f"{f}_scalar_start", inputs={scalar: 1, wait_cmd: 1},
                   outputs={scalar_req: 1, dist_hold: 1}, delay=1)
    net.transition(f"{f}_string_start", inputs={nonscalar: 1, wait_cmd: 1},
                   outputs={string_ptr: 1, dist_hold: 1}, delay=1)
    net.transition(f"{f}_repeated_start", inputs={repeated: 1, wait_cmd: 1},
                   outputs={rep_ptr: Out(1, copy=repeated.name), dist_hold: 1}, delay=1)
    net.transition(f"{f}_scalar_load", inputs={scalar_req: 1, hold: 1, units: 1},
                   delay=d.scalar_load + L,
                   outputs={out_q: Out(1, props={"bytes": lambda r, h, u: u.bytes,
                                                 "end_of_field": 0, "end_of_top": 0}),
                            write_key: 1})
    net.transition(f"{f}_scalar_key", inputs={write_key: 1}, delay=d.key,
                   outputs={finished: 1, hold: 1, out_q: Out(1, props=key)})
    net.transition(f"{f}_string_header", inputs={string_ptr: 1, hold: 1, units: 1},
                   outputs={string_data: Out(1, copy=units.name)},
                   delay=d.string_header + 2 * L)
    net.transition(f"{f}_string_data", inputs={string_data: 1}, delay=L,
                   outputs={out_q: Out(1, props={"bytes": lambda u: u.bytes,
                                                 "end_of_field": 0, "end_of_top": 0}),
                            string_key: 1})
    net.transition(f"{f}_string_key", inputs={string_key: 1}, delay=d.key,
                   outputs={finished: 1, out_q: Out(1, props=key), hold: 1})
    net.transition(f"{f}_repeated_array", inputs={rep_ptr: 1},
                   delay=d.repeated_array + L, outputs={
        scalar_req: lambda r: where(r.kind == SCALAR, r.elements, 0),
        string_ptr: lambda r: where(r.kind == NONSCALAR, r.elements, 0)})
    not_end = lambda o, t: where_int(o.end_of_field == 0)
    net.transition(f"{f}_write_request", inputs={out_q: 1, my_write_turn: 1},
                   delay=lambda o, t: where_int((o.end_of_field == 0) & (o.end_of_top == 0)),
                   outputs={writes_in: Out(not_end, copy=out_q.name),
                            write_free: lambda o, t: 1 - not_end(o, t),
                            my_write_turn: Out(not_end, copy=my_write_turn.name)})
    net.transition(f"{f}_resume", inputs={n_units: 1, finished: lambda n, d: n.elements},
                   outputs={wait_cmd: 1, out_q: Out(1, props={"bytes": 0, "end_of_field": 1,
                                                              "end_of_top": 0})})
    net.transition(f"{f}_end_of_message", inputs={eom: 1, wait_cmd: 1, units: 1},
                   delay=d.end_of_message,
                   outputs=[(out_q, Out(1, props=key)),
                            (out_q, Out(lambda e, w, u: where_int(e.kind == END_OF_TOP_MESSAGE),
                                        props={"bytes": 1, "end_of_field": 0, "end_of_top": 1})),
                            (finished, 1), (dist_hold, 1)])
    is_end = lambda d: (d.kind == END_OF_MESSAGE) | (d.kind == END_OF_TOP_MESSAGE)
    net.transition(f"{f}_decode", inputs={ops: 1, dist_hold: 1}, outputs=[
        (eom, Out(lambda d, h: where_int(is_end(d) & (d.elements == 1)), copy=ops.name)),
        (scalar, Out(lambda d, h: single(d, h, SCALAR), copy=ops.name)),
        (nonscalar, Out(lambda d, h: single(d, h, NONSCALAR), copy=ops.name)),
        (repeated, Out(lambda d, h: where_int(d.elements > 1), copy=ops.name))])


def psi_protoacc(doc):
    """Tokens of the Protoacc serializer for parsed message JSON (one message object or
    a list of them), as its Ψ makes them: depth first, an end-of-message pseudo field
    per message, runs of at most 32 non-submessage fields per control token
    (accelperf.lpn.library.protoacc.message_tokens, whose field-kind numbers these are)."""
    end, nonscalar, end_top, scalar, submessage, run_kind = range(6)
    control, fields, sizes = [], [], []

    def walk(msg, top):
        if not isinstance(msg, dict) or not msg:
            raise ValueError(f"message = {str(msg)[:40]} is invalid: an object "
                             f"{{field: {{type, is_repeated, data}}}}")
        run = 0

        def close():
            nonlocal run
            while run:
                control.append({"kind": run_kind, "fields": min(run, 32)})
                run -= min(run, 32)

        for name, spec in msg.items():
            kind = spec.get("type") if isinstance(spec, dict) else None
            if kind == "submessage":
                close()
                control.append({"kind": submessage, "fields": 0})
                walk(spec["data"], False)
            elif kind in ("scalar", "nonscalar"):
                run += 1
                fields.append({"kind": scalar if kind == "scalar" else nonscalar,
                               "elements": len(spec["data"])})
                sizes.extend({"bytes": int(b)} for b in spec["data"])
            else:
                raise ValueError(f"field {name!r} = {str(spec)[:40]} is invalid: "
                                 f"{{type: scalar|nonscalar|submessage, is_repeated, data}}")
        run += 1
        fields.append({"kind": end_top if top else end, "elements": 1})
        sizes.append({"bytes": 1})
        close()

    for msg in doc if isinstance(doc, list) else [doc]:
        walk(msg, True)
    return {"message_tasks": control, "field_descriptors": fields, "field_data": sizes}


def split_protoacc(doc):
    """A Protoacc input as the messages it serialises one after the other (Fig. 5 sums
    them): a list of messages, or one message."""
    return list(doc) if isinstance(doc, list) else [doc]


def turns_protoacc(tokens):
    """Protoacc's round-robin turns a message takes: one per field descriptor (its
    end-of-message marker included), each sending the dispatch and write turns one
    pipeline on."""
    return len(tokens.get("field_descriptors", ()))


def rotate_protoacc(stage, turns, pipelines):
    """The name of ``stage`` (a transition, or a place as ``[place]``) for a message
    that starts ``turns`` round-robin turns after the first pipeline: pipeline k's
    stages (``f{k}_...``, ``[..._f{k}]``) become pipeline k + turns's, counted round
    the ``pipelines`` of them (the pipelines are identical: accelperf.lpn.library.protoacc)."""
    import re
    return re.sub(r"(?<![A-Za-z0-9])f([0-9]+)(?![0-9])",
                  lambda m: "f" + str((int(m.group(1)) - 1 + turns) % pipelines + 1), stage)


TYPE_SIZES = {"field_data": {"bytes": (0, 1 << 30)}}
"""What ranges within one input type (OSDI'24 §5.3.1, Fig. 5's message types): the bytes
of each field element; field kinds and counts are the type."""
