"""Issue 34: no output lost or silently wrong. One writer per batch file (two real
processes), files written at once replaced atomically, a bad scheduler refused before --out
is touched, strict params files, CSVs with a byte-order mark, resumes that check what they
resume, a crash-safe Parquet finish, quiet workers and the minor refusals."""

import json
import os
import signal
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from child_process import ACCELPERF

from accelperf.cli.batch_rows import MARK, PARQUET_KEY, Provenance, RowWriter, read_rows
from accelperf.errors import ModelError
from accelperf.outputs import OutputLock, lock_path, replacing, write_atomic

ROOT = Path(__file__).resolve().parents[1]
MEASURED = ROOT / "examples" / "measurements" / "core_jpeg_train.csv"


def inputs(folder: Path, n: int = 4) -> Path:
    folder.mkdir()
    for i in range(n):
        (folder / f"x{i}.json").write_text(json.dumps({"blocks": 2 + i, "nnz": 1 + i}))
    return folder


def batch(*more):
    return ("lpn", "simulate", "block-pipeline", "--workers", "1", *more)


# ---------------------------------------------------------------------- one writer
HOLDER = """
import sys
from pathlib import Path
from accelperf.outputs import OutputLock
lock = OutputLock(Path(sys.argv[1])).acquire()
print("locked", flush=True)
sys.stdin.read()                                  # held until the test closes stdin
"""


def test_a_second_writer_is_refused_naming_the_process_that_holds_the_file(cli, tmp_path):
    folder = inputs(tmp_path / "in")
    out = tmp_path / "r.csv"
    out.write_text("rows of the first batch\n")
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, str(out)], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "locked"
        second = subprocess.run(ACCELPERF + list(batch("--inputs", str(folder), "--out",
                                                       str(out))),
                                capture_output=True, text=True, timeout=120)
        assert second.returncode == 2, second.stderr
        assert f"in use by process {holder.pid} (" in second.stderr
        assert len(second.stderr.strip().splitlines()) == 1
        assert out.read_text() == "rows of the first batch\n"          # not truncated
    finally:
        holder.kill()
        holder.wait()
    # the holder died without removing its lock file: the next batch takes it over
    assert lock_path(out).exists()
    code, _, err = cli(*batch("--inputs", str(folder), "--out", str(out)))
    assert code == 0, err
    assert f"left by process {holder.pid}" in err and "taken over" in err
    assert len(read_rows(out)) == 4 and not lock_path(out).exists()


FORKING_HOLDER = """
import os, sys, time
from pathlib import Path
from accelperf.outputs import OutputLock
lock = OutputLock(Path(sys.argv[1])).acquire()
ready, running = os.pipe()
worker = os.fork()
if worker == 0:                                   # a batch's local worker, winding down
    os.write(running, b"x")                       # past the fork hooks: running its code
    time.sleep(60)
    os._exit(0)
os.read(ready, 1)           # until the worker runs, its copy of the lock may be open
print("locked", worker, flush=True)
sys.stdin.read()
"""


def test_a_killed_writers_forked_workers_do_not_keep_its_lock(tmp_path):
    # kill -9 of a batch client leaves its forked workers running for a while; had they
    # kept their copy of the lock, --resume would be refused naming the dead client.
    out = tmp_path / "r.csv"
    holder = subprocess.Popen([sys.executable, "-c", FORKING_HOLDER, str(out)],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    worker = None
    try:
        said, worker = holder.stdout.readline().split()
        assert said == "locked"
        with pytest.raises(ModelError, match=f"in use by process {holder.pid}"):
            OutputLock(out).acquire()
        holder.kill()
        holder.wait()
        notes = []
        with OutputLock(out, note=notes.append):               # at once, not seconds later
            assert f"left by process {holder.pid}" in notes[0]
    finally:
        holder.kill()
        holder.wait()
        if worker is not None:
            os.kill(int(worker), signal.SIGKILL)


def test_a_lock_is_released_and_can_be_taken_again(tmp_path):
    out = tmp_path / "r.csv"
    with OutputLock(out) as lock:
        assert lock_path(out).read_text().startswith(f"{os.getpid()}\n")
        assert "held" in repr(lock)
    with OutputLock(out):
        pass
    assert not lock_path(out).exists()


# ---------------------------------------------------------------------- written at once
def test_an_atomic_write_leaves_the_old_file_when_it_fails(tmp_path):
    path = tmp_path / "report.json"
    write_atomic(path, "old\n")
    os.chmod(path, 0o640)
    with pytest.raises(RuntimeError):
        with replacing(path) as temp:
            temp.write_text("half a new")
            raise RuntimeError("killed mid-write")
    assert path.read_text() == "old\n" and sorted(tmp_path.iterdir()) == [path]
    write_atomic(path, b"new\n")
    assert path.read_bytes() == b"new\n" and path.stat().st_mode & 0o777 == 0o640


# ---------------------------------------------------------------------- the scheduler
def _refused_port() -> int:
    with socket.socket() as s:              # a port the kernel just gave out, now closed
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.parametrize("address,words", [
    ("tcp://127.0.0.1:{port}", "no scheduler answers there"),
    ("tcp://127.0.0.1", "a host, then a port"),
    ("htp://127.0.0.1:8786", "the protocol is one of"),
])
def test_a_bad_scheduler_exits_2_and_leaves_out_as_it_was(cli, tmp_path, address, words):
    pytest.importorskip("distributed", reason="Dask is optional: pip install 'accelperf[dask]'")
    folder = inputs(tmp_path / "in")
    out = tmp_path / "r.csv"
    out.write_bytes(b"model,name\r\nkept as it was\r\n")
    address = address.format(port=_refused_port())
    code, _, err = cli(*batch("--inputs", str(folder), "--out", str(out),
                              "--scheduler", address))
    assert code == 2 and words in err and len(err.strip().splitlines()) == 1, err
    assert f"--scheduler = {address!r} is invalid" in err
    assert out.read_bytes() == b"model,name\r\nkept as it was\r\n"
    assert not lock_path(out).exists()


# ---------------------------------------------------------------------- params files
COMMANDS = [
    ("lpn", "simulate", "jpeg-decoder", "--input", "[1,1,1,1,1,1]"),
    ("lpn", "calibrate", "jpeg-decoder", "--measured", str(MEASURED)),
    ("lpn", "compare", "jpeg-decoder", "--measured", str(MEASURED)),
    ("lpn", "verify", "jpeg-decoder", "--space",
     str(ROOT / "examples/spaces/jpeg-decoder-18-blocks.toml"), "--bound", "max"),
    ("lpn", "show", "jpeg-decoder", "--parameters"),
    ("lpn", "classes", "jpeg-decoder"),
    ("lpn", "interface", "jpeg-decoder"),
    ("explore", "--model", "jpeg-decoder", "--out", "{tmp}/e.html"),
]


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: " ".join(c[:2]))
@pytest.mark.parametrize("content,words", [
    ('model = "jpeg-decoder"\n[params]\nidct_cycles = 5\n',
     "table = '[params]' is invalid: the tables are [parameters] and [coverage] (did you "
     "mean 'parameters'?)"),
    ('model = "vta"\n[parameters]\nidct_cycles = 5\n',
     "model = 'vta' is invalid: the command's model is 'jpeg-decoder'"),
    ('[parameters]\nidct_cycle = 5\n', "(did you mean 'idct_cycles'?)"),
    ('modle = "jpeg-decoder"\n', "key = 'modle' is invalid: the top-level keys are model, "
                                 "source, command (did you mean 'model'?)"),
], ids=["table", "model", "name", "key"])
def test_every_params_command_refuses_a_wrong_params_file(cli, tmp_path, command, content,
                                                          words):
    params = tmp_path / "p.toml"
    params.write_text(content)
    argv = [a.replace("{tmp}", str(tmp_path)) for a in command]
    code, _, err = cli(*argv, "--params", str(params))
    assert code == 2 and words in err and len(err.strip().splitlines()) == 1, err


def test_a_params_file_with_coverage_is_read_and_its_coverage_handed_back(tmp_path):
    from accelperf.cli.common import load_params_file, read_params
    params = tmp_path / "p.toml"
    params.write_bytes(b'\xef\xbb\xbfmodel = "jpeg-decoder"\r\nsource = "fit"\r\n'
                       b'header_base = 50\r\n[parameters]\r\nidct_cycles = 70\r\n'
                       b'[coverage]\r\nblocks = [6, 600]\r\nnote = "4:2:0 only"\r\n')
    read = load_params_file(params, "jpeg-decoder")
    assert read.model == "jpeg-decoder" and read.values == {"header_base": 50,
                                                            "idct_cycles": 70}
    assert read.coverage == {"blocks": [6, 600], "note": "4:2:0 only"}
    assert read_params(params, ["idct_cycles=71"], "jpeg-decoder") == {
        "header_base": 50, "idct_cycles": 71}


# ---------------------------------------------------------------------- CSV readers
def test_measurements_saved_by_excel_with_a_bom_and_crlf_are_read(cli, tmp_path):
    from accelperf.cli.lpn_calibrate import read_measured
    from accelperf.lpn.library import LIBRARY
    lines = [line for line in MEASURED.read_text().splitlines() if not line.startswith("#")]
    lines[1:] = [f"{MEASURED.parent / line}" for line in lines[1:]]   # inputs: absolute
    excel = tmp_path / "excel.csv"
    excel.write_bytes(b"\xef\xbb\xbf" + "\r\n".join(lines).encode() + b"\r\n")
    model = LIBRARY["jpeg-decoder"]()
    assert [r.cycles for r in read_measured(excel, model)] == \
        [r.cycles for r in read_measured(MEASURED, model)]
    bad = tmp_path / "bad.csv"
    bad.write_bytes(b"\xef\xbb\xbfimage,cycles\r\nx.jpg,10\r\n")
    with pytest.raises(ModelError, match="it lacks input; found image, cycles"):
        read_measured(bad, LIBRARY["jpeg-decoder"]())


def test_logca_timings_with_a_bom_are_read_and_a_missing_column_names_what_was_found(tmp_path):
    from accelperf.measure.data import read_timings
    rows = "".join(f"k,{m},{g},{t:g},{t:g}\r\n" for g in (64, 128, 256)
                   for m, t in (("host", g * 1e-9), ("accel", 1e-7 + g * 1e-10)))
    path = tmp_path / "t.csv"
    path.write_bytes(b"\xef\xbb\xbfkernel,mode,granularity_bytes,seconds_min,seconds_median"
                     b"\r\n" + rows.encode())
    assert list(read_timings(path).granularity) == [64, 128, 256]
    path.write_text("kernel,mode,size,seconds_min,seconds_median\n" + rows)
    with pytest.raises(ModelError, match="found kernel, mode, size, seconds_min"):
        read_timings(path)


# ---------------------------------------------------------------------- resume
def test_resume_refuses_rows_made_at_other_delays(cli, tmp_path):
    folder = inputs(tmp_path / "in")
    out = tmp_path / "r.csv"
    assert cli(*batch("--input", str(folder / "x0.json"), str(folder / "x1.json"),
                      "--out", str(out)))[0] == 0
    first = out.read_text()
    assert first.startswith(MARK)
    recorded = Provenance.from_json(first.splitlines()[0][len(MARK):])
    assert recorded.model == "block-pipeline" and recorded.input_root == str(folder.resolve())
    code, _, err = cli(*batch("--inputs", str(folder), "--out", str(out), "--resume",
                              "--param", "entropy_base=99"))
    assert code == 2 and len(err.strip().splitlines()) == 1, err
    assert "its rows were produced another way: parameter values (entropy_base" in err
    assert out.read_text() == first


def test_resume_refuses_rows_made_under_other_limits(cli, tmp_path):
    # a row that failed at --max-commits 3 would be skipped as done under the default
    folder = inputs(tmp_path / "in", 2)
    out = tmp_path / "r.csv"
    assert cli(*batch("--inputs", str(folder), "--out", str(out), "--max-commits", "3"))[0] == 1
    first = out.read_text()
    recorded = Provenance.from_json(first.splitlines()[0][len(MARK):])
    assert recorded.limits == {"max_time": None, "max_commits": 3,
                               "max_firings_per_cycle": 1_000_000}
    code, _, err = cli(*batch("--inputs", str(folder), "--out", str(out), "--resume"))
    assert code == 2 and len(err.strip().splitlines()) == 1, err
    assert "run limits (--max-commits 3 -> 100000000)" in err
    assert out.read_text() == first
    # the default typed out is the default: resumed
    again = tmp_path / "s.csv"
    assert cli(*batch("--input", str(folder / "x0.json"), "--out", str(again)))[0] == 0
    code, _, err = cli(*batch("--inputs", str(folder), "--out", str(again), "--resume",
                              "--max-commits", "100000000"))
    assert code == 0 and "1 input(s) already in" in err, err


def test_resume_matches_inputs_by_absolute_path(cli, tmp_path, monkeypatch):
    folder = inputs(tmp_path / "in")
    out = tmp_path / "r.csv"
    monkeypatch.chdir(tmp_path)
    assert cli(*batch("--inputs", "in", "--out", str(out)))[0] == 0          # relative
    code, _, err = cli(*batch("--inputs", str(folder), "--out", str(out), "--resume"))
    assert code == 0 and "4 input(s) already in" in err and "0 to run" in err, err
    assert len(read_rows(out)) == 4


def test_links_to_one_file_are_inputs_of_their_own(cli, tmp_path):
    # 150 links to one image were one input to --resume: 86 of them were never run
    folder = inputs(tmp_path / "in", 1)
    for i in range(3):
        (folder / f"link{i}.json").symlink_to(folder / "x0.json")
    out = tmp_path / "r.csv"
    first = [str(folder / "x0.json"), str(folder / "link0.json")]
    assert cli(*batch("--input", *first, "--out", str(out)))[0] == 0
    code, _, err = cli(*batch("--inputs", str(folder), "--out", str(out), "--resume"))
    assert code == 0 and "2 input(s) already in" in err and "2 to run" in err, err
    assert sorted(Path(r["name"]).name for r in read_rows(out)) == \
        ["link0.json", "link1.json", "link2.json", "x0.json"]


def test_a_crash_between_the_parquet_replace_and_the_rows_removal_keeps_each_row_once(
        cli, tmp_path, monkeypatch):
    pq = pytest.importorskip("pyarrow.parquet", reason="Parquet needs pyarrow")
    folder = inputs(tmp_path / "in", 6)
    out = tmp_path / "r.parquet"
    rows_file = tmp_path / "r.parquet.rows.csv"

    class Killed(BaseException):
        """The process dying right after os.replace (kill -9, power loss)."""

    def crash(self):
        raise Killed
    monkeypatch.setattr(RowWriter, "_drop_rows_file", crash)
    with pytest.raises(Killed):
        cli(*batch("--input", *[str(folder / f"x{i}.json") for i in range(3)],
                   "--out", str(out)))
    assert out.exists() and rows_file.exists()          # both: the crash window
    assert pq.read_table(out).num_rows == 3
    monkeypatch.undo()
    code, _, err = cli(*batch("--inputs", str(folder), "--out", str(out), "--resume"))
    assert code == 0, err
    assert "was already in" in err and "3 input(s) already in" in err
    names = [r["name"] for r in pq.read_table(out).to_pylist()]
    assert len(names) == len(set(names)) == 6 and not rows_file.exists()
    meta = pq.read_schema(out).metadata
    assert Provenance.from_json(meta[PARQUET_KEY].decode()).model == "block-pipeline"


# ---------------------------------------------------------------------- workers
def test_a_worker_whose_client_is_gone_returns_quietly():
    import multiprocessing
    from accelperf.lpn.batch import _pool_worker
    from accelperf.lpn.library import LIBRARY
    parent, child = multiprocessing.Pipe()
    parent.send([(0, "x", {"blocks": 2, "nnz": 1})])
    parent.close()                                     # the client is killed
    handler = signal.getsignal(signal.SIGINT)
    try:
        assert _pool_worker(child, [], LIBRARY["block-pipeline"](), "python", {}, False,
                            None) is None              # no BrokenPipeError
    finally:
        signal.signal(signal.SIGINT, handler)


# ---------------------------------------------------------------------- the minor items
@pytest.mark.parametrize("fit,words", [
    ("idct_cycles,idct_cycles", "'idct_cycles' is given twice"),
    ("", "a comma-separated list of parameters to fit"),
    (" , ", "a comma-separated list of parameters to fit"),
    ("idct_cycle", "(did you mean 'idct_cycles'?)"),
])
def test_fit_lists_are_checked(cli, fit, words):
    code, _, err = cli("lpn", "calibrate", "jpeg-decoder", "--measured", str(MEASURED),
                       "--fit", fit)
    assert code == 2 and words in err and len(err.strip().splitlines()) == 1, err


def test_compare_refuses_a_trace_whose_cycles_go_back(cli, tmp_path):
    trace = tmp_path / "trace.csv"
    trace.write_text("event,cycle\nidct_y,100\nidct_y,250\nidct_y,240\n")
    code, _, err = cli("lpn", "compare", "jpeg-decoder", "--measured", str(MEASURED),
                       "--trace", str(trace), "--transition", "idct_y",
                       "--trace-input", "core_jpeg/coffee_320x240_q90_420.jpg")
    assert code == 2 and len(err.strip().splitlines()) == 1, err
    assert "--trace line 4: cycle = 240 is invalid: at or after the 'idct_y' event before " \
           "it (cycle 250)" in err


def test_logca_fit_probe_refuses_two_data_points_before_probing(cli, tmp_path, monkeypatch):
    import accelperf.measure.memory as memory

    def no_probe(*args, **kwargs):
        raise AssertionError("probed before checking the data")
    monkeypatch.setattr(memory, "probe", no_probe)
    data = tmp_path / "two.csv"
    data.write_text("kernel,mode,granularity_bytes,seconds_min,seconds_median\n"
                    "k,host,64,1e-6,1e-6\nk,accel,64,1e-6,1e-6\n"
                    "k,host,128,2e-6,2e-6\nk,accel,128,1.5e-6,1.5e-6\n")
    code, _, err = cli("logca", "fit", str(data), "--probe")
    assert code == 2 and "only 2 granularities" in err, err


def test_the_layout_parse_builds_no_python_huffman_tables(monkeypatch):
    from accelperf.lpn.inputs import jpeg, jpeg_native
    data = (ROOT / "examples/images/hopper_64x48_q50_420.jpg").read_bytes()
    reference = jpeg.scan_jpeg(data, "hopper")

    def no_tables(counts, values):
        raise AssertionError("a Python Huffman table was built")
    monkeypatch.setattr(jpeg, "_lookup", no_tables)
    assert jpeg.scan_layout(data, "hopper").mcus == 12
    if jpeg_native.available():
        native = jpeg_native.scan_jpeg_native(data, "hopper")
        assert list(native.symbols) == list(reference.symbols)


def test_a_missing_extra_says_how_to_install_it_in_a_clone_too(cli, tmp_path, monkeypatch):
    # a user in a clone was told only `pip install 'accelperf[parquet]'`
    import sys
    monkeypatch.setitem(sys.modules, "pyarrow", None)          # import pyarrow fails
    folder = inputs(tmp_path / "in", 1)
    code, _, err = cli(*batch("--inputs", str(folder), "--out", str(tmp_path / "r.parquet")))
    assert code == 2 and "pip install 'accelperf[parquet]'" in err
    assert ".venv/bin/pip install -e '.[parquet]'" in err
