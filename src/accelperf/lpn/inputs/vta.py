"""VTA instruction streams in the text format of the OSDI'24 artifact (dslab-epfl/lpn,
``lpn_examples/vta/*.insns``): one instruction per line, 15 comma-separated fields ::

    insn, OPCODE, SUBOPCODE, TENSOR, xsize, ysize, uop_begin, uop_end, lp_1, lp_0,
          use_alu_imm, pop_prev, pop_next, push_prev, push_next

OPCODE is the VTA module that runs the instruction (``load``, ``compute``, ``store``);
SUBOPCODE what it does there (``load``/``sync`` for load, ``loadUop``/``loadAcc``/``gemm``/
``alu``/``sync`` for compute, ``store``/``sync`` for store); TENSOR the buffer a load fills
(``inp`` or ``wgt``; ``empty`` otherwise, ``finish`` on the closing sync). The sizes are
the 2-D transfer in tensor rows/columns, ``uop_begin..uop_end`` the micro-op range and
``lp_0``/``lp_1`` the two loop extents of a GEMM/ALU instruction, ``use_alu_imm`` whether the
ALU takes an immediate. The four dependency flags (0 or 1) say whether the instruction waits
for (pops) or signals (pushes) a token on the queue to the previous or next module in
load -> compute -> store order (VTA's dependency queues, Moreau et al., IEEE Micro 2019).

Spaces are ignored, as by the artifact's reader; blank lines and lines starting with ``#``
are skipped. Any other malformed line is one :class:`~accelperf.errors.ModelError` naming
the line number, the field and what it may hold.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from pathlib import Path

from ...errors import ModelError, invalid

SUBOPCODES = {
    "load": ("load", "sync"),
    "compute": ("loadUop", "loadAcc", "gemm", "alu", "sync"),
    "store": ("store", "sync"),
}
TENSORS = ("inp", "wgt", "empty", "finish")
DEFAULT_STREAM = Path(__file__).parent / "data" / "vta_mixed.insns"
"""VTA's default input: 19 instructions written for accelperf that use every sub-opcode
and odd sizes (the artifact's ``reference.insns`` is the authors' file: give it with
``--input``)."""


@dataclass(frozen=True)
class Instruction:
    """One VTA instruction as the artifact's text format describes it."""

    opcode: str
    subopcode: str
    tensor: str
    xsize: int
    ysize: int
    uop_begin: int
    uop_end: int
    lp_1: int
    lp_0: int
    use_alu_imm: int
    pop_prev: int
    pop_next: int
    push_prev: int
    push_next: int

    def __post_init__(self):
        if self.opcode not in SUBOPCODES:
            raise invalid("opcode", self.opcode, f"one of {', '.join(SUBOPCODES)}")
        if self.subopcode not in SUBOPCODES[self.opcode]:
            raise invalid("subopcode", self.subopcode, f"for a {self.opcode} instruction one "
                          f"of {', '.join(SUBOPCODES[self.opcode])}")
        if self.tensor not in TENSORS:
            raise invalid("tensor", self.tensor, f"one of {', '.join(TENSORS)}")
        if self.opcode == self.subopcode == "load" and self.tensor not in ("inp", "wgt"):
            raise invalid("tensor", self.tensor, "a load fills inp or wgt")
        for name in _NUMBERS:
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise invalid(name, value, "an integer >= 0")
            if name in _FLAGS and value > 1:
                raise invalid(name, value, "a flag, 0 or 1")
        if self.uop_end < self.uop_begin:
            raise invalid("uop_end", self.uop_end, f"at least uop_begin ({self.uop_begin})")

    def __repr__(self) -> str:
        flags = "".join(name for name, on in (("<pop_prev", self.pop_prev),
                                               ("<pop_next", self.pop_next),
                                               (">push_prev", self.push_prev),
                                               (">push_next", self.push_next)) if on)
        return (f"Instruction({self.opcode}.{self.subopcode} {self.tensor} "
                f"{self.xsize}x{self.ysize} uop {self.uop_begin}..{self.uop_end} "
                f"loop {self.lp_1}x{self.lp_0} imm {self.use_alu_imm}"
                f"{' ' + flags if flags else ''})")


_NUMBERS = [f.name for f in fields(Instruction)][3:]
_FLAGS = ("use_alu_imm", "pop_prev", "pop_next", "push_prev", "push_next")


def parse_instructions(text: str, source: str = "instruction stream") -> tuple[Instruction, ...]:
    """Every instruction of ``text``; ``source`` names it in error messages."""
    program = []
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.replace(" ", "").replace("\t", "").strip()
        if not line or line.startswith("#"):
            continue
        program.append(_parse_line(line, f"{source} line {number}"))
    if not program:
        raise ModelError(f"{source} holds no instruction: give one line per instruction, "
                         f"insn, OPCODE, SUBOPCODE, TENSOR and 11 integers")
    return tuple(program)


def read_instructions(path: str | Path) -> tuple[Instruction, ...]:
    """The instructions of the file at ``path`` (see the module docstring for the format)."""
    path = Path(path)
    try:
        text = path.read_text("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise invalid("instruction file", str(path),
                      f"a readable text file ({type(exc).__name__})") from None
    return parse_instructions(text, path.name)


def _parse_line(line: str, where: str) -> Instruction:
    parts = line.split(",")
    if len(parts) != 15:
        raise ModelError(f"{where}: {len(parts)} fields, a VTA instruction has 15: insn, "
                         f"OPCODE, SUBOPCODE, TENSOR, xsize, ysize, uop_begin, uop_end, lp_1, "
                         f"lp_0, use_alu_imm, pop_prev, pop_next, push_prev, push_next")
    if parts[0] != "insn":
        raise invalid(f"{where}: first field", parts[0], "the word 'insn'")
    values = []
    for name, text in zip(_NUMBERS, parts[4:]):
        try:
            values.append(int(text))
        except ValueError:
            raise invalid(f"{where}: {name}", text, "an integer >= 0") from None
    try:
        return Instruction(*parts[1:4], *values)
    except ModelError as exc:
        raise ModelError(f"{where}: {exc}") from None
