"""Probe this machine's memory hierarchy for the computational-density model.

For each cache level the operating system reports, and for main memory:

* sustained read bandwidth: a streaming read over a working set of half the level's size
  (four times the last level's size for memory), repeated;
* latency: a dependent pointer chase through a random cycle of cache lines (Sattolo's
  algorithm, so the prefetchers cannot guess the next line) in a working set of the same
  size.

The median of the repeats is reported, with the spread.

Steffen's layer pairs the store a link fills with that link's bandwidth and latency (e.g.
main RAM → on-board memory: μ = 28 MB, the on-board memory). On a CPU the link from
level k+1 into level k therefore becomes the layer ``Lk<-L(k+1)`` with μ = size of Lk and β,
λ measured on level k+1; the innermost layer fills the register file from L1.
"""

from __future__ import annotations

import os
import platform
import statistics
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..density.hierarchy import Hierarchy, Layer
from ..errors import ModelError
from .crypto import MeasurementError      # a probe that cannot run is a failed run (status 1)
from .cpuinfo import cpu_flags, cpu_model
from .native import load_kernels

LINE = 64


@dataclass(frozen=True)
class CacheLevel:
    name: str            # "L1", "L2", "L3" or "DRAM"
    size_bytes: int


@dataclass(frozen=True)
class LevelMeasurement:
    level: CacheLevel
    working_set_bytes: int
    bandwidth_bytes_per_s: float
    bandwidth_spread: tuple[float, float]
    latency_s: float
    latency_spread: tuple[float, float]


@dataclass(frozen=True)
class ProbeResult:
    levels: tuple[LevelMeasurement, ...]
    register_bytes: int
    method: str
    repeats: int
    machine: dict = field(default_factory=dict)

    @property
    def warnings(self) -> list[str]:
        """What the measurements cannot support, in words."""
        out = []
        levels = self.levels
        llc_like_dram = (len(levels) >= 2 and levels[-1].level.name == "DRAM"
                         and levels[-2].latency_s > 0.8 * levels[-1].latency_s)
        pairs = list(zip(levels, levels[1:]))
        for inner, outer in pairs[:-1] if llc_like_dram else pairs:
            if outer.latency_s < inner.latency_s * 1.15:
                out.append(f"{outer.level.name} is no slower than {inner.level.name} "
                           f"({outer.latency_s * 1e9:.1f} vs {inner.latency_s * 1e9:.1f} ns): "
                           f"the working sets may not have separated the two levels")
        if llc_like_dram:
            llc, dram = levels[-2], levels[-1]
            out.append(f"{llc.level.name} ({llc.level.size_bytes / 2**20:.0f} MiB as the "
                           f"operating system reports it) answers in "
                           f"{llc.latency_s * 1e9:.0f} ns at a "
                           f"{llc.working_set_bytes / 2**20:.0f} MiB working set, like main "
                           f"memory ({dram.latency_s * 1e9:.0f} ns): this machine gets less "
                           f"{llc.level.name} than reported (common on virtual machines)")
        return out

    def hierarchy(self, name: str = "this-machine") -> Hierarchy:
        """The density model's layers: each level's link filling the store inside it."""
        layers = []
        inner = [("registers", self.register_bytes)] + \
            [(m.level.name, m.level.size_bytes) for m in self.levels[:-1]]
        for (inner_name, inner_size), m in zip(inner, self.levels):
            layers.append(Layer(f"{inner_name}<-{m.level.name}", float(inner_size),
                                m.bandwidth_bytes_per_s, m.latency_s))
        return Hierarchy(name, tuple(layers), "probe")

    def to_toml(self, name: str = "this-machine") -> str:
        lines = [f"measured by `accelperf density probe` on {self.machine.get('date', '')}",
                 f"machine: {self.machine.get('cpu', '?')} ({self.machine.get('cores', '?')} "
                 f"cores), {platform.platform()}",
                 f"method: {self.method}; median of {self.repeats} repeats",
                 "per level: working set, read bandwidth (median, min-max), latency "
                 "(median, min-max)"]
        for m in self.levels:
            lines.append(f"  {m.level.name:4s} size {m.level.size_bytes} B, working set "
                         f"{m.working_set_bytes} B: {m.bandwidth_bytes_per_s / 1e9:.2f} GB/s "
                         f"({m.bandwidth_spread[0] / 1e9:.2f}-{m.bandwidth_spread[1] / 1e9:.2f})"
                         f", {m.latency_s * 1e9:.2f} ns ({m.latency_spread[0] * 1e9:.2f}-"
                         f"{m.latency_spread[1] * 1e9:.2f})")
        lines.append(f"registers: {self.register_bytes} B (vector register file, from the "
                     f"CPU flags)")
        lines += [f"warning: {w}" for w in self.warnings]
        return self.hierarchy(name).to_toml(header="\n".join(lines))


def cache_levels() -> list[CacheLevel]:
    """Data and unified caches of CPU 0 as the operating system reports them, plus DRAM."""
    levels: dict[int, int] = {}
    base = Path("/sys/devices/system/cpu/cpu0/cache")
    for index in sorted(base.glob("index*")) if base.exists() else []:
        try:
            kind = (index / "type").read_text().strip()
            level = int((index / "level").read_text())
            size = _parse_cache_size((index / "size").read_text().strip())
        except (OSError, ValueError):
            continue
        if kind in ("Data", "Unified"):
            levels[level] = size
    if not levels:
        for level, key in ((1, "SC_LEVEL1_DCACHE_SIZE"), (2, "SC_LEVEL2_CACHE_SIZE"),
                           (3, "SC_LEVEL3_CACHE_SIZE")):
            try:
                size = os.sysconf(key)
            except (ValueError, OSError):
                size = 0
            if size and size > 0:
                levels[level] = size
    if not levels:
        raise MeasurementError("the operating system reports no cache sizes "
                         "(/sys/devices/system/cpu/cpu0/cache and sysconf are empty)")
    out = [CacheLevel(f"L{k}", v) for k, v in sorted(levels.items())]
    out.append(CacheLevel("DRAM", _physical_memory()))
    return out


def _parse_cache_size(text: str) -> int:
    units = {"K": 1024, "M": 1024**2, "G": 1024**3}
    return int(text[:-1]) * units[text[-1]] if text[-1] in units else int(text)


def _physical_memory() -> int:
    try:
        return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError):
        return 0


def _available_memory() -> int:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    return _physical_memory() // 2


def register_file_bytes() -> int:
    """Vector register file size: 32 x 64 B with AVX-512, 16 x 32 B with AVX, else 16 x 16 B."""
    flags = cpu_flags()
    return 32 * 64 if "avx512f" in flags else 16 * 32 if "avx" in flags else 16 * 16


def _working_set(level: CacheLevel, previous: CacheLevel | None, quick: bool) -> int:
    if level.name != "DRAM":
        return max(level.size_bytes // 2, 4096)
    llc = previous.size_bytes if previous else 64 * 2**20
    want = max(4 * llc, 256 * 2**20)
    if quick:
        want = 256 * 2**20
    return int(min(want, _available_memory() // 4))


def _sattolo_cycle(lines: int, rng) -> np.ndarray:
    """A random single cycle over ``lines`` cache lines, as line indices."""
    order = rng.permutation(lines)
    nxt = np.empty(lines, np.uint64)
    nxt[order[:-1]] = order[1:]
    nxt[order[-1]] = order[0]
    return nxt


def _chase_buffer(nbytes: int, rng) -> np.ndarray:
    """A buffer of uint64 where slot 8k of line k holds the slot of the next line."""
    lines = max(nbytes // LINE, 2)
    buf = np.zeros(lines * (LINE // 8), np.uint64)
    buf[::LINE // 8] = _sattolo_cycle(lines, rng) * (LINE // 8)
    return buf


def _time(func) -> float:
    start = time.perf_counter()
    func()
    return time.perf_counter() - start


def _calibrated_count(func_for_count, target_s: float, start: int) -> int:
    """Grow a repetition count until one run takes about target_s."""
    count = start
    while True:
        t = _time(lambda: func_for_count(count))
        if t >= target_s / 4 or count > 2**40:
            return max(int(count * target_s / max(t, 1e-9)), 1)
        count *= 4


def _spread(values):
    return float(statistics.median(values)), (float(min(values)), float(max(values)))


def probe(repeats: int = 5, quick: bool = False, progress=None, seed: int = 1) -> ProbeResult:
    """Measure bandwidth and latency of every cache level and of main memory.

    ``progress`` is an optional callable ``progress(description)``, called after each of the
    two measurements of every level (the command line passes a rich progress bar).
    ``quick`` uses shorter runs and a 256 MiB memory working set, for demos and tests.
    """
    if isinstance(repeats, bool) or not isinstance(repeats, int) or repeats < 1:
        raise ModelError(f"repeats = {repeats!r} is invalid: must be a whole number >= 1")
    lib = load_kernels()
    rng = np.random.default_rng(seed)
    target = 0.02 if quick else 0.1
    levels = cache_levels()
    results = []
    for i, level in enumerate(levels):
        ws = _working_set(level, levels[i - 1] if i else None, quick)
        data = np.ones(ws // 8, np.uint64)
        bw = [ws * n / t for n, t in _stream_runs(lib, data, repeats, target)]
        del data
        if progress:
            progress(f"{level.name}: read bandwidth measured")
        buf = _chase_buffer(ws, rng)
        lat = [t / n for n, t in _chase_runs(lib, buf, repeats, target)]
        del buf
        if progress:
            progress(f"{level.name}: latency measured")
        results.append(LevelMeasurement(level, ws, *_spread(bw), *_spread(lat)))
    if lib is None:
        results = _subtract_python_baseline(results)
    method = ("compiled C kernels (streaming read with 8 accumulators; dependent pointer "
              "chase over random cache lines)" if lib is not None else
              "NumPy sum for bandwidth and a Python pointer-chase loop with its L1-resident "
              "baseline subtracted (no C compiler found; latencies are rough)")
    machine = {"cpu": cpu_model(), "cores": os.cpu_count(),
               "date": time.strftime("%Y-%m-%d %H:%M:%S")}
    return ProbeResult(tuple(results), register_file_bytes(), method, repeats, machine)


def _stream_runs(lib, data: np.ndarray, repeats: int, target: float):
    if lib is not None:
        ptr, n = data.ctypes.data, data.size
        run = lambda passes: lib.stream_read(ptr, n, passes)
    else:
        view = lambda passes: np.lib.stride_tricks.as_strided(
            data, shape=(passes, data.size), strides=(0, 8), writeable=False)
        run = lambda passes: view(passes).sum()
    passes = _calibrated_count(run, target, 1)
    return [(passes, _time(lambda: run(passes))) for _ in range(repeats)]


def _chase_runs(lib, buf: np.ndarray, repeats: int, target: float):
    if lib is not None:
        ptr = buf.ctypes.data
        run = lambda steps: lib.chase(ptr, 0, steps)
    else:
        nxt = buf.tolist()

        def run(steps):
            i = 0
            for _ in range(steps):
                i = nxt[i]
            return i
    steps = _calibrated_count(run, target, 1024)
    return [(steps, _time(lambda: run(steps))) for _ in range(repeats)]


def _subtract_python_baseline(results):
    """Without compiled kernels each chase step also pays the interpreter; the L1-resident
    chase is taken as that cost and removed from every level."""
    base = results[0].latency_s
    out = []
    for m in results:
        lat = max(m.latency_s - base, 1e-10)
        lo, hi = (max(x - base, 1e-10) for x in m.latency_spread)
        out.append(LevelMeasurement(m.level, m.working_set_bytes, m.bandwidth_bytes_per_s,
                                    m.bandwidth_spread, lat, (lo, hi)))
    return out
