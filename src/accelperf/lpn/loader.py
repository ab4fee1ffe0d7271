"""Find a model by name: a library model, or ``path/to/file.py:build_function``."""

from __future__ import annotations

import contextlib
import functools
import importlib.util
import json
import sys
from pathlib import Path

from ..errors import ModelError
from .net import Model, Net
from .params import build_with, call_builder


def load_model(spec: str, params: dict | None = None, source: str = "param") -> Model:
    """The model ``spec`` built with the parameter values ``params`` ({name: int}; an
    unknown name is an error naming ``source``, the option it came from)."""
    return build_with(functools.partial(_load, spec), params, source)


def _load(spec: str, params: dict) -> Model:
    """The model ``spec`` built with ``params`` (passed to a build function that takes
    them: :func:`~accelperf.lpn.params.call_builder`)."""
    from .library import LIBRARY
    if spec in LIBRARY:
        return LIBRARY[spec](params=params)
    if ":" not in spec:
        raise ModelError(f"MODEL = {spec!r} is invalid: library models are "
                         f"{', '.join(LIBRARY)}, or give path/to/file.py:build_function")
    path_text, func_name = spec.rsplit(":", 1)
    path = Path(path_text)
    if not path.is_file():
        raise ModelError(f"MODEL = {spec!r} is invalid: no file {path_text!r}")
    with _beside(path):
        return _built(spec, path_text, func_name, params)


@contextlib.contextmanager
def _beside(path: Path):
    """The model file's folder first on ``sys.path`` while it is imported and built, as
    ``python file.py`` has it, so it imports a module beside it (a user's helpers); then
    taken off again, so that folder's names do not shadow others for the rest of the
    run (what it imported stays imported)."""
    folder = str(path.resolve().parent)
    added = folder not in sys.path
    if added:
        sys.path.insert(0, folder)
    try:
        yield
    finally:
        if added and folder in sys.path:
            sys.path.remove(folder)


def _built(spec: str, path_text: str, func_name: str, params: dict) -> Model:
    """Import the model file ``path_text`` and build its ``func_name`` (see :func:`_load`)."""
    path = Path(path_text)
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
    try:
        model = call_builder(func, params)
    except ModelError:
        raise
    except TypeError as exc:
        if "argument" not in str(exc):
            raise ModelError(f"MODEL = {spec!r}: {func_name}() failed: TypeError: {exc}") \
                from None
        raise ModelError(f"MODEL = {spec!r} is invalid: {func_name}() must build the model "
                         f"with no arguments ({exc})") from None
    except Exception as exc:         # the user's build function: say it failed, in one line
        raise ModelError(f"MODEL = {spec!r}: {func_name}() failed: {type(exc).__name__}: "
                         f"{exc}") from None
    if isinstance(model, Net):
        model = model.build()
    if not isinstance(model, Model):
        raise ModelError(f"MODEL = {spec!r}: {func_name}() returned "
                         f"{type(model).__name__}, not an LPN model (Net.build())")
    return model


JPEG_SUFFIXES = (".jpg", ".jpeg", ".jfif", ".jpe")
INPUT_SUFFIXES = JPEG_SUFFIXES + (".csv", ".json")


def reads_file(model: Model, path: Path) -> bool:
    """Whether :func:`load_input` would take the file at ``path`` as an input of ``model``
    (a folder of inputs holds notes, READMEs and hidden files beside them): a model with its
    own ``input_reader`` reads any file but a hidden one, the others JPEG, CSV and JSON."""
    if path.name.startswith("."):
        return False
    if model.input_reader is not None:
        return True
    try:
        return path.suffix.lower() in INPUT_SUFFIXES or _starts_like_jpeg(path)
    except OSError:
        return True                  # unreadable: let its own row say why


def _not_a_number(word: str):
    raise ModelError(f"input holds {word}: an accelerator's input is made of finite "
                     f"numbers", field="input")


def _starts_like_jpeg(path: Path) -> bool:
    with path.open("rb") as fh:
        return fh.read(2) == b"\xff\xd8"


def _not_json(text: str, path: Path, is_file: bool, exc: Exception) -> str:
    """Why ``text`` is no input, in the words of what the user most likely meant: a file
    whose contents are not JSON, a directory, a file name that does not exist, or JSON
    with a mistake in it."""
    if is_file:
        return f"the file is not JSON, nor a JPEG or .csv file ({exc})"
    try:
        if path.is_dir():
            return "a directory, not a file (give one file, or a batch with `inputs` DIR)"
    except OSError:
        pass
    if text.strip()[:1] not in tuple('[{"-.0123456789') and \
            text.strip() not in ("true", "false", "null"):
        return "no such file (and not JSON either)"
    return f"neither a file nor valid JSON ({exc})"


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
    if is_file and path.stat().st_size == 0:
        raise ModelError(f"input = {text!r} is invalid: the file is empty (give a JPEG, "
                         f"CSV or JSON file that holds the input)", field="input")
    if is_file and model is not None and model.input_reader is not None and \
            path.suffix.lower() != ".json":
        return model.input_reader(path)
    if is_file and (path.suffix.lower() in JPEG_SUFFIXES or _starts_like_jpeg(path)):
        from .inputs import read_jpeg
        return read_jpeg(path)
    if is_file and path.suffix.lower() == ".csv":
        return path.read_text("utf-8-sig")          # CSV text: the model's Ψ parses it
    try:
        value = json.loads(path.read_text("utf-8-sig") if is_file else text,
                           parse_constant=_not_a_number)
    except UnicodeDecodeError:
        raise ModelError(f"input = {text!r} is invalid: a binary file that is not a JPEG "
                         f"(give a .jpg or JSON)", field="input") from None
    except json.JSONDecodeError as exc:
        raise ModelError(f"input = {text!r} is invalid: "
                         f"{_not_json(text, path, is_file, exc)}", field="input") from None
    except OSError:
        raise ModelError(f"input = {text!r} is invalid: not a readable file or JSON",
                         field="input") from None
    if value is None:
        raise ModelError(f"input = {text!r} is invalid: null is no input; leave `input` out "
                         f"for the model's default", field="input")
    return value

