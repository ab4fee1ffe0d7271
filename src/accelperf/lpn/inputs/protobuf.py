"""Protobuf messages as Protoacc sees them: the message-description JSON format.

The format is the one of the OSDI'24 authors' processed Hyperprotobench inputs
(dslab-epfl/lpn, ``lpn_examples/protoacc/hyperprotobench_processed``): a message is a JSON
object whose keys are field names, in wire order, and whose values are

    {"type": "scalar" | "nonscalar" | "submessage", "is_repeated": true | false,
     "data": [size, ...]          # scalar / nonscalar: one byte size per element
             | {field: ...}}      # submessage: the nested message

A file holds one message or a JSON list of top-level messages. Only sizes matter to the
serializer's timing, so the reader keeps names, kinds and sizes and nothing else.
"""

from __future__ import annotations

from dataclasses import dataclass

from ...errors import invalid
from . import abridged as _short

KINDS = ("scalar", "nonscalar", "submessage")


@dataclass(frozen=True)
class Field:
    """One field: its kind, whether it is repeated, and its elements' sizes in bytes
    (scalar/nonscalar) or the nested message (submessage)."""

    name: str
    kind: str
    repeated: bool
    sizes: tuple[int, ...] = ()
    message: "Message | None" = None

    def __repr__(self) -> str:
        body = f"{len(self.message.fields)} fields" if self.message else \
            f"sizes {list(self.sizes)}"
        return f"Field({self.name}: {'repeated ' if self.repeated else ''}{self.kind}, {body})"


@dataclass(frozen=True)
class Message:
    fields: tuple[Field, ...]

    def __repr__(self) -> str:
        return f"Message({len(self.fields)} fields: {', '.join(f.name for f in self.fields)})"


def read_messages(doc) -> tuple[Message, ...]:
    """Parse decoded JSON (one message object, or a list of them) into messages.

    Malformed input raises ModelError naming the JSON path of the offending entry, e.g.
    ``message[3].field_f7.data.field_f2.data[0]``.
    """
    if isinstance(doc, dict):
        return (_message(doc, "message"),)
    if isinstance(doc, list) and doc:
        return tuple(_message(m, f"message[{i}]") for i, m in enumerate(doc))
    raise invalid("protobuf input", _short(doc),
                  "a message object {field: {type, is_repeated, data}} or a non-empty list "
                  "of them")


def _message(doc, path: str) -> Message:
    if not isinstance(doc, dict) or not doc:
        raise invalid(path, _short(doc), "a non-empty object mapping field names to "
                                         "{type, is_repeated, data}")
    return Message(tuple(_field(name, spec, f"{path}.{name}") for name, spec in doc.items()))


def _field(name: str, spec, path: str) -> Field:
    if not isinstance(spec, dict) or set(spec) != {"type", "is_repeated", "data"}:
        raise invalid(path, _short(spec), "an object with exactly the keys type, "
                                          "is_repeated, data")
    kind, repeated, data = spec["type"], spec["is_repeated"], spec["data"]
    if kind not in KINDS:
        raise invalid(f"{path}.type", kind, f"one of {', '.join(KINDS)}")
    if not isinstance(repeated, bool):
        raise invalid(f"{path}.is_repeated", repeated, "true or false")
    if kind == "submessage":
        return Field(name, kind, repeated, message=_message(data, f"{path}.data"))
    if not isinstance(data, list) or not data:
        raise invalid(f"{path}.data", _short(data), "a non-empty list of element sizes in "
                                                    "bytes")
    for i, size in enumerate(data):
        if isinstance(size, bool) or not isinstance(size, int) or size < 0:
            raise invalid(f"{path}.data[{i}]", size, "a size in bytes, an integer >= 0")
    if len(data) > 1 and not repeated:
        raise invalid(f"{path}.data", _short(data), "one size for a field that is not "
                                                    "repeated")
    return Field(name, kind, repeated, tuple(data))
