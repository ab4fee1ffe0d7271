"""Fast Ψ for VTA and Protoacc inputs (issue 22): a well-formed input read in bulk into
NumPy arrays gives the tokens and latencies of the reference reader, and a bad input gives
the reference reader's error, word for word."""

import json
import random
from pathlib import Path

import numpy as np
import pytest

from accelperf.errors import ModelError
from accelperf.lpn import simulate
from accelperf.lpn.compiled import compiler_missing
from accelperf.lpn.inputs.vta import (DEFAULT_STREAM, SUBOPCODES, TENSORS, InstructionTable,
                                      instruction_table, parse_instructions,
                                      read_instruction_table, read_instructions)
from accelperf.lpn.inputs.protobuf import read_messages
from accelperf.lpn.library import LIBRARY
from accelperf.lpn.library.protoacc import message_token_arrays, message_tokens
from accelperf.lpn.library.vta import instruction_tokens
from accelperf.lpn.net import TokenArray
from authors import authors_file

PROTOACC_AUTHORS = json.loads((Path(__file__).parent / "data/authors/protoacc.json")
                              .read_text())

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


# ---------------------------------------------------------------- Protoacc

def random_message(rng: random.Random, depth: int = 0) -> dict:
    """A message of 1..45 fields of every kind (runs over 32 included), nested up to 3."""
    message = {}
    for i in range(rng.randrange(1, 46 if depth == 0 else 12)):
        kind = rng.choice(("scalar", "nonscalar", "submessage") if depth < 3 else
                          ("scalar", "nonscalar"))
        repeated = rng.random() < 0.4
        data = random_message(rng, depth + 1) if kind == "submessage" else \
            [rng.randrange(0, 300) for _ in range(rng.randrange(1, 6) if repeated else 1)]
        message[f"f{i}" if rng.random() < 0.9 else f"odd name {i}\n"] = {
            "type": kind, "is_repeated": repeated, "data": data}
    return message


def as_lists(tokens: dict) -> dict:
    """Ψ's tokens, arrays or dicts, as lists of property tuples per place."""
    def rows(place):
        value = tokens[place]
        if isinstance(value, np.ndarray):
            return [tuple(r) for r in value.reshape(len(value), -1).tolist()]
        return [tuple(t.values()) for t in value]
    return {place: rows(place) for place in tokens}


def protoacc_docs():
    rng = random.Random(22)
    docs = {"default": LIBRARY["protoacc"]().default_input,
            "default_x50": [LIBRARY["protoacc"]().default_input] * 50}
    docs.update({f"random{i}": [random_message(rng) for _ in range(rng.randrange(1, 8))]
                 for i in range(20)})
    docs["one_random"] = random_message(rng)
    return docs


def test_protoacc_arrays_give_the_reference_tokens():
    for name, doc in protoacc_docs().items():
        fast = message_token_arrays(doc)
        assert fast is not None, name
        assert as_lists(fast) == as_lists(message_tokens(read_messages(doc))), name


def test_protoacc_arrays_give_the_reference_latency_on_the_authors_inputs():
    model = LIBRARY["protoacc"]()
    inputs = sorted({run["input"] for run in PROTOACC_AUTHORS["runs"]})[:2]
    for path in inputs:
        doc = json.loads(authors_file(path))
        assert as_lists(message_token_arrays(doc)) == \
            as_lists(message_tokens(read_messages(doc))), path
    doc = protoacc_docs()["random3"]
    python = simulate(model, doc)
    marking = model.marking(doc)         # the three start places hold arrays
    assert sum(isinstance(t, TokenArray) for t in marking.tokens.values()) == 3
    if compiler_missing() is None:
        compiled = simulate(model, doc, backend="compiled")
        assert (compiled.latency, compiled.total_commits) == \
            (python.latency, python.total_commits)


@pytest.mark.parametrize("doc", [
    [], {}, 7, {"a": {"type": "string", "is_repeated": False, "data": [1]}},
    {"a": {"type": "scalar", "is_repeated": "no", "data": [1]}},
    {"a": {"type": "scalar", "is_repeated": 1, "data": [1]}},
    {"a": {"type": "scalar", "is_repeated": False, "data": []}},
    {"a": {"type": "scalar", "is_repeated": False, "data": [1, 2]}},
    {"a": {"type": "scalar", "is_repeated": False, "data": [True]}},
    {"a": {"type": "scalar", "is_repeated": False, "data": [2.0]}},
    {"a": {"type": "scalar", "is_repeated": False, "data": [2 ** 70]}},
    {"a": {"type": "scalar", "is_repeated": False, "data": 5}},
    {"a": {"type": "submessage", "is_repeated": False, "data": {}}},
    {"a": {"type": "submessage", "is_repeated": False, "data": [1]}},
    [{"a": {"type": "submessage", "is_repeated": False,
            "data": {"b": {"type": "nonscalar", "is_repeated": True, "data": [4, -1]}}}}],
    {"a": {"type": "scalar", "data": [1]}},
    {"a": {"type": "scalar", "is_repeated": False, "data": [1], "extra": 0}},
    {"a": {"type": "scalar", "is_repeated": False, "dat": [1]}},
    {"a": [1]}, [{"a": {"type": "scalar", "is_repeated": False, "data": [1]}}, 3],
])
def test_protoacc_a_message_the_arrays_refuse_reads_as_the_reference_reads_it(doc):
    assert message_token_arrays(doc) is None
    try:
        read_messages(doc)
    except ModelError as exc:
        with pytest.raises(ModelError) as err:
            LIBRARY["protoacc"]().marking(doc)
        assert str(err.value) == str(exc)
    else:                               # 2**70 is a size the reference takes: the engine
        pytest.skip("the reference reader accepts it")          # then says what is wrong
