"""Errors name the field; the command line names the flag (issue 37 item 3).

Model code (everything outside accelperf/cli/) says what is wrong by the field's own name
(``input``, ``space``, ``kernel``), and accelperf.cli.flags is the one table from fields to
the flags each command reads them from. These tests keep it so: no ``--flag`` in a message
outside cli/, every flag in the table exists on its command, and the rewrite gives the
command line the text it printed before.
"""

from __future__ import annotations

import ast
import pickle
import re
from pathlib import Path

import click
import pytest

from accelperf.cli import main
from accelperf.cli.app import cli
from accelperf.cli.flags import BY_COMMAND, FLAGS, in_flags, quoted
from accelperf.errors import ModelError, invalid

SRC = Path(__file__).resolve().parents[1] / "src" / "accelperf"
FLAG = re.compile(r"(?<![\w-])--[a-z]")

# Calls whose string arguments end up in a message: the refusals themselves, warnings, and
# the checks that take the name of the field they check.
MESSAGE_CALLS = {"invalid", "warn", "whole", "entries", "record", "parse_size",
                 "parse_frequency", "check_count", "real_number"}

# Messages that still name a flag, each with the reason; remove an entry when its reason
# goes. A test outside cli/ pins the text of a direct call (tests are kept unchanged):
PINNED = {
    ("lpn/library/block_pipeline.py", "--input["): "test_lpn_library.py",
    ("logca/design.py", "--pair"): "check_pair: test_logca_design.py",
    ("logca/design.py", "--target size"): "parse_target: test_logca_design.py",
    ("measure/crypto.py", "--host"): "measure_kernel: test_measure.py",
    ("measure/offload.py", "--target"): "measure_offload: test_measure.py",
    ("measure/offload.py", "--kernel"): "measure_offload: test_measure.py",
    ("lpn/analysis/space.py", "--space"): "load_space: test_lpn_classes.py",
}
# Modules the parameters and formula-language branches of issue 37 rewrite: their messages
# follow once those have merged.
LATER: set = set()


def _message_strings(tree: ast.AST):
    """(line, text) of every string constant, f-string parts included, in a raise, in the
    arguments of a call that makes or checks a message, or in a parameter's default."""
    def called(node):
        f = node.func
        name = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) \
            else ""
        return name in MESSAGE_CALLS or name.endswith(("Error", "Warning"))

    roots = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Raise) and node.exc is not None:
            roots.append(node.exc)
        elif isinstance(node, ast.Call) and called(node):
            roots.extend(node.args + [k.value for k in node.keywords])
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            roots.extend(node.args.defaults + [d for d in node.args.kw_defaults if d])
    seen = set()
    for root in roots:
        for node in ast.walk(root):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) \
                    and id(node) not in seen:
                seen.add(id(node))
                yield node.lineno, node.value


def flag_messages():
    for path in sorted(SRC.rglob("*.py")):
        module = path.relative_to(SRC).as_posix()
        if module.startswith("cli/"):
            continue
        for line, text in _message_strings(ast.parse(path.read_text("utf-8"))):
            if FLAG.search(text):
                yield module, line, text


def test_no_flag_in_a_message_outside_the_cli():
    found = [(m, line, text) for m, line, text in flag_messages()
             if (m, text) not in PINNED and m not in LATER]
    assert not found, "model code names a flag; name the field (accelperf.cli.flags):\n" + \
        "\n".join(f"  {m}:{line}: {text!r}" for m, line, text in found)


def test_every_exception_is_still_needed():
    present = {(m, text) for m, _, text in flag_messages()}
    assert not [k for k in PINNED if k not in present], "remove the entries that are gone"
    assert not LATER - {m for m, _ in present}, "remove the modules that are clean"


def test_the_scan_sees_a_flag_in_a_message():
    tree = ast.parse('def f(x, source="--param"):\n'
                     '    if x: raise invalid("--input", x, "ok")\n'
                     '    raise ModelError(f"give --space {x}")\n')
    assert sorted(t for _, t in _message_strings(tree)) == \
        ["--input", "--param", "give --space ", "ok"]


# ---------------------------------------------------------------------- the table
def _commands():
    """{"lpn simulate": click.Command, ...} for every command of the tree."""
    out = {}

    def walk(group, path, ctx):
        for name in group.list_commands(ctx):
            command = group.get_command(ctx, name)
            where = f"{path} {name}".strip()
            if isinstance(command, click.Group):
                walk(command, where, click.Context(command, parent=ctx, info_name=name))
            else:
                out[where] = command
    walk(cli, "", click.Context(cli, info_name="accelperf"))
    return out


def _flags(command) -> set[str]:
    return {o for p in command.params if isinstance(p, click.Option)
            for o in p.opts + p.secondary_opts}


def test_every_flag_in_the_table_exists_on_its_command():
    commands = _commands()
    assert "lpn simulate" in commands and "measure gpu" in commands
    for field, flag in FLAGS.items():
        assert any(flag in _flags(c) for c in commands.values()), (field, flag)
    for name, fields in BY_COMMAND.items():
        assert name in commands, name
        for field, flag in fields.items():
            assert flag in _flags(commands[name]), (name, field, flag)


def test_the_rewrite_says_the_flag_of_the_command():
    assert in_flags("input[3] (message bytes) = 0 is invalid: x", "input[3] (message bytes)",
                    "lpn simulate") == "--input[3] (message bytes) = 0 is invalid: x"
    assert in_flags("input.bytes = 0 is invalid", "input.bytes", "lpn simulate") == \
        "--input.bytes = 0 is invalid"
    assert in_flags("tolerance = 0 is invalid", "tolerance", "lpn verify") == \
        "--within = 0 is invalid"
    assert in_flags("tolerance = 0 is invalid", "tolerance", "lpn simulate") == \
        "tolerance = 0 is invalid"              # a field the command has no flag for
    assert in_flags("x is outside; give `space` FILE or leave `nothing` out", None,
                    "lpn interface") == "x is outside; give --space FILE or leave `nothing` out"
    assert in_flags("inputs = 0", "input", "lpn simulate") == "inputs = 0"  # not its name


def test_the_field_travels_with_the_error():
    with pytest.raises(ModelError) as caught:
        invalid("input[1] (a size)", 0, "a whole number")
    exc = pickle.loads(pickle.dumps(caught.value))       # as from a batch worker
    assert exc.field == "input[1] (a size)" and str(exc) == caught.value.args[0]
    assert exc.embedded() == "`input`[1] (a size) = 0 is invalid: a whole number"
    assert quoted(ValueError("plain")) == "plain"
    assert ModelError("no field").field is None


def test_python_names_the_field_and_the_command_line_the_flag(capsys):
    from accelperf.lpn import simulate
    from accelperf.lpn.library import LIBRARY
    with pytest.raises(ModelError, match=r"^input\[1\] \(message bytes\) = 0 is invalid"):
        simulate(LIBRARY["credit-link"](), [1, 0])
    assert main(["lpn", "simulate", "credit-link", "--input", "[1, 0]"]) == 2
    assert capsys.readouterr().err.startswith(
        "accelperf: error: --input[1] (message bytes) = 0 is invalid: a whole number")


@pytest.mark.parametrize("argv, starts", [
    (["logca", "show", "--preset", "ultrasparc-t3", "--kernel", "aes"],
     "--preset = 'ultrasparc-t3' is invalid: valid devices are"),
    (["logca", "show", "--preset", "ultrasparc-t2", "--kernel", "aes256"],
     "--kernel = 'aes256' is invalid: valid kernels are"),
    (["density", "bound", "--algorithm", "matmull", "--hierarchy", "src-map-c"],
     "--algorithm = 'matmull' is invalid: valid algorithms are"),
    (["lpn", "verify", "jpeg-decoder", "--space", "SPACE", "--prove", "latncy <= 3"],
     "--prove = 'latncy <= 3' is invalid: 'latncy' is no name of this formula (names: "
     "latency; places by count(P), sum(P.p), P[i].p) (did you mean 'latency'?)"),
    (["lpn", "verify", "jpeg-decoder", "--space", "SPACE", "--prove", "latency + 3"],
     "--prove = 'latency + 3' is invalid: a condition"),
    (["lpn", "verify", "jpeg-decoder", "--space", "SPACE", "--size", "coef_slots", "--range",
      "1..4", "--budget", "latency <= 4000"], "--size = 'coef_slots' is invalid: the net has"),
    (["lpn", "verify", "jpeg-decoder", "--space", "SPACE", "--size", "coeff_slots", "--range",
      "1..4", "--budget", "latncy <= 4000"], "--budget = 'latncy <= 4000' is invalid"),
    # not "Invalid value for '--L': --L = ..." (click's words before ours)
    (["logca", "curve", "--L", "1500±200%", "--o", "1", "--C", "1", "--A", "2", "--beta", "1",
      "--out", "never-written.png"], "--L = '1500±200%' is invalid: the interval"),
    (["lpn", "simulate", "jpeg-decoder", "--input", "[0, 5]"],
     "--input[0] (AC symbols of a block) = 0 is invalid"),
    # the input as the JSON it was written in, not Python's repr of it
    (["lpn", "simulate", "block-pipeline", "--input", '{"width": 65535, "height": 65535}'],
     '--input = {"width": 65535, "height": 65535} is invalid: at most'),
])
def test_a_new_users_typos_are_named_by_their_flags(argv, starts, capsys, monkeypatch):
    """A new user's findings: these said `device`, `kernel`, `algorithm`, `property` and
    `place`. A property or budget is refused before any class is followed."""
    from accelperf.lpn.analysis.proofs import sizing, verify
    for module in (verify, sizing):
        monkeypatch.setattr(module, "partition", lambda *a, **k: pytest.fail("partitioned"))
    space = str(SRC.parents[1] / "examples" / "spaces" / "jpeg-decoder-18-blocks.toml")
    assert main([space if a == "SPACE" else a for a in argv]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"accelperf: error: {starts}") and len(err.splitlines()) == 1


def test_a_field_is_said_as_a_flag_only_on_a_command_that_has_it(cli, tmp_path):
    """A bad block in `lpn calibrate --measured`'s file is the file's input[0], not an
    --input the command does not have (it printed "`AC` symbols" before the block was
    named, then "--input[0]")."""
    measured = tmp_path / "m.csv"
    measured.write_text('input,cycles\n"[0,1,1,1,1,1]",700\n')
    code, _, err = cli("lpn", "calibrate", "jpeg-decoder", "--measured", str(measured))
    assert code == 2 and err.startswith(
        "accelperf: error: --measured line 2 ([0,1,1,1,1,1]): input[0] (AC symbols of a "
        "block) = 0 is invalid"), err
    assert in_flags("give `input` or `nothing`", None, "lpn calibrate") == \
        "give input or `nothing`"          # a name the table does not know keeps its marks
    assert in_flags("give `input`", None, "lpn simulate") == "give --input"


def test_a_models_own_field_reads_the_same_from_every_command():
    """A Ψ's refusal `request size = 0` read `\`request\` size = 0` inside calibrate's
    --measured message and `\`requests\` = ...` inside --check's: a field of several
    words is no flag's name, and one the table does not know loses its marks where it is
    the value refused."""
    with pytest.raises(ModelError) as caught:
        invalid("request size", 0, "a whole number of bytes")
    assert caught.value.embedded() == "request size = 0 is invalid: a whole number of bytes"
    assert in_flags("INPUT = '5' is invalid for `check`: `requests` = 5 is invalid: a list",
                    None, "lpn interface") == \
        "INPUT = '5' is invalid for --check: requests = 5 is invalid: a list"
    assert in_flags("leave `nothing` out", None, "lpn interface") == "leave `nothing` out"
