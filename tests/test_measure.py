"""Real measurements on this machine, kept short: structure and sanity, never timing."""

import shutil

import pytest

from accelperf import ModelError
from accelperf.measure import crypto
from accelperf.measure.clock import core_clock_hz
from accelperf.measure.crypto import MeasurementError, UntrustedMeasurement, measure_kernel
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
    with pytest.raises(UntrustedMeasurement, match="not trustworthy: the masked host") as err:
        measure_kernel("aes", [4096, 65536], "ctr", "vpaes", repeats=1)
    kept = err.value.measurement                     # the timings survive the refusal
    assert len(kept.samples) == 4 and kept.warnings[0] == str(err.value)
    assert err.value.exit_status == 1


def test_missing_openssl_is_a_clear_error(monkeypatch):
    monkeypatch.setattr(shutil, "which", lambda name: None)
    with pytest.raises(MeasurementError, match="openssl command is not installed"):
        crypto.openssl_binary()


def test_invalid_kernel_settings():
    with pytest.raises(ModelError, match="--host = 'table' is invalid: for sha256"):
        measure_kernel("sha256", [16], None, "table")
    with pytest.raises(ModelError, match="aes or sha256"):
        measure_kernel("md5", [16])
    for sizes in ([0], [1.5], [float("nan")], [float("inf")], [], ["x"], [2**40]):
        with pytest.raises(ModelError, match="granularit"):
            measure_kernel("aes", sizes)
    with pytest.raises(ModelError, match="repeats = 0"):
        measure_kernel("aes", [16], repeats=0)


def test_empty_mask_environment_is_never_set():
    env = crypto.environment(None)
    assert "OPENSSL_ia32cap" not in env          # unset, not empty (empty masks everything)
    assert crypto.environment(":~0x20000000")["OPENSSL_ia32cap"] == ":~0x20000000"


def test_huge_pages_are_asked_of_glibc_without_losing_the_users_tunables(monkeypatch):
    monkeypatch.delenv("GLIBC_TUNABLES", raising=False)
    assert "GLIBC_TUNABLES" not in crypto.environment(None)
    assert crypto.environment(None, huge_pages=True)["GLIBC_TUNABLES"] == "glibc.malloc.hugetlb=1"
    monkeypatch.setenv("GLIBC_TUNABLES", "glibc.malloc.check=3")
    assert (crypto.environment(None, huge_pages=True)["GLIBC_TUNABLES"]
            == "glibc.malloc.check=3:glibc.malloc.hugetlb=1")
    monkeypatch.setenv("GLIBC_TUNABLES", "glibc.malloc.hugetlb=0")     # the user's choice wins
    assert crypto.environment(None, huge_pages=True)["GLIBC_TUNABLES"] == "glibc.malloc.hugetlb=0"
    assert crypto.huge_pages_note(False).startswith("4 KiB pages")
    assert "GLIBC_TUNABLES=glibc.malloc.hugetlb=1" in crypto.huge_pages_note(True)


def test_each_sizes_host_and_accelerated_runs_are_back_to_back(monkeypatch):
    calls = []

    def fake_speed(algorithm, nbytes, mask, seconds=1, huge_pages=False):
        calls.append(("host" if mask else "accel", nbytes, huge_pages))
        return nbytes * (5e-9 if mask else 1e-9)

    monkeypatch.setattr(crypto, "openssl_speed", fake_speed)
    m = measure_kernel("aes", [16, 256, 4096, 65536], "cbc", "vpaes", repeats=3)
    assert len(calls) == 24 and all(hp for _, _, hp in calls)
    pairs = [calls[i:i + 2] for i in range(0, len(calls), 2)]
    assert all({a[0], b[0]} == {"host", "accel"} and a[1] == b[1] for a, b in pairs)
    firsts = [a[0] for a, _ in pairs]
    assert firsts.count("host") == firsts.count("accel")        # who goes first alternates
    sizes_per_repeat = [[a[1] for a, _ in pairs[i:i + 4]] for i in range(0, 12, 4)]
    assert all(sorted(r) == [16, 256, 4096, 65536] for r in sizes_per_repeat)
    assert len({tuple(r) for r in sizes_per_repeat}) > 1            # shuffled per repeat
    assert "host and accelerated runs back to back" in m.metadata["statistic"]
    assert "hugetlb" in m.metadata["memory"]
    t = m.timings()                                       # the fit's input, as from the CSV
    assert list(t.granularity) == [16, 256, 4096, 65536] and t.echo is None
    assert t.host[-1] == pytest.approx(65536 * 5e-9) and t.accel[0] == pytest.approx(16e-9)
    with pytest.raises(ModelError, match="statistic = 'mean' is invalid"):
        m.timings("mean")


def test_core_clock_is_plausible():
    hz = core_clock_hz(repeats=3, target_s=0.02)
    if hz is None:
        pytest.skip("no C compiler for the clock kernel")
    assert 0.3e9 < hz < 7e9


@needs_aesni
def test_offload_measurement_is_sane():
    pytest.importorskip("cryptography")
    from accelperf.measure.offload import measure_offload
    m = measure_offload("aes", [4096, 262144], repeats=1, target_s=0.02, check=False)
    contention = [w for w in m.warnings if "waiting for the cores" in w]
    if contention:      # measured, not guessed: the echo ran far slower than its copies
        pytest.skip(f"the cores are busy, so the offload timings are not meaningful: "
                    f"{contention[0]}")
    by = {(s.mode, s.granularity): s.median for s in m.samples}
    assert by[("accel", 262144)] < by[("host", 262144)]
    assert by[("echo", 262144)] < by[("accel", 262144)]
    assert by[("echo", 262144)] > by[("echo", 4096)]


def test_measure_command_passes_the_huge_pages_choice(cli, tmp_path, monkeypatch):
    seen = set()

    def fake_speed(algorithm, nbytes, mask, seconds=1, huge_pages=False):
        seen.add(huge_pages)
        return nbytes * (5e-9 if mask else 1e-9)

    monkeypatch.setattr(crypto, "openssl_speed", fake_speed)
    out = tmp_path / "aes.csv"
    code, _, err = cli("measure", "aes", "--from", "1KiB", "--to", "4KiB", "--repeats", "1",
                       "--no-huge-pages", "--out", str(out))
    assert code == 0 and seen == {False}
    assert "# memory: 4 KiB pages" in out.read_text()
