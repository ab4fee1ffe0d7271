"""The host's memory layers as a multi-threaded library sees them, from the caches a
measurement's header names (issue 36: LogCA on data no one wrote a hierarchy for).

`accelperf measure gpu` writes the host's caches as sysfs reports them for CPU 0, each with
how many CPUs share it (``caches L1d 48K (1 CPU), L1i 32K (1 CPU), L2 2048K (1 CPU), L3
307200K (16 CPUs)``), and the library's thread count T (``torch threads: 16``). A host
operation does not see them as one core does:

* below the library's grain it runs on one thread (PyTorch runs an elementwise operation
  inline below 32768 elements), so the first store it outgrows is **one core's L1d**;
* from the grain on, the T threads share the work, each its share of the data in its own
  core's caches: a cache private to a core holds ``T·size`` of the operation's data
  (**L1d xT**, **L2 xT**), a cache shared by ``n`` CPUs ``ceil(T/n)·size`` (one L3 for all
  16 threads: its size).

Only the innermost data cache appears as one core's: the next (a core's L2, 2 MiB on the
H200 box) lies above the grain, where the work is already spread over the threads.
Instruction caches hold no data and are left out. The layers are sorted by size, and a
layer no larger than the one inside it is dropped (it adds no bend). This is the list
examples/measurements/gpu-h200/host-layers.toml writes out by hand (48 KiB, 768 KiB,
32 MiB, 300 MiB on the H200 box); `logca fit --hierarchy data` reads it from the
measurement itself. Only the sizes matter to a fit: the bends are placed
at the capacities, the costs beyond them are fitted.
"""

from __future__ import annotations

import math
import re

from ..errors import ModelError, invalid
from ..units import parse_size
from .hierarchy import MemoryLayer

CACHE = re.compile(r"L(?P<level>\d)(?P<kind>[diu]?)\s+(?P<size>\d+(?:\.\d+)?[KMG]?)"
                   r"\s*\((?P<shared>\d+) CPUs?\)")
THREAD_KEYS = ("torch threads", "threads")


def layers_from_caches(summary: str, threads: int) -> tuple[MemoryLayer, ...]:
    """The layers of ``summary`` (``cpuinfo.cache_summary``'s form) for an operation on
    ``threads`` threads, innermost first, then the unbounded memory beyond."""
    if not (isinstance(threads, int) and threads >= 1):
        raise invalid("threads", threads, "a whole number of threads >= 1")
    caches = [(int(m["level"]), m["kind"], parse_size(m["size"], "host cache size"),
               int(m["shared"])) for m in CACHE.finditer(summary)]
    data = [(level, size, shared) for level, kind, size, shared in caches
            if kind != "i" and size > 0 and shared >= 1]
    if not data:
        raise invalid("host caches", summary, "a list such as 'L1d 48K (1 CPU), L2 2048K "
                                              "(1 CPU), L3 32M (16 CPUs)'")
    layers = []
    first = min(data)                    # the innermost data cache, as one thread sees it
    if first[2] == 1 and threads > 1:
        layers.append(MemoryLayer(f"L{first[0]}d", first[1]))
    for level, size, shared in sorted(data):
        copies = math.ceil(threads / shared)
        name = f"L{level}" + ("d" if (level, size, shared) == first else "")
        layers.append(MemoryLayer(f"{name} x{copies}" if copies > 1 else name, size * copies))
    kept: list[MemoryLayer] = []
    for layer in sorted(layers, key=lambda l: l.capacity_bytes):
        if not kept or layer.capacity_bytes > kept[-1].capacity_bytes:
            kept.append(layer)
    return tuple(kept) + (MemoryLayer(f"beyond {kept[-1].name}", math.inf),)


def layers_from_metadata(metadata: dict) -> tuple[MemoryLayer, ...]:
    """The layers from a measurement header's ``host cpu`` line (its ``caches ...`` part)
    and its thread count (``torch threads``)."""
    cpu = str(metadata.get("host cpu", ""))
    _, found, summary = cpu.partition("caches ")
    if not found:
        raise ModelError("the measurement's header names no host caches (no 'host cpu: ... "
                         "caches ...' line, which accelperf measure gpu writes)")
    raw = next((metadata[k] for k in THREAD_KEYS if k in metadata), None)
    if raw is None or not str(raw).strip().isdigit():
        raise ModelError(f"the measurement's header gives no thread count (threads = {raw}; "
                         f"a 'torch threads: N' line, which accelperf measure gpu writes)")
    return layers_from_caches(summary, int(str(raw).strip()))
