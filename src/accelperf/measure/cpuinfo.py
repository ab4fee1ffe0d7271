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


def cache_summary(base: Path = Path("/sys/devices/system/cpu/cpu0/cache")) -> str:
    """CPU 0's caches as sysfs reports them, with how many CPUs share each, e.g.
    ``L1d 48K (1 CPU), L1i 32K (1 CPU), L2 2048K (1 CPU), L3 307200K (16 CPUs)``; a
    shared cache that looks private in a virtual machine is what the hypervisor reports."""
    parts = []
    for index in sorted(base.glob("index*")) if base.is_dir() else []:
        try:
            level = (index / "level").read_text().strip()
            kind = (index / "type").read_text().strip()
            size = (index / "size").read_text().strip()
            shared = _cpu_count((index / "shared_cpu_list").read_text().strip())
        except (OSError, ValueError):
            continue
        suffix = {"Data": "d", "Instruction": "i"}.get(kind, "")
        parts.append(f"L{level}{suffix} {size} ({shared} CPU{'s' * (shared != 1)})")
    return ", ".join(parts) or "unknown (no /sys/devices/system/cpu/cpu0/cache)"


def _cpu_count(cpu_list: str) -> int:
    """CPUs in a sysfs list such as ``0-3,8``."""
    count = 0
    for part in filter(None, cpu_list.split(",")):
        lo, _, hi = part.partition("-")
        count += int(hi or lo) - int(lo) + 1
    return count
