"""Host and accelerated timings of real crypto kernels on this machine.

Backend: the ``openssl speed`` command (``-evp ALG -bytes g -seconds 1 -elapsed -mr``),
which calls OpenSSL's EVP interface in a C loop, so a timing includes one EVP call per
operation (a few tens of nanoseconds) and no Python. The same binary runs with and without
the accelerators: OpenSSL reads ``OPENSSL_ia32cap`` when libcrypto loads.

* accelerated: the variable is removed from the environment. (Set but empty, it clears
  every capability bit, AES-NI included: a trap this module avoids.)
* host, AES: AES-NI and PCLMULQDQ masked, SSSE3 kept (bit-sliced "vpaes"), or SSSE3 masked
  too (table AES); host, SHA-256: SHA-NI masked. The ``:`` part keeps OpenSSL 3 from also
  clearing the CPUID leaf-7 word (AVX2, VAES, SHA-NI) when only AES-NI is meant.

Every (setting, granularity, repeat) runs in its own process. Repeats are the outer loop;
inside one, the sizes come in a shuffled order and each size's host and accelerated runs
follow each other directly (which goes first alternates), so a slow phase of a shared
machine (a neighbour's burst, a clock change) tends to hit both runs of a pair and cancels
from the speedup instead of landing on one of them. Runs on a shared machine are only ever
slowed down: the minimum and the median of the repeats are kept, with the spread.

Large buffers are asked to live on transparent huge pages (glibc's ``glibc.malloc.hugetlb=1``
tunable, glibc >= 2.35, honoured when the kernel's THP mode is ``always`` or ``madvise``):
on a virtual machine every 4 KiB TLB miss costs a two-dimensional page walk. Side by side
at 32 MiB, huge pages raised AES-NI from 1.73-1.74 to 1.79-1.81 GB/s here (3-5%; 1.5% at
16 MiB): an effect of the VM's paging that neither LogCA nor the accelerator is about. The
rest of the drop from ~1.97 GB/s at 1 MiB is the buffer leaving the caches.
"""

from __future__ import annotations

import os
import platform
import random
import re
import shutil
import statistics
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import ModelError, invalid
from ..outputs import write_atomic
from .cpuinfo import cpu_flags, cpu_model, nominal_clock_hz
from .data import Timings, check_statistic, timings_from_table

MASKS = {
    ("aes", "vpaes"): "~0x200000200000000:~0x0",
    ("aes", "table"): "~0x200020200000000:~0x0",
    ("sha256", "no-sha-ni"): ":~0x20000000",
}
HOSTS = {"aes": ("vpaes", "table"), "sha256": ("no-sha-ni",)}
ALGORITHMS = {("aes", "cbc"): "aes-128-cbc", ("aes", "ctr"): "aes-128-ctr",
              ("sha256", None): "sha256"}
COLUMNS = ["kernel", "mode", "granularity_bytes", "seconds_min", "seconds_median",
           "seconds_max", "repeats"]
DEVICE_COLUMNS = ["device_seconds_min", "device_seconds_median", "device_seconds_max"]
_RESULT = re.compile(r"^\+R:(\d+):[^:]*:([0-9.]+)", re.M)


class MeasurementError(ModelError):
    """A measurement that cannot be made or cannot be trusted: a failed run, not bad input,
    so the command line exits with status 1 (bad input is 2)."""

    exit_status = 1


class UntrustedMeasurement(MeasurementError):
    """The timings were taken but fail a sanity check; ``measurement`` keeps them, with the
    reason among its warnings, so that they can be written out and inspected."""

    def __init__(self, message: str, measurement: "Measurement"):
        super().__init__(message)
        self.measurement = measurement


class MeasurementInterrupted(KeyboardInterrupt):
    """Ctrl-C during a measurement. A KeyboardInterrupt like any other, it also carries
    the timings taken so far (``measurement``) so that they need not be lost."""

    def __init__(self, measurement: "Measurement"):
        super().__init__(measurement.warnings[0])
        self.measurement = measurement


def interrupted(kernel: str, times: dict, planned: int, what: str) -> MeasurementInterrupted:
    """The exception for Ctrl-C after some of ``planned`` runs: every (mode, granularity)
    with at least one timing, and a warning that says how far the run got."""
    samples = tuple(Sample(kernel, m, g, tuple(t)) for (m, g), t in sorted(times.items())
                    if t)
    done = sum(len(t) for t in times.values())
    metadata = {"accelperf measure": what, "load average": load_note(),
                "date": time.strftime("%Y-%m-%d %H:%M:%S")}
    warning = (f"{REFUSAL}interrupted with Ctrl-C after {done} of {planned} timed runs; "
               f"these are the runs that finished")
    return MeasurementInterrupted(Measurement(samples, metadata, (warning,)))


# The largest granularity measured: openssl speed and the offload's shared memory hold a few
# buffers of that size; beyond 1 GiB a sweep takes hours and times the memory system far
# more than the crypto kernel.
MAX_GRANULARITY = 2**30


@dataclass(frozen=True)
class Sample:
    kernel: str
    mode: str                 # "host", "accel" or "echo"
    granularity: int
    seconds: tuple[float, ...]
    # Optional per-repeat figures of a GPU measurement (measure/gpu.py): the device's own
    # clock (CUDA events) and the board's energy, both per operation; empty when not taken.
    device_seconds: tuple[float, ...] = ()
    joules: tuple[float, ...] = ()

    @property
    def minimum(self) -> float:
        return min(self.seconds)

    @property
    def median(self) -> float:
        return float(statistics.median(self.seconds))


@dataclass(frozen=True)
class Measurement:
    samples: tuple[Sample, ...]
    metadata: dict = field(default_factory=dict)
    warnings: tuple[str, ...] = ()

    def to_dict(self) -> dict:
        """The samples, the metadata and the warnings, for --json."""
        return {"samples": [{"kernel": s.kernel, "mode": s.mode,
                             "granularity_bytes": s.granularity, "seconds": list(s.seconds),
                             "seconds_min": s.minimum, "seconds_median": s.median,
                             **({"device_seconds": list(s.device_seconds)}
                                if s.device_seconds else {}),
                             **({"joules": list(s.joules)} if s.joules else {})}
                            for s in self.samples],
                "metadata": dict(self.metadata), "warnings": list(self.warnings)}

    def timings(self, statistic: str = "min") -> Timings:
        """The repeats' minimum (or median) per mode and granularity, as the CSV reader
        would return them."""
        check_statistic(statistic)
        table = {(s.mode, s.granularity): s.minimum if statistic == "min" else s.median
                 for s in self.samples}
        kernels = ",".join(sorted({s.kernel for s in self.samples}))
        return timings_from_table(table, kernels, dict(self.metadata))

    def write_csv(self, path: str | Path) -> Path:
        """CSV with a header comment block describing the machine and the method."""
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        lines = [f"# {k}: {v}" for k, v in self.metadata.items()]
        lines += [f"# warning: {' '.join(w.split())}" for w in self.warnings]
        device = any(s.device_seconds for s in self.samples)
        energy = any(s.joules for s in self.samples)
        # Extra columns go after the ones `logca fit` reads, which ignores them.
        lines.append(",".join(COLUMNS + DEVICE_COLUMNS * device + ["joules_median"] * energy))
        for s in sorted(self.samples, key=lambda s: (s.mode, s.granularity)):
            row = (f"{s.kernel},{s.mode},{s.granularity},{s.minimum:.9g},"
                   f"{s.median:.9g},{max(s.seconds):.9g},{len(s.seconds)}")
            if device:
                row += "," + (",".join(f"{v:.9g}" for v in _spread(s.device_seconds))
                              if s.device_seconds else ",,")
            if energy:
                row += "," + (f"{statistics.median(s.joules):.9g}" if s.joules else "")
            lines.append(row)
        write_atomic(path, "\n".join(lines) + "\n")
        return path


def _spread(values) -> tuple[float, float, float]:
    return min(values), float(statistics.median(values)), max(values)


def openssl_binary() -> str:
    exe = shutil.which("openssl")
    if exe is None:
        raise MeasurementError("the openssl command is not installed: install OpenSSL "
                               "(Debian: apt-get install openssl) to measure crypto kernels")
    return exe


def openssl_version() -> str:
    out = subprocess.run([openssl_binary(), "version"], capture_output=True, text=True)
    return out.stdout.strip()


HUGE_PAGES_TUNABLE = "glibc.malloc.hugetlb=1"


def environment(mask: str | None, huge_pages: bool = False) -> dict:
    """This process's environment with OPENSSL_ia32cap removed, or set to ``mask``; with
    ``huge_pages``, glibc's malloc is also asked for transparent huge pages (added to any
    GLIBC_TUNABLES the user already set, which are kept)."""
    env = {k: v for k, v in os.environ.items() if k != "OPENSSL_ia32cap"}
    if mask is not None:
        env["OPENSSL_ia32cap"] = mask
    if huge_pages:
        mine = env.get("GLIBC_TUNABLES", "")
        if "glibc.malloc.hugetlb" not in mine:
            env["GLIBC_TUNABLES"] = f"{mine}:{HUGE_PAGES_TUNABLE}" if mine else HUGE_PAGES_TUNABLE
    return env


def transparent_huge_pages() -> str:
    """The kernel's THP mode ("always", "madvise", "never") or "unknown"."""
    try:
        text = Path("/sys/kernel/mm/transparent_hugepage/enabled").read_text()
    except OSError:
        return "unknown"
    chosen = re.search(r"\[(\w+)\]", text)
    return chosen.group(1) if chosen else "unknown"


def huge_pages_note(requested: bool) -> str:
    if not requested:
        return "4 KiB pages (huge pages not requested)"
    glibc = platform.libc_ver()
    return (f"transparent huge pages requested through GLIBC_TUNABLES={HUGE_PAGES_TUNABLE} "
            f"(kernel THP mode: {transparent_huge_pages()}; {' '.join(glibc) or 'libc unknown'}"
            f"; glibc >= 2.35 honours it)")


def openssl_speed(algorithm: str, nbytes: int, mask: str | None, seconds: int = 1,
                  huge_pages: bool = False) -> float:
    """Seconds per operation on ``nbytes`` in its own ``openssl speed`` process."""
    cmd = [openssl_binary(), "speed", "-mr", "-elapsed", "-seconds", str(seconds), "-bytes",
           str(nbytes), "-evp", algorithm]
    run = subprocess.run(cmd, capture_output=True, text=True,
                         env=environment(mask, huge_pages))
    match = _RESULT.search(run.stdout + "\n" + run.stderr)    # -mr results go to stderr
    if run.returncode != 0 or not match:
        tail = (run.stderr or run.stdout).strip().splitlines()[-1:] or ["no output"]
        raise MeasurementError(f"openssl speed failed for {algorithm} at {nbytes} B: {tail[0]}")
    count, elapsed = int(match.group(1)), float(match.group(2))
    if count == 0:
        raise MeasurementError(f"openssl speed ran no {algorithm} operation on {nbytes} B in "
                               f"{elapsed} s")
    return elapsed / count


def accelerator_flags() -> list[str]:
    """The CPU flags that matter to these measurements, in a fixed order."""
    wanted = ("aes", "vaes", "pclmulqdq", "ssse3", "avx", "avx2", "avx512f", "sha_ni")
    have = cpu_flags()
    return [f for f in wanted if f in have]


def measure_kernel(kernel: str, granularities, mode: str | None = "cbc",
                   host: str | None = None, repeats: int = 5, seconds: int = 1,
                   progress=None, seed: int = 0, check: bool = True,
                   huge_pages: bool = True) -> Measurement:
    """Time ``kernel`` ("aes" or "sha256") on the host (accelerator masked) and on the
    accelerator for every granularity; see the module docstring for the method."""
    if not isinstance(kernel, str) or kernel not in HOSTS:
        raise invalid("kernel", kernel, "measure aes or sha256")
    if not (host is None or isinstance(host, str)) or not (mode is None or isinstance(mode, str)):
        raise invalid("`host`/`mode`", (host, mode), "names such as vpaes and cbc")
    host = host or HOSTS[kernel][0]
    if (kernel, host) not in MASKS:
        raise invalid("--host", host, f"for {kernel} use {' or '.join(HOSTS[kernel])}")
    mode_key = mode if kernel == "aes" else None
    if (kernel, mode_key) not in ALGORITHMS:
        raise invalid("mode", mode, "for aes use cbc or ctr")
    check_count("repeats", repeats)
    check_count("seconds", seconds)
    algorithm = ALGORITHMS[(kernel, mode_key)]
    sizes = check_sizes(granularities, buffers=3)
    openssl_binary()                    # before the first run, not after minutes of them
    rng = random.Random(seed)
    settings = [("host", MASKS[(kernel, host)]), ("accel", None)]
    times = {(m, g): [] for m, _ in settings for g in sizes}
    try:
        for repeat in range(repeats):
            order = sizes[:]
            rng.shuffle(order)
            for k, g in enumerate(order):
                pair = settings if (repeat + k) % 2 == 0 else settings[::-1]
                for m, mask in pair:
                    times[(m, g)].append(openssl_speed(algorithm, g, mask, seconds,
                                                       huge_pages))
                    if progress:
                        progress(f"{kernel} {m} {g} B")
    except KeyboardInterrupt:
        raise interrupted(kernel, times, 2 * len(sizes) * repeats,
                          f"{kernel} {algorithm}, host = {host}") from None
    samples = tuple(Sample(kernel, m, g, tuple(times[(m, g)])) for m, _ in settings
                    for g in sizes)
    problem = slower_host_check(samples, f"{kernel} ({algorithm})")
    from .clock import core_clock_hz
    clock, nominal = core_clock_hz(), nominal_clock_hz()
    metadata = {
        "accelperf measure": f"{kernel} {algorithm}, host = {host}",
        "backend": f"openssl speed -evp {algorithm} -bytes G -seconds {seconds} -elapsed "
                   f"(one EVP call per operation, in C; no Python in the timed loop)",
        "openssl": openssl_version(),
        "host setting": f"OPENSSL_ia32cap={MASKS[(kernel, host)]}",
        "accel setting": "OPENSSL_ia32cap unset",
        "machine": f"{cpu_model()}, {os.cpu_count()} cores, {platform.platform()}",
        "cpu flags": " ".join(accelerator_flags()),
        "core clock hz": "unknown" if clock is None else f"{clock:.6g}",
        "core clock method": "timed chain of dependent register additions "
                             "(accelperf.measure.clock); /proc/cpuinfo reports "
                             + ("unknown" if nominal is None else f"{nominal:.6g} Hz")
                             + ", the nominal rate on virtual machines",
        "statistic": f"seconds per operation; min, median and max of {repeats} repeats, each "
                     f"its own process; sizes shuffled within each repeat, each size's host "
                     f"and accelerated runs back to back",
        "memory": huge_pages_note(huge_pages),
        "load average": load_note(),
        "date": time.strftime("%Y-%m-%d %H:%M:%S"),
    }
    return finish(Measurement(samples, metadata, (problem,) if problem else ()), check)


def finish(measurement: Measurement, check: bool) -> Measurement:
    """The measurement, or with ``check`` an UntrustedMeasurement carrying it when a sanity
    check failed (its first warning says which and why)."""
    if check and measurement.warnings and measurement.warnings[0].startswith(REFUSAL):
        raise UntrustedMeasurement(measurement.warnings[0], measurement)
    return measurement


REFUSAL = "not trustworthy: "


def check_count(name: str, value) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise invalid(name, value, "a whole number >= 1")


def check_sizes(granularities, buffers: int) -> list[int]:
    """Whole-byte granularities, 1 B .. MAX_GRANULARITY, each fitting ``buffers`` times in
    the memory available now (a sweep that would swap measures the disk)."""
    try:
        sizes = sorted({int(g) for g in granularities})
        exact = all(float(g) == int(g) for g in granularities)
    except (TypeError, ValueError, OverflowError):
        raise invalid("granularities", granularities, "whole numbers of bytes") from None
    if not sizes or not exact or sizes[0] < 1:
        raise invalid("granularities", granularities, "whole numbers of bytes >= 1")
    limit = MAX_GRANULARITY
    available = available_memory()
    if available:
        limit = min(limit, available // buffers)
    if sizes[-1] > limit:
        raise invalid("largest granularity (`to`)", f"{sizes[-1]} B",
                      f"at most {limit} B can be measured here "
                      f"({buffers} buffers of that size must fit in the "
                      f"{available / 2**30:.1f} GiB of memory available, and never more "
                      f"than 1 GiB)")
    return sizes


def available_memory() -> int:
    """MemAvailable from /proc/meminfo in bytes, or 0 when unknown."""
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return 0


def load_note() -> str:
    """The 1-minute load average against the core count: what else wanted the cores."""
    try:
        load = os.getloadavg()[0]
    except OSError:
        return "unknown"
    return f"{load:.2f} on {os.cpu_count()} cores"


def slower_host_check(samples, what: str) -> str | None:
    """None when the masked host is clearly slower than the accelerator at the larger
    granularities; otherwise the reason the comparison cannot be trusted."""
    by = {(s.mode, s.granularity): s.median for s in samples}
    sizes = sorted({s.granularity for s in samples})
    large = sizes[len(sizes) // 2:]
    ratio = statistics.median(by[("host", g)] / by[("accel", g)] for g in large)
    if ratio >= 1.3:
        return None
    return (f"{REFUSAL}the masked host run of {what} is not slower than the accelerated run "
            f"(median speedup {ratio:.2f} at the larger sizes): the accelerator mask did not "
            f"take effect or this CPU has no accelerator for it (CPU flags: "
            f"{' '.join(accelerator_flags()) or 'unknown'}; load average {load_note()})")


