"""Is the shared-memory AES offload faster than the masked host on this machine, now?

The test suite only checks that the offload measurement is well formed: whether the
accelerated worker beats the host depends on the machine and on what else its two cores
are doing (the driver and the worker each poll on a core of their own). This script
measures it, prints the contention check's verdict beside the speedups, and ends with the
speedup at 256 KiB. Run: ``.venv/bin/python benchmarks/offload_sanity.py``.
"""

from accelperf.measure.offload import measure_offload

SIZES = [4096, 65536, 262144, 1 << 20]

m = measure_offload("aes", SIZES, repeats=3, target_s=0.05, check=False)
t = m.timings("min")
print(f"load average: {m.metadata['load average']}")
for w in m.warnings:
    print(f"warning: {' '.join(w.split())}")
for g, host, accel, echo in zip(t.granularity, t.host, t.accel, t.echo):
    print(f"{int(g):>9} B  host {host * 1e6:9.2f} us  accel {accel * 1e6:9.2f} us  "
          f"echo {echo * 1e6:8.2f} us  speedup {host / accel:5.2f}")
i = list(t.granularity).index(262144)
print(f"offload_speedup_256KiB: {t.host[i] / t.accel[i]:.3f}")
