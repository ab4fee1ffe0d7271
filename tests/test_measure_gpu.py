"""`accelperf measure gpu` (issue 36 items 1 and 4): the harness with its device layer
replaced by a fake on a simulated clock (CI has no GPU and maybe no torch), the
curve-break rule on synthetic timings, and one run on PyTorch's CPU where torch is
installed. No test waits on wall-clock time."""

from __future__ import annotations

import csv
import inspect
import math
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from accelperf import ModelError
from accelperf.measure import gpu, gpu_torch
from accelperf.measure.crypto import Sample
from accelperf.measure.data import read_timings
from accelperf.measure.gpu import TARGET_S, check_plan, measure_gpu
from accelperf.measure.outliers import curve_breaks, remeasure_breaks

ROOT = Path(__file__).resolve().parents[1]
KIB = 1024

# The fake device: a copy costs O_COPY + bytes / BANDWIDTH, the kernel KERNEL_S + bytes /
# DEVICE_RATE on the device and bytes / HOST_RATE on the host, a synchronize SYNC_S; the
# device's events see copies and kernel but not the synchronize.
O_COPY, BANDWIDTH, KERNEL_S, DEVICE_RATE, HOST_RATE, SYNC_S = (
    5e-6, 50e9, 8e-6, 2e12, 10e9, 1e-6)
POWER_W = 300.0


class FakeTensor:
    def __init__(self, backend, shape, on_device, pinned=False):
        self.backend, self.shape, self.on_device, self.pinned = (backend, tuple(shape),
                                                                 on_device, pinned)

    def work(self, seconds):          # what a user's kernel costs on the simulated clock
        self.backend.now += seconds

    @property
    def nbytes(self):
        return 4 * math.prod(self.shape)


class FakeEvents:
    def __init__(self, fake):
        self.fake = fake

    def start(self):
        self.t0 = self.fake.now

    def end(self):
        self.t1 = self.fake.now

    def seconds(self):
        return self.t1 - self.t0


class FakeBackend:
    """A device on a simulated clock. ``spikes[g]``: seconds a host call at g costs while
    g is being measured for the ``spike_for``-th time or earlier (a thread pool's wake-up)."""

    device = "fake"

    def __init__(self, spikes=None, spike_for=1, events=True, energy=False):
        self.now = 0.0
        self.spikes, self.spike_for = spikes or {}, spike_for
        self.prepared: dict[int, int] = {}
        self.copies = {"in": 0, "out": 0}
        self.kernel_calls = {"host": 0, "device": 0}
        self.has_events, self.has_energy = events, energy

    def clock(self):
        return self.now

    def kernel(self, name):
        def run(*xs):
            g = sum(x.nbytes for x in xs)
            device = xs[0].on_device
            self.kernel_calls["device" if device else "host"] += 1
            spike = self.spikes.get(g) if self.prepared.get(g, 0) <= self.spike_for else None
            self.now += (KERNEL_S + g / DEVICE_RATE) if device else (spike or g / HOST_RATE)
            return FakeTensor(self, xs[0].shape, device)
        return run

    def host_tensor(self, shape, pinned):
        g = 4 * math.prod(shape)
        self.prepared[g] = self.prepared.get(g, 0) + 1
        return FakeTensor(self, shape, False, pinned)

    def host_like(self, tensor, pinned):
        return FakeTensor(self, tensor.shape, False, pinned)

    def device_like(self, tensor):
        return FakeTensor(self, tensor.shape, True)

    def copy(self, dst, src):
        self.copies["in" if dst.on_device else "out"] += 1
        self.now += O_COPY + src.nbytes / BANDWIDTH

    def sync(self):
        self.now += SYNC_S

    def events(self):
        return FakeEvents(self) if self.has_events else None

    def energy_counter(self):
        if self.has_energy:
            return lambda: POWER_W * self.now
        return "the fake device has no energy counter"

    def describe(self):
        return {"gpu": "Fake GPU, 1 SM", "torch threads": "1"}


def copies_s(g):
    return 2 * (O_COPY + g / BANDWIDTH)


@pytest.fixture
def fake(monkeypatch):
    """The CLI's backend replaced by a fake; ``fake.made`` holds the one it made."""
    made = {}

    def backend(device, **options):
        made["backend"] = FakeBackend(**options)
        return made["backend"]
    options = {}
    monkeypatch.setattr(gpu_torch, "torch_backend", lambda device: backend(device, **options))
    return type("Fake", (), {"made": made, "options": options})


def rows(path):
    lines = [l for l in Path(path).read_text().splitlines() if not l.startswith("#")]
    return list(csv.DictReader(lines))


def header(path):
    return dict(l[2:].split(": ", 1) for l in Path(path).read_text().splitlines()
                if l.startswith("# "))


# ---------------------------------------------------------------------- the harness
def test_modes_times_and_columns_follow_the_fake_device(cli, fake, tmp_path):
    out = tmp_path / "fake.csv"
    code, _, err = cli("measure", "gpu", "--from", "4KiB", "--to", "64KiB", "--repeats", "3",
                       "--out", str(out))
    assert code == 0, err
    assert "5 granularities (4 KiB..64 KiB) x host/accel/echo x 3 repeats" in err
    table = rows(out)
    assert list(table[0]) == ["kernel", "mode", "granularity_bytes", "seconds_min",
                              "seconds_median", "seconds_max", "repeats",
                              "device_seconds_min", "device_seconds_median",
                              "device_seconds_max"]
    assert {(r["mode"], int(r["granularity_bytes"])) for r in table} == {
        (m, 2**k * KIB) for m in ("host", "accel", "echo") for k in range(2, 7)}
    assert {r["repeats"] for r in table} == {"3"}
    for r in table:
        g, t = int(r["granularity_bytes"]), float(r["seconds_min"])
        expected = {"host": g / HOST_RATE,
                    "accel": copies_s(g) + KERNEL_S + g / DEVICE_RATE + SYNC_S,
                    "echo": copies_s(g) + SYNC_S}[r["mode"]]
        assert t == pytest.approx(expected, rel=1e-9)
        if r["mode"] == "host":
            assert r["device_seconds_min"] == ""          # the host has no device clock
        else:                                             # events do not see the sync
            assert float(r["device_seconds_min"]) == pytest.approx(expected - SYNC_S, rel=1e-9)
    meta = header(out)
    assert meta["gpu"] == "Fake GPU, 1 SM" and meta["torch threads"] == "1"
    assert "caches L1" in meta["host cpu"] and "pinned" in meta["copies"]
    assert "min, median and max of 3 repeats" in meta["statistic"]
    assert meta["re-measured"].startswith("none")
    assert meta["energy"] == "not asked for (--energy)"
    timings = read_timings(out)                          # what `logca fit` reads
    assert timings.echo is not None and len(timings.granularity) == 5


def test_each_repeat_loops_the_call_for_at_least_the_target():
    backend = FakeBackend()
    plan = check_plan("scale", [4 * KIB, 8 * KIB, 16 * KIB], repeats=2)
    measure_gpu(plan, backend)
    # every (mode, size, repeat) ran >= 2 ms of calls on the simulated clock
    assert backend.now >= 3 * 3 * 2 * TARGET_S
    # and the host's calls alone: g / HOST_RATE each, so at least TARGET_S / that many
    least = sum(math.ceil(TARGET_S / (g / HOST_RATE)) for g in plan.sizes) * 2
    assert backend.kernel_calls["host"] >= least


def test_resident_times_the_kernel_alone_and_writes_no_echo(cli, fake, tmp_path):
    out = tmp_path / "resident.csv"
    code, _, err = cli("measure", "gpu", "--resident", "--from", "4KiB", "--to", "16KiB",
                       "--repeats", "2", "--out", str(out))
    assert code == 0, err
    table = rows(out)
    assert {r["mode"] for r in table} == {"host", "accel"}
    for r in table:
        if r["mode"] == "accel":
            g = int(r["granularity_bytes"])
            assert float(r["seconds_min"]) == pytest.approx(KERNEL_S + g / DEVICE_RATE
                                                            + SYNC_S, rel=1e-9)
    # the copies: one per input at each visit's set-up (3 sizes x 2 repeats), none while
    # timing
    assert fake.made["backend"].copies == {"in": 6, "out": 0}
    assert "kernel alone" in header(out)["accel"] and read_timings(out).echo is None


def test_energy_without_a_counter_is_one_line_and_the_run_goes_on(cli, fake, tmp_path):
    out = tmp_path / "e.csv"
    code, _, err = cli("measure", "gpu", "--energy", "--from", "4KiB", "--to", "16KiB",
                       "--repeats", "1", "--out", str(out))
    assert code == 0
    said = [l for l in err.splitlines() if "--energy" in l]
    assert said == ["accelperf: --energy: not measured: the fake device has no energy "
                    "counter"]
    assert header(out)["energy"] == "not measured: the fake device has no energy counter"
    assert "joules_median" not in rows(out)[0]


def test_energy_with_a_counter_is_joules_per_operation(cli, fake, tmp_path):
    fake.options["energy"] = True
    out = tmp_path / "e.csv"
    code, _, err = cli("measure", "gpu", "--energy", "--pageable", "--from", "4KiB", "--to",
                       "16KiB", "--repeats", "1", "--out", str(out))
    assert code == 0, err
    assert header(out)["copies"] == "pageable host memory"
    for r in rows(out):
        if r["mode"] == "host":
            assert r["joules_median"] == ""
        else:                          # the board's power times the time of one operation
            assert float(r["joules_median"]) == pytest.approx(
                POWER_W * float(r["seconds_median"]), rel=1e-9)
    assert "total-energy counter" in header(out)["energy"]


def test_gemm_sizes_are_the_bytes_of_a_and_b():
    plan = check_plan("gemm", [8, 16, 8 * KIB, 16 * KIB, 64 * KIB])
    assert plan.sizes == (8, 8 * KIB, 16 * KIB, 64 * KIB)      # 16 B: n = 1 again, dropped
    backend = FakeBackend()
    m = measure_gpu(check_plan("gemm", [8 * KIB, 16 * KIB, 64 * KIB], repeats=1), backend)
    # the shipped H200 data's granularities: n = 32, 45, 91
    assert sorted({s.granularity for s in m.samples}) == [8192, 16200, 66248]


def test_a_user_kernel_gets_device_tensors_and_its_outputs_are_copied_back(
        cli, fake, tmp_path, monkeypatch):
    (tmp_path / "mykernels.py").write_text(textwrap.dedent("""
        seen = []
        def twice(x):
            seen.append(x.on_device)
            x.work(1e-6)
            return x, x                      # two outputs: both are copied back
        def nothing(x):
            x.work(1e-6)
            return None
    """))
    monkeypatch.syspath_prepend(str(tmp_path))
    out = tmp_path / "user.csv"
    code, _, err = cli("measure", "gpu", "--kernel", "python:mykernels:twice", "--from",
                       "4KiB", "--to", "16KiB", "--repeats", "1", "--out", str(out))
    assert code == 0, err
    import mykernels
    assert True in mykernels.seen and False in mykernels.seen      # device and host calls
    backend = fake.made["backend"]
    # every timed copy in (all but the one per size at set-up) brings two outputs back
    assert backend.copies["out"] == 2 * (backend.copies["in"] - 3) > 0
    assert rows(out)[0]["kernel"] == "twice"
    code, _, err = cli("measure", "gpu", "--kernel", "python:mykernels:nothing", "--from",
                       "4KiB", "--to", "16KiB", "--out", str(tmp_path / "n.csv"))
    # found at the first size's set-up, after the plan line: one error line, no CSV
    assert code == 2 and err.strip().splitlines()[-1].endswith(
        "must return a tensor or a tuple of tensors; it returned NoneType")
    assert not (tmp_path / "n.csv").exists()


def test_ctrl_c_keeps_the_finished_timings_and_a_library_error_is_one_line(
        cli, fake, tmp_path, monkeypatch):
    original = FakeBackend.kernel

    def failing(exc, after):
        real = original

        def kernel(self, name):
            run = real(self, name)

            def counted(*xs):
                if self.kernel_calls["device"] >= after:
                    raise exc
                return run(*xs)
            return counted
        monkeypatch.setattr(FakeBackend, "kernel", kernel)
    failing(KeyboardInterrupt(), after=3000)
    out = tmp_path / "cut.csv"
    code, _, err = cli("measure", "gpu", "--from", "4KiB", "--to", "64KiB", "--out", str(out))
    assert code == 130 and "timings finished so far are kept" in err
    kept = rows(out)
    assert 0 < len(kept) <= 15 and "interrupted with Ctrl-C" in out.read_text()
    assert 0 < sum(int(r["repeats"]) for r in kept) < 15 * 5      # the repeats finished
    failing(RuntimeError("CUDA out of memory. Tried to allocate 2.00 GiB"), after=0)
    code, _, err = cli("measure", "gpu", "--from", "4KiB", "--to", "64KiB", "--out",
                       str(tmp_path / "oom.csv"))
    assert code == 1 and err.strip().splitlines()[-1] == (
        "accelperf: error: the scale measurement failed at 4 KiB (buffers and first calls): "
        "RuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB")
    # at one size only (a GPU out of memory at the largest): the size and the way round it
    def too_big(self, name):
        run = original(self, name)
        return lambda *xs: (_ for _ in ()).throw(RuntimeError("out of memory")) \
            if xs[0].shape[0] * 4 >= 32768 else run(*xs)
    monkeypatch.setattr(FakeBackend, "kernel", too_big)
    code, _, err = cli("measure", "gpu", "--from", "4KiB", "--to", "64KiB", "--out",
                       str(tmp_path / "big.csv"))
    assert code == 1 and "failed at 32 KiB (buffers and first calls); the sizes below it " \
        "ran: --to 16KiB measures them: RuntimeError: out of memory" in err


@pytest.mark.parametrize("source, words", [
    ("import torch\ndef f(x)\n    return x\n", "is not valid Python: expected ':' "
                                                "(kern_{n}.py, line 2)"),
    ("import no_such_dependency_x\ndef f(x):\n    return x\n",
     "kern_{n} was found but its own import failed: No module named 'no_such_dependency_x'"),
    ("raise RuntimeError('set CUDA_HOME')\n", "importing kern_{n} failed: RuntimeError: set "
                                               "CUDA_HOME"),
    ("def f(x, y):\n    return x\n", "f(x, y) must take one argument: the input tensor"),
    ("def f():\n    return 1\n", "f() must take one argument"),
])
def test_a_user_kernel_module_is_checked_before_measuring(tmp_path, monkeypatch, source, words):
    # A new user's syntax error was "accelperf: internal error", a dependency's missing
    # module sent them to PYTHONPATH, and a wrong signature failed only once measuring.
    n = abs(hash(source)) % 10**6
    (tmp_path / f"kern_{n}.py").write_text(source)
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(ModelError) as raised:
        gpu.user_kernel(f"python:kern_{n}:f")
    assert words.format(n=n) in str(raised.value) and "\n" not in str(raised.value)
    assert "PYTHONPATH" not in str(raised.value)


# ---------------------------------------------------------------------- bad input
@pytest.mark.parametrize("args, words", [
    (["--kernel", "nope"], "--kernel = 'nope' is invalid: scale, sort, fft, gemm or python"),
    (["--kernel", "python:no_such_module_x:f"], "cannot import no_such_module_x"),
    (["--kernel", "python:no_such_module_x:f"], "add that directory to PYTHONPATH"),
    (["--kernel", "python:os:no_such_function"], "os has no function no_such_function"),
    (["--kernel", "python:os:sep"], "os.sep is a str, not a function"),
    (["--kernel", "python:a b:f"], "--kernel = 'python:a b:f' is invalid"),
    (["--from", "2B", "--to", "16B"], "--from = '2 B' is invalid: at least 4 B for scale"),
    (["--from", "64KiB", "--to", "4KiB"], "need from <= to"),
    (["--repeats", "0"], "--repeats"),
    (["--device", "tpu"], "--device"),
    (["--to", "4GiB"], "largest granularity (--to)"),
    (["--out", "x.txt"], "write a .csv file"),
    (["--out", "no/such/dir/x.csv"], "does not exist"),
])
def test_bad_input_is_one_line_and_exit_2_before_measuring(cli, fake, args, words,
                                                           monkeypatch, tmp_path):
    def never(*a, **k):
        raise AssertionError("measured despite bad input")
    monkeypatch.setattr(gpu, "measure_gpu", never)
    monkeypatch.chdir(tmp_path)
    options = {"--from": "4KiB", "--to": "16KiB", "--out": "ok.csv"}
    options.update(zip(args[::2], args[1::2]))
    code, out, err = cli("measure", "gpu", *(x for pair in options.items() for x in pair))
    assert code == 2 and err.count("\n") == 1 and words in err, err


def test_an_unwritable_out_is_refused_before_the_device_is_touched(cli, fake, tmp_path):
    locked = tmp_path / "locked.csv"
    locked.write_text("")
    locked.chmod(0o444)
    import os
    if os.access(locked, os.W_OK):             # root writes every file, but not in /proc
        locked = Path("/proc/accelperf-measure-gpu.csv")
    code, _, err = cli("measure", "gpu", "--out", str(locked))
    assert code == 2 and "cannot be written" in err and "backend" not in fake.made


def test_no_gpu_is_one_line_and_exit_2(cli, tmp_path):
    try:
        import torch
    except ImportError:
        torch = None
    if torch is not None and torch.cuda.is_available():
        pytest.skip("this machine has a CUDA GPU")
    code, _, err = cli("measure", "gpu", "--out", str(tmp_path / "g.csv"))
    assert code == 2 and err.count("\n") == 1
    assert ("no CUDA GPU is usable here" if torch else "needs PyTorch") in err


# ---------------------------------------------------------------------- curve breaks
def _flat(seconds, spread=1.05):
    return (seconds, seconds * spread)


def test_a_wake_up_spike_breaks_the_curve():
    # issue 36 item 4: 1.9 ms at 256 KiB against ~11 us beside it, in the minimum
    curve = {128 * KIB: _flat(10e-6), 256 * KIB: _flat(1.9e-3), 512 * KIB: _flat(12e-6)}
    (b,) = curve_breaks(curve)
    assert b.granularity == 256 * KIB and b.neighbour_s == 12e-6
    assert "256 KiB" not in str(b) and "262144 B" in str(b)


def test_a_step_a_spread_and_the_ends_do_not_break_it():
    step = {16 << 20: _flat(82e-6), 32 << 20: _flat(2.6e-3), 64 << 20: _flat(5.05e-3)}
    assert curve_breaks(step) == []                 # the H200 host's step: not a spike
    plateau = {32 * KIB: _flat(27e-6), 64 * KIB: _flat(55e-3), 128 * KIB: _flat(48e-3)}
    assert curve_breaks(plateau) == []              # a step onto a plateau, slightly noisy
    noisy = {1: (10e-6, 400e-6, 400e-6), 2: _flat(1e-3), 4: _flat(12e-6)}
    assert curve_breaks(noisy) == []                # 83x, but the repeats there vary 40x
    once = {1: (10e-6, 10.5e-6, 400e-6), 2: _flat(1e-3), 4: _flat(12e-6)}
    assert [b.granularity for b in curve_breaks(once)] == [2]   # one slow repeat beside it
    ends = {1: _flat(1e-3), 2: _flat(1e-5), 4: _flat(1e-5), 8: _flat(1e-3)}
    assert curve_breaks(ends) == []                 # one neighbour each: not judged
    faster = {1: _flat(1e-3), 2: _flat(1e-6), 4: _flat(1e-3)}
    assert curve_breaks(faster) == []               # only a slow-down counts


def test_a_run_of_slow_sizes_breaks_the_curve():
    # the fresh H100's sum: two slow sizes side by side, each with a slow neighbour
    curve = {128 * KIB: _flat(13e-6), 256 * KIB: _flat(2.5e-3), 512 * KIB: _flat(2.4e-3),
             1024 * KIB: _flat(91e-6)}
    assert [(b.granularity, b.neighbour_s) for b in curve_breaks(curve)] == \
        [(256 * KIB, 91e-6), (512 * KIB, 91e-6)]
    longer = {g: _flat(2.5e-3) for g in (2, 4, 8, 16)} | {1: _flat(1e-5), 32: _flat(1e-5)}
    assert curve_breaks(longer) == []               # four slow sizes: a step, not judged


def test_the_shipped_gpu_data_break_only_where_the_h100_box_stalled():
    """No size of the measurement directories breaks the curve but three host sizes of the
    fresh H100 run, measured before the rule judged runs and the median spread: the sum's
    256 and 512 KiB (2.5 ms between 13 and 91 us) and the layer norm's 8 KiB."""
    found = sorted((ROOT / "examples" / "measurements").glob("gpu-*/gpu-*.csv"))
    assert len(found) >= 3 + 6 + 6          # the shipped H200 data and the two harness runs
    breaks = []
    for path in found:
        table = rows(path)
        for mode in ("host", "accel", "echo"):
            curve = {int(r["granularity_bytes"]): (float(r["seconds_min"]),
                                                   float(r["seconds_median"]),
                                                   float(r["seconds_max"]))
                     for r in table if r["mode"] == mode}
            breaks += [(path.parent.name, path.stem, mode, b.granularity // KIB)
                       for b in curve_breaks(curve)]
    assert breaks == [("gpu-h100-second", "gpu-layernorm", "host", 8),
                      ("gpu-h100-second", "gpu-total", "host", 256),
                      ("gpu-h100-second", "gpu-total", "host", 512)]


def test_remeasure_keeps_the_lower_minimum_and_stops_after_the_limit():
    curve = {g: Sample("k", "host", g, _flat(t)) for g, t in
             ((1, 10e-6), (2, 1e-3), (4, 12e-6))}
    calls = []

    def again_fast(g):
        calls.append(g)
        return Sample("k", "host", g, _flat(11e-6))
    kept, notes = remeasure_breaks(curve, again_fast)
    assert calls == [2] and kept[2].minimum == 11e-6
    assert notes == ["2 B: minimum 0.001 s was 83.3x its slower neighbour's 1.2e-05 s "
                     "(repeats' median/min there 1.03x); measured again 1 time: minimum now "
                     "1.1e-05 s"]
    calls.clear()
    kept, notes = remeasure_breaks(curve, lambda g: calls.append(g) or
                                   Sample("k", "host", g, _flat(2e-3)))
    assert calls == [2, 2] and kept[2].minimum == 1e-3          # the lower one is kept
    assert notes[0].endswith("measured again 2 times: minimum now 0.001 s, still breaking "
                             "the curve (kept)")


def test_a_spike_in_one_repeat_is_dropped_by_the_interleaved_repeats(cli, fake, tmp_path):
    """Repeat r visits every size before repeat r + 1: a slow phase during one visit of a
    size slows one of its repeats, and the minimum is the other's."""
    fake.options["spikes"] = {16 * KIB: 1.9e-3}          # the first visit of 16 KiB only
    out = tmp_path / "once.csv"
    code, _, err = cli("measure", "gpu", "--from", "4KiB", "--to", "64KiB", "--repeats", "2",
                       "--out", str(out))
    assert code == 0, err
    row = next(r for r in rows(out) if r["mode"] == "host" and r["granularity_bytes"] ==
               str(16 * KIB))
    assert float(row["seconds_min"]) == pytest.approx(16 * KIB / HOST_RATE, rel=1e-9)
    assert float(row["seconds_max"]) == pytest.approx(1.9e-3, rel=1e-9)
    assert header(out)["re-measured"].startswith("none")
    assert fake.made["backend"].prepared[16 * KIB] == 2


def test_a_spike_is_measured_again_before_it_is_written(cli, fake, tmp_path):
    fake.options.update(spikes={16 * KIB: 1.9e-3}, spike_for=2)     # in both repeats
    out = tmp_path / "spike.csv"
    code, _, err = cli("measure", "gpu", "--from", "4KiB", "--to", "64KiB", "--repeats", "2",
                       "--out", str(out))
    assert code == 0, err
    host = {int(r["granularity_bytes"]): float(r["seconds_min"])
            for r in rows(out) if r["mode"] == "host"}
    assert host[16 * KIB] == pytest.approx(16 * KIB / HOST_RATE, rel=1e-9)
    note = header(out)["re-measured"]
    assert note.startswith("host 16384 B: minimum 0.0019 s was") and "1 time" in note
    assert fake.made["backend"].prepared[16 * KIB] == 4        # 2 repeats, then 2 again


def test_one_size_is_measured_again_by_itself(cli, fake, tmp_path):
    """--from = --to: the one size that `logca fit` names as an outlier, measured again."""
    out = tmp_path / "one.csv"
    code, _, err = cli("measure", "gpu", "--from", "16KiB", "--to", "16KiB", "--repeats", "1",
                       "--out", str(out))
    assert code == 0, err
    assert {int(r["granularity_bytes"]) for r in rows(out)} == {16 * KIB}


def test_a_spike_that_stays_is_kept_and_named(cli, fake, tmp_path):
    fake.options.update(spikes={16 * KIB: 1.9e-3}, spike_for=99)
    out = tmp_path / "stays.csv"
    code, _, err = cli("measure", "gpu", "--from", "4KiB", "--to", "64KiB", "--repeats", "1",
                       "--out", str(out))
    assert code == 0, err
    assert "measured again 2 times" in header(out)["re-measured"]
    assert "still breaking the curve (kept)" in header(out)["re-measured"]
    assert fake.made["backend"].prepared[16 * KIB] == 3


# ---------------------------------------------------------------------- real torch, CPU
def test_the_torch_cpu_backend_runs_every_kernel_and_logca_fit_reads_it(cli, tmp_path):
    pytest.importorskip("torch", reason="PyTorch is not installed (pip install "
                                        "'accelperf[gpu]')")
    for kernel in ("scale", "sort", "fft", "gemm"):
        out = tmp_path / f"cpu-{kernel}.csv"
        code, _, err = cli("measure", "gpu", "--device", "cpu", "--kernel", kernel,
                           "--from", "8KiB", "--to", "32KiB", "--repeats", "2",
                           "--out", str(out))
        assert code == 0, err
        meta = header(out)
        assert "torch" in meta["libraries"] and meta["fp32 matmul precision"] == "highest"
        assert "no clock of its own" in meta["device time"]
        timings = read_timings(out)
        assert timings.echo is not None and all(timings.host > 0)
        assert "device_seconds_min" not in rows(out)[0]
    code, stdout, err = cli("logca", "fit", str(tmp_path / "cpu-scale.csv"))
    assert code in (0, 1) and "Traceback" not in err and stdout


def test_the_example_user_kernels_run_on_the_torch_cpu_backend(cli, tmp_path, monkeypatch):
    """examples/gpu_kernels.py, whose H200 measurements are shipped, through the harness as
    a user runs them (tools/gpu/measure_user_kernels.sh), with the CPU as the device."""
    pytest.importorskip("torch", reason="PyTorch is not installed (pip install "
                                        "'accelperf[gpu]')")
    monkeypatch.syspath_prepend(str(ROOT / "examples"))
    import gpu_kernels
    kernels = [name for name, f in inspect.getmembers(gpu_kernels, inspect.isfunction)
               if f.__module__ == "gpu_kernels"]
    assert {"cumsum", "total", "conv1d", "flip", "bmm", "logsumexp"} <= set(kernels)
    for kernel in kernels:
        out = tmp_path / f"{kernel}.csv"
        code, _, err = cli("measure", "gpu", "--device", "cpu", "--kernel",
                           f"python:gpu_kernels:{kernel}", "--from", "8KiB", "--to", "16KiB",
                           "--repeats", "1", "--out", str(out))
        assert code == 0, err
        assert set(read_timings(out).granularity) == {8192, 16384}
    for script in ("measure_h200.sh", "measure_user_kernels.sh", "common.sh"):
        check = subprocess.run(["bash", "-n", str(ROOT / "tools" / "gpu" / script)],
                               capture_output=True, text=True)
        assert check.returncode == 0, check.stderr


def test_logca_fit_reads_the_extra_columns(cli, tmp_path):
    m = measure_gpu(check_plan("scale", [4 * KIB * 2**k for k in range(8)], repeats=1,
                               energy=True), FakeBackend(energy=True))
    path = m.write_csv(tmp_path / "fake.csv")
    assert "device_seconds_min" in path.read_text() and "joules_median" in path.read_text()
    code, stdout, err = cli("logca", "fit", str(path))
    assert code == 0, err
    # o + L*g from the echo rows: the fake's two copies and its synchronize, exactly
    assert "from the echo run" in stdout
    assert f"{2 / BANDWIDTH:.3g}" in stdout and f"{2 * O_COPY + SYNC_S:.3g}" in stdout


BLOCKER = textwrap.dedent("""
    import sys
    class Block:
        def find_spec(self, name, path=None, target=None):
            if name.split(".")[0] in ("z3", "vl_convert"):
                raise ImportError(f"{name} is blocked (the GPU machine has none)")
    sys.meta_path.insert(0, Block())
    from accelperf.cli import main
    sys.exit(main(sys.argv[1:]))
""")


def test_the_command_runs_without_z3_and_vl_convert(tmp_path):
    """The GPU machine has neither: the import path of `measure gpu` must not need them."""
    try:
        import torch  # noqa: F401
        args = ["measure", "gpu", "--device", "cpu", "--from", "4KiB", "--to", "8KiB",
                "--repeats", "1", "--out", str(tmp_path / "b.csv")]
    except ImportError:
        args = ["measure", "gpu", "--help"]
    done = subprocess.run([sys.executable, "-c", BLOCKER, *args], capture_output=True,
                          text=True, cwd=ROOT, timeout=120,
                          env={"PYTHONPATH": str(ROOT / "src"), "PATH": "/usr/bin:/bin"})
    assert done.returncode == 0, done.stderr[-2000:]


# ---------------------------------------------------------------------- NVML, faked
class FakeNVML:
    """The few pynvml calls the CUDA backend makes, answering like an H200 on PCIe gen 5."""

    class NVMLError(Exception):
        pass

    def __init__(self, energy=True, bus_ok=True):
        self.energy_mj, self.has_energy, self.bus_ok, self.asked = 5000, energy, bus_ok, []

    def nvmlInit(self):
        pass

    def nvmlDeviceGetHandleByPciBusId(self, bus):
        self.asked.append(bus)
        if not self.bus_ok:
            raise self.NVMLError("not found")
        return "handle"

    def nvmlDeviceGetHandleByIndex(self, index):
        return f"handle {index}"

    def nvmlSystemGetDriverVersion(self):
        return "580.159.04"

    def nvmlDeviceGetCurrPcieLinkGeneration(self, h):
        return 5

    def nvmlDeviceGetCurrPcieLinkWidth(self, h):
        return 16

    nvmlDeviceGetMaxPcieLinkGeneration = nvmlDeviceGetCurrPcieLinkGeneration
    nvmlDeviceGetMaxPcieLinkWidth = nvmlDeviceGetCurrPcieLinkWidth

    def nvmlDeviceGetTotalEnergyConsumption(self, h):
        if not self.has_energy:
            raise self.NVMLError("Not Supported")
        self.energy_mj += 1500
        return self.energy_mj


class FakeCudaTorch:
    class cuda:
        @staticmethod
        def current_device():
            return 0

        @staticmethod
        def get_device_properties(i):
            return type("P", (), {"pci_domain_id": 0, "pci_bus_id": 0x17, "pci_device_id": 0})


def test_nvml_names_the_link_and_reads_the_energy_counter(monkeypatch):
    nvml = FakeNVML()
    monkeypatch.setitem(sys.modules, "pynvml", nvml)
    handle, reason = gpu_torch._nvml_handle(FakeCudaTorch)
    assert (handle, reason) == ("handle", None) and nvml.asked == ["00000000:17:00.0"]
    assert gpu_torch._link(handle, None) == ("driver 580.159.04, PCIe gen 5 x16 now (max gen 5 x16;"
                                       " NVML)")
    backend = object.__new__(gpu_torch.TorchBackend)
    backend.device, backend._nvml, backend._no_nvml = "cuda", handle, None
    counter = backend.energy_counter()
    assert counter() - counter() == pytest.approx(-1.5)          # mJ -> J, per reading
    nvml.has_energy = False
    assert "no total-energy counter" in backend.energy_counter()
    monkeypatch.setitem(sys.modules, "pynvml", FakeNVML(bus_ok=False))   # by index instead
    assert gpu_torch._nvml_handle(FakeCudaTorch) == ("handle 0", None)


def test_without_nvml_the_reason_is_kept(monkeypatch):
    monkeypatch.setitem(sys.modules, "pynvml", None)             # import fails
    handle, reason = gpu_torch._nvml_handle(FakeCudaTorch)
    assert handle is None and reason == "pynvml (nvidia-ml-py) is not installed"
    backend = object.__new__(gpu_torch.TorchBackend)
    backend.device, backend._nvml, backend._no_nvml = "cuda", None, reason
    assert backend.energy_counter() == reason
