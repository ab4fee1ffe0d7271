"""`accelperf measure ...`: this machine's crypto accelerators, and a GPU (`measure gpu`).

Every input and the output path are checked before the first timed run: a measurement
takes minutes, and a mistake found after it would throw them away. A measurement that
fails its sanity check (the masked host no slower than the accelerator, or an echo offload
slowed by contention for the cores) is still written, with the reason as a ``# warning:``
line in the CSV, and the command exits with status 1; one stopped with Ctrl-C writes the
timings that finished and exits with status 130.
"""

from __future__ import annotations

from pathlib import Path

import click

from ..report import dump_json
from .app import cli
from .common import (SIZE, RealType, check_output, granularities, progress_run, range_options,
                     refuse_unused, size_range)

huge_pages_option = click.option(
    "--huge-pages/--no-huge-pages", default=True, show_default=True,
    help="Ask glibc's malloc for transparent huge pages in the openssl processes "
         "(GLIBC_TUNABLES=glibc.malloc.hugetlb=1): spares the large buffers 4 KiB page walks.")


def _common_options(func):
    """--repeats, --out and --json, shared by the three measurements."""
    func = click.option("--json", "as_json", is_flag=True,
                        help="Also print every timing as one JSON object (the CSV is written "
                             "either way).")(func)
    func = click.option("--out", type=click.Path(dir_okay=False, path_type=Path),
                        required=True,
                        help="CSV file for the timings (its directory must exist); checked "
                             "before the first run.")(func)
    return click.option("--repeats", type=click.IntRange(1, 1000), default=5,
                        show_default=True,
                        help="Repeats of every (setting, granularity); the CSV keeps their "
                             "minimum, median and maximum.")(func)


seconds_option = click.option("--seconds", type=click.IntRange(1, 60), default=1,
                              show_default=True, help="Seconds per openssl speed run.")


@cli.group()
def measure():
    """Measure this machine's crypto accelerators (AES-NI, SHA-NI) or a GPU against its
    host code.

    Each run prints its progress; a full sweep with the default repeats takes minutes
    (`measure aes` about 4), so try a short range first.
    """


@measure.command("aes")
@click.option("--mode", type=click.Choice(["cbc", "ctr"]), default="cbc", show_default=True,
              help="AES-128 mode of operation.")
@click.option("--host", type=click.Choice(["vpaes", "table"]), default="vpaes",
              show_default=True, help="Host code: bit-sliced SSSE3 (vpaes) or table AES.")
@range_options
@seconds_option
@huge_pages_option
@_common_options
def measure_aes(mode, host, lo, hi, seconds, huge_pages, repeats, out, as_json):
    """AES with AES-NI against AES in software, at powers of two from --from to --to.

    The default sweep (16 B..32 MiB, 5 repeats, 1 s per run) takes about 4 minutes;
    the command says how long before it starts.

    \b
    Examples:
      accelperf measure aes --from 1KiB --to 64KiB --repeats 1 --out aes.csv   # ~10 s
      accelperf measure aes --out aes.csv && accelperf logca fit aes.csv
    """
    _measure_crypto("aes", mode, host, lo, hi, repeats, seconds, huge_pages, out, as_json)


@measure.command("sha256")
@range_options
@seconds_option
@huge_pages_option
@_common_options
def measure_sha256(lo, hi, seconds, huge_pages, repeats, out, as_json):
    """SHA-256 with SHA-NI against SHA-256 in software.

    \b
    Examples:
      accelperf measure sha256 --from 1KiB --to 64KiB --repeats 1 --out sha.csv
    """
    _measure_crypto("sha256", None, "no-sha-ni", lo, hi, repeats, seconds, huge_pages, out,
                    as_json)


def _measure_crypto(kernel, mode, host, lo, hi, repeats, seconds, huge_pages, out, as_json):
    from ..measure.crypto import check_sizes, measure_kernel
    check_output(out, "--out", (".csv",))
    sizes = check_sizes(granularities(lo, hi), buffers=3)
    _run(lambda tick: measure_kernel(kernel, sizes, mode, host, repeats, seconds,
                                     progress=tick, huge_pages=huge_pages),
         2 * len(sizes) * repeats, f"measuring {kernel}", out, as_json,
         f"{len(sizes)} granularities x host/accel x {repeats} repeats, "
         f"{_duration(2 * len(sizes) * repeats * seconds)} of openssl runs")


def _duration(seconds: float) -> str:
    """A planned run's length in the unit a person waits in."""
    return f"about {seconds:.0f} s" if seconds < 120 else f"about {seconds / 60:.0f} minutes"


@measure.command("offload")
@click.option("--kernel", type=click.Choice(["aes", "sha256"]), default="aes",
              show_default=True, help="What the worker process computes on the g bytes.")
@click.option("--from", "lo", type=SIZE, default="1KiB", show_default=True,
              help="Smallest granularity.")
@click.option("--to", "hi", type=SIZE, default="2MiB", show_default=True,
              help="Largest granularity.")
@click.option("--target", type=RealType(low=0.001, high=60), default=0.2, show_default=True,
              help="Seconds of timed calls per granularity and setting.")
@click.option("--in-process", is_flag=True,
              help="No worker: the copies and the accelerated call run in the measuring "
                   "process, timed on its CPU clock (for a machine others are loading).")
@_common_options
def measure_offload_cmd(kernel, lo, hi, target, in_process, repeats, out, as_json):
    """Ship g bytes to a worker process through shared memory (host, accel and echo runs).

    \b
    Examples:
      accelperf measure offload --from 4KiB --to 256KiB --repeats 1 --out offload.csv
      accelperf logca fit offload.csv            # o and L from the echo run
      accelperf measure offload --in-process --from 4KiB --to 128MiB --out big.csv
    """
    from ..measure.crypto import check_sizes
    from ..measure.offload import measure_offload
    check_output(out, "--out", (".csv",))
    sizes = check_sizes(granularities(lo, hi), buffers=6)
    _run(lambda tick: measure_offload(kernel, sizes, repeats, target, progress=tick,
                                      in_process=in_process),
         3 * repeats, f"offloading {kernel}", out, as_json,
         f"{len(sizes)} granularities x host/accel/echo x {repeats} repeats")


def _run(work, steps, label, out, as_json, what):
    """Measure, then write the CSV; an untrusted measurement is written too, with its
    reason, and ends with status 1."""
    from ..measure.crypto import MeasurementInterrupted, UntrustedMeasurement
    click.echo(f"accelperf: {label}: {what}", err=True)     # the plan, before the wait
    try:
        result, failure = progress_run(steps, label, work), None
    except UntrustedMeasurement as exc:
        result, failure = exc.measurement, exc
    except MeasurementInterrupted as exc:           # Ctrl-C: keep what was measured
        exc.measurement.write_csv(out)
        click.echo(f"accelperf: interrupted; the {len(exc.measurement.samples)} timings "
                   f"finished so far are kept in {out}", err=True)
        raise SystemExit(130) from None
    result.write_csv(out)
    if as_json:
        click.echo(dump_json({"out": str(out), **result.to_dict()}))
    if failure is not None:
        click.echo(f"accelperf: error: {' '.join(str(failure).split())}; the timings are kept "
                   f"in {out}", err=True)
        raise SystemExit(1)
    for warning in result.warnings:
        click.echo(f"accelperf: warning: {warning}", err=True)
    click.echo(f"wrote {out} ({what})", err=True)


@measure.command("gpu")
@click.option("--kernel", default="scale", show_default=True,
              help="scale (y = 2x), sort, fft (rfft: float32 in, complex64 out) or gemm "
                   "(fp32, no TF32; g = bytes of A and B, n = round(sqrt(g/8))), all on "
                   "float32; or python:MODULE:FUNC, a function of yours given the input "
                   "tensor (one float32 vector of g/4 values, already on the device) that "
                   "returns a tensor or a tuple of tensors there, without synchronizing.")
@click.option("--from", "lo", type=SIZE, default="4KiB", show_default=True,
              help="Smallest granularity (bytes of input).")
@click.option("--to", "hi", type=SIZE, default="64MiB", show_default=True,
              help="Largest granularity.")
@click.option("--pinned/--pageable", default=True, show_default=True,
              help="Host buffers in page-locked (pinned) or ordinary memory.")
@click.option("--resident", is_flag=True,
              help="Data already on the device: accel times only the kernel; no echo rows.")
@click.option("--energy", is_flag=True,
              help="Also joules per operation from NVML's total-energy counter (each device "
                   "repeat then lasts at least 0.2 s); without one, says so and goes on.")
@click.option("--device", type=click.Choice(["cuda", "cpu"]), default="cuda",
              show_default=True,
              help="cuda: the GPU through PyTorch; cpu: the same harness with the CPU as the "
                   "device (for CI and a try-out without a GPU).")
@_common_options
def measure_gpu_cmd(kernel, lo, hi, pinned, resident, energy, device, repeats, out, as_json):
    """Offload a kernel to a GPU with PyTorch: host, accel (copy in, kernel, copy out) and
    echo (the copies alone) timings, with the device's own clock (CUDA events) beside the
    wall clock. Needs PyTorch (pip install 'accelperf[gpu]'). A size whose minimum spikes
    far above both its neighbours' is measured again (at most twice), and the CSV's header
    says so.

    \b
    Examples:
      accelperf measure gpu --kernel sort --from 4KiB --to 64MiB --out gpu-sort.csv
      accelperf logca fit gpu-sort.csv --select --hierarchy data
      accelperf measure gpu --kernel scale --resident --out scale-resident.csv
      accelperf measure gpu --device cpu --from 4KiB --to 64KiB --repeats 2 --out cpu.csv
    """
    from ..measure.gpu import check_plan, measure_gpu
    from ..measure.gpu_torch import torch_backend
    check_output(out, "--out", (".csv",))
    if resident:
        refuse_unused({"pinned": "the data stay on the device: there are no host buffers "
                                 "to pin"}, "--resident")
    plan = check_plan(kernel, granularities(lo, hi, one_size=True), repeats, pinned,
                      resident, energy)
    backend = torch_backend(device)
    if plan.kernel.startswith("python:"):
        from ..measure.gpu import user_kernel
        user_kernel(plan.kernel)                       # a missing module: exit 2, now
    steps = len(plan.modes) * len(plan.sizes) * repeats
    if energy:
        found = backend.energy_counter()
        if not callable(found):
            click.echo(f"accelperf: --energy: not measured: {found}", err=True)
    _run(lambda tick: measure_gpu(plan, backend, progress=tick), steps,
         f"measuring gpu {plan.kernel} on {device}", out, as_json,
         f"{len(plan.sizes)} granularities ({size_range(plan.sizes[0], plan.sizes[-1])}) x "
         f"{'/'.join(plan.modes)} x {repeats} repeats")
