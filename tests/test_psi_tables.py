"""Fast Ψ for VTA and Protoacc inputs (issue 22): a well-formed input read in bulk into
NumPy arrays gives the tokens and latencies of the reference reader, and a bad input gives
the reference reader's error, word for word."""

import random

import numpy as np
import pytest

from accelperf.errors import ModelError
from accelperf.lpn import simulate
from accelperf.lpn.compiled import compiler_missing
from accelperf.lpn.inputs.vta import (DEFAULT_STREAM, SUBOPCODES, TENSORS, InstructionTable,
                                      instruction_table, parse_instructions,
                                      read_instruction_table, read_instructions)
from accelperf.lpn.library import LIBRARY
from accelperf.lpn.library.vta import instruction_tokens

LINE = "insn, load, load, inp, 16, 1, 0, 0, 0, 0, 0, 0, 1, 0, 0"


def random_stream(n: int, seed: int) -> str:
    """n instructions of every kind with random sizes, flags, spacing and comments."""
    rng = random.Random(seed)
    lines = ["# generated"]
    for _ in range(n):
        opcode = rng.choice(list(SUBOPCODES))
        sub = rng.choice(SUBOPCODES[opcode])
        tensor = rng.choice(("inp", "wgt") if opcode == sub == "load" else TENSORS)
        begin = rng.randrange(0, 40)
        numbers = [rng.randrange(0, 20), rng.randrange(0, 20), begin,
                   begin + rng.randrange(0, 9), rng.randrange(0, 9), rng.randrange(0, 9)] + \
            [0] * 5                 # the flags stay 0: random pops would deadlock the net
        fields = ["insn", opcode, sub, tensor, *map(str, numbers)]
        lines.append(rng.choice((", ", ",", " ,\t")).join(fields))
        if rng.random() < 0.05:
            lines.append(rng.choice(("", "   ", "# note")))
    return "\n".join(lines) + "\n"


def test_vta_table_gives_the_reference_tokens_and_latency(tmp_path):
    model = LIBRARY["vta"]()
    texts = {"mixed": DEFAULT_STREAM.read_text() * 30,
             **{f"random{seed}": random_stream(400, seed) for seed in range(3)}}
    for name, text in texts.items():
        path = tmp_path / f"{name}.insns"
        path.write_text(text)
        table = read_instruction_table(path)
        assert isinstance(table, InstructionTable), name
        reference = read_instructions(path)
        assert table.instructions() == reference
        fast, slow = instruction_tokens(table), instruction_tokens(reference)
        assert isinstance(fast["instruction_memory"], np.ndarray)
        assert fast["instruction_memory"].tolist() == [list(t) for t in
                                                       slow["instruction_memory"]]
        assert fast["launch"] == slow["launch"]
    path = tmp_path / "mixed.insns"
    python = simulate(model, read_instructions(path))
    assert simulate(model, read_instruction_table(path)).latency == python.latency
    if compiler_missing() is None:
        compiled = simulate(model, read_instruction_table(path), backend="compiled")
        assert (compiled.latency, compiled.total_commits) == \
            (python.latency, python.total_commits)


@pytest.mark.parametrize("bad", [
    LINE + ", 0", LINE.replace("insn", "ins", 1), LINE.replace("load, load", "lod, load"),
    LINE.replace("load, load", "load, gemm"), LINE.replace("inp", "acc"),
    LINE.replace("inp", "empty"), LINE.replace("16, 1", "16, x"),
    LINE.replace("16, 1", "-16, 1"), LINE.replace("16, 1", "16, "),
    LINE.replace("16, 1", "16, +1"), LINE.replace("16, 1", "16, 1_0"),
    LINE.replace("16, 1", "16, \u0661"), LINE.replace("0, 1, 0, 0", "0, 2, 0, 0"),
    LINE.replace("16, 1", "16, 99999999999999999999"),
    "insn, compute, gemm, empty, 0, 1, 5, 2, 16, 16, 0, 0, 0, 1, 0",
    "# only a comment",
])
def test_vta_a_line_the_table_refuses_reads_as_the_reference_reads_it(tmp_path, bad):
    text = f"{LINE}\n\n{bad}\n{LINE}\n" if not bad.startswith("#") else bad
    assert instruction_table(text) is None
    path = tmp_path / "prog.insns"
    path.write_text(text)
    try:
        expected = read_instructions(path)
    except ModelError as exc:
        with pytest.raises(ModelError) as err:
            read_instruction_table(path)
        assert str(err.value) == str(exc)
    else:                               # e.g. "+1", "1_0": int() takes them, so the table
        assert read_instruction_table(path) == expected        # leaves them to it


def test_vta_reader_of_a_missing_file_says_what_the_reference_says(tmp_path):
    with pytest.raises(ModelError) as slow:
        read_instructions(tmp_path / "missing.insns")
    with pytest.raises(ModelError) as fast:
        read_instruction_table(tmp_path / "missing.insns")
    assert str(fast.value) == str(slow.value)
