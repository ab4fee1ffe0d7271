"""Interfaces of library models over their default spaces, extracted once per test
session and shared by the test files that read them (the JPEG decoder's: seven). Models
and interfaces are frozen dataclasses; a test that wants another must build it."""

from __future__ import annotations

from functools import lru_cache

from accelperf.lpn.analysis.interface import extract_interface
from accelperf.lpn.analysis.space import default_space
from accelperf.lpn.library import build


@lru_cache(maxsize=None)
def default_interface(name: str):
    """(model, interface over its default space) of the library model ``name``."""
    model = build(name)
    return model, extract_interface(model, default_space(model))
