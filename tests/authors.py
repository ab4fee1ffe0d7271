"""The OSDI'24 authors' own input files (dslab-epfl/lpn), read from their repository when
it is on this machine, never copied into ours: only the numbers their simulator gave are
committed (tests/data/authors/). A test that needs a file skips, saying where it looked,
when the repository is absent, and fails when the file is not the one the numbers are for.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
from pathlib import Path

import pytest

LPN_SRC = Path(os.environ.get("ACCELPERF_LPN_SRC", "/tmp/lpnsrc"))
LPN_GIT = Path(os.environ.get("ACCELPERF_LPN_GIT", "/work/.mirror/dslab-epfl+lpn/repo"))


def authors_file(rel: str, sha256: str | None = None) -> bytes:
    """The bytes of ``rel`` (a path inside the authors' repository)."""
    raw = None
    if (LPN_SRC / rel).is_file():
        raw = (LPN_SRC / rel).read_bytes()
    elif LPN_GIT.is_dir() and shutil.which("git"):
        got = subprocess.run(["git", "--git-dir", str(LPN_GIT), "show", f"HEAD:{rel}"],
                             capture_output=True)
        if got.returncode == 0:
            raw = got.stdout
    if raw is None:
        pytest.skip(f"the authors' repository (dslab-epfl/lpn) is not at {LPN_SRC} or "
                    f"{LPN_GIT}: set ACCELPERF_LPN_SRC to a checkout to run this comparison")
    if sha256 is not None:
        assert hashlib.sha256(raw).hexdigest() == sha256, f"{rel}: not the file the numbers " \
                                                          f"are for"
    return raw
