"""The `accelperf` command group, `demo`, and the entry point that keeps errors to one line.

Exit statuses: 0 success; 1 a run that failed (a deadlock, a simulation limit, a
measurement that cannot be trusted or made, an internal error, a refuted proof or a failed
interface check, a calibration that cannot reach its measurements); 2 bad input (one line
on stderr naming the option or field, the value and what is allowed); 3 a proof left
undecided (`lpn verify`: time budget, more input classes than the
class search's limit, unknown classes); 130 interrupted (Ctrl-C).
"""

from __future__ import annotations

import importlib
import os
import sys
import warnings
import click

from .. import __version__
from ..errors import FormatNote, ModelError
from . import flags
from .common import StrictGroup, check_output_dir, progress_run
from .stopping import interrupts_kept


# ---------------------------------------------------------------------- the command tree
class CommandFamilies(StrictGroup):
    """The root group. Each family's module (``accelperf.cli.<name>``) registers its
    commands when it is imported, and it is imported only when the family is used: LogCA
    brings SciPy, most of a second, which `accelperf measure ...` or a mistyped option
    should not wait for."""

    families = ("density", "explore", "logca", "lpn", "measure")
    group_class = StrictGroup          # the families themselves are plain strict groups

    def list_commands(self, ctx):
        return sorted(set(super().list_commands(ctx)) | set(self.families))

    def get_command(self, ctx, name):
        if name in self.families and name not in self.commands:
            importlib.import_module(f"{__package__}.{name}")
        return super().get_command(ctx, name)


@click.group(cls=CommandFamilies, context_settings=dict(help_option_names=["-h", "--help"]))
@click.version_option(__version__, prog_name="accelperf")
def cli():
    """Will offloading this work to that accelerator pay off, by how much, and what limits it?

    Three levels of detail: LogCA (logca), computational density (density) and Latency
    Petri Nets (lpn); measure times this machine's own accelerators; explore writes an
    interactive page of all three.

    \b
    Examples:
      accelperf demo --out report                 # every analysis, as an HTML report
      accelperf logca show --preset sparc-t4-engine --kernel aes
      accelperf density bound --algorithm matmul --hierarchy src-map-c
      accelperf lpn simulate jpeg-decoder --input examples/images/hopper_256x192_q90_420.jpg
      accelperf COMMAND --help                    # options and examples of one command
    """


flags.ROOT = cli           # which options each command has, for its error messages


@cli.command()
@click.option("--out", type=click.Path(file_okay=False),     # a str: "" stays "", not "."
              default="accelperf-report", show_default=True,
              help="Directory for index.html, figures and data (created if missing; its "
                   "parent must exist).")
def demo(out):
    """Run the main analyses and write an HTML report.

    The models run on the papers' built-in data; two short measurements of this machine
    are added: AES-128-CBC with and without AES-NI (`openssl speed`, 7 sizes, about 15 s)
    and a quick probe of the caches and memory (about 10 s). A progress line on a
    terminal says which part is running.

    \b
    Examples:
      accelperf demo                     # writes accelperf-report/index.html
      accelperf demo --out /tmp/report
    """
    from ..demo import build_demo_report
    out = check_output_dir(out)
    index = progress_run(None, "demo", lambda tick: build_demo_report(out, progress=tick))
    click.echo(f"report written to {index}")


# ---------------------------------------------------------------------- entry point
def _one_line(text: str) -> str:
    return " ".join(str(text).split())


def _warning_line(message, category, filename, lineno, file=None, line=None):
    """A warning that escaped the models (a bug to fix at its source) still prints as one
    line, not as Python's two-line source dump."""
    print(f"accelperf: warning: {_one_line(message)} ({category.__name__})", file=sys.stderr)


def _usage_message(exc: click.UsageError) -> str:
    """Click's message, without its "Invalid value for '--L':" before a refusal of ours
    that names the flag itself (it read "Invalid value for '--L': --L = ...")."""
    param = getattr(exc, "param", None)
    if isinstance(exc, click.BadParameter) and param is not None and \
            str(exc.message).startswith(tuple(f"{o} = " for o in param.opts)):
        return str(exc.message)
    return exc.format_message()


def main(argv: list[str] | None = None) -> int:
    """Console entry point: run the command, turning every user error into one line + 2.

    Returns the exit status (see the module docstring). Set ACCELPERF_DEBUG=1 to see the
    traceback of an internal error instead of its one-line summary.
    """
    notes = []                   # FormatNotes, printed once the command has given its answer

    def show(message, category, *args, **kwargs):
        if issubclass(category, FormatNote):
            notes.append((message, category))
        else:
            _warning_line(message, category, *args, **kwargs)

    def answered(status: int) -> int:
        for message, category in notes:
            _warning_line(message, category, "", 0)
        return status
    try:
        with warnings.catch_warnings(), interrupts_kept():
            warnings.showwarning = show
            cli.main(args=argv, prog_name="accelperf", standalone_mode=False)
    except click.exceptions.Exit as exc:
        return exc.exit_code
    except (click.exceptions.Abort, KeyboardInterrupt):
        click.echo("accelperf: interrupted", err=True)
        return 130
    except click.exceptions.NoArgsIsHelpError as exc:     # `accelperf density` alone
        click.echo(exc.ctx.get_help())
        return 2
    except click.UsageError as exc:
        where = f" (in `{exc.ctx.command_path}`)" if exc.ctx else ""
        click.echo(f"accelperf: error: {_one_line(_usage_message(exc))}{where}", err=True)
        return 2
    except click.ClickException as exc:
        click.echo(f"accelperf: error: {_one_line(exc.format_message())}", err=True)
        return 2
    except ModelError as exc:
        click.echo(f"accelperf: error: {_one_line(exc)}", err=True)
        return getattr(exc, "exit_status", 2)
    except BrokenPipeError:
        return 0
    except OSError as exc:             # a disk that filled up after the up-front checks
        where = f": {exc.filename}" if exc.filename else ""
        click.echo(f"accelperf: error: {_one_line(exc.strerror or exc)}{where}", err=True)
        return 1
    except SystemExit as exc:          # a command that reported its own verdict or failure
        status = exc.code if isinstance(exc.code, int) else 1
        return status if status in (2, 130) else answered(status)
    except Exception as exc:           # a bug: one line, status 1, traceback on request
        if os.environ.get("ACCELPERF_DEBUG"):
            raise
        click.echo(f"accelperf: internal error: {type(exc).__name__}: {_one_line(exc)} "
                   f"(please report it; ACCELPERF_DEBUG=1 shows the traceback)", err=True)
        return 1
    return answered(0)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
