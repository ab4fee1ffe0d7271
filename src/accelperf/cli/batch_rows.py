"""A batch's rows on disk: what produced them, and how they are appended and resumed.

A batch's ``--out`` is written over time, so three things guard it (issue 34):

* **Provenance.** The file records what produced it — the model, its parameter values
  (and their hash), the backend asked for, the accelperf version and the folder the inputs
  lie under — as the first line of the CSV (a ``#`` comment, which :func:`read_rows` and
  ``pandas.read_csv(path, skiprows=1)`` skip) and in the Parquet file's metadata.
  ``--resume`` refuses, in one line naming what differs, to append rows produced another
  way: rows at other delays would silently mix with these.
* **Inputs matched by resolved path.** A row's name is the input as given; ``--resume``
  compares the files it names (relative names resolved against the working directory of
  the run that wrote them), so ``in/x.json`` and ``/abs/in/x.json`` are one input.
* **A crash-safe Parquet finish.** The rows go to ``NAME.parquet.rows.csv`` as they
  arrive and become ``NAME.parquet`` at the end: written as ``.partial``, read back and
  counted, renamed into place, and only then is the rows file removed. The Parquet file
  records the size and SHA-256 of the rows file it took in, so a resume that finds both
  (a crash between the rename and the removal) knows the rows file is already inside and
  keeps one copy of each row.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import os
from dataclasses import asdict, dataclass
from pathlib import Path

from .. import __version__
from ..errors import install_hint, invalid
from ..outputs import fsync_dir

COLUMNS = ("model", "name", "latency", "commits", "bottleneck", "seconds", "backend", "error")
MARK = "# accelperf batch: "
PARQUET_KEY = b"accelperf.batch"
MERGED_KEY = b"accelperf.merged_rows"


@dataclass(frozen=True)
class Provenance:
    """What produced a batch's rows; two batches may share a file only when these agree
    (``cwd`` excepted: it only says what relative input names were relative to)."""

    model: str
    params: dict
    params_hash: str
    backend: str
    accelperf: str
    input_root: str
    cwd: str
    limits: dict | None = None    # None: a file written before the limits were recorded

    CHECKED = ("model", "params_hash", "backend", "accelperf", "input_root", "limits")

    @classmethod
    def of(cls, model: str, params: dict, backend: str, names,
           limits: dict | None = None) -> Provenance:
        values = {k: params[k] for k in sorted(params)}
        digest = hashlib.sha256(json.dumps(values).encode()).hexdigest()[:16]
        return cls(model, values, digest, backend, __version__, input_root(names),
                   os.getcwd(), run_limits(limits or {}))

    def to_json(self) -> str:
        return json.dumps(asdict(self), separators=(",", ":"))

    @classmethod
    def from_json(cls, text: str) -> Provenance:
        data = json.loads(text)
        return cls(**{k: data[k] for k in cls.__dataclass_fields__ if k != "limits"},
                   limits=data.get("limits"))

    def differences(self, other: Provenance) -> list[str]:
        """What differs from ``other`` (the file's), as short phrases."""
        said = []
        for field in self.CHECKED:
            mine, theirs = getattr(self, field), getattr(other, field)
            if mine == theirs:
                continue
            if field == "params_hash":
                changed = sorted(k for k in {*self.params, *other.params}
                                 if self.params.get(k) != other.params.get(k))
                shown = ", ".join(f"{k} {other.params.get(k)} -> {self.params.get(k)}"
                                  for k in changed[:3])
                said.append(f"parameter values ({shown or 'hash ' + theirs})")
            elif field == "limits":
                # a row that stopped at one limit may finish under another
                shown = "not recorded" if theirs is None else ", ".join(
                    f"--{k.replace('_', '-')} {theirs.get(k)} -> {mine.get(k)}"
                    for k in mine if theirs.get(k) != mine.get(k))
                said.append(f"run limits ({shown})")
            else:
                said.append(f"{field.replace('_', ' ')} {theirs!r} -> {mine!r}")
        return said

    def key(self, name: str) -> str:
        """The input ``name`` as an absolute path (against this run's working directory,
        ``..`` folded, links not followed), or the name itself for JSON text. Links are
        inputs of their own: resolving them matched 150 links to one image as one input,
        and a resumed batch left 86 of them unrun."""
        path = Path(self.cwd, name)
        try:
            return os.path.normpath(path) if path.is_file() else name
        except (OSError, ValueError):
            return name


def run_limits(given: dict) -> dict:
    """The limits a batch's simulations ran under (``max_time``, ``max_commits``,
    ``max_firings_per_cycle``; None: no limit), the defaults filled in, so that a limit
    left out and the same limit typed agree."""
    from ..lpn.semantics import DEFAULT_MAX_COMMITS, DEFAULT_MAX_FIRINGS_PER_CYCLE
    defaults = {"max_time": None, "max_commits": DEFAULT_MAX_COMMITS,
                "max_firings_per_cycle": DEFAULT_MAX_FIRINGS_PER_CYCLE}
    return {k: default if given.get(k) is None else given[k]
            for k, default in defaults.items()}


def input_root(names) -> str:
    """The deepest folder holding every input file ("" when none is a file)."""
    folders = []
    for name in names:
        try:
            path = Path(name)
            if path.is_file():
                folders.append(str(path.resolve().parent))
        except (OSError, ValueError):
            continue
    return os.path.commonpath(folders) if folders else ""


def read_rows(path: str | Path) -> list[dict]:
    """The rows of a batch's CSV as dicts, its ``#`` provenance line skipped."""
    with Path(path).open(encoding="utf-8-sig", newline="") as fh:
        return list(csv.DictReader(line for line in fh if not line.startswith("#")))


def csv_line(values) -> bytes:
    buf = io.StringIO()
    csv.writer(buf, lineterminator="\n").writerow(values)
    return buf.getvalue().encode("utf-8")


def _unusable(out: Path, why: str):
    return invalid("--out", str(out), f"{why}; the rows in it are kept")


def _refuse_other(out: Path, theirs: Provenance | None, mine: Provenance):
    if theirs is None:
        return _unusable(out, "it does not record what produced it (written by an older "
                              "accelperf, or by hand): give another --out to start afresh")
    differs = mine.differences(theirs)
    if differs:
        return _unusable(out, f"its rows were produced another way: {'; '.join(differs)} "
                              f"(resume with the command that wrote it, or give another "
                              f"--out)")
    return None


def finished_names(path: Path, mine: Provenance, out: Path | None = None) -> set[str]:
    """The resolved names (:meth:`Provenance.key`) of the rows already in the CSV ``path``
    of a batch, checked: produced as this one is, the batch's columns, no half-written or
    unreadable row."""
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
        with path.open(encoding="utf-8-sig", newline="") as fh:
            first = fh.readline()
            theirs = None
            if first.startswith(MARK):
                try:
                    theirs = Provenance.from_json(first[len(MARK):])
                except (ValueError, KeyError, TypeError):
                    raise _unusable(out, f"its first line is not a readable record of what "
                                         f"produced it ({first[:60].strip()!r})") from None
                first = fh.readline()
            header = next(csv.reader([first]), [])
            if tuple(header) != COLUMNS:
                raise _unusable(out, f"its columns are {', '.join(header)[:80]}, not a "
                                     f"batch's ({', '.join(COLUMNS)}): give another --out to "
                                     f"start afresh")
            refusal = _refuse_other(out, theirs, mine)
            if refusal is not None:
                raise refusal
            line = 3 if theirs is not None else 2
            for number, row in enumerate(csv.reader(fh), line):
                if len(row) != len(COLUMNS):
                    raise _unusable(out, f"line {number} is unreadable ({len(row)} fields, "
                                         f"not {len(COLUMNS)}): delete it and run again "
                                         f"with --resume")
                if row[0] != mine.model:
                    raise _unusable(out, f"its rows are of model {row[0]!r}, not "
                                         f"{mine.model!r}: give another --out, or the model "
                                         f"that wrote it")
                names.add(theirs.key(row[1]))
    except (UnicodeDecodeError, csv.Error) as exc:
        raise _unusable(out, f"it is not a CSV file of rows ({exc})") from None
    return names


def file_digest(path: Path) -> str:
    """``size:sha256`` of a file, read in blocks."""
    h = hashlib.sha256()
    with path.open("rb") as fh:
        while block := fh.read(1 << 20):
            h.update(block)
    return f"{path.stat().st_size}:{h.hexdigest()}"


class RowWriter:
    """Each row appended to the CSV file the moment it arrives (one write of one whole
    line, so a killed batch leaves whole rows); for ``.parquet`` the rows go to a CSV
    beside it (``NAME.parquet.rows.csv``) and become the Parquet file at the end. The
    caller holds the output's :class:`~accelperf.outputs.OutputLock` while it writes."""

    def __init__(self, out: Path, provenance: Provenance, resume: bool, note=print):
        self.out, self.provenance = out, provenance
        self.model = provenance.model
        self.parquet = out.suffix.lower() == ".parquet"
        self.rows_path = out.with_name(out.name + ".rows.csv") if self.parquet else out
        self.done: set[str] = set()
        self.merge = self.parquet and resume and out.exists()   # keep its earlier rows
        if self.parquet:
            try:
                import pyarrow  # noqa: F401
            except ImportError:
                raise invalid("--out", str(out), f"Parquet needs pyarrow: "
                                                 f"{install_hint('parquet')}, or write "
                                                 f".csv") from None
        if resume:
            if self.merge:
                self.done |= self._parquet_names(note)
            if self.rows_path.exists():
                self.done |= finished_names(self.rows_path, provenance, out)
        fresh = not (resume and self.rows_path.exists() and self.rows_path.stat().st_size)
        flags = os.O_WRONLY | os.O_CREAT | os.O_APPEND | (os.O_TRUNC if fresh else 0)
        self.fd = os.open(self.rows_path, flags, 0o644)
        if fresh:
            os.write(self.fd, (MARK + provenance.to_json() + "\n").encode()
                     + csv_line(COLUMNS))

    def _parquet_names(self, note) -> set[str]:
        import pyarrow.parquet as pq
        try:
            meta = pq.read_schema(self.out).metadata or {}
            table = pq.read_table(self.out, columns=["model", "name"])
        except Exception as exc:        # noqa: BLE001 - pyarrow's errors are many
            raise _unusable(self.out, f"it is not a Parquet file of a batch's rows "
                                      f"({str(exc)[:80]})") from None
        try:
            theirs = Provenance.from_json(meta[PARQUET_KEY].decode())
        except (KeyError, ValueError, TypeError):
            theirs = None
        refusal = _refuse_other(self.out, theirs, self.provenance)
        if refusal is not None:
            raise refusal
        models = set(table.column("model").to_pylist())
        if models - {self.model}:
            raise _unusable(self.out, f"its rows are of model {sorted(models)[0]!r}, not "
                                      f"{self.model!r}: give another --out")
        merged = meta.get(MERGED_KEY, b"").decode()
        if self.rows_path.exists() and merged and merged == file_digest(self.rows_path):
            # the last batch was stopped after its Parquet file was in place but before
            # its rows file was removed: the rows are in the Parquet file already
            self.rows_path.unlink()
            note(f"note: {self.rows_path} was already in {self.out} (a batch stopped while "
                 f"finishing): removed, each row kept once")
        return {theirs.key(n) for n in table.column("name").to_pylist()}

    def write(self, row) -> None:
        d = row.to_dict()
        os.write(self.fd, csv_line([self.model] + ["" if d[c] is None else d[c]
                                                   for c in COLUMNS[1:]]))

    def close(self) -> None:
        os.close(self.fd)
        if self.parquet:
            self._to_parquet()

    def _to_parquet(self) -> None:
        """The rows CSV (after any rows of an earlier Parquet file) as Parquet, a batch
        of rows at a time, verified, renamed into place; then the CSV is removed."""
        import pyarrow as pa
        import pyarrow.csv as pacsv
        import pyarrow.parquet as pq
        schema = pa.schema([("model", pa.string()), ("name", pa.string()),
                            ("latency", pa.int64()), ("commits", pa.int64()),
                            ("bottleneck", pa.string()), ("seconds", pa.float64()),
                            ("backend", pa.string()), ("error", pa.string())],
                           metadata={PARQUET_KEY: self.provenance.to_json().encode(),
                                     MERGED_KEY: file_digest(self.rows_path).encode()})
        partial = self.out.with_name(self.out.name + ".partial")
        expected = 0
        with pq.ParquetWriter(partial, schema) as writer:
            if self.merge:
                for part in pq.ParquetFile(self.out).iter_batches():
                    writer.write_batch(pa.RecordBatch.from_pylist(part.to_pylist(), schema))
                    expected += part.num_rows
            reader = pacsv.open_csv(
                self.rows_path, read_options=pacsv.ReadOptions(skip_rows=1),
                convert_options=pacsv.ConvertOptions(column_types=schema,
                                                     strings_can_be_null=True))
            for part in reader:
                writer.write_batch(part)
                expected += part.num_rows
        with open(partial, "rb+") as fh:
            os.fsync(fh.fileno())
        written = pq.ParquetFile(partial).metadata.num_rows
        if written != expected:
            raise invalid("--out", str(self.out), f"the Parquet file came out with {written} "
                                                  f"rows, not {expected}: the rows are kept "
                                                  f"in {self.rows_path}")
        os.replace(partial, self.out)
        fsync_dir(self.out.parent if str(self.out.parent) else Path("."))
        self._drop_rows_file()

    def _drop_rows_file(self) -> None:
        self.rows_path.unlink()
