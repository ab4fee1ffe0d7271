"""VTA: the instruction-stream reader and the LPN, against the OSDI'24 artifact's cycles."""

import json
from pathlib import Path

import pytest

from accelperf.errors import ModelError
from accelperf.lpn import LimitError, simulate
from accelperf.lpn.inputs.vta import (DEFAULT_STREAM, Instruction, parse_instructions,
                                      read_instructions)
from accelperf.lpn.library.vta import instruction_tokens, vta
from authors import authors_file

DATA = Path(__file__).parent / "data"
AUTHORS = json.loads((DATA / "authors" / "vta.json").read_text())
REFERENCE_SHA256 = "9a53dc3b963fae1358f8dbe63b7931e931c79c5bbfea0f22e2584f8189125fb8"


def reference_text() -> str:
    """The artifact's reference.insns, from the authors' repository (skips without it)."""
    return authors_file("lpn_examples/vta/reference.insns", REFERENCE_SHA256).decode()


class _Streams(dict):
    def __missing__(self, name):
        assert name == "reference"
        self[name] = parse_instructions(reference_text())
        return self[name]


STREAMS = _Streams(mixed=read_instructions(DEFAULT_STREAM))
DEPENDENCY_QUEUES = {"pload2compute": "load_to_compute", "pcompute2load": "compute_to_load",
                     "pcompute2store": "compute_to_store", "pstore2compute": "store_to_compute"}
LINE = "insn, load, load, inp, 16, 1, 0, 0, 0, 0, 0, 0, 1, 0, 0"


# ---------------------------------------------------------------- reader

def test_reference_stream_is_read_whole():
    program = STREAMS["reference"]
    assert len(program) == 142
    by_opcode = {op: sum(i.opcode == op for i in program) for op in ("load", "compute", "store")}
    assert by_opcode == {"load": 38, "compute": 38, "store": 66}
    assert program[0] == Instruction("store", "sync", "empty", 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0)
    assert program[-1].tensor == "finish"


def test_reader_takes_the_fields_in_order_and_skips_blank_and_comment_lines():
    text = "# a comment\n\n" + "insn,compute,alu,empty,0,2048,2,3,1,16,1,0,1,0,1\n"
    (alu,) = parse_instructions(text)
    assert (alu.xsize, alu.ysize, alu.uop_begin, alu.uop_end, alu.lp_1, alu.lp_0) == \
        (0, 2048, 2, 3, 1, 16)
    assert (alu.use_alu_imm, alu.pop_prev, alu.pop_next, alu.push_prev, alu.push_next) == \
        (1, 0, 1, 0, 1)
    assert "compute.alu" in repr(alu) and "push_next" in repr(alu)


@pytest.mark.parametrize("bad, message", [
    (LINE + ", 0", "line 3: 16 fields, a VTA instruction has 15"),
    (LINE.replace("insn", "ins", 1), "line 3: first field = 'ins' is invalid"),
    (LINE.replace("load, load", "lod, load"), "line 3: opcode = 'lod' is invalid: one of load"),
    (LINE.replace("load, load", "load, gemm"),
     "line 3: subopcode = 'gemm' is invalid: for a load instruction one of load, sync"),
    (LINE.replace("inp", "acc"), "line 3: tensor = 'acc' is invalid"),
    (LINE.replace("inp", "empty"), "line 3: tensor = 'empty' is invalid: a load fills inp"),
    (LINE.replace("16, 1", "16, x"), "line 3: ysize = 'x' is invalid: an integer >= 0"),
    (LINE.replace("16, 1", "-16, 1"), "line 3: xsize = -16 is invalid"),
    (LINE.replace("0, 1, 0, 0", "0, 2, 0, 0"), "line 3: pop_next = 2 is invalid: a flag, 0 or 1"),
    ("insn, compute, gemm, empty, 0, 1, 5, 2, 16, 16, 0, 0, 0, 1, 0",
     "line 3: uop_end = 2 is invalid: at least uop_begin \\(5\\)"),
])
def test_malformed_line_is_one_error_naming_its_line(bad, message):
    with pytest.raises(ModelError, match=message) as err:
        parse_instructions(f"{LINE}\n\n{bad}\n{LINE}", "prog.insns")
    assert str(err.value).startswith("prog.insns line 3:") and "\n" not in str(err.value)


def test_empty_stream_and_missing_file_are_errors(tmp_path):
    with pytest.raises(ModelError, match="holds no instruction"):
        parse_instructions("# nothing\n\n")
    with pytest.raises(ModelError, match="instruction file = .*missing.insns.* readable"):
        read_instructions(tmp_path / "missing.insns")


# ---------------------------------------------------------------- Ψ

def test_psi_makes_one_token_per_instruction_and_the_program_token():
    tokens = instruction_tokens(STREAMS["mixed"])
    assert len(tokens["instruction_memory"]) == len(STREAMS["mixed"]) == 19
    assert tokens["launch"] == [(19,)]


def test_psi_takes_the_text_format_as_lines_or_one_string():
    lines = reference_text().splitlines()
    expected = instruction_tokens(STREAMS["reference"])
    assert instruction_tokens(lines) == expected
    assert instruction_tokens("\n".join(lines)) == expected


@pytest.mark.parametrize("bad", [[], [1, 2], {"insn": 1}, 7])
def test_psi_rejects_what_is_not_a_stream(bad):
    with pytest.raises(ModelError, match="VTA input = .* is invalid: a non-empty instruction"):
        instruction_tokens(bad)


# ---------------------------------------------------------------- the net

def _run(entry, trace=False, **options):
    program = STREAMS[entry["stream"]]
    if entry["prefix"] is not None:
        program = program[:entry["prefix"]]
    c = entry["queue_capacity"]
    return simulate(vta(load_capacity=c, compute_capacity=c, store_capacity=c, **options),
                    program, trace=trace)


def _label(entry):
    return f"{entry['stream']}-{entry['prefix'] or 'all'}-cap{entry['queue_capacity']}"


@pytest.mark.parametrize("entry", AUTHORS["runs"], ids=_label)
def test_cycles_equal_the_authors_simulator(entry):
    r = _run(entry)
    assert r.latency == entry["cycles"]
    assert r.done_tokens == (entry["prefix"] or len(STREAMS[entry["stream"]]))
    # Dependency tokens pushed but never popped stay queued, as in the authors' run.
    left = {ours: r.final_marking[ours] for ours in DEPENDENCY_QUEUES.values()}
    assert left == {DEPENDENCY_QUEUES[theirs]: n
                    for theirs, n in entry["dependency_tokens_left"].items()}


def test_reference_stream_is_137204_cycles():
    r = simulate(vta(), STREAMS["reference"])
    assert r.latency == 137204 and isinstance(r.latency, int)
    assert r.commits["store_done"] == 66 and r.commits["read"] == 18   # ceil(142 / 8)


def test_default_input_is_the_shipped_stream_and_matches_the_authors():
    (entry,) = [e for e in AUTHORS["runs"] if e["stream"] == "mixed" and
                e["prefix"] is None and e["queue_capacity"] == 512]
    assert simulate(vta()).latency == entry["cycles"]


def test_ticks_keep_the_fractional_store_latency():
    # 23 instructions end on a 1x1 store: 27/8 cycles, so a fraction of a cycle remains.
    (entry,) = [e for e in AUTHORS["runs"] if e["prefix"] == 23]
    r = _run(entry, trace=True)
    assert r.latency == entry["cycles"] == 34365.375
    last_store = [f for f in r.trace if f.transition == "store_done"][-1]
    assert last_store.end - last_store.start == 27 / 8


def test_without_the_dispatch_port_the_engine_quirk_shows():
    # accelperf locks the dispatched head at the start of the cycle; the artifact's engine
    # removes it at the end, so the next instruction waits a cycle (module docstring).
    reference = next(e for e in AUTHORS["runs"] if e["stream"] == "reference"
                     and e["prefix"] is None and e["queue_capacity"] == 512)
    assert _run(reference, serial_dispatch=False).latency == 137203
    assert "dispatch_port" not in [p.name for p in vta(serial_dispatch=False).places]


def test_fewer_slots_never_speed_the_stream_up():
    runs = {c: simulate(vta(c, c, c), STREAMS["mixed"]).latency for c in (1, 2, 4, 512)}
    assert runs[1] >= runs[2] >= runs[4] >= runs[512]
    assert runs[1] > runs[512]
    # One compute slot alone (loads and stores unbounded) already costs time.
    assert simulate(vta(compute_capacity=1), STREAMS["mixed"]).latency > runs[512]


def test_net_size_matches_table_2_up_to_the_documented_changes():
    m = vta()
    # An edge joins a transition and a place ("split" has two output arcs into one place).
    edges = sum(len(set(t.inputs)) + len({a.place for a in t.outputs}) for t in m.transitions)
    assert (len(m.transitions), len(m.places), edges) == (12, 21, 47)


@pytest.mark.parametrize("option, value", [("load_capacity", 0), ("store_capacity", "8"),
                                           ("fetch_batch", True), ("compute_capacity", -1)])
def test_bad_configuration_is_named(option, value):
    with pytest.raises(ModelError, match=f"{option} = {value!r} is invalid: an integer >= 1"):
        vta(**{option: value})


def test_fetch_batch_sets_the_read_commands():
    r = simulate(vta(fetch_batch=5), STREAMS["mixed"])
    assert r.commits["read"] == 4                      # 19 instructions: 5 + 5 + 5 + 4


# ---------------------------------------------------------------- command line

def test_cli_simulates_the_authors_instruction_file(cli, tmp_path):
    path = tmp_path / "reference.insns"
    path.write_text(reference_text())
    code, out, _ = cli("lpn", "simulate", "vta", "--input", str(path), "--json")
    assert code == 0 and json.loads(out)["latency"] == 137204
    code, out, _ = cli("lpn", "simulate", "vta", "--input", str(DEFAULT_STREAM),
                       "--json")
    assert code == 0 and json.loads(out)["latency"] == 464


def test_cli_takes_the_stream_as_json_lines(cli, tmp_path):
    lines = reference_text().splitlines()[:23]
    code, out, _ = cli("lpn", "simulate", "vta", "--input", json.dumps(lines), "--json")
    assert code == 0 and json.loads(out)["latency"] == 34365.375
    path = tmp_path / "prefix.json"
    path.write_text(json.dumps(lines))
    code, out, _ = cli("lpn", "simulate", "vta", "--input", str(path), "--json")
    assert code == 0 and json.loads(out)["latency"] == 34365.375


def test_cli_rejects_a_malformed_file_in_one_line(cli, tmp_path):
    path = tmp_path / "bad.insns"
    lines = reference_text().splitlines()
    lines[6] = lines[6].replace("gemm", "gemn")
    path.write_text("\n".join(lines))
    code, out, err = cli("lpn", "simulate", "vta", "--input", str(path), "--json")
    assert code == 2 and out == ""
    assert err.strip().count("\n") == 0 and "bad.insns line 7: subopcode = 'gemn'" in err


def test_max_time_counts_cycles_not_ticks():
    # The first read command (8 instructions) commits at 21 + 2·8 = 37 cycles.
    with pytest.raises(LimitError, match="stopped at cycle 37: the next event is at 38, "
                                         "past max_time = 37"):
        simulate(vta(), STREAMS["reference"], max_time=37)


@pytest.mark.parametrize("bad", [0, 1.5, True])
def test_ticks_per_cycle_must_be_a_whole_number(bad):
    from accelperf.lpn import Net
    with pytest.raises(ModelError, match=f"ticks_per_cycle = {bad!r} is invalid"):
        Net("n", ticks_per_cycle=bad)


def test_instructions_built_by_hand_are_checked_too():
    with pytest.raises(ModelError, match="subopcode = 'alu' is invalid: for a store"):
        Instruction("store", "alu", "empty", 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0)
    with pytest.raises(ModelError, match="xsize = 1.5 is invalid: an integer >= 0"):
        Instruction("store", "store", "empty", 1.5, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0)
