"""`lpn simulate` on many inputs: rows written as they finish, `--resume`, progress.

The batch itself runs in :mod:`accelperf.lpn.batch`; this module turns the command line
into names of inputs (read where they run), writes every row the moment it arrives (CSV,
or Parquet through pyarrow), picks up a killed batch with ``--resume`` and shows rows
done, rate and time left.
"""

from __future__ import annotations

import csv
import glob
import io
import os
import sys
import time
from pathlib import Path
from typing import NoReturn

import click
from rich.markup import escape
from rich.table import Table

from ..errors import ModelError, invalid
from ..report import dump_json
from .common import check_output, console

COLUMNS = ("model", "name", "latency", "commits", "bottleneck", "seconds", "backend", "error")
SUFFIXES = (".csv", ".parquet", ".json")
SHOWN_FAILURES = 20


def batch_names(texts, pattern) -> list[str]:
    """Every input's name (a file path or JSON text, read later, where it runs)."""
    names = list(texts)
    if pattern:
        path = Path(pattern)
        files = sorted(p for p in path.iterdir() if p.is_file()) if path.is_dir() else \
            sorted(Path(p) for p in glob.glob(pattern, recursive=True) if Path(p).is_file())
        if not files:
            raise invalid("--inputs", pattern, "no files there (a directory or a glob "
                                               "such as 'inputs/*.json')")
        names += [str(p) for p in files]
    if not names:
        raise ModelError("--input/--inputs: a batch needs at least one input")
    return names


# ---------------------------------------------------------------------- rows on disk
def _csv_line(values) -> bytes:
    buf = io.StringIO()
    csv.writer(buf, lineterminator="\n").writerow(values)
    return buf.getvalue().encode("utf-8")


def _row_values(model: str, row) -> list:
    d = row.to_dict()
    return [model] + ["" if d[c] is None else d[c] for c in COLUMNS[1:]]


def _unusable(out: Path, why: str) -> NoReturn:
    raise invalid("--out", str(out), f"{why}; the rows in it are kept")


def finished_names(path: Path, model: str, out: Path | None = None) -> set[str]:
    """The names of the rows already in the CSV ``path`` of a batch of ``model``,
    checked: the batch's columns, the same model, no half-written or unreadable row."""
    out = out or path
    with path.open("rb") as fh:                 # the last byte: is the last row whole?
        fh.seek(0, os.SEEK_END)
        if fh.tell() == 0:
            return set()
        fh.seek(-1, os.SEEK_END)
        whole = fh.read(1) == b"\n"
    if not whole:
        raise _unusable(out, f"its last row is half-written (the writer was stopped "
                             f"mid-line): delete that line (sed -i '$d' {path}) and run "
                             f"again with --resume")
    names = set()
    try:                                        # row by row: only the names are kept
        with path.open(encoding="utf-8", newline="") as fh:
            rows = csv.reader(fh)
            header = next(rows)
            if tuple(header) != COLUMNS:
                raise _unusable(out, f"its columns are {', '.join(header)[:80]}, not a "
                                     f"batch's ({', '.join(COLUMNS)}): give another --out to "
                                     f"start afresh")
            for number, row in enumerate(rows, 2):
                if len(row) != len(COLUMNS):
                    raise _unusable(out, f"line {number} is unreadable ({len(row)} fields, "
                                         f"not {len(COLUMNS)}): delete it and run again "
                                         f"with --resume")
                if row[0] != model:
                    raise _unusable(out, f"its rows are of model {row[0]!r}, not {model!r}: "
                                         f"give another --out, or the model that wrote it")
                names.add(row[1])
    except (UnicodeDecodeError, csv.Error) as exc:
        raise _unusable(out, f"it is not a CSV file of rows ({exc})") from None
    return names


class RowWriter:
    """Each row appended to the CSV file the moment it arrives (one write of one whole
    line, so a killed batch leaves whole rows); for ``.parquet`` the rows go to a CSV
    beside it (``NAME.parquet.rows.csv``) and become the Parquet file at the end."""

    def __init__(self, out: Path, model: str, resume: bool):
        self.out, self.model = out, model
        self.parquet = out.suffix.lower() == ".parquet"
        self.rows_path = out.with_name(out.name + ".rows.csv") if self.parquet else out
        self.done: set[str] = set()
        self.merge = self.parquet and resume and out.exists()   # keep its earlier rows
        if self.parquet:
            try:
                import pyarrow  # noqa: F401
            except ImportError:
                raise invalid("--out", str(out), "Parquet needs pyarrow: pip install "
                                                 "'accelperf[parquet]', or write .csv") from None
        if resume:
            if self.parquet and out.exists():
                self.done |= self._parquet_names()
            if self.rows_path.exists():
                self.done |= finished_names(self.rows_path, model, out)
        fresh = not (resume and self.rows_path.exists() and self.rows_path.stat().st_size)
        flags = os.O_WRONLY | os.O_CREAT | os.O_APPEND | (os.O_TRUNC if fresh else 0)
        self.fd = os.open(self.rows_path, flags, 0o644)
        if fresh:
            os.write(self.fd, _csv_line(COLUMNS))

    def _parquet_names(self) -> set[str]:
        import pyarrow.parquet as pq
        try:
            table = pq.read_table(self.out, columns=["model", "name"])
        except Exception as exc:        # noqa: BLE001 - pyarrow's errors are many
            raise _unusable(self.out, f"it is not a Parquet file of a batch's rows "
                                      f"({str(exc)[:80]})") from None
        models = set(table.column("model").to_pylist())
        if models - {self.model}:
            raise _unusable(self.out, f"its rows are of model {sorted(models)[0]!r}, not "
                                      f"{self.model!r}: give another --out")
        return set(table.column("name").to_pylist())

    def write(self, row) -> None:
        os.write(self.fd, _csv_line(_row_values(self.model, row)))

    def close(self) -> None:
        os.close(self.fd)
        if self.parquet:
            self._to_parquet()

    def _to_parquet(self) -> None:
        """The rows CSV (after any rows of an earlier Parquet file) as Parquet, a batch
        of rows at a time; the CSV is removed once the Parquet file is in place."""
        import pyarrow as pa
        import pyarrow.csv as pacsv
        import pyarrow.parquet as pq
        schema = pa.schema([("model", pa.string()), ("name", pa.string()),
                            ("latency", pa.int64()), ("commits", pa.int64()),
                            ("bottleneck", pa.string()), ("seconds", pa.float64()),
                            ("backend", pa.string()), ("error", pa.string())])
        partial = self.out.with_name(self.out.name + ".partial")
        with pq.ParquetWriter(partial, schema) as writer:
            if self.merge:
                for part in pq.ParquetFile(self.out).iter_batches():
                    writer.write_batch(pa.RecordBatch.from_pylist(part.to_pylist(), schema))
            reader = pacsv.open_csv(self.rows_path, convert_options=pacsv.ConvertOptions(
                column_types=schema, strings_can_be_null=True))
            for part in reader:
                writer.write_batch(part)
        os.replace(partial, self.out)
        self.rows_path.unlink()


# ---------------------------------------------------------------------- the command
def simulate_batch(model_spec, texts, pattern, backend, workers, scheduler, out, limits,
                   as_json, resume=False, send_inputs=False, params=None):
    """Run the batch, writing rows as they arrive; exit 1 when an input failed, 130 on
    Ctrl-C (the rows written so far kept)."""
    from ..lpn.batch import BatchRun
    from ..lpn.loader import load_model
    check_output(out, "--out", SUFFIXES)
    if resume and (out is None or out.suffix.lower() == ".json"):
        raise invalid("--resume", "on", "it needs --out FILE.csv or FILE.parquet (the rows "
                                        "already there are skipped)")
    if send_inputs and scheduler is None:
        raise invalid("--send-inputs", "on", "it goes with --scheduler (local workers read "
                                             "the files themselves)")
    names = batch_names(texts, pattern)
    model = load_model(model_spec, params)
    streamed = out is not None and out.suffix.lower() != ".json"
    writer = RowWriter(out, model.name, resume) if streamed else None
    skipped = 0
    if writer is not None and writer.done:
        before = len(names)
        names = [n for n in names if n not in writer.done]
        skipped = before - len(names)
        click.echo(f"--resume: {skipped} input(s) already in {out}, {len(names)} to run",
                   err=True)
    note_backend(backend)
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
        out.write_text(dump_json(_with_rows(summary, kept)), encoding="utf-8")
        click.echo(f"wrote {out}", err=True)
    if as_json:
        click.echo(dump_json(_with_rows(summary, kept) if writer is None else
                             dict(summary, rows_written=done, skipped=skipped, out=str(out))))
    elif writer is None:
        _print_rows(model.name, [r for _, r in sorted(kept, key=lambda p: p[0])], summary)
    else:
        console.print(f"[bold]{escape(model.name)}[/bold]: {done} rows written to "
                      f"{escape(str(out))} ({n_failed} failed, {skipped} skipped as done), "
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
