"""The PCIe DMA topology in front of an accelerator, and the JPEG decoder behind it."""

from __future__ import annotations

import json
import math
from itertools import accumulate
from pathlib import Path

import pytest

from accelperf.errors import ModelError
from accelperf.lpn import Net, simulate
from accelperf.lpn.compiled import compiler_missing, engine
from accelperf.lpn.csource import generate
from accelperf.lpn.expr import walk
from accelperf.lpn.inputs import read_jpeg
from accelperf.lpn.inputs.jpeg import SAMPLES
from accelperf.lpn.library import build, jpeg_decoder_pcie
from accelperf.lpn.library.pcie import TIMING_PARAMETERS, PcieConfig, attach_pcie, chunk_tokens

SMALL = SAMPLES / "hopper_64x48_q90_420.jpg"           # a shipped photo, 12 MCUs


def reader(config: PcieConfig):
    """A device that only receives: items (one per chunk) land in ``done``."""
    net = Net("reader")
    item = net.token_type("Item", "n")
    done = net.place("done", item)
    front = attach_pcie(net, done, config)
    net.start, net.done = [front.chunks, front.staged], done

    def tokens(sizes):
        ends = list(accumulate(sizes))
        return chunk_tokens(front, [{"n": i} for i in range(len(sizes))], ends, sum(sizes),
                            config)
    net.tokens_from_input = tokens
    return net.build()


def test_one_chunk_takes_the_sum_of_the_path():
    """100 bytes over Gen3 x16 through one switch at 75 MHz (13.3 ns per cycle; the link
    moves 8 GT/s · 128/130 · 16 lanes / 8 = 15.75 bytes/ns = 210 bytes per cycle)."""
    ns = lambda t: math.ceil(t * 75 / 1000)
    up = 2 * (ns(7) + math.ceil(30 / 210.05) + ns(405))        # request: 2 links
    memory = ns(90) + ns(math.ceil(100 / 64))
    send = ns(7 + 2 * math.ceil(100 / 16)) + math.ceil(130 / 210.05)
    down = 2 * (send + ns(405))                                 # completion: 2 links
    config = PcieConfig()
    assert up + memory + down == 66 + 8 + 68
    assert simulate(reader(config), [100]).latency == up + memory + down


def test_bandwidth_bound_on_a_slow_link():
    """Gen1 x1 (0.25 bytes/ns, 3.33 bytes per cycle): 64 chunks of 512 bytes, each two
    256-byte completions; every link sends one at a time, so once the pipe is full a
    chunk costs two completions' send time on a link."""
    config = PcieConfig(generation=1, lanes=1)
    send = math.ceil((7 + 2 * 16) * 75 / 1000) + math.ceil((256 + 30) / (10 / 3))
    model = reader(config)
    t64 = simulate(model, [512] * 64).latency
    t128 = simulate(model, [512] * 128).latency
    assert t128 - t64 == 64 * 2 * send


def test_faster_links_and_fewer_switches_are_faster():
    sizes = [512] * 40
    by_link = [simulate(reader(PcieConfig.parse(name)), sizes).latency
               for name in ("pcie-gen1-x1", "pcie-gen2-x4", "pcie-gen3-x16", "pcie-gen5-x16")]
    assert by_link == sorted(by_link, reverse=True) and by_link[0] > 2 * by_link[-1]
    hops = [simulate(reader(PcieConfig(switches=s)), sizes).latency for s in (0, 1, 3)]
    assert hops[0] < hops[1] < hops[2]


def test_switch_credits_throttle():
    """With one completion's worth of credits the switch is the bottleneck: the sender
    waits a credit's round trip (two link latencies) per completion."""
    sizes = [512] * 30
    tight = simulate(reader(PcieConfig(switch_credits=16)), sizes).latency
    loose = simulate(reader(PcieConfig(switch_credits=64)), sizes).latency
    assert tight > loose + 30 * 31


@pytest.mark.parametrize("text, words", [
    ("pcie-gen7-x16", "generation = 7 is invalid"),
    ("pcie-gen3-x3", "lanes = 3 is invalid"),
    ("ethernet", "pcie-genG-xL"),
])
def test_bad_link_names(text, words):
    with pytest.raises(ModelError, match=words):
        PcieConfig.parse(text)


def test_bad_parameters():
    with pytest.raises(ModelError, match="switch_credits = 4 is invalid"):
        PcieConfig(switch_credits=4)
    with pytest.raises(ModelError, match="tags = 0 is invalid"):
        PcieConfig(tags=0)


def test_jpeg_decoder_behind_pcie():
    blocks = read_jpeg(SMALL)
    alone = simulate(build("jpeg-decoder"), blocks)
    fast = simulate(jpeg_decoder_pcie("pcie-gen3-x16"), blocks)
    slow = simulate(jpeg_decoder_pcie("pcie-gen1-x1", switches=2), blocks)
    assert alone.latency < fast.latency < slow.latency
    for r in (fast, slow):
        assert r.commits["entropy_decode"] == blocks.blocks == 72 and r.done_tokens == 48
    # the blocks wait for their bytes: the first decode starts after a whole round trip
    assert fast.latency - alone.latency >= 66 + 7 + 2 * 31


def test_cli_jpeg_decoder_pcie(cli):
    code, out, _ = cli("lpn", "simulate", "jpeg-decoder-pcie", "--input", str(SMALL), "--json")
    assert code == 0 and json.loads(out)["latency"] == \
        simulate(jpeg_decoder_pcie(), read_jpeg(SMALL)).latency
    code, _, err = cli("lpn", "simulate", "jpeg-decoder-pcie", "--input", "[1,1,1,1,1,1]")
    assert code == 2 and "a JPEG file" in err and len(err.strip().splitlines()) == 1


# Cycles of the decoder behind the default link as the model gave them before its timing
# values became run-time parameters (the values were baked into its functions then); the
# Python engine gave the same.
TINY = Path(__file__).parents[1] / "examples/measurements/core_jpeg/astronaut_16x16_q30_420.jpg"
BEFORE = [({}, 7618, 919),
          ({"pcie_process_ns": 13, "pcie_link_latency_ns": 377}, 7615, 914),
          ({"pcie_memory_latency_ns": 151, "pcie_tlp_overhead_bytes": 47}, 7623, 925),
          ({"pcie_process_ns": 0, "pcie_link_latency_ns": 0, "pcie_memory_latency_ns": 0,
            "pcie_tlp_overhead_bytes": 1}, 7485, 785)]


@pytest.mark.parametrize("params, small, tiny", BEFORE)
def test_timing_parameters_give_the_cycles_they_gave_when_baked_in(params, small, tiny):
    model = build("jpeg-decoder-pcie", params)
    for backend in ("python", "auto"):
        assert [simulate(model, read_jpeg(p), backend=backend).latency
                for p in (SMALL, TINY)] == [small, tiny]


def test_timing_parameters_are_run_time_values_of_the_net():
    """Every delay the four timing values enter reads them as named parameters, so other
    values are the same net (one generated source, one compiled library) run with
    another parameter vector."""
    default = build("jpeg-decoder-pcie")
    named = {n.args[1] for t in default.transitions for n in walk(t.delay)
             if t.name.startswith("pcie.") and n.op == "const" and len(n.args) > 1}
    assert named == {f"pcie_{f}" for f in TIMING_PARAMETERS}
    changed = build("jpeg-decoder-pcie", BEFORE[-1][0])
    assert generate(default)[0] == generate(changed)[0]
    if compiler_missing() is None:
        assert engine(default).path == engine(changed).path
        image = read_jpeg(TINY)
        for model, cycles in ((default, 919), (changed, 785), (default, 919)):
            assert simulate(model, image, backend="compiled").latency == cycles
