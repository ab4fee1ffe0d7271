"""The pipeline of OSDI'24 Fig. 2: a fetch unit brings 4 instructions every 20 cycles into
an 8-entry instruction buffer; instructions are dispatched in order to a memory unit and a
compute unit, each holding one instruction in its own register. The memory unit loads
operands into an (unbounded) operand buffer; a compute instruction waits for its operands.
"""

from __future__ import annotations

from ...errors import invalid
from ..inputs.values import entries, record, whole
from ..net import Net, Out

LOAD, COMPUTE = 0, 1
FETCH_WIDTH, FETCH_CYCLES, BUFFER_ENTRIES = 4, 20, 8


def program_tokens(program):
    """Ψ: instructions ``(kind, cycles, operands)`` → tokens. ``group`` on each token is the
    size of the fetch group it belongs to (4, or fewer for the last group), which the fetch
    unit's weight reads from the head instruction."""
    program = entries(program, "input (instructions: [kind, cycles, operands])")
    tokens = []
    for i, ins in enumerate(program):
        where = f"input[{i}]"
        if isinstance(ins, dict):
            ins = record(ins, where, ("kind", "cycles", "operands"))
            ins = (ins["kind"], ins["cycles"], ins["operands"])
        ins = entries(ins, f"{where} ([kind, cycles, operands])", least=3)
        if len(ins) != 3:
            raise invalid(where, ins, "[kind, cycles, operands]: three numbers")
        kind = whole(ins[0], f"{where}.kind ({LOAD} load, {COMPUTE} compute)", LOAD, COMPUTE)
        cycles = whole(ins[1], f"{where}.cycles", low=0)
        operands = whole(ins[2], f"{where}.operands", low=0, high=2 ** 20)
        first = i - i % FETCH_WIDTH
        group = min(FETCH_WIDTH, len(program) - first)
        tokens.append({"kind": kind, "cycles": cycles, "operands": operands, "group": group})
    return tokens


DEFAULT_PROGRAM = [(LOAD, 30, 2), (COMPUTE, 12, 2), (LOAD, 30, 1), (COMPUTE, 8, 1),
                   (LOAD, 45, 4), (COMPUTE, 20, 4), (COMPUTE, 6, 0), (LOAD, 30, 2),
                   (COMPUTE, 12, 2), (LOAD, 30, 2), (COMPUTE, 12, 2)]


def fig2_pipeline(params=None):
    net = Net("fig2-pipeline", "OSDI'24 Fig. 2: fetch, in-order dispatch, memory and compute",
              input_format="a JSON list of instructions [kind (0 load, 1 compute), cycles, "
                           "operands]", params=params)
    instr = net.token_type("Instr", "kind", "cycles", "operands", "group")
    operand = net.token_type("Operand")
    start = net.place("start", instr)
    buf = net.place("instr_buffer", instr, capacity=BUFFER_ENTRIES)
    r_mem = net.place("r_mem", instr, capacity=1)
    r_comp = net.place("r_compute", instr, capacity=1)
    operands = net.place("operands", operand)
    done = net.place("done", instr)
    fetch = net.parameter("fetch_cycles", FETCH_CYCLES,
                          doc="cycles to fetch one group of instructions")
    net.transition("fetch", inputs={start: lambda i: i.group},
                   outputs={buf: Out(lambda i: i.group, copy="start")}, delay=fetch)
    net.transition("dispatch_mem", inputs={buf: 1}, outputs={r_mem: 1},
                   guard=lambda i: i.kind == LOAD)
    net.transition("dispatch_compute", inputs={buf: 1}, outputs={r_comp: 1},
                   guard=lambda i: i.kind == COMPUTE)
    net.transition("memory_unit", inputs={r_mem: 1},
                   outputs={operands: lambda i: i.operands, done: 1},
                   delay=lambda i: i.cycles)
    net.transition("compute_unit", inputs={r_comp: 1, operands: lambda i, o: i.operands},
                   outputs={done: Out(1, copy="r_compute")}, delay=lambda i, o: i.cycles)
    net.start, net.done = start, done
    net.tokens_from_input = program_tokens
    net.default_input = DEFAULT_PROGRAM
    return net.build()
