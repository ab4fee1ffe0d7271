"""The interface modules the emitter writes for the library models, kept byte for byte
under tests/golden/ (issue 37: a re-layout must not change what a user's `lpn interface
--out` file says). ``ACCELPERF_REWRITE_GOLDEN=1 pytest ...`` rewrites them after a change
that is meant to alter an emitted module; the diff then shows in review."""

from __future__ import annotations

import difflib
import os
from pathlib import Path

GOLDEN = Path(__file__).with_name("golden")


def assert_same_module(name: str, source: str) -> None:
    """``source`` equals tests/golden/``name``.golden, else fail with the first lines that
    differ."""
    path = GOLDEN / f"{name}.golden"
    if os.environ.get("ACCELPERF_REWRITE_GOLDEN") == "1":
        path.parent.mkdir(exist_ok=True)
        path.write_text(source, encoding="utf-8")
    expected = path.read_text(encoding="utf-8")
    if source != expected:
        diff = difflib.unified_diff(expected.splitlines(), source.splitlines(),
                                    f"golden/{name}.golden", "emitted now", lineterm="", n=1)
        raise AssertionError(f"the emitted module of {name} changed:\n" +
                             "\n".join(list(diff)[:40]))
