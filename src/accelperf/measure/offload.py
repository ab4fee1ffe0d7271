"""A granularity-dependent offload on this machine: shared memory between two processes.

The host process runs with the crypto accelerator masked. To offload g bytes it copies
them into a shared-memory buffer, rings a worker process (accelerator enabled) through a
doorbell in the shared memory, waits, and copies the result back out: latency that grows
with g (two copies) on top of a per-offload overhead (the doorbells and Python's calls). Three settings, each in its own host
process:

* ``host``: the host encrypts (or hashes) the g bytes itself, masked;
* ``accel``: ship to the worker, which encrypts with the accelerator, and back;
* ``echo``: ship to the worker, which only copies the bytes back: o + L·g, directly.

Crypto runs through OpenSSL in the ``cryptography`` package, which reads OPENSSL_ia32cap
like the openssl command. Its Python call adds roughly 0.15-0.2 µs per operation, part of
the measured overhead. Only one of the two processes computes at a time; the other polls
its doorbell on the other core.

Run as ``python -m accelperf.measure.offload driver|worker ...`` by :func:`measure_offload`.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import struct
import subprocess
import sys
import time

from ..errors import install_hint, invalid
from .crypto import (MASKS, REFUSAL, Measurement, MeasurementError, Sample, check_count,
                     check_sizes, environment, finish, interrupted, load_note,
                     slower_host_check)

# What an echo offload may cost beyond its three copies of g bytes (into the shared memory,
# the worker's copy back, out of it) on an otherwise idle machine: two doorbells answered by
# a process polling on its own core, and Python's calls around them, together a few µs.
DOORBELL_BUDGET_S = 10e-6
# An echo this many times slower than expected means the two polling processes were not
# each on a core of their own: they were waiting for the scheduler, not for the copies.
CONTENTION_FACTOR = 10.0


def _operation(kernel: str):
    """A function f(src memoryview, dst memoryview) doing the kernel with OpenSSL."""
    try:
        from cryptography.hazmat.primitives import hashes
        from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes
    except ImportError:
        raise MeasurementError(f"the offload measurement needs the cryptography package: "
                               f"{install_hint('measure')}") from None
    if kernel == "aes":
        enc = Cipher(algorithms.AES(b"accelperf-key-16"), modes.CBC(b"accelperf-iv--16")
                     ).encryptor()
        return lambda src, dst: enc.update_into(src, dst)
    if kernel == "sha256":
        def digest(src, dst):
            h = hashes.Hash(hashes.SHA256())
            h.update(src)
            dst[:32] = h.finalize()
        return digest
    raise MeasurementError(f"kernel = {kernel!r} is invalid: aes or sha256")


def _calibrated(run_once, target_s: float, clock=time.perf_counter) -> float:
    """Seconds per call: repeat until about target_s has passed on ``clock``, after a
    warm-up."""
    run_once()
    n, elapsed = 1, 0.0
    while True:
        start = clock()
        for _ in range(n):
            run_once()
        elapsed = clock() - start
        if elapsed >= target_s:
            return elapsed / n
        n = max(n * 2, int(n * target_s / max(elapsed, 1e-9) * 1.2))


# Shared-memory layout: a 64-byte control block (request number, size, response number),
# then the input area, then the output area. Both sides poll the control block: waking a
# process blocked on a pipe costs tens of microseconds on a virtual machine, and that cost
# varies from call to call, while polling answers within a microsecond, as a device that
# polls its queue does.
_REQ, _SIZE, _RESP, _DATA = 0, 8, 16, 64


def _wait_for(buf, offset: int, value: int, deadline_s: float = 30.0) -> None:
    unpack = struct.unpack_from
    if unpack("<q", buf, offset)[0] == value:
        return
    give_up = time.monotonic() + deadline_s
    spins = 0
    while unpack("<q", buf, offset)[0] != value:
        spins += 1
        if spins & 0xFFFF == 0 and time.monotonic() > give_up:
            raise MeasurementError("the other side of the offload stopped answering")


def _worker(args) -> None:
    from multiprocessing import resource_tracker, shared_memory
    shm = shared_memory.SharedMemory(name=args.shm)
    # Attaching registers the segment with this process's resource tracker, which would
    # unlink it when the worker exits (before Python 3.13's track=False): the driver owns it.
    resource_tracker.unregister(shm._name, "shared_memory")
    buf = shm.buf
    try:
        half = _DATA + (len(buf) - _DATA) // 2
        op = None if args.mode == "echo" else _operation(args.kernel)
        seen = 0
        while True:
            _wait_for(buf, _REQ, seen + 1, deadline_s=600.0)
            seen += 1
            (g,) = struct.unpack_from("<q", buf, _SIZE)
            if g < 0:
                return
            if op is None:
                buf[half:half + g] = buf[_DATA:_DATA + g]
            else:
                op(buf[_DATA:_DATA + g], buf[half:half + g + 16])
            struct.pack_into("<q", buf, _RESP, seen)
    finally:
        del buf
        shm.close()


def _driver(args) -> None:
    sizes = [int(x) for x in args.sizes.split(",")]
    random.Random(args.seed).shuffle(sizes)
    cap = max(sizes) + 64
    source = bytearray(os.urandom(1024)) * (cap // 1024 + 1)
    result = bytearray(cap)
    out = {}
    clock = time.thread_time if args.in_process else time.perf_counter
    if args.mode == "host":
        op = _operation(args.kernel)
        src, dst = memoryview(source), memoryview(bytearray(cap + 16))
        for g in sizes:
            out[g] = _calibrated(lambda: op(src[:g], dst[:g + 16]), args.target, clock)
    elif args.in_process:
        out = _staged_in_process(args, sizes, source, result, cap, clock)
    else:
        from multiprocessing import shared_memory
        shm = shared_memory.SharedMemory(create=True, size=_DATA + 2 * cap + 64)
        buf = shm.buf
        buf[:_DATA] = bytes(_DATA)
        worker = subprocess.Popen(
            [sys.executable, "-m", "accelperf.measure.offload", "worker", "--shm", shm.name,
             "--kernel", args.kernel, "--mode", args.mode], env=environment(None))
        half = _DATA + (len(buf) - _DATA) // 2
        state = {"n": 0}
        try:
            for g in sizes:
                def offload(g=g):
                    buf[_DATA:_DATA + g] = source[:g]          # ship g bytes
                    state["n"] += 1
                    struct.pack_into("<q", buf, _SIZE, g)
                    struct.pack_into("<q", buf, _REQ, state["n"])   # ring the worker
                    _wait_for(buf, _RESP, state["n"])
                    result[:g] = buf[half:half + g]            # take the result back
                out[g] = _calibrated(offload, args.target)
        finally:
            state["n"] += 1
            struct.pack_into("<q", buf, _SIZE, -1)
            struct.pack_into("<q", buf, _REQ, state["n"])
            try:
                worker.wait(timeout=10)
            except subprocess.TimeoutExpired:
                worker.kill()
            del buf
            shm.close()
            shm.unlink()
    json.dump({str(k): v for k, v in out.items()}, sys.stdout)


def _staged_in_process(args, sizes, source, result, cap, clock) -> dict:
    """The in-process offload: the same three copies (into a staging buffer, staging in to
    staging out by the accelerator or an echo copy, and back out) without a second process,
    timed on this thread's CPU clock, so that other processes sharing the cores slow the
    wall clock but not the figures (they still share the caches)."""
    op = None if args.mode == "echo" else _operation(args.kernel)
    stage_in, stage_out = memoryview(bytearray(cap)), memoryview(bytearray(cap + 16))
    out = {}
    for g in sizes:
        def offload(g=g):
            stage_in[:g] = source[:g]                           # ship g bytes
            if op is None:
                stage_out[:g] = stage_in[:g]
            else:
                op(stage_in[:g], stage_out[:g + 16])
            result[:g] = stage_out[:g]                          # take the result back
        out[g] = _calibrated(offload, args.target, clock)
    return out


def measure_offload(kernel: str, granularities, repeats: int = 5, target_s: float = 0.2,
                    progress=None, seed: int = 0, check: bool = True,
                    in_process: bool = False) -> Measurement:
    """Host, accel and echo timings per granularity (see the module docstring).

    ``in_process``: the offload's copies and the accelerated call run in the driver process
    itself, timed on its CPU clock (no worker, no doorbells): a measurement a loaded machine
    cannot turn into one of its scheduler, at the price of the doorbell overhead.
    """
    host_mask = MASKS[("aes", "vpaes")] if kernel == "aes" else \
        MASKS.get((kernel, "no-sha-ni"))
    if host_mask is None:
        raise invalid("--kernel", kernel, "aes or sha256")
    check_count("repeats", repeats)
    if not (isinstance(target_s, (int, float)) and 0 < target_s < float("inf")):
        raise invalid("--target", target_s, "a finite number of seconds > 0")
    sizes = check_sizes(granularities, buffers=6)   # source, result, 2 in shared memory, ...
    _operation(kernel)                                   # fail early without cryptography
    copy_rate = copy_bytes_per_s(sizes[-1])
    rng = random.Random(seed)
    times = {(m, g): [] for m in ("host", "accel", "echo") for g in sizes}
    try:
        _run_settings(kernel, sizes, repeats, target_s, host_mask, rng, times, progress,
                      in_process)
    except KeyboardInterrupt:
        raise interrupted(kernel, times, 3 * len(sizes) * repeats,
                          f"offload {kernel}") from None
    samples = tuple(Sample(kernel, m, g, tuple(times[(m, g)]))
                    for m in ("host", "accel", "echo") for g in sizes)
    return _finish_offload(kernel, samples, copy_rate, host_mask, repeats, check, in_process)


def _run_settings(kernel, sizes, repeats, target_s, host_mask, rng, times, progress,
                  in_process=False) -> None:
    """Every repeat of the three settings, each its own driver process, into ``times``."""
    for r in range(repeats):
        modes = ["host", "accel", "echo"]
        rng.shuffle(modes)
        for mode in modes:
            cmd = [sys.executable, "-m", "accelperf.measure.offload", "driver", "--kernel",
                   kernel, "--mode", mode, "--sizes", ",".join(map(str, sizes)),
                   "--target", str(target_s), "--seed", str(rng.randrange(1 << 30))]
            masked = mode == "host" or not in_process       # the worker is unmasked instead
            run = subprocess.run(cmd + (["--in-process"] if in_process else []),
                                 capture_output=True, text=True,
                                 env=environment(host_mask if masked else None))
            if run.returncode != 0:
                tail = (run.stderr.strip().splitlines() or ["no output"])[-1]
                raise MeasurementError(f"the offload {mode} run failed: {tail}")
            for g, t in json.loads(run.stdout).items():
                times[(mode, int(g))].append(t)
            if progress:
                progress(f"offload {kernel} {mode}, repeat {r + 1}")


def _finish_offload(kernel, samples, copy_rate, host_mask, repeats, check,
                    in_process=False) -> Measurement:
    """The checks and the metadata of a finished offload run."""
    contention = contention_check(samples, copy_rate)
    mask = slower_host_check([s for s in samples if s.mode != "echo"], f"offloaded {kernel}")
    if contention:              # then a host no slower than the accelerator proves nothing
        warnings = (f"{REFUSAL}{contention}" + (
            f"; the host/accelerator comparison (median speedup {_speedup_text(mask)}) is no "
            f"evidence about the accelerator mask" if mask else ""),)
    else:
        warnings = (mask,) if mask else ()
    from .clock import core_clock_hz
    clock = core_clock_hz()
    how = (f"offload {kernel} in process: the accelerated process (unmasked) copies g bytes "
           f"into a staging buffer, computes into a second one and copies the result out, "
           f"timed on its CPU clock (time.thread_time); the host process (masked) computes"
           if in_process else
           f"offload {kernel}: host process (masked) ships g bytes through shared memory to a "
           f"worker process (accelerator enabled)")
    metadata = {
        "accelperf measure": how,
        "backend": "OpenSSL through the cryptography package (about 0.15-0.2 us of Python "
                   "per call); " + ("no worker and no doorbells; " if in_process else
                                    "doorbells are polled sequence numbers in the shared "
                                    "memory; ") + "copies are memoryview slices",
        "host setting": f"OPENSSL_ia32cap={host_mask} (host "
                        + ("process)" if in_process else "and driver processes)"),
        "accel setting": "OPENSSL_ia32cap unset ("
                         + ("the accelerated and echo processes)" if in_process
                            else "worker process)"),
        "echo": ("the staging copies without computing: o + L*g" if in_process else
                 "the worker copies the bytes back without computing: o + L*g"),
        "core clock hz": "unknown" if clock is None else f"{clock:.6g}",
        "statistic": f"seconds per offload; min, median and max of {repeats} repeats, each "
                     f"setting its own process, sizes shuffled",
        "copy rate": f"{copy_rate / 1e9:.3g} GB/s (memoryview copy in this process, for the "
                     f"echo expectation)",
        "load average": load_note(),
        "date": time.strftime("%Y-%m-%d %H:%M:%S"),
    }
    return finish(Measurement(samples, metadata, warnings), check)


def _speedup_text(mask_warning: str) -> str:
    start = mask_warning.find("median speedup ") + len("median speedup ")
    return mask_warning[start:].split(" ", 1)[0]


def copy_bytes_per_s(nbytes: int, target_s: float = 0.02) -> float:
    """This process's memoryview copy rate on ``nbytes`` (at least 64 KiB), the fastest of a
    few timed copies: the yardstick for what an echo offload should cost."""
    n = max(int(nbytes), 1 << 16)
    src, dst = bytearray(n), bytearray(n)
    best, spent = float("inf"), 0.0
    while spent < target_s or best == float("inf"):
        start = time.perf_counter()
        dst[:] = src
        took = time.perf_counter() - start
        best, spent = min(best, took), spent + took
    return n / max(best, 1e-9)


def expected_echo_s(granularity: int, copy_rate: float) -> float:
    """What one echo offload should take on an idle machine: three copies and two doorbells."""
    return 3 * granularity / copy_rate + DOORBELL_BUDGET_S


def contention_check(samples, copy_rate: float) -> str | None:
    """None when the echo runs took about what their copies and doorbells should; otherwise
    the measured slowdown, named as contention for the cores (the driver and the worker each
    poll, and need a core each)."""
    echo = {s.granularity: s.minimum for s in samples if s.mode == "echo"}
    if not echo:
        return None
    ratios = {g: t / expected_echo_s(g, copy_rate) for g, t in echo.items()}
    typical = statistics.median(ratios.values())
    if typical < CONTENTION_FACTOR:
        return None
    g = min(ratios, key=lambda k: abs(ratios[k] - typical))
    return (f"the echo offload (copies and doorbells, no crypto) took {echo[g] * 1e6:.3g} µs "
            f"per call at {g} B, {ratios[g]:.0f}x the {expected_echo_s(g, copy_rate) * 1e6:.3g}"
            f" µs expected from this machine's copy rate ({copy_rate / 1e9:.3g} GB/s) plus "
            f"{DOORBELL_BUDGET_S * 1e6:.0f} µs for the doorbells (median over the sizes "
            f"{typical:.0f}x): the driver and the worker, which each poll and need a core of "
            f"their own, were waiting for the cores (load average {load_note()}); the timings "
            f"measure the scheduler, so rerun on an idle machine")


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(prog="python -m accelperf.measure.offload")
    sub = parser.add_subparsers(dest="role", required=True)
    d = sub.add_parser("driver")
    d.add_argument("--kernel", required=True)
    d.add_argument("--mode", choices=["host", "accel", "echo"], required=True)
    d.add_argument("--sizes", required=True)
    d.add_argument("--target", type=float, default=0.2)
    d.add_argument("--seed", type=int, default=0)
    d.add_argument("--in-process", action="store_true")
    w = sub.add_parser("worker")
    w.add_argument("--shm", required=True)
    w.add_argument("--kernel", required=True)
    w.add_argument("--mode", choices=["accel", "echo"], required=True)
    args = parser.parse_args(argv)
    (_driver if args.role == "driver" else _worker)(args)


if __name__ == "__main__":
    main()
