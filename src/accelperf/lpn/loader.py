"""Find a model by name: a library model, or ``path/to/file.py:build_function``."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

from ..errors import ModelError
from .net import Model, Net


def load_model(spec: str) -> Model:
    from .library import LIBRARY
    if spec in LIBRARY:
        return LIBRARY[spec]()
    if ":" not in spec:
        raise ModelError(f"MODEL = {spec!r} is invalid: library models are "
                         f"{', '.join(LIBRARY)}, or give path/to/file.py:build_function")
    path_text, func_name = spec.rsplit(":", 1)
    path = Path(path_text)
    if not path.is_file():
        raise ModelError(f"MODEL = {spec!r} is invalid: no file {path_text!r}")
    module_spec = importlib.util.spec_from_file_location(f"accelperf_user_{path.stem}", path)
    module = importlib.util.module_from_spec(module_spec)
    try:
        module_spec.loader.exec_module(module)
    except ModelError:
        raise
    except Exception as exc:
        raise ModelError(f"MODEL = {spec!r}: importing {path_text} failed: "
                         f"{type(exc).__name__}: {exc}") from None
    func = getattr(module, func_name, None)
    if not callable(func):
        raise ModelError(f"MODEL = {spec!r} is invalid: {path_text} has no function "
                         f"{func_name!r}")
    model = func()
    if isinstance(model, Net):
        model = model.build()
    if not isinstance(model, Model):
        raise ModelError(f"MODEL = {spec!r}: {func_name}() returned "
                         f"{type(model).__name__}, not an LPN model (Net.build())")
    return model


JPEG_SUFFIXES = (".jpg", ".jpeg", ".jfif", ".jpe")


def _starts_like_jpeg(path: Path) -> bool:
    with path.open("rb") as fh:
        return fh.read(2) == b"\xff\xd8"


def load_input(text: str | None, model: Model | None = None):
    """The user's input for Ψ: a file in the model's own format (when the model has an
    ``input_reader`` and the file's name does not end in .json), a JPEG file (read by
    accelperf.lpn.inputs), a .csv file's text (the model's Ψ parses it), a JSON file, or
    JSON written inline."""
    if text is None:
        return None
    path = Path(text)
    try:
        is_file = path.is_file()
    except OSError:                  # inline JSON longer than a file name may be
        is_file = False
    if is_file and model is not None and model.input_reader is not None and \
            path.suffix.lower() != ".json":
        return model.input_reader(path)
    if is_file and (path.suffix.lower() in JPEG_SUFFIXES or _starts_like_jpeg(path)):
        from .inputs import read_jpeg
        return read_jpeg(path)
    if is_file and path.suffix.lower() == ".csv":
        return path.read_text("utf-8")          # CSV text: the model's Ψ parses it
    try:
        if is_file:
            return json.loads(path.read_text("utf-8"))
        return json.loads(text)
    except UnicodeDecodeError:
        raise ModelError(f"--input = {text!r} is invalid: a binary file that is not a JPEG "
                         f"(give a .jpg or JSON)") from None
    except json.JSONDecodeError as exc:
        raise ModelError(f"--input = {text!r} is invalid: neither a file nor JSON ({exc})") \
            from None
    except OSError:
        raise ModelError(f"--input = {text!r} is invalid: not a readable file or JSON") \
            from None
