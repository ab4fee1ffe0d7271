"""Packet streams for a switch pipeline (Menshen): per packet its length and kind.

A packet is ``n_words`` bus words long (the data path moves one word per cycle) and is
a control packet (reconfigures the pipeline and is dropped by the packet filter), a data
packet (parsed, processed by the match-action stages, deparsed) or a packet to drop.

Accepted forms, in stream order:

* JSON: a list whose entries are ``{"n_words": 25, "kind": "data"}`` or the OSDI'24
  authors' testbench tuples ``[n_words, is_control, is_data, is_drop]``
  (dslab-epfl/lpn ``lpn_family/accel_lib/menshen/normal/setup.py``);
* CSV text: a header ``n_words,kind`` or ``n_words,is_control,is_data,is_drop``, then
  one packet per line.
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass

from ...errors import invalid
from . import abridged

KINDS = ("control", "data", "drop")
_FLAGS = ("is_control", "is_data", "is_drop")


@dataclass(frozen=True)
class Packet:
    n_words: int
    kind: str

    def __repr__(self) -> str:
        return f"Packet({self.n_words} words, {self.kind})"


def read_packets(doc) -> tuple[Packet, ...]:
    """Packets from decoded JSON (a list) or from CSV text (a str)."""
    if isinstance(doc, str):
        return _from_csv(doc)
    if not isinstance(doc, list) or not doc:
        raise invalid("packet stream", abridged(doc), "a non-empty JSON list of packets, "
                                                      "or CSV text")
    return tuple(_packet(entry, f"packet[{i}]") for i, entry in enumerate(doc))


def packet_columns(doc):
    """Every packet's (n_words, index of its kind in KINDS) as an (n, 2) int64 NumPy
    array, checked in bulk, for a JSON list whose entries are all well-formed and of one
    form; None for anything else (CSV text, a bad entry: :func:`read_packets` then reads
    it entry by entry and names what is wrong)."""
    import numpy as np
    if not isinstance(doc, list) or not doc:
        return None
    if type(doc[0]) is list:
        if not all(type(e) is list and len(e) == 4 for e in doc) or \
                not all(type(v) is int for e in doc for v in e):
            return None
        rows = np.array(doc, dtype=np.int64)
        flags = rows[:, 1:]
        if not (((flags == 0) | (flags == 1)).all() and (flags.sum(axis=1) == 1).all()):
            return None
        words, kinds = rows[:, 0], flags.argmax(axis=1)      # flag order is KINDS' order
    elif type(doc[0]) is dict:
        index = {k: i for i, k in enumerate(KINDS)}
        if not all(type(e) is dict and len(e) == 2 and type(e.get("n_words")) is int and
                   type(e.get("kind")) is str and e["kind"] in index for e in doc):
            return None
        words = np.fromiter((e["n_words"] for e in doc), np.int64, len(doc))
        kinds = np.fromiter((index[e["kind"]] for e in doc), np.int64, len(doc))
    else:
        return None
    if not (words >= 1).all():
        return None
    return np.column_stack((words, kinds))


def _packet(entry, where: str) -> Packet:
    if isinstance(entry, dict):
        if set(entry) != {"n_words", "kind"}:
            raise invalid(where, abridged(entry),
                          'an object {"n_words": N, "kind": "control"|"data"|"drop"}')
        return _checked(entry["n_words"], entry["kind"], where)
    if isinstance(entry, (list, tuple)) and len(entry) == 4:
        return _checked(entry[0], _kind_of_flags(entry[1:], where), where)
    raise invalid(where, abridged(entry), '{"n_words": N, "kind": K} or [n_words, is_control, '
                                'is_data, is_drop]')


def _kind_of_flags(flags, where: str) -> str:
    if any(f not in (0, 1) or isinstance(f, bool) for f in flags) or sum(flags) != 1:
        raise invalid(f"{where} flags (is_control, is_data, is_drop)", list(flags),
                      "exactly one of them 1, the others 0")
    return KINDS[list(flags).index(1)]


def _checked(n_words, kind, where: str) -> Packet:
    if isinstance(n_words, bool) or not isinstance(n_words, int) or n_words < 1:
        raise invalid(f"{where} n_words", n_words, "an integer >= 1 (bus words)")
    if kind not in KINDS:
        raise invalid(f"{where} kind", kind, f"one of {', '.join(KINDS)}")
    return Packet(n_words, kind)


def _from_csv(text: str) -> tuple[Packet, ...]:
    rows = list(csv.reader(io.StringIO(text)))
    rows = [(n, [c.strip() for c in r]) for n, r in enumerate(rows, start=1) if any(
        c.strip() for c in r)]
    if not rows:
        raise invalid("packet CSV", abridged(text), "a header line and one packet per line")
    header_line, header = rows[0]
    if header not in (["n_words", "kind"], ["n_words", *_FLAGS]):
        raise invalid(f"CSV line {header_line} (header)", ",".join(header),
                      "n_words,kind or n_words,is_control,is_data,is_drop")
    packets = []
    for line, cells in rows[1:]:
        where = f"CSV line {line}"
        if len(cells) != len(header):
            raise invalid(where, ",".join(cells), f"{len(header)} columns: {','.join(header)}")
        try:
            n_words = int(cells[0])
            flags = [int(c) for c in cells[1:]] if len(header) == 4 else None
        except ValueError:
            raise invalid(where, ",".join(cells), "whole numbers where the header has "
                                                  "n_words or is_* columns") from None
        kind = _kind_of_flags(flags, where) if flags is not None else cells[1]
        packets.append(_checked(n_words, kind, where))
    if not packets:
        raise invalid("packet CSV", abridged(text), "at least one packet after the header")
    return tuple(packets)
