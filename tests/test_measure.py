"""Real measurements on this machine, kept short: structure and sanity, never timing."""

import json
import re
import math
import shutil

import numpy as np
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
    # A mask that does not take effect: host and accelerated runs cost the same. Timed by a
    # stand-in for openssl so that no load on the machine can make one look slower.
    monkeypatch.setattr(crypto, "openssl_speed",
                        lambda algorithm, nbytes, mask, *args: 1e-9 * nbytes)
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
def test_offload_measurement_is_well_formed():
    """What the measurement guarantees on any machine, busy or idle: every mode at every size
    with every repeat, positive seconds, sizes in order, and timings a fit can use. Whether
    the accelerator beats the host is a property of the machine and its load, not of the
    code: ``benchmarks/offload_sanity.py`` measures that, with the contention check beside it.
    """
    pytest.importorskip("cryptography")
    from accelperf.logca.fit import power_law
    from accelperf.measure.offload import measure_offload
    sizes = [4096, 16384, 262144]
    m = measure_offload("aes", sizes, repeats=2, target_s=0.01, check=False)
    assert sorted((s.mode, s.granularity) for s in m.samples) == sorted(
        (mode, g) for mode in ("host", "accel", "echo") for g in sizes)
    for s in m.samples:
        assert len(s.seconds) == 2 and s.kernel == "aes"
        assert all(0 < t < 10 for t in s.seconds)            # seconds per offload, not µs
        assert s.minimum <= s.median <= max(s.seconds)
    t = m.timings("min")
    assert list(t.granularity) == sizes and t.echo is not None
    # 64x the bytes to encrypt cannot take less time, whatever else the cores are doing
    assert t.host[-1] > t.host[0]
    C, beta, se_lnC, se_beta = power_law(t.granularity, t.host)
    assert math.isfinite(C) and C > 0 and math.isfinite(beta) and beta > 0
    assert "seconds per offload" in m.metadata["statistic"]


@needs_aesni
def test_in_process_offload_is_well_formed_and_says_how_it_was_timed():
    """The in-process variant (issue 24: large sizes on a loaded machine): every mode, size
    and repeat, CPU seconds per offload, host time growing with the bytes, and the metadata
    saying it ran without a worker on the CPU clock."""
    pytest.importorskip("cryptography")
    from accelperf.measure.offload import measure_offload
    sizes = [4096, 65536]
    m = measure_offload("aes", sizes, repeats=1, target_s=0.01, check=False, in_process=True)
    assert sorted((s.mode, s.granularity) for s in m.samples) == sorted(
        (mode, g) for mode in ("host", "accel", "echo") for g in sizes)
    t = m.timings("min")
    assert all(0 < x < 10 for x in np.concatenate([t.host, t.accel, t.echo]))
    assert t.host[-1] > t.host[0] and t.echo[-1] > t.echo[0]
    assert "in process" in m.metadata["accelperf measure"]
    assert "thread_time" in m.metadata["accelperf measure"]


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


def _same_speed(algorithm, nbytes, mask, seconds=1, huge_pages=False):
    return nbytes * 1e-9                 # host as fast as the accelerator: not trustworthy


def test_an_untrusted_measurement_is_written_with_its_reason_and_exits_1(cli, tmp_path,
                                                                        monkeypatch):
    monkeypatch.setattr(crypto, "openssl_speed", _same_speed)
    monkeypatch.setattr(crypto, "openssl_version", lambda: "OpenSSL (test)")
    out = tmp_path / "aes.csv"
    code, text, err = cli("measure", "aes", "--from", "1KiB", "--to", "4KiB", "--repeats",
                          "1", "--out", str(out), "--json")
    plan, error = err.strip().splitlines()          # the plan first, then one error line
    assert code == 1 and plan.startswith("accelperf: measuring aes: 3 granularities")
    assert "not trustworthy: the masked host run" in error and f"kept in {out}" in error
    csv_text = out.read_text()
    assert "# warning: not trustworthy: the masked host run" in csv_text
    assert csv_text.count("aes,host,") == 3 and csv_text.count("aes,accel,") == 3
    data = json.loads(text)                                  # --json with --out: both
    assert data["out"] == str(out) and len(data["samples"]) == 6
    assert data["warnings"][0].startswith("not trustworthy")


def test_measure_json_and_csv_together(cli, tmp_path, monkeypatch):
    monkeypatch.setattr(crypto, "openssl_speed",
                        lambda a, n, mask, seconds=1, huge_pages=False: n * (5e-9 if mask
                                                                              else 1e-9))
    monkeypatch.setattr(crypto, "openssl_version", lambda: "OpenSSL (test)")
    out = tmp_path / "sha.csv"
    code, text, err = cli("measure", "sha256", "--from", "64B", "--to", "256B", "--repeats",
                          "2", "--out", str(out), "--json")
    data = json.loads(text)
    assert code == 0 and out.exists() and data["warnings"] == []
    assert {(s["mode"], s["granularity_bytes"]) for s in data["samples"]} == {
        (m, g) for m in ("host", "accel") for g in (64, 128, 256)}
    assert all(len(s["seconds"]) == 2 for s in data["samples"])
    assert err.strip().splitlines()[-1].startswith(f"wrote {out}")


def _samples(echo_seconds, sizes=(1024, 65536, 2**21)):
    from accelperf.measure.crypto import Sample
    return [Sample("aes", "echo", g, (t,)) for g, t in zip(sizes, echo_seconds)]


def test_contention_is_named_from_the_echo_time_against_copies_and_doorbells():
    from accelperf.measure.offload import contention_check, expected_echo_s
    rate = 10e9                                          # 10 GB/s copies
    assert expected_echo_s(1024, rate) == pytest.approx(3 * 1024 / 10e9 + 10e-6)
    idle = [expected_echo_s(g, rate) * 2 for g in (1024, 65536, 2**21)]
    assert contention_check(_samples(idle), rate) is None
    busy = [4e-3, 5e-3, 9e-3]                            # milliseconds: scheduler slices
    reason = contention_check(_samples(busy), rate)
    assert "waiting for the cores" in reason and "5e+03 µs per call at 65536 B" in reason
    assert "load average" in reason
    assert contention_check([], rate) is None


def test_offload_arguments_are_checked_before_any_process_starts(monkeypatch):
    from accelperf.measure import offload

    def boom(*a, **k):
        raise AssertionError("started a process")
    monkeypatch.setattr(offload.subprocess, "run", boom)
    for kwargs, words in [(dict(target_s=float("nan")), "--target = nan"),
                          (dict(target_s=0), "--target = 0"),
                          (dict(repeats=0), "repeats = 0"),
                          (dict(granularities=[0]), "granularities"),
                          (dict(kernel="md5"), "--kernel = 'md5'")]:
        args = dict(kernel="aes", granularities=[1024], repeats=1, target_s=0.01)
        args.update(kwargs)
        with pytest.raises(ModelError, match=words):
            offload.measure_offload(**args)


# ---------------------------------------------------------------- the CSV reader
HEADER = "kernel,mode,granularity_bytes,seconds_min,seconds_median\n"


@pytest.mark.parametrize("body, words", [
    ("aes,host,16,1e-6,1e-6\naes,host,16,2e-6,2e-6\naes,accel,16,1e-7,1e-7\n",
     "line 4: a second host timing at 16 B (the first is on line 3)"),
    ("aes,host,16,1e-6,1e-6\nsha256,accel,16,1e-7,1e-7\n", "mixes kernels aes, sha256"),
    ("aes,host,16,1e308,1e308\naes,accel,16,1e-7,1e-7\n", "seconds_min = '1e308'"),
    ("aes,host,16,inf,inf\n", "seconds_min = 'inf'"),
    ("aes,host,16,nan,nan\n", "seconds_min = 'nan'"),
    ("aes,host,-16,1,1\n", "granularity_bytes = '-16'"),
    ("aes,host,16,1\n", "it has 4 fields, the header has 5"),
    ("aes,host,16,1,1,9\n", "it has 6 fields"),
    ("aes,host,16,x,1\n", "must be a number"),
    ("aes,host,16,1e-6,1e-6\n", "needs host and accel rows"),
])
def test_csv_reader_refuses_what_it_cannot_fit_honestly(tmp_path, body, words):
    path = tmp_path / "t.csv"
    path.write_text("# a comment line\n" + HEADER + body)
    with pytest.raises(ModelError, match=re.escape(words)):
        read_timings(path)


def test_csv_reader_refuses_files_that_are_not_csv(tmp_path):
    for make, words in [(lambda p: p.mkdir(), "is a directory"),
                        (lambda p: p.write_text(""), "the file is empty"),
                        (lambda p: p.write_bytes(b"\xff\xfe\x00binary"), "not a text file"),
                        (lambda p: p.write_text("a\0b\n"), "NUL bytes")]:
        path = tmp_path / f"case{len(list(tmp_path.iterdir()))}.csv"
        make(path)
        with pytest.raises(ModelError, match=words):
            read_timings(path)
    with pytest.raises(ModelError, match="not a regular file"):
        read_timings("/dev/null")


def test_ctrl_c_keeps_the_timings_that_finished(cli, tmp_path, monkeypatch):
    calls = []

    def speed_then_ctrl_c(algorithm, nbytes, mask, seconds=1, huge_pages=False):
        calls.append(nbytes)
        if len(calls) == 4:
            raise KeyboardInterrupt
        return nbytes * (5e-9 if mask else 1e-9)
    monkeypatch.setattr(crypto, "openssl_speed", speed_then_ctrl_c)
    out = tmp_path / "aes.csv"
    code, _, err = cli("measure", "aes", "--from", "1KiB", "--to", "8KiB", "--repeats", "2",
                       "--out", str(out))
    assert code == 130
    assert err.strip().splitlines()[-1] == f"accelperf: interrupted; the 3 timings finished " \
                                           f"so far are kept in {out}"
    text = out.read_text()
    assert "# warning: not trustworthy: interrupted with Ctrl-C after 3 of 16 timed runs" in text
    assert len([l for l in text.splitlines() if l.startswith("aes,")]) == 3


@needs_openssl
def test_measure_says_how_long_it_will_take_before_it_starts(tmp_path, monkeypatch):
    """A sweep of minutes announces its plan first (issue 27: `measure aes` ran 4 minutes
    with no word of it); the runs themselves are a stand-in here."""
    from click.testing import CliRunner
    from accelperf.cli import cli
    monkeypatch.setattr(crypto, "openssl_speed",
                        lambda algorithm, nbytes, mask, *args: (3e-9 if mask else 1e-9) * nbytes)
    result = CliRunner().invoke(cli, ["measure", "aes", "--from", "1KiB", "--to", "4KiB",
                                      "--repeats", "20", "--seconds", "2",
                                      "--out", str(tmp_path / "aes.csv")])
    assert result.exit_code == 0, result.output
    first = result.stderr.splitlines()[0]
    assert "3 granularities x host/accel x 20 repeats" in first and "about 4 minutes" in first
