"""Built-in LogCA presets: ISCA'17 Table 5 devices with Table 4 kernels.

Numbers are the paper's, in cycles of the host clock. One caveat the mathematics forces:
read as cycles per byte, the discrete GPU's L = 3000 makes the computational intensity of
AES and radix sort C/L < 1, so with β ≈ 1 these kernels could never break even, yet the
paper's Figs. 7 and 9a show them breaking even. The printed GPU latency is therefore not in
cycles per byte; the presets keep the printed value and the tool reports what it implies.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources

from ..errors import ModelError
from .model import LogCA

_ALIASES = {"sha256": "sha", "sha-256": "sha", "sha1": "sha", "radix_sort": "radix-sort",
            "radixsort": "radix-sort", "sort": "radix-sort", "binary_search": "binary-search",
            "bsearch": "binary-search", "matmul": "gemm", "sparc-t4": "sparc-t4-engine",
            "t2": "ultrasparc-t2", "t3": "sparc-t3", "gpu": "discrete-gpu",
            "sandybridge": "sandy-bridge", "aes-ni": "sandy-bridge"}


@dataclass(frozen=True)
class Device:
    name: str
    title: str
    frequency_hz: float
    latency: str
    L: float
    o: float
    A: dict
    C: dict

    @property
    def kernels(self) -> tuple[str, ...]:
        return tuple(self.C)


@lru_cache(maxsize=1)
def _table() -> dict:
    text = resources.files("accelperf.logca").joinpath("presets.toml").read_text("utf-8")
    return tomllib.loads(text)


def kernels() -> dict[str, float]:
    """Kernel name → complexity exponent β (ISCA'17 Table 4)."""
    return {k: v["beta"] for k, v in _table()["kernels"].items()}


def omitted() -> dict[str, str]:
    """Devices the paper plots without a Table 5 row, with the reason they are absent."""
    return dict(_table()["omitted"])


def devices() -> dict[str, Device]:
    out = {}
    for name, d in _table()["devices"].items():
        out[name] = Device(name=name, title=d["title"], frequency_hz=d["frequency_ghz"] * 1e9,
                           latency=d["latency"], L=d["L"], o=d["o"], A=dict(d["A"]),
                           C=dict(d["C"]))
    return out


def _canonical(name: str, valid, what: str) -> str:
    key = str(name).strip().lower().replace(" ", "-")
    key = _ALIASES.get(key, key)
    if key not in valid:
        if what == "device" and key in omitted():
            raise ModelError(f"device = {name!r} is invalid: the paper gives no Table 5 "
                             f"parameters for it ({omitted()[key]}); valid devices: "
                             f"{', '.join(valid)}", field="device")
        raise ModelError(f"{what} = {name!r} is invalid: valid {what}s are {', '.join(valid)}",
                         field=what)
    return key


def preset(device: str, kernel: str) -> LogCA:
    """The LogCA model of a Table 5 device running a Table 4 kernel.

    >>> preset("sandy-bridge", "aes")
    LogCA(L=3, o=10, C=35, A=6, beta=1.01, latency='independent', unit='cycles', frequency_hz=3400000000, name='sandy-bridge/aes')
    """
    all_devices = devices()
    dev = all_devices[_canonical(device, list(all_devices), "device")]
    k = _canonical(kernel, list(kernels()), "kernel")
    if k not in dev.C:
        raise ModelError(f"kernel = {kernel!r} is invalid for device {dev.name}: Table 5 "
                         f"gives it only {', '.join(dev.kernels)}", field="kernel")
    A = dev.A.get(k, dev.A.get("default"))
    return LogCA(L=dev.L, o=dev.o, C=dev.C[k], A=A, beta=kernels()[k], latency=dev.latency,
                 unit="cycles", frequency_hz=dev.frequency_hz, name=f"{dev.name}/{k}")


def all_presets() -> list[LogCA]:
    """Every (device, kernel) pair of Table 5, in table order."""
    return [preset(d.name, k) for d in devices().values() for k in d.kernels]
