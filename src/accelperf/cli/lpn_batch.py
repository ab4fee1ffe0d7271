"""`lpn simulate` on many inputs: rows written as they finish, `--resume`, progress.

The batch itself runs in :mod:`accelperf.lpn.batch`; this module turns the command line
into names of inputs (read where they run), writes every row the moment it arrives (CSV,
or Parquet through pyarrow), picks up a killed batch with ``--resume`` and shows rows
done, rate and time left.
"""

from __future__ import annotations

import glob
import os
import sys
import time
from pathlib import Path
from typing import NoReturn

import click
from rich.markup import escape
from rich.table import Table

from ..errors import ModelError, invalid
from ..outputs import OutputLock, write_atomic
from ..report import dump_json
from .batch_rows import Provenance, RowWriter
from .common import check_output, console
from .lpn_calibrate import coverage_unchecked

SUFFIXES = (".csv", ".parquet", ".json")
SHOWN_FAILURES = 20


def batch_names(texts, pattern, model=None) -> list[str]:
    """Every input's name (a file path or JSON text, read later, where it runs). A
    directory gives the files ``model`` reads (a glob, written by hand, gives all it
    matches); the files left out are named on stderr."""
    from ..lpn.loader import reads_file
    names = list(texts)
    if pattern:
        path = Path(pattern)
        if path.is_dir():
            files = sorted(p for p in path.iterdir() if p.is_file())
            left = [p for p in files if model is not None and not reads_file(model, p)]
            files = [p for p in files if p not in left]
            if left:
                shown = ", ".join(p.name for p in left[:5]) + (", ..." if len(left) > 5 else "")
                click.echo(f"--inputs {pattern}: left out {len(left)} file(s) that are no "
                           f"input ({shown}); a glob such as '{path / '*'}' takes every "
                           f"file", err=True)
        else:
            files = sorted(Path(p) for p in glob.glob(pattern, recursive=True)
                           if Path(p).is_file())
        if not files:
            raise invalid("--inputs", pattern, "no input files there (a directory or a glob "
                                               "such as 'inputs/*.json')")
        names += [str(p) for p in files]
    if not names:
        raise ModelError("--input/--inputs: a batch needs at least one input")
    return names


# ---------------------------------------------------------------------- the command
def simulate_batch(model_spec, texts, pattern, backend, workers, scheduler, out, limits,
                   as_json, resume=False, send_inputs=False, params=None, params_file=None):
    """Run the batch, writing rows as they arrive; exit 1 when an input failed, 130 on
    Ctrl-C (the rows written so far kept)."""
    from ..lpn.batch import check_scheduler
    from ..lpn.loader import load_model
    check_output(out, "--out", SUFFIXES)
    if resume and (out is None or out.suffix.lower() == ".json"):
        raise invalid("--resume", "on", "it needs --out FILE.csv or FILE.parquet (the rows "
                                        "already there are skipped)")
    if send_inputs and scheduler is None:
        raise invalid("--send-inputs", "on", "it goes with --scheduler (local workers read "
                                             "the files themselves)")
    if scheduler is not None:
        check_scheduler(scheduler)
    model = load_model(model_spec, params)
    names = batch_names(texts, pattern, model)
    streamed = out is not None and out.suffix.lower() != ".json"
    lock = OutputLock(out, "--out", note=lambda text: click.echo(text, err=True)) \
        if streamed else None
    if lock is not None:
        lock.acquire()
    try:
        _run_batch(model_spec, model, names, backend, workers, scheduler, out, limits,
                   as_json, resume, send_inputs, params, streamed, params_file)
    finally:
        if lock is not None:
            lock.release()


def _run_batch(model_spec, model, names, backend, workers, scheduler, out, limits, as_json,
               resume, send_inputs, params, streamed, params_file=None):
    from ..lpn.batch import BatchRun
    from ..lpn.params import values_of
    writer = None
    skipped = 0
    if streamed:
        provenance = Provenance.of(model.name, values_of(model), backend, names, limits)
        writer = RowWriter(out, provenance, resume, note=lambda text: click.echo(text, err=True))
        if writer.done:
            before = len(names)
            names = [n for n in names if provenance.key(n) not in writer.done]
            skipped = before - len(names)
            click.echo(f"--resume: {skipped} input(s) already in {out}, {len(names)} to run",
                       err=True)
    note_backend(backend)
    coverage_unchecked(params_file, model_spec)
    if scheduler is not None:
        _quiet_dask()
    remote = model_spec if scheduler and not params else model   # with params: ship it built
    run = BatchRun(remote, ((n, n) for n in names),
                   backend=backend, scheduler=scheduler, by_name=True, ship_bytes=send_inputs,
                   workers=min(workers or os.cpu_count() or 1, max(1, len(names))),
                   limits={k: v for k, v in limits.items() if v is not None})
    kept, failures, began = [], [], time.perf_counter()
    done = n_failed = 0
    try:
        with _progress(len(names)) as tick:
            for i, row in run:
                done += 1
                if writer is not None:
                    writer.write(row)
                else:
                    kept.append((i, row))
                if not row.ok:
                    n_failed += 1
                    if len(failures) < SHOWN_FAILURES:
                        failures.append(row)
                tick(done)
    except KeyboardInterrupt:
        if writer is not None:
            os.close(writer.fd)
        click.echo(f"interrupted after {done} of {len(names)} rows"
                   + (f"; they are in {writer.rows_path}: run again with --resume"
                      if writer is not None else ""), err=True)
        raise SystemExit(130) from None
    except ModelError:
        if writer is not None:
            os.close(writer.fd)
        raise
    if writer is not None:
        writer.close()
        click.echo(f"wrote {out}", err=True)
    seconds = time.perf_counter() - began
    summary = {"model": model.name, "workers": run.workers, "where": run.where,
               "seconds": seconds, "failures": n_failed}
    if out is not None and out.suffix.lower() == ".json":
        write_atomic(out, dump_json(_with_rows(summary, kept)))
        click.echo(f"wrote {out}", err=True)
    if as_json:
        click.echo(dump_json(_with_rows(summary, kept) if writer is None else
                             dict(summary, rows_written=done, skipped=skipped, out=str(out))))
    elif writer is None:
        _print_rows(model.name, [r for _, r in sorted(kept, key=lambda p: p[0])], summary)
    else:
        console.print(f"[bold]{escape(model.name)}[/bold]: {done} rows written to "
                      f"{escape(str(out))} ({n_failed} of them failed, {skipped} skipped "
                      f"as done), "
                      f"{run.workers} worker(s), {seconds:.2f} s")
        if failures:
            _print_rows(model.name, failures, None)
    if n_failed:
        raise SystemExit(1)


def _with_rows(summary: dict, kept) -> dict:
    return dict(summary, rows=[r.to_dict() for _, r in sorted(kept, key=lambda p: p[0])])


def _print_rows(model: str, rows, summary) -> None:
    title = (f"{model}: {len(rows)} inputs, {summary['failures']} failed, "
             f"{summary['workers']} worker(s), {summary['seconds']:.2f} s") if summary \
        else f"failed rows (the first {SHOWN_FAILURES} at most)"
    table = Table(title=title)
    for col in ("input", "latency", "commits", "bottleneck", "seconds", "error"):
        table.add_column(col, justify="left" if col in ("input", "error") else "right")
    for r in rows:
        shown = ["—" if v is None else str(v) for v in (r.latency, r.commits, r.bottleneck)]
        table.add_row(escape(r.name), *shown, f"{r.seconds:.3f}", escape(r.error or ""))
    console.print(table)


class _progress:
    """Rows done, rate and time left on stderr when it is a terminal."""

    def __init__(self, total: int):
        self.total = total

    def __enter__(self):
        from rich.console import Console
        from rich.progress import BarColumn, Progress, TextColumn, TimeRemainingColumn
        self.bar = Progress(TextColumn("{task.description}"), BarColumn(),
                            TimeRemainingColumn(), console=Console(stderr=True),
                            transient=True, disable=not sys.stderr.isatty())
        self.bar.__enter__()
        self.task = self.bar.add_task(f"0/{self.total} rows", total=self.total)
        self.began = time.perf_counter()
        return self.tick

    def tick(self, done: int) -> None:
        rate = done / max(time.perf_counter() - self.began, 1e-9)
        self.bar.update(self.task, completed=done,
                        description=f"{done}/{self.total} rows, {rate:,.0f} rows/s")

    def __exit__(self, *exc):
        return self.bar.__exit__(*exc)


def _quiet_dask() -> None:
    """Dask's client logs a lost connection with tracebacks; the command says it in one
    line (exit 2), so its loggers only speak for what is critical."""
    import logging
    try:
        import distributed  # noqa: F401 - it sets its loggers' levels when imported
    except ImportError:
        return                                  # the batch says what to install
    for name in list(logging.root.manager.loggerDict):
        if name.split(".")[0] in ("distributed", "tornado", "asyncio"):
            logging.getLogger(name).setLevel(logging.CRITICAL)


def note_backend(backend: str) -> None:
    """One line on stderr when "auto" will fall back to the Python engine."""
    if backend == "auto":
        from ..lpn.compiled import compiler_missing
        why = compiler_missing()
        if why:
            click.echo(f"note: --backend auto runs the Python engine: {why}", err=True)
