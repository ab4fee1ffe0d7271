"""Interfaces of library models, extracted once per test process and shared by the tests
that read them.

* :func:`default_interface`: a library model's interface over its default space (the
  JPEG decoder's is read by seven test files; Fig. 2's by four, 2 s each), and
  :func:`space_interface` over a shipped space file. Models and interfaces are frozen
  dataclasses; a test that wants another must build it. tests/conftest.py runs the
  files that read Fig. 2's and Menshen's as one work unit.
* :func:`reusing_extractions`: while it is active, every caller of ``interface_for`` and
  ``bottleneck_label`` in this process (the command line run in-process, a docs page's
  Python, a test) gets one computation per distinct request, shared with
  :func:`default_interface`. The AES-GCM stream's extraction is 6 s of SymPy (its
  label, over 9,000 packet sizes, was 5.5 s in SymPy and is milliseconds from exact
  arrays, :mod:`accelperf.lpn.analysis.interfaces.exact_range`): the stream tests, their
  CLI test and docs/how-to/packet-engine.md asked for them 4 and 6 times. The credit link's is 8 to
  16 s: its tests' fixture, their CLI test and docs/explanation/interfaces.md asked for it
  3 times. tests/conftest.py runs each group as one work unit, so one worker computes it
  once.

The memo lives in this process's memory only: the first request is a fresh extraction,
later equal requests (:func:`request_key`) get that very object, as from a pure function.
"""

from __future__ import annotations

import contextlib
import dataclasses
from functools import lru_cache
from pathlib import Path

import pytest

from accelperf.lpn.analysis.interface import extract_interface
from accelperf.lpn.analysis.interfaces import stream_emit, token_stream
from accelperf.lpn.analysis.interfaces.symexec import DEFAULT_MAX_PATHS
from accelperf.lpn.analysis.space import default_space, load_space
from accelperf.lpn.library import build

SPACES = Path(__file__).resolve().parents[1] / "examples" / "spaces"


def request_key(model, space, max_classes: int = DEFAULT_MAX_PATHS) -> tuple:
    """All ``interface_for(model, space, max_classes=...)`` reads: the net as built (its
    fields' reprs spell every place, transition, delay expression and parameter value), the
    model's hooks those leave out (Ψ, the input reader, the declared readers, the
    example input), every field of the space (its file name too: an interface keeps its
    space) and ``max_classes``. Models do not compare with ``==`` (their delay
    expressions are traced) and hold dicts, hence the reprs; a function's repr names its
    address, so the memo keeps the model alive beside its interface."""
    # field by field: Model's own repr is one summary line (Model('aes-gcm': 10 places...))
    return (tuple(repr(getattr(model, f.name)) for f in dataclasses.fields(model) if f.repr),
            repr(model.tokens_from_input), repr(model.input_reader),
            repr(model.declared), repr(model.default_input),
            tuple(repr(getattr(space, f.name)) for f in dataclasses.fields(space)),
            max_classes)


_INTERFACES: dict = {}      # request_key -> (the model, the interface extracted for it)
_LABELS: dict = {}          # id(interface) -> (that interface, its bottleneck label)


def _once(model, key: tuple, extract):
    if key not in _INTERFACES:
        _INTERFACES[key] = (model, extract())
    return _INTERFACES[key][1]


def _extracted(model, space):
    """(model, its interface over ``space``), extracted once per request: what
    interface_for gives for a model that is no stream priced token by token."""
    return model, _once(model, request_key(model, space),
                        lambda: extract_interface(model, space))


@lru_cache(maxsize=None)
def default_interface(name: str):
    """(model, interface over its default space) of the library model ``name``."""
    model = build(name)
    return _extracted(model, default_space(model))


@lru_cache(maxsize=None)
def space_interface(name: str, space_file: str):
    """(model, interface over examples/spaces/``space_file``) of the library model
    ``name``: Menshen's over its 100 packets is read by two test files."""
    model = build(name)
    return _extracted(model, load_space(model, str(SPACES / space_file)))


@contextlib.contextmanager
def reusing_extractions():
    """``interface_for`` and ``bottleneck_label`` computed once per request in this
    process while the block runs (see the module docstring)."""
    fresh_interface, fresh_label = token_stream.interface_for, stream_emit.bottleneck_label

    def interface_for(model, space, *, max_classes=DEFAULT_MAX_PATHS, progress=None,
                      before_stream=None):
        iface = _once(model, request_key(model, space, max_classes), lambda: fresh_interface(
            model, space, max_classes=max_classes, progress=progress,
            before_stream=before_stream))
        if before_stream is not None and isinstance(iface, token_stream.StreamInterface):
            before_stream()         # a remembered stream is refused as a fresh one is
        return iface

    def bottleneck_label(iface):
        # the interface is kept beside its label, so its id is never reused for another
        if id(iface) not in _LABELS:
            _LABELS[id(iface)] = (iface, fresh_label(iface))
        return _LABELS[id(iface)][1]

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(token_stream, "interface_for", interface_for)
        patch.setattr(stream_emit, "bottleneck_label", bottleneck_label)
        yield
