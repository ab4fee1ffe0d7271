"""Menshen (Wang et al., NSDI'22), an RMT switch pipeline with isolation, as an LPN.

Source of the facts: the OSDI'24 authors' model ``lpn_family/accel_lib/menshen/normal``
in dslab-epfl/lpn, re-modelled in accelperf's API. A packet of ``n_words`` bus words goes

    packet filter FIFO → packet filter ─(control / drop packets leave here)
      → register → parser: get segments (3 cycles) → register
          → round-robin to 2 sub-parsers (3 cycles) → collect in order → register
          → ``stages`` match-action stages (15 cycles each) → round-robin to 4 PHV FIFOs
      → (a copy of the packet, from the register, through 4 packet FIFOs)
      → 4 deparsers (6 cycles, a PHV and its packet) → round-robin output arbiter
        (n_words + 2 cycles)

Most units stream a packet one word per cycle, so they accept the next packet only
``n_words`` cycles (the filter: ``n_words + 2``, the sub-parser dispatch: ``n_words − 1``)
after the previous one, while the previous one may still be in flight: a data-dependent
initiation interval, the authors' ``pip``.

**How the authors' ``pip`` maps onto accelperf.** In the authors' engine every transition
is a single server; with a ``pip`` function the next firing's start is back-dated to
``max(arrival of its tokens, previous start + pip(previous firing's tokens))`` even though
the engine only binds it after the previous commit, and commits stay in order
(``max(previous commit, start + delay)``). For a transition whose delay is constant (all
of Menshen's pipelined units) that is exactly accelperf's pipelined unit:
``concurrency=None`` and ``initiation_interval`` a function of the starting firing's
tokens (the next start no earlier than this start + interval, R3 of
:mod:`accelperf.lpn.semantics`); in-order commit then holds by itself. Where a round-robin
counter already serialises the unit (the sub-parser dispatch, the last stage) the counter
keeps it one server and the interval adds the same constraint. ``pip = None`` is
accelperf's default single server (next start after the commit). The authors' ``pip =
−1`` on the parser's segment register is never the limit there (its packets come at
least 3 cycles apart), so it is an unbounded 1-cycle register. The authors' two
multiplexers that pick their input place by a counter (sub-parser collect, output
arbiter) are one transition per input here, guarded by the counter (which they hold
while firing, so they remain one server): a single transition would read the head of
every input, and so wait for all of them.

**Exactness.** End-to-end latency equals the authors' simulator on their testbench
streams (14 and 100 packets) and on own streams, for 2, 5 and 8 stages, and on three of
the streams every commit happens at the authors' cycle (tests/test_menshen.py). One
difference is the authors' engine's, not the hardware's: it passes the *same* token
object on to both outputs of the register after the filter (parser path and packet-FIFO
path) and rewrites that object's timestamp at every commit, and a back-dated (pipelined)
start reads the timestamp. A packet waiting at a stage whose twin has meanwhile left a
packet FIFO therefore starts there at the twin's cycle, not at its own arrival (e.g. 71
instead of 67 for the 4th data packet of the ``mixed_lengths`` test stream). accelperf's
tokens are values; its stages start at the arrival. The end-to-end latency is unchanged
on every stream tried, because the last stage's round-robin counter serialises it.

Table 2 (``/work/shared/reference/osdi2024.toml``): the paper's Menshen has 29
transitions and 44 places, the authors' release 30 and 45. Here, for 5 stages: 34
transitions and 45 places, the release's plus one transition per multiplexer input
beyond the first (1 + 3).
"""

from __future__ import annotations

from ..declared import Declared
from ..expr import where
from ..inputs.packets import KINDS, packet_columns, read_packets
from ..net import Net, NetError, Out

STAGE_CYCLES = 15
DEPARSER_CYCLES = 6
SUBPARSER_CYCLES = 3
GET_SEGMENTS_CYCLES = 3
FIFO_CYCLES = 1
LANES = 4            # PHV FIFOs, packet FIFOs, deparsers
SUBPARSERS = 2
CONTROL, DROP = KINDS.index("control"), KINDS.index("drop")

# The authors' testbench stream (setup.py, the list their run uses): 12 control packets
# then two data packets; they get 189 cycles.
TESTBENCH = [[2, 1, 0, 0]] * 9 + [[3, 1, 0, 0], [2, 1, 0, 0], [3, 1, 0, 0],
                                  [5, 0, 1, 0], [25, 0, 1, 0]]


def packet_tokens(doc):
    """Ψ: a packet stream (JSON list or CSV text, see accelperf.lpn.inputs.packets) →
    packet tokens in arrival order: one (n_words, kind) array when the JSON list is
    well-formed throughout (checked in bulk), else read packet by packet."""
    columns = packet_columns(doc)
    if columns is not None:
        return columns
    return [{"n_words": p.n_words, "kind": KINDS.index(p.kind)} for p in read_packets(doc)]


def menshen_pipeline(stages: int = 5, params=None):
    """Build Menshen with ``stages`` match-action stages (5 in the authors' model)."""
    if isinstance(stages, bool) or not isinstance(stages, int) or stages < 1:
        raise NetError(f"stages = {stages!r} is invalid: an integer >= 1 (5 in the "
                       f"authors' model)")
    net = Net("menshen", f"Menshen switch pipeline, {stages} match-action stages",
              input_format="a packet stream: a JSON list of {n_words, kind: "
                           "control|data|drop} or of (n_words, is_control, is_data, is_drop) "
                           "rows, or a .csv file with either header", params=params)
    packet = net.token_type("Packet", "n_words", "kind")
    counter = net.token_type("Counter", "cnt")
    # The delays the authors' model names (module constants: their defaults).
    stage_cycles = net.parameter("stage_cycles", STAGE_CYCLES,
                                 doc="cycles of one match-action stage")
    deparser_cycles = net.parameter("deparser_cycles", DEPARSER_CYCLES,
                                    doc="cycles of a deparser")
    subparser_cycles = net.parameter("subparser_cycles", SUBPARSER_CYCLES,
                                     doc="cycles of a sub-parser")
    segments_cycles = net.parameter("get_segments_cycles", GET_SEGMENTS_CYCLES,
                                    doc="cycles for the parser to get a packet's segments")
    fifo_cycles = net.parameter("fifo_cycles", FIFO_CYCLES, doc="cycles through a FIFO")

    def queue(name):
        return net.place(name, packet)

    def round_robin(name):
        return net.place(name, counter, initial=[{"cnt": 0}])

    arriving = queue("packets")
    filter_in = queue("filter_fifo_out")
    filtered = queue("filtered")
    dropped = net.place("control_or_dropped")     # a sink: control packets end here
    to_parser = queue("to_parser")
    to_parser_delayed = queue("to_parser_registered")
    to_pkt_fifos = queue("to_packet_fifos")
    segments = queue("segments")
    segments_reg = queue("segments_registered")
    dispatch_cnt, collect_cnt = round_robin("subparser_dispatch"), round_robin("subparser_collect")
    sub_in = [queue(f"subparser{i}_in") for i in range(SUBPARSERS)]
    sub_out = [queue(f"subparser{i}_out") for i in range(SUBPARSERS)]
    parsed = queue("parsed")
    stage_in = [queue(f"stage{i}_in") for i in range(stages)]
    phv_cnt, pkt_cnt, out_cnt = (round_robin(n) for n in ("phv_fifo_select",
                                                          "packet_fifo_select", "output_select"))
    phv_in = [queue(f"phv_fifo{i}_in") for i in range(LANES)]
    phv_out = [queue(f"phv_fifo{i}_out") for i in range(LANES)]
    pkt_in = [queue(f"packet_fifo{i}_in") for i in range(LANES)]
    pkt_out = [queue(f"packet_fifo{i}_out") for i in range(LANES)]
    deparsed = [queue(f"deparser{i}_out") for i in range(LANES)]
    sent = net.place("sent")

    is_data = lambda p: where((p.kind == CONTROL) | (p.kind == DROP), 0, 1)
    _pipelined(net, "packet_filter_fifo", arriving, {filter_in: Out(1, copy=arriving.name)},
               fifo_cycles, lambda p: p.n_words)
    _pipelined(net, "packet_filter", filter_in,
               {dropped: lambda p: 1 - is_data(p), filtered: Out(is_data, copy=filter_in.name)},
               1, lambda p: p.n_words + 2)
    _pipelined(net, "filter_register", filtered, [(to_parser, Out(1, copy=filtered.name)),
                                                  (to_pkt_fifos, Out(1, copy=filtered.name))],
               1, lambda p: p.n_words)
    _pipelined(net, "parser_input_register", to_parser,
               {to_parser_delayed: Out(1, copy=to_parser.name)}, 1, lambda p: p.n_words)
    net.transition("parser_get_segments", inputs={to_parser_delayed: 1},
                   outputs={segments: Out(1, copy=to_parser_delayed.name)},
                   delay=segments_cycles)
    # The authors' pip here is −1: never the limit, so an unbounded 1-cycle register.
    net.transition("segments_register", inputs={segments: 1},
                   outputs={segments_reg: Out(1, copy=segments.name)}, delay=1,
                   concurrency=None)
    _serialised(net, "parser_to_subparsers", dispatch_cnt, segments_reg, sub_in,
                delay=1, interval=lambda p: p.n_words - 1)
    for i in range(SUBPARSERS):
        net.transition(f"subparser{i}", inputs={sub_in[i]: 1},
                       outputs={sub_out[i]: Out(1, copy=sub_in[i].name)},
                       delay=subparser_cycles)
    _in_turn(net, "collect_subparser", collect_cnt, sub_out, parsed, delay=0)
    net.transition("parser_output_register", inputs={parsed: 1}, concurrency=None,
                   initiation_interval=1, outputs={stage_in[0]: Out(1, copy=parsed.name)},
                   delay=3)
    _lane_selector(net, "parser_to_packet_fifos", pkt_cnt, to_pkt_fifos, pkt_in,
                   delay=lambda c, p: p.n_words - 1)
    for i in range(stages - 1):
        _pipelined(net, f"stage{i}", stage_in[i], {stage_in[i + 1]: Out(1, copy=stage_in[i].name)},
                   stage_cycles, lambda p: p.n_words)
    _serialised(net, f"stage{stages - 1}", phv_cnt, stage_in[-1], phv_in,
                delay=stage_cycles, interval=lambda p: p.n_words)
    for i in range(LANES):
        net.transition(f"phv_fifo{i}", inputs={phv_in[i]: 1}, concurrency=None,
                       initiation_interval=1, delay=fifo_cycles,
                       outputs={phv_out[i]: Out(1, copy=phv_in[i].name)})
    for i in range(LANES):
        net.transition(f"packet_fifo{i}", inputs={pkt_in[i]: 1}, delay=fifo_cycles,
                       outputs={pkt_out[i]: Out(1, copy=pkt_in[i].name)})
    for i in range(LANES):
        # The packet (with its length) goes on; its PHV is consumed.
        net.transition(f"deparser{i}", inputs={pkt_out[i]: 1, phv_out[i]: 1},
                       delay=deparser_cycles,
                       outputs={deparsed[i]: Out(1, copy=pkt_out[i].name)})
    _in_turn(net, "output_arbiter", out_cnt, deparsed, sent,
             delay=lambda c, p: p.n_words + fifo_cycles + 1)

    net.start, net.done = arriving, sent
    net.tokens_from_input = packet_tokens
    net.declared = Declared(reader=psi_menshen, structure=TYPE_SIZES)
    net.default_input = TESTBENCH
    return net.build()


def _pipelined(net, name, source, outputs, delay, interval):
    """A unit that starts a packet every ``interval(packet)`` cycles while earlier ones
    are still in flight (the authors' pip), each taking ``delay`` cycles."""
    net.transition(name, inputs={source: 1}, outputs=outputs, delay=delay,
                   concurrency=None, initiation_interval=interval)


def _serialised(net, name, cnt, source, lanes, delay, interval):
    """A round-robin unit: holds its counter while it works (one packet at a time) and
    starts the next packet ``interval(packet)`` cycles after the last start at the
    earliest."""
    _lane_selector(net, name, cnt, source, lanes, delay=delay,
                   interval=lambda c, p: interval(p))


def _lane_selector(net, name, cnt, source, lanes, delay, interval=None):
    """Send each packet to the next of ``lanes`` in turn (a round-robin counter)."""
    n = len(lanes)
    outputs = [(cnt, Out(1, props={"cnt": lambda c, p: (c.cnt + 1) % n}))]
    outputs += [(lane, Out(_lane_is(i), copy=source.name)) for i, lane in enumerate(lanes)]
    net.transition(name, inputs={cnt: 1, source: 1}, outputs=outputs, delay=delay,
                   initiation_interval=interval)


def _lane_is(i):
    return lambda c, p: where(c.cnt == i, 1, 0)


def _in_turn(net, name, cnt, sources, target, delay):
    """Take the next packet from ``sources`` in round-robin order, one transition per
    source guarded by the counter (the counter is held while firing: one server)."""
    n = len(sources)
    for i, src in enumerate(sources):
        net.transition(f"{name}{i}", inputs={cnt: 1, src: 1}, guard=_turn_is(i),
                       outputs={cnt: Out(1, props={"cnt": (i + 1) % n}),
                                target: Out(1, copy=src.name) if target.token_type.properties
                                else 1},
                       delay=delay)


def _turn_is(i):
    return lambda c, p: c.cnt == i


def psi_menshen(packets):
    """Tokens of Menshen for a parsed packet list: {"n_words", "kind": control|data|drop}
    entries or [n_words, is_control, is_data, is_drop] rows (kind numbers 0, 1, 2)."""
    kinds = ("control", "data", "drop")
    out = []
    for i, p in enumerate(packets):
        if isinstance(p, dict) and p.get("kind") in kinds:
            out.append({"n_words": int(p["n_words"]), "kind": kinds.index(p["kind"])})
        elif isinstance(p, (list, tuple)) and len(p) == 4 and sorted(p[1:]) == [0, 0, 1]:
            out.append({"n_words": int(p[0]), "kind": list(p[1:]).index(1)})
        else:
            raise ValueError(f"packet[{i}] = {str(p)[:40]} is invalid: {{n_words, kind}} "
                             f"or [n_words, is_control, is_data, is_drop]")
    return {"packets": out}


TYPE_SIZES = {"packets": {"n_words": (1, 1500)}}
"""What ranges within one input type (OSDI'24 §5.3.1): the words of each packet; the
stream's length and packet kinds are the type."""
