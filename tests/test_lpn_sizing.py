"""lpn verify --size: buffer sizing against a latency budget, a stall-ratio budget, and the
size that optimises the worst-case latency (OSDI'24 §5.2.4), checked against simulation."""

from pathlib import Path

from accelperf.lpn.analysis.inputspace import load_space
from accelperf.lpn.analysis.sizing import size_buffer
from accelperf.lpn.analysis.verify import latency_bound
from accelperf.lpn.library import build

ROOT = Path(__file__).resolve().parents[1]
SPACES = ROOT / "examples" / "spaces"


def test_buffer_sizing_finds_the_smallest_size_meeting_the_budget():
    jpeg = build("jpeg-decoder")
    space = load_space(jpeg, SPACES / "jpeg-decoder-18-blocks.toml")
    worst4 = latency_bound(jpeg, space, "max").bound        # the model's 4 slots
    result = size_buffer(jpeg, space, "coeff_slots", range(1, 9), f"latency <= {worst4}")
    assert result.size is not None and result.size <= 4
    assert all(h is False for _, h, _ in result.tried[:-1]) and result.tried[-1][1] is True
    for _, holds, latency in result.tried[:-1]:
        assert latency > worst4

