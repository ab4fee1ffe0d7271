"""The memory probe measures this machine: check structure and sanity, never timing."""

import json

import pytest

from accelperf.density import rate_bound, matmul
from accelperf.measure.memory import _chase_buffer, _sattolo_cycle, cache_levels, probe


@pytest.fixture(scope="module")
def quick_probe():
    return probe(repeats=2, quick=True)


def test_cache_levels_come_from_the_os():
    levels = cache_levels()
    assert levels[0].name == "L1" and levels[-1].name == "DRAM"
    assert all(l.size_bytes > 0 for l in levels)
    assert [l.size_bytes for l in levels] == sorted(l.size_bytes for l in levels)


def test_sattolo_cycle_visits_every_line_once():
    import numpy as np
    nxt = _sattolo_cycle(1000, np.random.default_rng(0))
    seen, i = set(), 0
    for _ in range(1000):
        seen.add(i)
        i = int(nxt[i])
    assert i == 0 and len(seen) == 1000           # one cycle through all lines
    buf = _chase_buffer(64 * 16, np.random.default_rng(0))
    assert buf.size == 16 * 8 and all(int(buf[k]) % 8 == 0 for k in range(0, buf.size, 8))


def test_probe_is_sane(quick_probe):
    levels = quick_probe.levels
    l1, dram = levels[0], levels[-1]
    assert l1.latency_s < dram.latency_s          # a cache is closer than memory
    assert l1.bandwidth_bytes_per_s > dram.bandwidth_bytes_per_s
    for m in levels:
        assert 1e-10 < m.latency_s < 1e-5
        assert 1e8 < m.bandwidth_bytes_per_s < 1e13
        assert m.latency_spread[0] <= m.latency_s <= m.latency_spread[1]


def test_probe_hierarchy_feeds_the_density_model(quick_probe, tmp_path):
    h = quick_probe.hierarchy()
    assert h.layers[0].name == "registers<-L1" and h.layers[-1].name.endswith("<-DRAM")
    path = tmp_path / "m.toml"
    path.write_text(quick_probe.to_toml())
    text = path.read_text()
    assert "method:" in text and "median of 2" in text
    r = rate_bound(matmul(4), h)
    assert r.bound > 0 and r.bottleneck in [l.name for l in h.layers]


def test_probe_command(cli, tmp_path):
    out = tmp_path / "this-machine.toml"
    code, text, _ = cli("density", "probe", "--out", str(out), "--quick", "--repeats", "1",
                        "--json")
    assert code == 0 and out.exists()
    data = json.loads(text)
    assert data["levels"][0]["level"] == "L1" and len(data["layers"]) == len(data["levels"])
    code, _, _ = cli("density", "bound", "--algorithm", "dot", "--hierarchy", str(out))
    assert code == 0


def test_probe_without_a_compiler_falls_back_and_says_so(monkeypatch):
    import accelperf.measure.memory as memory
    monkeypatch.setattr(memory, "load_kernels", lambda: None)
    result = memory.probe(repeats=1, quick=True)
    assert "no C compiler" in result.method
    assert all(m.latency_s > 0 and m.bandwidth_bytes_per_s > 0 for m in result.levels)
    assert result.levels[0].latency_s < result.levels[-1].latency_s


def test_a_machine_without_cache_information_is_a_failed_run(cli, tmp_path, monkeypatch):
    import accelperf.measure.memory as memory
    monkeypatch.setattr(memory, "Path", lambda *a: tmp_path / "no-such-sysfs")
    monkeypatch.setattr(memory.os, "sysconf", lambda key: 0)
    code, _, err = cli("density", "probe", "--out", str(tmp_path / "m.toml"))
    assert code == 1 and "reports no cache sizes" in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "m.toml").exists()
