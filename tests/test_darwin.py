"""Darwin's GACT LPN against the OSDI'24 authors' model on their 10 test pairs, and where
whole-cycle stripes and the authors' fractional formula part ways."""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path

import pytest

from accelperf.lpn import simulate
from accelperf.lpn.library import build, darwin_latency_formula

PAIRS = json.loads((Path(__file__).parent / "data" / "authors" / "darwin.json")
                   .read_text("utf-8"))["pairs"]


@pytest.fixture(scope="module")
def model():
    return build("darwin")


def test_ten_recorded_pairs():
    assert [p["pair"] for p in PAIRS] == list(range(1, 11))
    assert len({p["steps"] for p in PAIRS}) > 5          # the pairs really differ


@pytest.mark.parametrize("pair", PAIRS, ids=lambda p: f"pair{p['pair']}")
def test_authors_cycles(model, pair):
    given = {k: pair[k] for k in ("ref_len", "query_len", "steps")}
    assert simulate(model, given).latency == pair["cycles"]
    assert darwin_latency_formula(**given) == pair["cycles"]


@pytest.mark.parametrize("query_len", [320, 321, 322, 323, 7])
def test_partial_stripe_costs_a_whole_stripe(model, query_len):
    """The authors' delay (ref_len + 6) · query_len / 4 is fractional unless query_len is a
    multiple of 4 (true of all 10 test pairs: their driver fixes both lengths at 320).
    accelperf runs the last, partial stripe for a whole stripe's time, so it is later by
    (ref_len + 6) · (4 - query_len mod 4) / 4 cycles."""
    ref_len, steps = 320, 300
    ours = simulate(model, {"ref_len": ref_len, "query_len": query_len, "steps": steps}).latency
    theirs = Fraction(ref_len + 6) * query_len / 4 + 6 + 3 * steps
    assert theirs == darwin_latency_formula(ref_len, query_len, steps)
    assert ours - theirs == Fraction((ref_len + 6) * (-query_len % 4), 4)
