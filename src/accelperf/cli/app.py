"""The `accelperf` command group, `demo`, and the entry point that keeps errors to one line."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from .. import __version__
from ..errors import ModelError


# ---------------------------------------------------------------------- the command tree
@click.group(context_settings=dict(help_option_names=["-h", "--help"]))
@click.version_option(__version__, prog_name="accelperf")
def cli():
    """Will offloading this work to that accelerator pay off, by how much, and what limits it?"""


@cli.command()
@click.option("--out", type=click.Path(file_okay=False, path_type=Path),
              default=Path("accelperf-report"), show_default=True,
              help="Directory for index.html, figures and data.")
def demo(out):
    """Run the main analyses on built-in data and write an HTML report."""
    from ..demo import build_demo_report
    index = build_demo_report(out)
    click.echo(f"report written to {index}")


# ---------------------------------------------------------------------- entry point
def _one_line(text: str) -> str:
    return " ".join(str(text).split())


def main(argv: list[str] | None = None) -> int:
    """Console entry point: run the command, turning every user error into one line + 2."""
    try:
        cli.main(args=argv, prog_name="accelperf", standalone_mode=False)
    except click.exceptions.Exit as exc:
        return exc.exit_code
    except click.exceptions.Abort:
        click.echo("accelperf: aborted", err=True)
        return 130
    except click.UsageError as exc:
        where = f" (in `{exc.ctx.command_path}`)" if exc.ctx else ""
        click.echo(f"accelperf: error: {_one_line(exc.format_message())}{where}", err=True)
        return 2
    except click.ClickException as exc:
        click.echo(f"accelperf: error: {_one_line(exc.format_message())}", err=True)
        return 2
    except ModelError as exc:
        click.echo(f"accelperf: error: {_one_line(exc)}", err=True)
        return 2
    except BrokenPipeError:
        return 0
    except SystemExit as exc:          # a command that reported its own failure
        return exc.code if isinstance(exc.code, int) else 1
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
