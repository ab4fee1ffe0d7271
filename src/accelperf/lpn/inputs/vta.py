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

Two readers give the same instructions: :func:`parse_instructions`, line by line into
:class:`Instruction` objects (the reference, and the one that names what is wrong), and
:func:`instruction_table`, which checks a whole well-formed stream in bulk into one NumPy
array (issue 22: the line-by-line reader was all of a large VTA run's time) and hands
anything it does not accept to the reference reader.
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
SUBOPCODE_NAMES = ("load", "sync", "loadUop", "loadAcc", "gemm", "alu", "store")
"""Every sub-opcode once: an :class:`InstructionTable` numbers sub-opcodes by this order,
opcodes by SUBOPCODES' order and tensors by TENSORS' order."""
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


@dataclass(frozen=True, eq=False)
class InstructionTable:
    """A well-formed instruction stream as one (n, 14) int64 array, a row per
    instruction: opcode, sub-opcode and tensor as indices (see SUBOPCODE_NAMES), then the
    11 numbers in the text format's order."""

    rows: object
    source: str

    def __len__(self) -> int:
        return self.rows.shape[0]

    def instructions(self) -> tuple[Instruction, ...]:
        """The same stream as :class:`Instruction` objects."""
        ops, tensors = tuple(SUBOPCODES), TENSORS
        return tuple(Instruction(ops[r[0]], SUBOPCODE_NAMES[r[1]], tensors[r[2]], *r[3:])
                     for r in self.rows.tolist())

    def __repr__(self) -> str:
        return f"InstructionTable({len(self)} instructions from {self.source})"


def _code_triples() -> dict:
    """(opcode, sub-opcode, tensor) names of every valid combination -> their indices."""
    triples = {}
    for o, (opcode, subs) in enumerate(SUBOPCODES.items()):
        for sub in subs:
            for t, tensor in enumerate(TENSORS):
                if opcode == sub == "load" and tensor not in ("inp", "wgt"):
                    continue
                triples[opcode, sub, tensor] = (o, SUBOPCODE_NAMES.index(sub), t)
    return triples


_TRIPLES = _code_triples()


def instruction_table(text: str, source: str = "instruction stream") -> InstructionTable | None:
    """The instructions of ``text`` checked in bulk as one :class:`InstructionTable`, or
    None when any line is not plainly well formed (a field that is not ASCII digits, a
    wrong field count, a bad name or flag, a number beyond int64): the caller then uses
    :func:`parse_instructions`, which accepts or names the same lines as before."""
    import numpy as np
    kept = [line for line in (raw.strip() for raw in
                              text.replace(" ", "").replace("\t", "").splitlines())
            if line and line[0] != "#"]
    if not kept or any(line.count(",") != 14 for line in kept):
        return None
    parts = ",".join(kept).split(",")
    if any(word != "insn" for word in parts[0::15]):
        return None
    codes = [_TRIPLES.get(t) for t in zip(parts[1::15], parts[2::15], parts[3::15])]
    if None in codes:
        return None
    columns = []
    for k in range(4, 15):
        column = parts[k::15]
        digits = "".join(column)
        if "" in column or not (digits.isascii() and digits.isdigit()):
            return None
        try:
            columns.append(np.array(list(map(int, column)), dtype=np.int64))
        except OverflowError:
            return None
    numbers = np.column_stack(columns)
    flags = numbers[:, [_NUMBERS.index(name) for name in _FLAGS]]
    uop_begin, uop_end = (numbers[:, _NUMBERS.index(n)] for n in ("uop_begin", "uop_end"))
    if (flags > 1).any() or (uop_end < uop_begin).any():
        return None
    return InstructionTable(np.hstack((np.array(codes, dtype=np.int64), numbers)), source)


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
    return parse_instructions(_text_of(path), path.name)


def read_instruction_table(path: str | Path) -> InstructionTable | tuple[Instruction, ...]:
    """The instructions of the file at ``path`` as one :class:`InstructionTable` when the
    whole file is well formed, else as :func:`read_instructions` gives them (or the same
    error it raises)."""
    path = Path(path)
    text = _text_of(path)
    table = instruction_table(text, path.name)
    return table if table is not None else parse_instructions(text, path.name)


def _text_of(path: Path) -> str:
    try:
        return path.read_text("utf-8-sig")
    except (OSError, UnicodeDecodeError) as exc:
        raise invalid("instruction file", str(path),
                      f"a readable text file ({type(exc).__name__})") from None


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
