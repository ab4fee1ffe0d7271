"""Read the measurement CSV that `accelperf measure` writes (or one you made yourself)."""

from __future__ import annotations

import csv
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

    @property
    def core_clock_hz(self) -> float | None:
        try:
            return float(self.metadata.get("core clock hz", ""))
        except ValueError:
            return None


def check_statistic(statistic: str) -> None:
    if statistic not in ("median", "min"):
        raise ModelError(f"statistic = {statistic!r} is invalid: median or min")


def read_timings(path: str | Path, statistic: str = "min") -> Timings:
    """Host/accel (and echo) times at the granularities measured in every mode."""
    check_statistic(statistic)
    path = Path(path)
    try:
        lines = path.read_text("utf-8").splitlines()
    except OSError as exc:
        raise ModelError(f"data = '{path}' is invalid: {exc.strerror or exc}") from None
    metadata = {}
    body = []
    for line in lines:
        if line.startswith("#"):
            key, _, value = line[1:].partition(":")
            metadata[key.strip()] = value.strip()
        elif line.strip():
            body.append(line)
    reader = csv.DictReader(body)
    missing = [c for c in REQUIRED if c not in (reader.fieldnames or [])]
    if missing:
        raise ModelError(f"data = '{path}' is invalid: missing column(s) {', '.join(missing)} "
                         f"(need {', '.join(REQUIRED)})")
    column = "seconds_median" if statistic == "median" else "seconds_min"
    table: dict = {}
    kernels = set()
    for i, row in enumerate(reader, start=2):
        try:
            g, t = float(row["granularity_bytes"]), float(row[column])
        except (TypeError, ValueError):
            raise ModelError(f"data = '{path}', row {i}: granularity_bytes and {column} must "
                             f"be numbers") from None
        if row["mode"] not in ("host", "accel", "echo"):
            raise ModelError(f"data = '{path}', row {i}: mode {row['mode']!r} is not host, "
                             f"accel or echo")
        if not (g > 0 and t > 0):
            raise ModelError(f"data = '{path}', row {i}: granularity and time must be > 0")
        table[(row["mode"], g)] = t
        kernels.add(row["kernel"])
    return timings_from_table(table, ",".join(sorted(kernels)), metadata, f"data = '{path}'")


def timings_from_table(table: dict, kernel: str, metadata: dict,
                       source: str = "the measurement") -> Timings:
    """Timings from ``{(mode, granularity): seconds}``, at the granularities measured both
    on the host and accelerated (echo kept only where it covers all of them)."""
    sizes = sorted({g for (m, g) in table if m == "host"} & {g for (m, g) in table
                                                              if m == "accel"})
    if not sizes:
        raise ModelError(f"{source} is invalid: it needs host and accel rows at the same "
                         f"granularities")
    has_echo = all(("echo", g) in table for g in sizes)
    return Timings(np.array(sizes), np.array([table[("host", g)] for g in sizes]),
                   np.array([table[("accel", g)] for g in sizes]),
                   np.array([table[("echo", g)] for g in sizes]) if has_echo else None,
                   kernel, metadata)
