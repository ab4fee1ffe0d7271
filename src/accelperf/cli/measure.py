"""`accelperf measure ...`: this machine's crypto accelerators."""

from __future__ import annotations

from pathlib import Path

import click

from .app import cli
from .common import SIZE, granularities, progress_run, range_options


huge_pages_option = click.option(
    "--huge-pages/--no-huge-pages", default=True, show_default=True,
    help="Ask glibc's malloc for transparent huge pages in the openssl processes "
         "(GLIBC_TUNABLES=glibc.malloc.hugetlb=1): spares the large buffers 4 KiB page walks.")


@cli.group(invoke_without_command=False)
def measure():
    """Measure this machine's crypto accelerators (AES-NI, SHA-NI) against its host code."""


@measure.command("aes")
@click.option("--mode", type=click.Choice(["cbc", "ctr"]), default="cbc", show_default=True)
@click.option("--host", type=click.Choice(["vpaes", "table"]), default="vpaes",
              show_default=True, help="Host code: bit-sliced SSSE3 (vpaes) or table AES.")
@range_options
@click.option("--repeats", type=click.IntRange(1, 1000), default=5, show_default=True)
@click.option("--seconds", type=click.IntRange(1, 60), default=1, show_default=True,
              help="Seconds per openssl speed run.")
@huge_pages_option
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), required=True)
def measure_aes(mode, host, lo, hi, repeats, seconds, huge_pages, out):
    """AES with AES-NI against AES in software, at powers of two from --from to --to."""
    _measure_crypto("aes", mode, host, lo, hi, repeats, seconds, huge_pages, out)


@measure.command("sha256")
@range_options
@click.option("--repeats", type=click.IntRange(1, 1000), default=5, show_default=True)
@click.option("--seconds", type=click.IntRange(1, 60), default=1, show_default=True)
@huge_pages_option
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), required=True)
def measure_sha256(lo, hi, repeats, seconds, huge_pages, out):
    """SHA-256 with SHA-NI against SHA-256 in software."""
    _measure_crypto("sha256", None, "no-sha-ni", lo, hi, repeats, seconds, huge_pages, out)


def _measure_crypto(kernel, mode, host, lo, hi, repeats, seconds, huge_pages, out):
    from ..measure.crypto import measure_kernel
    sizes = granularities(lo, hi)
    result = progress_run(2 * len(sizes) * repeats, f"measuring {kernel}",
                           lambda tick: measure_kernel(kernel, sizes, mode, host, repeats,
                                                       seconds, progress=tick,
                                                       huge_pages=huge_pages))
    result.write_csv(out)
    click.echo(f"wrote {out} ({len(sizes)} granularities x host/accel x {repeats} repeats)",
               err=True)


@measure.command("offload")
@click.option("--kernel", type=click.Choice(["aes", "sha256"]), default="aes",
              show_default=True)
@click.option("--from", "lo", type=SIZE, default="1KiB", show_default=True)
@click.option("--to", "hi", type=SIZE, default="2MiB", show_default=True)
@click.option("--repeats", type=click.IntRange(1, 1000), default=5, show_default=True)
@click.option("--target", type=click.FloatRange(0.001, 60), default=0.2, show_default=True,
              help="Seconds of timed calls per granularity and setting.")
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), required=True)
def measure_offload_cmd(kernel, lo, hi, repeats, target, out):
    """Ship g bytes to a worker process through shared memory (host, accel and echo runs)."""
    from ..measure.offload import measure_offload
    sizes = granularities(lo, hi)
    result = progress_run(3 * repeats, f"offloading {kernel}",
                           lambda tick: measure_offload(kernel, sizes, repeats, target,
                                                        progress=tick))
    result.write_csv(out)
    click.echo(f"wrote {out}", err=True)


