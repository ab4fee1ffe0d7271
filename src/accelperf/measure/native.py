"""The probe's C kernels, compiled once with the system C compiler and loaded by ctypes.

Python cannot time a dependent load chain itself (each interpreted step costs tens of
nanoseconds), so the kernels are compiled on first use into the user's cache directory.
Where no compiler is available, :func:`load_kernels` returns None and the probe falls
back to NumPy and a baseline-corrected Python loop, and says so in its output.
"""

from __future__ import annotations

import ctypes
import hashlib
import os
import shutil
import subprocess
import tempfile
from functools import lru_cache
from importlib import resources
from pathlib import Path


def cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "accelperf"


def find_compiler() -> str | None:
    """The path of the C compiler to use ($CC, cc, gcc or clang on PATH), or None."""
    return _compiler_on(os.environ.get("CC"), os.environ.get("PATH"))


@lru_cache(maxsize=8)
def _compiler_on(cc: str | None, path: str | None) -> str | None:
    # Keyed by $CC and $PATH: a calibration asks once per parameter vector it simulates,
    # and the search of PATH was 6% of `lpn calibrate jpeg-decoder`.
    for name in (cc, "cc", "gcc", "clang"):
        if name and shutil.which(name, path=path):
            return shutil.which(name, path=path)
    return None


@lru_cache(maxsize=1)
def load_kernels():
    """The compiled kernels as a ctypes library, or None when they cannot be built."""
    try:
        return _build_and_load()
    except (OSError, subprocess.SubprocessError):
        return None    # no writable cache, a broken compiler, an unloadable library


def build_shared(stem: str, source: str) -> Path | None:
    """``source`` (C) compiled into a shared library in the cache, once per content, or
    None when there is no C compiler or it fails."""
    cc = find_compiler()
    if cc is None:
        return None
    digest = hashlib.sha256(source.encode()).hexdigest()[:16]
    target = cache_dir() / f"{stem}-{digest}.so"
    if not target.exists():
        target.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory() as tmp:
            src = Path(tmp) / f"{stem}.c"
            src.write_text(source)
            built = Path(tmp) / f"{stem}.so"
            for flags in (["-O3", "-march=native"], ["-O2"]):
                result = subprocess.run([cc, *flags, "-shared", "-fPIC", str(src), "-o",
                                         str(built)], capture_output=True, text=True)
                if result.returncode == 0:
                    break
            else:
                return None
            os.replace(built, target)   # atomic: a concurrent run never loads half a file
    return target


def _build_and_load():
    source = resources.files("accelperf.measure").joinpath("kernels.c").read_text("utf-8")
    target = build_shared("kernels", source)
    if target is None:
        return None
    lib = ctypes.CDLL(str(target))
    u64, ptr = ctypes.c_uint64, ctypes.c_void_p
    lib.chase.argtypes, lib.chase.restype = [ptr, u64, u64], u64
    lib.stream_read.argtypes, lib.stream_read.restype = [ptr, ctypes.c_size_t,
                                                         ctypes.c_size_t], u64
    lib.add_chain.argtypes, lib.add_chain.restype = [u64], u64
    return lib
