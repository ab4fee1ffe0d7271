"""Read the measurement CSV that `accelperf measure` writes (or one you made yourself)."""

from __future__ import annotations

import csv
import math
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..errors import ModelError

REQUIRED = ("kernel", "mode", "granularity_bytes", "seconds_min", "seconds_median")


@dataclass(frozen=True)
class Timings:
    """Seconds per operation by granularity for the host, accelerated and echo runs."""

    granularity: np.ndarray
    host: np.ndarray
    accel: np.ndarray
    echo: np.ndarray | None
    kernel: str
    metadata: dict = field(default_factory=dict)
    notes: tuple[str, ...] = ()        # what the file says of itself: rows left out, units

    @property
    def core_clock_hz(self) -> float | None:
        try:
            return float(self.metadata.get("core clock hz", ""))
        except ValueError:
            return None


def check_statistic(statistic: str) -> None:
    if statistic not in ("median", "min"):
        raise ModelError(f"statistic = {statistic!r} is invalid: median or min")


MAX_FILE_BYTES = 50 << 20     # a sweep is a few hundred rows; anything this large is not one
MAX_SECONDS = 86400.0         # per operation: more than a day is a unit mistake, not a timing


def _read_lines(path: Path, source: str) -> list[str]:
    """The file's lines, or a ModelError naming it: missing, a directory, not a regular
    file, too large, not text, or empty."""
    if not path.exists():
        raise ModelError(f"{source} is invalid: no such file")
    if path.is_dir():
        raise ModelError(f"{source} is invalid: it is a directory; give a CSV file")
    if not path.is_file():
        raise ModelError(f"{source} is invalid: not a regular file; give a CSV file")
    if path.stat().st_size > MAX_FILE_BYTES:
        raise ModelError(f"{source} is invalid: {path.stat().st_size} bytes is too large for a "
                         f"measurement CSV (at most {MAX_FILE_BYTES} bytes)")
    try:
        text = path.read_text("utf-8-sig")
    except UnicodeDecodeError:
        raise ModelError(f"{source} is invalid: not a text file (not UTF-8)") from None
    except OSError as exc:
        raise ModelError(f"{source} is invalid: {exc.strerror or exc}") from None
    if "\0" in text:
        raise ModelError(f"{source} is invalid: it contains NUL bytes (a binary file?)")
    if not text.strip():
        raise ModelError(f"{source} is invalid: the file is empty")
    return text.splitlines()


def _positive_finite(text, what: str, where: str, limit: float, unit: str = "") -> float:
    try:
        value = float(text)
    except (TypeError, ValueError):
        raise ModelError(f"{where}: {what} = {text!r} is invalid: must be a number") from None
    if not (math.isfinite(value) and 0 < value <= limit):
        hint = f" ({unit})" if unit and math.isfinite(value) and value > limit else ""
        raise ModelError(f"{where}: {what} = {text!r} is invalid: must be a finite number "
                         f"> 0 and <= {limit:g}{hint}")
    return value


def read_timings(path: str | Path, statistic: str = "min") -> Timings:
    """Host/accel (and echo) times at the granularities measured in every mode.

    Every row is checked: numbers finite and positive (a time per operation at most a day),
    modes host, accel or echo, one kernel per file, and no (mode, granularity) twice, since
    two timings for one point could only be resolved by silently dropping one.
    """
    check_statistic(statistic)
    if not isinstance(path, (str, Path)):
        raise ModelError(f"data = {path!r} is invalid: give the path of a CSV file")
    path = Path(path)
    source = f"data = '{path}'"
    metadata = {}
    body, line_of = [], []
    for number, line in enumerate(_read_lines(path, source), start=1):
        if line.startswith("#"):
            key, _, value = line[1:].partition(":")
            metadata[key.strip()] = value.strip()
        elif line.strip():
            body.append(line)
            line_of.append(number)
    reader = csv.DictReader(body)
    missing = [c for c in REQUIRED if c not in (reader.fieldnames or [])]
    if missing:
        header = body[0] if body else ""
        other = next((name for sep, name in ((";", "semicolons"), ("\t", "tabs"))
                      if sep in header and "," not in header), None)
        hint = f"; its header is separated by {other}: the file must use commas" \
            if other else ""
        raise ModelError(f"{source} is invalid: missing column(s) {', '.join(missing)} "
                         f"(need {', '.join(REQUIRED)}; found "
                         f"{', '.join(reader.fieldnames or ()) or 'no header'}){hint}")
    column = "seconds_median" if statistic == "median" else "seconds_min"
    table: dict = {}
    first_seen: dict = {}
    kernels = set()
    for row in reader:
        i = line_of[reader.line_num - 1]
        where = f"{source}, line {i}"
        if None in row or None in row.values():
            raise ModelError(f"{where} is invalid: it has {len(body[reader.line_num - 1].split(','))}"
                             f" fields, the header has {len(reader.fieldnames)}")
        g = _positive_finite(row["granularity_bytes"], "granularity_bytes", where, 2.0**53)
        if not g.is_integer():
            raise ModelError(f"{where}: granularity_bytes = {row['granularity_bytes']!r} is "
                             f"invalid: an offload moves a whole number of bytes")
        t = _positive_finite(row[column], column, where, MAX_SECONDS,
                             "seconds per operation, a day at most: microseconds or "
                             "nanoseconds are 1e-6 or 1e-9 times the number")
        if row["mode"] not in ("host", "accel", "echo"):
            raise ModelError(f"{where}: mode {row['mode']!r} is not host, accel or echo")
        key = (row["mode"], g)
        if key in first_seen:
            raise ModelError(f"{where}: a second {row['mode']} timing at {g:g} B (the first is "
                             f"on line {first_seen[key]}): keep one row per mode and "
                             f"granularity")
        first_seen[key] = i
        table[key] = t
        kernels.add(row["kernel"].strip())
    if len(kernels) > 1:
        raise ModelError(f"{source} is invalid: it mixes kernels {', '.join(sorted(kernels))}; "
                         f"fit one kernel at a time")
    return timings_from_table(table, ",".join(sorted(kernels)), metadata, source, path.name)


def timings_from_table(table: dict, kernel: str, metadata: dict,
                       source: str = "the measurement", label: str | None = None) -> Timings:
    """Timings from ``{(mode, granularity): seconds}``, at the granularities measured both
    on the host and accelerated (echo kept only where it covers all of them). ``source``
    names the data in a refusal, ``label`` (default ``source``) in the notes."""
    label = label or source
    sizes = sorted({g for (m, g) in table if m == "host"} & {g for (m, g) in table
                                                              if m == "accel"})
    if not sizes:
        raise ModelError(f"{source} is invalid: it needs host and accel rows at the same "
                         f"granularities")
    has_echo = all(("echo", g) in table for g in sizes)
    # said, not dropped in silence: a host row whose accel row was missing vanished
    left_out = []
    for mode, other in (("host", "accel"), ("accel", "host")):
        alone = sorted(g for (m, g) in table if m == mode and (other, g) not in table)
        if alone:
            left_out.append(f"{label}: {mode} row(s) at {_sizes(alone)} have no {other} "
                            f"row at the same granularity and are left out of the fit")
    echo = sorted(g for (m, g) in table if m == "echo")
    if echo and not has_echo:
        missing = [g for g in sizes if ("echo", g) not in table]
        left_out.append(f"{label}: the echo (copies-only) rows miss {_sizes(missing)}, so "
                        f"all {len(echo)} are left out: the fit uses them only where they "
                        f"cover every granularity")
    return Timings(np.array(sizes), np.array([table[("host", g)] for g in sizes]),
                   np.array([table[("accel", g)] for g in sizes]),
                   np.array([table[("echo", g)] for g in sizes]) if has_echo else None,
                   kernel, metadata, tuple(left_out) + _unit_notes(table, label))


def _unit_notes(table: dict, label: str) -> tuple[str, ...]:
    """A hint where the times look like another unit than seconds: a host taking a second
    or more per operation on 64 KiB or less (microseconds written as seconds gave a
    'per-call constant of about 1.82 s' and nothing else)."""
    small = [(g, t) for (m, g), t in table.items() if m == "host" and g <= 65536]
    if small and min(t for _, t in small) >= 1.0:
        g, t = min(small, key=lambda x: x[1])
        return (f"{label}: the host takes {t:.3g} s per operation at "
                f"{_sizes([g])}: are the times in seconds? (the columns are seconds per "
                f"operation; microseconds or nanoseconds would read 1e-6 or 1e-9 times "
                f"these)",)
    return ()


def _sizes(granularities) -> str:
    from ..units import format_size
    shown = ", ".join(format_size(g) for g in granularities[:5])
    return shown + (f" and {len(granularities) - 5} more" if len(granularities) > 5 else "")
