"""The AES-GCM packet engine (issue 33): simulation against derivation by hand, its Ψ,
and its single-packet input classes."""

import pytest

from accelperf.errors import ModelError
from accelperf.lpn import simulate
from accelperf.lpn.library import build
from accelperf.lpn.library.aes_gcm import packet_tokens


@pytest.fixture(scope="module")
def engine():
    return build("aes-gcm")


def one_packet_by_hand(nbytes: int) -> int:
    """Cycles for one packet, derived in the model's docstring: GHASH (4 per block) sets
    the pace once the first block is through header (20), feed (min(B, 4)) and AES (14);
    the last burst is written 8 cycles after its last block is hashed, or after the DMA
    finished the burst before when a one-block last burst is hashed first; tag 10."""
    blocks = -(-nbytes // 16)
    first_hashed = 20 + min(blocks, 4) + 14
    hashed = first_hashed + 4 * blocks
    last = blocks - 4 * ((blocks - 1) // 4)
    written = hashed + 8
    if blocks > 4 and 4 * last < 8:         # the previous burst's write ends later
        written = (hashed - 4 * last) + 8 + 8
    return written + 10


@pytest.mark.parametrize("nbytes", [1, 16, 17, 48, 64, 65, 80, 81, 96, 97, 128, 576, 1500,
                                    9000])
def test_one_packet_matches_the_hand_derivation(engine, nbytes):
    assert simulate(engine, [nbytes]).latency == one_packet_by_hand(nbytes)


def test_lists_match_the_hand_derivation(engine):
    # Four 64-byte packets are header-bound: 4 x 20, then the last packet's 52 cycles
    # after its header (72 - 20).
    assert simulate(engine, [64] * 4).latency == 4 * 20 + 52
    # A 64-byte packet, then large ones: GHASH idles after the first packet until the
    # second's first block is through (header 40, feed 4, AES 14), then hashes every
    # later block back to back; the last packet (40 B, 3 blocks, one burst) drains 18.
    blocks = sum(-(-b // 16) for b in (1500, 576, 40))
    assert simulate(engine, [64, 1500, 576, 40]).latency == 40 + 4 + 14 + 4 * blocks + 18
    # Two jumbo packets: GHASH-bound from the first block to the last.
    assert simulate(engine, [9000, 9000]).latency == 38 + 4 * 2 * 563 + 18


def test_psi_checks_its_input():
    assert packet_tokens({"packets": 2, "bytes": 64}) == [{"bytes": 64}] * 2
    for bad in ([0], [1.5], [True], [], "64", {"packets": 2}, [70000]):
        with pytest.raises(ModelError):
            packet_tokens(bad)


def test_one_packet_splits_into_classes_by_its_last_burst(engine):
    from accelperf.lpn.analysis.classes import input_classes
    from accelperf.lpn.analysis.space import space_from_dict
    space = space_from_dict(engine, {"places": {"packets": {
        "count": 1, "properties": {"bytes": [1, 1500]}}}})
    classes = input_classes(engine, space)
    # one burst or several, times a last burst of 1, 2, 3 or 4 blocks; none deadlocks,
    # although the DMA takes 4 blocks at a time from a bundle of 4·m
    assert len(classes) == 8 and not any(c.stuck for c in classes)
    for c in classes:
        nbytes = c.sample["packets"][0]["bytes"]
        counts = c.abstract_trace({sym: nbytes for sym in _symbols(c)})
        assert len(counts["ghash"]) == -(-nbytes // 16)
        assert len(counts["dma"]) == -(-nbytes // 64)


def _symbols(cls):
    import sympy
    return {s for cond in cls.conditions for s in sympy.sympify(cond).free_symbols}


def test_one_packet_of_1_to_1500_bytes_is_proved_without_a_class_per_count(engine):
    # issue 33 item 3: a class per block count ran 50 minutes to "unknown"; a space of
    # 1,500 inputs whose counts vary is decided by simulating each of them
    from pathlib import Path
    from accelperf.lpn.analysis.space import load_space
    from accelperf.lpn.analysis.verify import latency_bound, prove
    space = load_space(engine, Path(__file__).parent.parent / "examples" / "spaces" /
                       "aes-gcm-one-packet.toml")
    upper = latency_bound(engine, space, "max")
    assert upper.status == "proved" and upper.classes == 0
    assert upper.bound == max(one_packet_by_hand(b) for b in range(1, 1501)) == 432
    assert "simulating each of the space's 1500 input(s)" in upper.note
    assert upper.witness.simulated == 432
    broken = prove(engine, space, "latency <= 431")
    assert broken.holds is False and broken.counterexample.simulated == 432
