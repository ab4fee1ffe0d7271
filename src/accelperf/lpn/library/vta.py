"""VTA, the deep-learning accelerator of TVM, as an LPN driven by its instruction stream.

Re-modelled from the facts of the OSDI'24 artifact's VTA net (dslab-epfl/lpn,
``lpn_family/accel_lib/vta/normal``, commit c55ef8d): its places, transitions, weights,
guards and delay formulas; the code here is accelperf's own.

Structure (the accelerator of OSDI'24 §5.1, Table 1; an LPN per §3.2):

* **fetch** -- one read command per batch of at most ``fetch_batch`` (8) instructions
  (``split``); each read takes 21 + 2·n cycles for n instructions and needs the single
  fetch-control token, which returns 1 cycle after the read (``control_return``).
* **dispatch** -- the instruction at the head of the fetched FIFO goes, 1 cycle each, to
  the queue of its module (load, compute or store) if that module has a free slot
  (``*_capacity`` slots per module, freed when an instruction of the module finishes).
* **three modules** -- each launches its oldest instruction once the dependency tokens
  it pops are there (0 or 1 token from the queue to the previous and to the next module,
  by the instruction's pop flags), runs it for its latency, and pushes dependency tokens
  by its push flags. Latencies, in cycles (x, y = sizes, u = uop_end - uop_begin,
  L = lp_0·lp_1):

  ====================  ==============================
  load inp / wgt        22 + 2·x·y / 22 + 32·x·y
  load sync             2
  compute loadUop       22 + x·(y + 2 - y mod 2)/2
  compute loadAcc       22 + 8·x·y
  compute gemm          6 + u·L
  compute alu           6 + u·L·(2 - use_alu_imm)
  compute sync          2
  store (any)           27·x·y/8
  ====================  ==============================

Named parameters (``accelperf lpn show vta --parameters``, :class:`VtaDelays`): the
constants of that table and of the fetch read, in cycles (``read_base_cycles`` 21,
``read_cycles_per_instruction`` 2, ``dram_base_cycles`` 22 for every load from DRAM,
``inp_cycles_per_element`` 2, ``wgt_cycles_per_element`` 32, ``acc_cycles_per_element`` 8,
``sync_cycles`` 2, ``compute_base_cycles`` 6) and the store's ``store_ticks_per_element``
27 in eighths of a cycle; defaults the artifact's values.

**Time is counted in eighths of a cycle** (``TICKS_PER_CYCLE`` = 8): the artifact's store
latency 27·x·y/8 is fractional (3.375 cycles for the 1x1 stores of ``reference.insns``)
and its simulator keeps time as a float. Rounding the store latency up or down changes
the reference stream's 137,204 cycles to 137,244 or 137,180 (measured with the artifact's
simulator), so the net keeps the fraction exactly in ticks (delays below are multiplied by
8); the simulator reports cycles, a float when a fraction of a cycle remains.

**Where the artifact's engine differs** (see lpn_api.md): it removes input tokens only
when a firing commits, so while one of the three dispatch transitions holds the head of
the fetched FIFO for its cycle, the next instruction is still behind it. accelperf locks
tokens at the start, which would let the next instruction dispatch in the same cycle. The
one-token ``dispatch_port`` place restores the artifact's timing -- dispatch is a single
in-order port -- and is the only place accelperf adds. Without it (``serial_dispatch=
False``) the reference stream takes 137,203 cycles instead of 137,204, and 137,303 instead
of 137,305 with one slot per module (tests/test_vta.py). Every other place has a single
consumer (the three dispatch guards are exclusive), so binding versus locking makes no
difference there, and every artifact transition is a single server as here.

Table 2 of OSDI'24 (§5.2.2) lists VTA at 12 transitions, 22 places and 41 edges, as the
artifact has; this net has the same 12 transitions, 21 places and 47 edges: the artifact's
three per-module "done" places become one ``retired`` place (accelperf measures latency at
one done place), and ``dispatch_port`` is added with an input and an output edge on each
of the three dispatch transitions. The dependency-queue places keep tokens that a stream
pushes but never pops (``reference.insns`` leaves one in ``store_to_compute``), as the
hardware queues do, so they are flagged ``resource=True``.
"""

from __future__ import annotations

from dataclasses import astuple, dataclass, fields

from ...errors import invalid
from ..declared import Declared
from ..expr import where
from ..inputs.vta import (DEFAULT_STREAM, SUBOPCODE_NAMES, Instruction, InstructionTable,
                          parse_instructions, read_instruction_table, read_instructions)
from ..net import Net, Out

TICKS_PER_CYCLE = 8
OPCODES = {"load": 0, "compute": 1, "store": 2}
SUBOPCODES = {"load": 0, "sync": 1, "loadUop": 2, "loadAcc": 3, "gemm": 4, "alu": 5,
              "store": 6}
TENSORS = {"inp": 0, "wgt": 1, "empty": 2, "finish": 3}
_FIELDS = tuple(f.name for f in fields(Instruction))   # the token's properties, in order


@dataclass(frozen=True)
class VtaDelays:
    """VTA's named delays, each a named constant of the net being built (the table in the
    module docstring; defaults the artifact's values)."""

    read_base: object
    read_per_instruction: object
    dram_base: object
    inp_per_element: object
    wgt_per_element: object
    acc_per_element: object
    sync: object
    compute_base: object
    store_ticks_per_element: object

    @classmethod
    def declare(cls, net: Net) -> "VtaDelays":
        p = net.parameter
        return cls(
            p("read_base_cycles", 21, doc="cycles of one instruction read besides its "
                                          "instructions"),
            p("read_cycles_per_instruction", 2, doc="read cycles per fetched instruction"),
            p("dram_base_cycles", 22, doc="fixed cycles of a load inp/wgt, loadUop or loadAcc"),
            p("inp_cycles_per_element", 2, doc="load inp cycles per x·y element"),
            p("wgt_cycles_per_element", 32, doc="load wgt cycles per x·y element"),
            p("acc_cycles_per_element", 8, doc="compute loadAcc cycles per x·y element"),
            p("sync_cycles", 2, doc="cycles of a load or compute sync"),
            p("compute_base_cycles", 6, doc="fixed cycles of a gemm or alu instruction"),
            p("store_ticks_per_element", 27,
              doc="store eighths of a cycle per x·y element (27·x·y/8 cycles)"))

    def load_ticks(self, i):
        """Load module latency in ticks (table in the module docstring)."""
        elements = i.xsize * i.ysize
        per_cycle = where(i.tensor == TENSORS["inp"], self.dram_base + self.inp_per_element
                          * elements, self.dram_base + self.wgt_per_element * elements)
        return TICKS_PER_CYCLE * where(i.subopcode == SUBOPCODES["sync"], self.sync,
                                       per_cycle)

    def compute_ticks(self, i):
        """Compute module latency in ticks (table in the module docstring)."""
        loops = (i.uop_end - i.uop_begin) * i.lp_1 * i.lp_0
        sub = i.subopcode
        c = where(sub == SUBOPCODES["gemm"], self.compute_base + loops,
            where(sub == SUBOPCODES["alu"], self.compute_base + loops * (2 - i.use_alu_imm),
            where(sub == SUBOPCODES["loadAcc"],
                  self.dram_base + self.acc_per_element * i.xsize * i.ysize,
            where(sub == SUBOPCODES["loadUop"],
                  self.dram_base + i.xsize * (i.ysize + 2 - i.ysize % 2) // 2, self.sync))))
        return TICKS_PER_CYCLE * c

    def store_ticks(self, i):
        """Store module latency: 27·x·y/8 cycles = 27·x·y ticks."""
        return self.store_ticks_per_element * i.xsize * i.ysize


def _is_opcode(code: int):
    return lambda fetched: fetched.opcode == code


def vta(load_capacity: int = 512, compute_capacity: int = 512, store_capacity: int = 512,
        fetch_batch: int = 8, serial_dispatch: bool = True, params=None):
    """The VTA net; capacities are the instruction slots per module (the artifact: 512),
    ``fetch_batch`` the most instructions one read command fetches (the artifact: 8).
    ``serial_dispatch=False`` drops the ``dispatch_port`` (module docstring), to show what
    the artifact's engine quirk is worth."""
    for name, v in (("load_capacity", load_capacity), ("compute_capacity", compute_capacity),
                    ("store_capacity", store_capacity), ("fetch_batch", fetch_batch)):
        if isinstance(v, bool) or not isinstance(v, int) or v < 1:
            raise invalid(name, v, "an integer >= 1")
    net = Net("vta", "VTA deep-learning accelerator", ticks_per_cycle=TICKS_PER_CYCLE,
              input_format="an instruction stream, one instruction per line (the OSDI'24 "
                           "artifact's .insns format), or those lines as a JSON list",
              params=params)
    insn = net.token_type("Instruction", *_FIELDS)
    program = net.token_type("Program", "total_insn")
    read_cmd = net.token_type("ReadCommand", "insn_count")
    B = fetch_batch
    d = VtaDelays.declare(net)

    launch = net.place("launch", program)
    stream = net.place("instruction_memory", insn)
    read_cmds = net.place("read_commands", read_cmd)
    control = net.place("fetch_control", initial=[()])
    control_back = net.place("fetch_control_return")
    fetched = net.place("fetched", insn)
    port = net.place("dispatch_port", initial=[()]) if serial_dispatch else None
    retired = net.place("retired")
    slots, queue, running = {}, {}, {}
    for unit, cap in (("load", load_capacity), ("compute", compute_capacity),
                      ("store", store_capacity)):
        slots[unit] = net.place(f"{unit}_slots", initial=[()] * cap)
        queue[unit] = net.place(f"{unit}_queue", insn)
        running[unit] = net.place(f"{unit}_running", insn)
    # A stream may push a dependency token nobody pops: it stays queued, as in hardware.
    dep = {(a, b): net.place(f"{a}_to_{b}", resource=True)
           for a, b in (("load", "compute"), ("compute", "load"), ("compute", "store"),
                        ("store", "compute"))}

    # Fetch (in the artifact's list order: t12, t9, t13): read commands of at most B
    # instructions, one read at a time under the fetch-control token.
    net.transition("control_return", inputs={control_back: 1}, outputs={control: 1},
                   delay=TICKS_PER_CYCLE)
    count = lambda read_commands: read_commands.insn_count
    net.transition("read", inputs={read_cmds: 1, control: 1, stream: count},
                   outputs={fetched: Out(count, copy=stream.name), control_back: 1},
                   delay=lambda read_commands: TICKS_PER_CYCLE * (
                       d.read_base + d.read_per_instruction * read_commands.insn_count))
    net.transition("split", inputs={launch: 1}, outputs=[
        (read_cmds, Out(lambda launch: launch.total_insn // B, props={"insn_count": B})),
        (read_cmds, Out(lambda launch: where(launch.total_insn % B > 0, 1, 0),
                        props={"insn_count": lambda launch: launch.total_insn % B}))])

    # Dispatch: the head of the fetched FIFO to its module, one instruction per cycle.
    for unit in ("load", "compute", "store"):
        inputs, outputs = {fetched: 1, slots[unit]: 1}, {queue[unit]: 1}
        if serial_dispatch:
            inputs[port] = outputs[port] = 1
        net.transition(f"dispatch_{unit}", inputs=inputs, outputs=outputs,
                       delay=TICKS_PER_CYCLE, guard=_is_opcode(OPCODES[unit]))

    # Modules: launch when the popped dependency tokens are there (weights 0 or 1), finish
    # after the latency and push dependency tokens; "prev"/"next" follow load -> compute
    # -> store.
    net.transition("compute_launch",
                   inputs={queue["compute"]: 1,
                           dep["store", "compute"]: lambda compute_queue: compute_queue.pop_next,
                           dep["load", "compute"]: lambda compute_queue: compute_queue.pop_prev},
                   outputs={running["compute"]: 1})
    net.transition("store_launch",
                   inputs={queue["store"]: 1,
                           dep["compute", "store"]: lambda store_queue: store_queue.pop_prev},
                   outputs={running["store"]: 1})
    net.transition("load_launch",
                   inputs={queue["load"]: 1,
                           dep["compute", "load"]: lambda load_queue: load_queue.pop_next},
                   outputs={running["load"]: 1})
    push_prev, push_next = Out(lambda i: i.push_prev), Out(lambda i: i.push_next)
    net.transition("compute_done", inputs={running["compute"]: 1},
                   outputs={retired: 1, dep["compute", "load"]: push_prev,
                            dep["compute", "store"]: push_next, slots["compute"]: 1},
                   delay=d.compute_ticks)
    net.transition("store_done", inputs={running["store"]: 1},
                   outputs={retired: 1, dep["store", "compute"]: push_prev,
                            slots["store"]: 1},
                   delay=d.store_ticks)
    net.transition("load_done", inputs={running["load"]: 1},
                   outputs={retired: 1, dep["load", "compute"]: push_next,
                            slots["load"]: 1},
                   delay=d.load_ticks)

    net.start, net.done = [stream, launch], retired
    net.tokens_from_input = instruction_tokens
    net.input_reader = read_instruction_table
    net.declared = Declared(structure={})      # one program is one input type
    net.default_input = read_instructions(DEFAULT_STREAM)
    return net.build()


def instruction_tokens(stream) -> dict:
    """Ψ: an instruction stream -> the program token and one token per instruction.

    ``stream`` is a sequence of :class:`~accelperf.lpn.inputs.vta.Instruction` (from
    :func:`~accelperf.lpn.inputs.vta.read_instructions`), a list of instruction lines in the
    artifact's text format, or that text as one string; or an
    :class:`~accelperf.lpn.inputs.vta.InstructionTable` (what the file reader gives for a
    well-formed file), whose instruction tokens come as one NumPy array, the same tokens.
    """
    if isinstance(stream, InstructionTable):
        return {"instruction_memory": _table_tokens(stream), "launch": [(len(stream),)]}
    if isinstance(stream, str):
        stream = parse_instructions(stream)
    elif isinstance(stream, (list, tuple)) and stream and all(isinstance(s, str)
                                                              for s in stream):
        stream = parse_instructions("\n".join(stream))
    if not isinstance(stream, (list, tuple)) or not stream or \
            not all(isinstance(s, Instruction) for s in stream):
        raise invalid("VTA input", _short(stream), "a non-empty instruction stream: the "
                      "artifact's text format as one string or a list of lines, or "
                      "Instructions from accelperf.lpn.inputs.vta.read_instructions")
    tokens = [(OPCODES[i.opcode], SUBOPCODES[i.subopcode], TENSORS[i.tensor])
              + astuple(i)[3:] for i in stream]
    return {"instruction_memory": tokens, "launch": [(len(tokens),)]}


def _table_tokens(table: InstructionTable):
    """The table's rows with its sub-opcode indices renumbered as SUBOPCODES here numbers
    them (opcode and tensor indices already follow OPCODES' and TENSORS' order)."""
    import numpy as np
    renumber = np.array([SUBOPCODES[name] for name in SUBOPCODE_NAMES], dtype=np.int64)
    tokens = table.rows.copy()
    tokens[:, 1] = renumber[tokens[:, 1]]
    return tokens


def _short(value) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."
