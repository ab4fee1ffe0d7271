"""The fitter's valley phase and its plateau-edge Jacobian (issue 35): a quantised delay
(the PCIe link's latency in ns, rounded up to 13.3-ns cycles of the decoder's 75 MHz
clock) that trades one for one with a delay in cycles (colour_cycles) along a valley of
level cost, where the ±1 moves of the search see nothing."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from accelperf.lpn import simulate
from accelperf.lpn.calibrate import Measurement
from accelperf.lpn.fitter import Fitter
from accelperf.lpn.identify import identify
from accelperf.lpn.inputs import read_jpeg
from accelperf.lpn.library import build

IMAGES = Path(__file__).parents[1] / "examples/measurements/core_jpeg"
# The recovery benchmark's second jpeg-decoder-pcie truth, on two of its images.
TRUTH = {"pcie_process_ns": 12, "entropy_per_symbol": 6, "pcie_link_latency_ns": 710}
PAIR = ["pcie_link_latency_ns", "colour_cycles"]
LINK, COLOUR = PAIR


def _pcie(values):
    return build("jpeg-decoder-pcie", values)


@pytest.fixture(scope="module")
def pcie():
    truth = _pcie(TRUTH)
    inputs = [read_jpeg(IMAGES / f"{name}.jpg")
              for name in ("chelsea_64x64_q75_420", "astronaut_16x16_q30_420")]
    fitter = Fitter(_pcie, [Measurement(f"i{k}", x, simulate(truth, x, backend="auto").latency)
                            for k, x in enumerate(inputs)])
    defaults = {n: p.value for n, p in fitter.spec.items()}
    # where the benchmark's search, all eight delays free, once stopped on the way
    stuck = {**defaults, "pcie_process_ns": 9, "pcie_tlp_overhead_bytes": 24,
             "entropy_per_symbol": 6, LINK: 800, COLOUR: 59}
    return fitter, np.arange(len(inputs)), stuck


def test_the_valley_phase_leaves_a_valley_the_search_stops_in(pcie):
    fitter, rows, stuck = pcie
    assert fitter.cost(stuck, rows) > 0
    assert fitter.search(stuck, PAIR, rows) == stuck      # no ±1 move, no descent lowers it
    across = fitter.across_valleys(stuck, PAIR, rows)
    assert fitter.cost(across, rows) == 0
    # six link cycles down, six colour cycles up: a walk along the valley, not a ±1 move
    assert across[COLOUR] - stuck[COLOUR] > 3 and stuck[LINK] - across[LINK] > 3 * 13


def test_a_quantised_delay_inside_its_plateau_is_seen_confounded(pcie):
    fitter, rows, stuck = pcie
    # on the valley's floor (colour_cycles up to 63, where colour is no bottleneck):
    # 757 ns is inside the link's 57th cycle (746.7..760 ns); a link cycle more and a
    # colour cycle less move no latency
    point = {**stuck, LINK: 757, COLOUR: 62}
    assert np.array_equal(fitter.latencies(point),
                          fitter.latencies({**point, LINK: 770, COLOUR: 61}))
    # one ns either way moves no latency: the one-unit Jacobian calls the link dead and
    # colour_cycles identified
    unit = identify(fitter.jacobian(point, PAIR, rows), PAIR)
    assert unit.dead == (LINK,) and unit.identified(COLOUR)
    # the step to the plateau's edge sees both, and that only their sum is determined
    found = identify(fitter.edge_jacobian(point, PAIR, rows), PAIR)
    assert not found.dead and [g.names for g in found.groups] == [tuple(PAIR)]
    assert not found.identified(COLOUR) and not found.identified(LINK)
    # in ns per cycle: the plateau's 14 ns, near the clock's 13.3
    assert found.groups[0].combination == f"{LINK} + 14·{COLOUR}"
