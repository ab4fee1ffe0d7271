"""Ψ giving NumPy arrays (issue 22): a marking holds them as a TokenArray that reads as
the same property tuples; Menshen's packet streams checked in bulk give the tokens the
packet-by-packet reader gives, and its errors for a bad packet."""

import numpy as np
import pytest

from accelperf.errors import ModelError
from accelperf.lpn import simulate
from accelperf.lpn.compiled import compiler_missing
from accelperf.lpn.inputs.packets import KINDS, packet_columns, read_packets
from accelperf.lpn.library import LIBRARY
from accelperf.lpn.net import TokenArray


def by_packet(doc):
    return [(p.n_words, KINDS.index(p.kind)) for p in read_packets(doc)]


def test_menshen_streams_in_both_forms_give_the_packet_by_packet_tokens():
    model = LIBRARY["menshen"]()
    rows = list(model.default_input) * 50
    dicts = [{"n_words": r[0], "kind": KINDS[r[1:].index(1)]} for r in rows]
    for doc in (rows, dicts):
        tokens = model.marking(doc).tokens[model.start]
        assert isinstance(tokens, TokenArray)
        assert list(tokens) == by_packet(doc) and tokens[3] == by_packet(doc)[3]
    python = simulate(model, rows)
    assert python.latency == simulate(model, [list(r) for r in rows]).latency
    if compiler_missing() is None:
        compiled = simulate(model, rows, backend="compiled")
        assert (compiled.latency, compiled.total_commits) == \
            (python.latency, python.total_commits)


@pytest.mark.parametrize("doc, words", [
    ([[2, 1, 0, 0], [3, 1, 1, 0]], "packet[1] flags"),
    ([[2, 1, 0, 0], [0, 0, 1, 0]], "packet[1] n_words = 0 is invalid"),
    ([[2, 1, 0, 0], [2.5, 0, 1, 0]], "packet[1] n_words = 2.5 is invalid"),
    ([[2, 1, 0, 0], [True, 0, 1, 0]], "packet[1] n_words = True is invalid"),
    ([{"n_words": 2, "kind": "data"}, {"n_words": 2, "kind": "jumbo"}], "packet[1] kind"),
])
def test_a_bad_packet_is_named_as_before(doc, words):
    assert packet_columns(doc) is None
    with pytest.raises(ModelError, match=words.replace("[", r"\[").replace("]", r"\]")):
        LIBRARY["menshen"]().marking(doc)


def test_an_array_of_the_wrong_shape_or_type_is_one_clear_error():
    model = LIBRARY["menshen"]()
    for bad in (np.zeros((3, 3), np.int64), np.zeros((3, 2), np.float64)):
        model_psi = model.tokens_from_input
        try:
            object.__setattr__(model, "tokens_from_input", lambda _: bad)
            with pytest.raises(ModelError, match="tokens of Packet as an array"):
                model.marking([[2, 1, 0, 0]])
        finally:
            object.__setattr__(model, "tokens_from_input", model_psi)
