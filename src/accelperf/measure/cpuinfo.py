"""What the operating system says about the CPU (Linux's /proc/cpuinfo, first processor)."""

from __future__ import annotations

import platform
from functools import lru_cache
from pathlib import Path


@lru_cache(maxsize=1)
def _fields() -> dict:
    fields = {}
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if not line.strip():
                break                      # the first processor's block is enough
            key, _, value = line.partition(":")
            fields.setdefault(key.strip(), value.strip())
    except OSError:
        pass
    return fields


def cpu_model() -> str:
    return _fields().get("model name") or platform.processor() or "unknown"


def cpu_flags() -> set[str]:
    return set(_fields().get("flags", "").split())


def nominal_clock_hz() -> float | None:
    """The "cpu MHz" line: on virtual machines the nominal TSC rate, not the core clock."""
    try:
        return float(_fields()["cpu MHz"]) * 1e6
    except (KeyError, ValueError):
        return None
