"""Real measurements on this machine, kept short: structure and sanity, never timing."""

import shutil

import pytest

from accelperf.measure import crypto
from accelperf.measure.clock import core_clock_hz
from accelperf.measure.crypto import MeasurementError, measure_kernel
from accelperf.measure.data import read_timings

needs_openssl = pytest.mark.skipif(shutil.which("openssl") is None,
                                   reason="the openssl command is not installed")


def has_flag(flag):
    try:
        return flag in open("/proc/cpuinfo").read().split()
    except OSError:
        return False


needs_aesni = pytest.mark.skipif(not has_flag("aes"), reason="this CPU has no AES-NI")


@needs_openssl
@needs_aesni
def test_aes_measurement_is_sane(tmp_path):
    m = measure_kernel("aes", [16, 65536], "cbc", "vpaes", repeats=1)
    by = {(s.mode, s.granularity): s for s in m.samples}
    assert by[("accel", 65536)].median < by[("host", 65536)].median / 1.3
    assert by[("host", 65536)].median > by[("host", 16)].median
    path = m.write_csv(tmp_path / "aes.csv")
    text = path.read_text()
    assert "# backend: openssl speed" in text and "# cpu flags:" in text
    assert "kernel,mode,granularity_bytes,seconds_min,seconds_median,seconds_max,repeats" in text
    t = read_timings(path)
    assert list(t.granularity) == [16, 65536] and t.echo is None


@needs_openssl
def test_refuses_when_the_mask_does_not_slow_the_host(monkeypatch):
    # Make the "host" setting identical to the accelerated one: no slowdown, so refuse.
    monkeypatch.setitem(crypto.MASKS, ("aes", "vpaes"), None)
    with pytest.raises(MeasurementError, match="refusing to report"):
        measure_kernel("aes", [4096, 65536], "ctr", "vpaes", repeats=1)


def test_missing_openssl_is_a_clear_error(monkeypatch):
    monkeypatch.setattr(shutil, "which", lambda name: None)
    with pytest.raises(MeasurementError, match="openssl command is not installed"):
        crypto.openssl_binary()


def test_invalid_kernel_settings():
    with pytest.raises(MeasurementError, match="--host = 'table' is invalid for sha256"):
        measure_kernel("sha256", [16], None, "table")
    with pytest.raises(MeasurementError, match="aes or sha256"):
        measure_kernel("md5", [16])


def test_empty_mask_environment_is_never_set():
    env = crypto.environment(None)
    assert "OPENSSL_ia32cap" not in env          # unset, not empty (empty masks everything)
    assert crypto.environment(":~0x20000000")["OPENSSL_ia32cap"] == ":~0x20000000"


def test_core_clock_is_plausible():
    hz = core_clock_hz(repeats=3, target_s=0.02)
    if hz is None:
        pytest.skip("no C compiler for the clock kernel")
    assert 0.3e9 < hz < 7e9


@needs_aesni
def test_offload_measurement_is_sane():
    pytest.importorskip("cryptography")
    from accelperf.measure.offload import measure_offload
    m = measure_offload("aes", [4096, 262144], repeats=1, target_s=0.02)
    by = {(s.mode, s.granularity): s.median for s in m.samples}
    assert by[("accel", 262144)] < by[("host", 262144)]
    assert by[("echo", 262144)] < by[("accel", 262144)]
    assert by[("echo", 262144)] > by[("echo", 4096)]
