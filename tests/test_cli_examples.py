"""Every example in a command's --help names real commands and options that parse: an
example a user copies from the help must not be stale."""

import shlex

import click
import pytest

from accelperf.cli.app import cli


def _commands(group, path=()):
    ctx = click.Context(group)
    for name in group.list_commands(ctx):
        cmd = group.get_command(ctx, name)
        yield path + (name,), cmd
        if isinstance(cmd, click.Group):
            yield from _commands(cmd, path + (name,))


def _examples(cmd) -> list[str]:
    lines = (cmd.help or "").splitlines()
    if "Examples:" not in [line.strip() for line in lines]:
        return []
    start = [line.strip() for line in lines].index("Examples:") + 1
    out = []
    for line in lines[start:]:
        if not line.strip():
            break
        for part in line.split("#", 1)[0].replace("|", "&&").split("&&"):
            if part.strip().startswith("accelperf "):
                out.append(part.strip())
    return out


ALL = [(path, ex) for path, cmd in _commands(cli) for ex in _examples(cmd)]


def test_the_commands_a_newcomer_meets_first_have_examples():
    documented = {" ".join(path) for path, _ in ALL} | ({""} if _examples(cli) else set())
    for path in ["", "demo", "density bound", "density probe", "lpn interface", "lpn show",
                 "lpn list", "measure aes", "measure sha256", "measure offload"]:
        assert path in documented, f"`accelperf {path} --help` has no example"


@pytest.mark.parametrize("path,example", ALL + [((), ex) for ex in _examples(cli)])
def test_every_help_example_parses(path, example):
    words = shlex.split(example)[1:]
    cmd, ctx = cli, None
    while isinstance(cmd, click.Group) and words and not words[0].startswith("-"):
        if words[0] == "COMMAND":
            return                                  # the placeholder line of the root help
        ctx = click.Context(cmd, parent=ctx)
        cmd = cmd.get_command(ctx, words.pop(0))
        assert cmd is not None, f"{example!r}: no such command"
    cmd.make_context(cmd.name, list(words), parent=ctx)     # raises on a stale option
