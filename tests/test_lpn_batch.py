"""Batch simulation: one row per input, failures kept per input, the same rows from one
process, a local pool and a Dask cluster; the CLI's batch options."""

import os
from pathlib import Path
import json

import pytest
from child_process import ACCELPERF, rows_in, signal_when

from accelperf.cli.batch_rows import read_rows
from accelperf.errors import ModelError
from accelperf.lpn import simulate
from accelperf.lpn.batch import BatchRow, simulate_many
from accelperf.lpn.compiled import compiler_missing
from accelperf.lpn.library import LIBRARY

INPUTS = [("small", {"blocks": 5, "nnz": 3}), ("dense", {"blocks": 9, "nnz": 60}),
          ("bad", [1, 2, 99]), ("image", {"width": 32, "height": 16, "seed": 3})]


def comparable(rows):
    """Everything but the seconds each input took."""
    return [(r.name, r.latency, r.commits, r.bottleneck, r.error) for r in rows]


def test_rows_follow_single_runs_and_failures_stay_per_input():
    model = LIBRARY["block-pipeline"]()
    result = simulate_many(model, INPUTS, workers=1)
    assert [r.name for r in result.rows] == ["small", "dense", "bad", "image"]
    assert [r.name for r in result.failures] == ["bad"]
    assert "= 99 is invalid" in result.failures[0].error
    for row, (_, given) in zip(result.rows, INPUTS):
        if row.ok:
            single = simulate(model, given)
            assert (row.latency, row.commits, row.bottleneck) == \
                (single.latency, single.total_commits, single.bottleneck)
    assert result.where == "this process" and isinstance(result.rows[0], BatchRow)


def test_a_local_pool_gives_the_same_rows():
    model = LIBRARY["block-pipeline"]()
    one = simulate_many(model, INPUTS, workers=1)
    two = simulate_many(model, INPUTS, workers=2)
    assert two.workers == 2 and two.where == "local pool"
    assert comparable(two.rows) == comparable(one.rows)


@pytest.mark.skipif(compiler_missing() is not None, reason="no C compiler")
def test_compiled_batch_equals_python_batch():
    model = LIBRARY["darwin"]()
    inputs = {f"q{n}": None for n in range(3)}
    py = simulate_many(model, inputs, workers=1)
    c = simulate_many(model, inputs, workers=2, backend="compiled")
    assert comparable(c.rows) == comparable(py.rows)
    assert {r.backend for r in c.rows} == {"compiled"}


def test_bad_arguments_are_one_clear_error():
    model = LIBRARY["block-pipeline"]()
    with pytest.raises(ModelError, match="workers = 0 is invalid"):
        simulate_many(model, INPUTS, workers=0)
    with pytest.raises(ModelError, match="inputs = \\[\\] is invalid"):
        simulate_many(model, [])
    with pytest.raises(ModelError, match="backend = 'gpu' is invalid"):
        simulate_many(model, INPUTS, backend="gpu")


def test_dask_cluster_gives_the_local_rows():
    distributed = pytest.importorskip("distributed", reason="Dask is optional: "
                                      "pip install 'accelperf[dask]'")
    local = simulate_many("block-pipeline", INPUTS, workers=1)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster:
        by_address = simulate_many("block-pipeline", INPUTS, scheduler=cluster.scheduler_address)
        with distributed.Client(cluster) as client:      # a Model object is shipped too
            by_client = simulate_many(LIBRARY["block-pipeline"](), INPUTS, scheduler=client)
    assert comparable(by_address.rows) == comparable(local.rows)
    assert comparable(by_client.rows) == comparable(local.rows)
    assert by_address.where.startswith("tcp://") and by_address.workers == 2


# ---------------------------------------------------------------------- the CLI
def write_inputs(folder):
    folder.mkdir()
    for name, given in INPUTS:
        (folder / f"{name}.json").write_text(json.dumps(given))
    return folder


def test_cli_batch_over_a_directory_writes_csv(cli, tmp_path):
    folder = write_inputs(tmp_path / "in")
    out = tmp_path / "rows.csv"
    code, _, err = cli("lpn", "simulate", "block-pipeline", "--inputs", str(folder), "--out", str(out),
                       "--workers", "2")
    assert code == 1                           # one input failed; the others are written
    rows = sorted(read_rows(out), key=lambda r: r["name"])   # as they finished
    assert [r["name"].rsplit("/", 1)[-1] for r in rows] == \
        ["bad.json", "dense.json", "image.json", "small.json"]
    assert {r["model"] for r in rows} == {"block-pipeline"}
    assert "= 99 is invalid" in rows[0]["error"] and rows[1]["latency"] == str(
        simulate(LIBRARY["block-pipeline"](), INPUTS[1][1]).latency)
    assert f"wrote {out}" in err


def test_a_directory_gives_the_files_the_model_reads(cli, tmp_path):
    # A folder of inputs holds notes and hidden files beside them: each would be a failed
    # row. They are left out and named; a glob (written by hand) still takes every file.
    folder = tmp_path / "in"
    folder.mkdir()
    (folder / "a.json").write_text('{"blocks": 2, "nnz": 1}')
    (folder / "notes.txt").write_text("taken on Tuesday")
    (folder / ".DS_Store").write_bytes(b"\0\1")
    code, out, err = cli("lpn", "simulate", "block-pipeline", "--inputs", str(folder),
                         "--json", "--workers", "1")
    assert code == 0 and [r["commits"] for r in json.loads(out)["rows"]] == [8]
    assert "left out 2 file(s) that are no input (.DS_Store, notes.txt)" in err
    code, out, _ = cli("lpn", "simulate", "block-pipeline", "--inputs", f"{folder}/*",
                       "--json", "--workers", "1")
    assert code == 1 and len(json.loads(out)["rows"]) == 2     # notes.txt: a failed row
    (folder / "a.json").unlink()
    code, _, err = cli("lpn", "simulate", "block-pipeline", "--inputs", str(folder))
    assert code == 2 and "is invalid: no input files there" in err


def test_a_model_with_its_own_reader_reads_any_file_but_a_hidden_one(tmp_path):
    from accelperf.lpn.loader import reads_file
    vta, blocks = LIBRARY["vta"](), LIBRARY["block-pipeline"]()
    for name, by_vta, by_blocks in [("trace.txt", True, False), ("b.JSON", True, True),
                                    (".hidden.json", False, False), ("x.jpg", True, True)]:
        (tmp_path / name).write_text("x")
        assert (reads_file(vta, tmp_path / name), reads_file(blocks, tmp_path / name)) == \
            (by_vta, by_blocks), name
    (tmp_path / "photo").write_bytes(b"\xff\xd8\xff\xe0")        # a JPEG without its suffix
    assert reads_file(blocks, tmp_path / "photo")


def test_cli_batch_from_inputs_and_a_glob_as_json(cli, tmp_path):
    folder = write_inputs(tmp_path / "in")
    code, out, _ = cli("lpn", "simulate", "block-pipeline", "--input", '{"blocks": 2, "nnz": 1}',
                       '{"blocks": 3, "nnz": 1}', "--inputs", str(folder / "s*.json"),
                       "--json", "--workers", "1")
    info = json.loads(out)
    assert code == 0 and [r["commits"] for r in info["rows"]] == [8, 12, 20]
    assert info["failures"] == 0


@pytest.mark.parametrize("args,message", [
    (["--input", "{}", "{}", "--out", "r.txt"], "--out = 'r.txt' is invalid: write a .csv "
                                                "or .parquet or .json file"),
    (["--input", "{}", "{}", "--resume"], "--resume = 'on' is invalid: it needs --out"),
    (["--input", "{}", "{}", "--send-inputs"], "it goes with --scheduler"),
    (["--inputs", "nowhere/*.json"], "--inputs = 'nowhere/*.json' is invalid: no input files"),
    (["--input", "{}", "{}", "--out", "no/such/dir/r.csv"], "the directory 'no/such/dir' "
                                                            "does not exist"),
    (["--input", "{}", "{}", "--workers", "0"], "--workers"),
])
def test_cli_batch_checks_before_work(cli, args, message):
    code, _, err = cli("lpn", "simulate", "block-pipeline", *args)
    assert code == 2 and message in err and len(err.strip().splitlines()) == 1


def test_cli_batch_over_the_shipped_jpegs(cli, tmp_path):
    from importlib import resources
    folder = resources.files("accelperf") / "data" / "jpeg"
    out = tmp_path / "r.csv"
    code, _, _ = cli("lpn", "simulate", "jpeg-decoder", "--inputs", f"{folder}/*.jpg",
                     "--out", str(out), "--backend", "auto")
    rows = {Path(r["name"]).name: r for r in read_rows(out)}
    assert len(rows) == len(list(Path(str(folder)).glob("*.jpg"))) >= 4
    failed = {n for n, r in rows.items() if r["error"]}
    assert failed == {n for n in rows if "_444" in n} and code == (1 if failed else 0)
    assert all("4:2:0 JPEGs only" in rows[n]["error"] for n in failed)
    model = LIBRARY["jpeg-decoder"]()
    from accelperf.lpn.loader import load_input
    name = "hopper_64x48_q90_420.jpg"
    single = simulate(model, load_input(str(Path(str(folder)) / name), model))
    assert rows[name]["latency"] == str(single.latency)


def test_cli_batch_over_the_example_images_from_the_repository(cli, tmp_path, monkeypatch):
    """Issue 17's command, as a reader of the README types it in a fresh clone."""
    root = Path(__file__).resolve().parents[1]
    monkeypatch.chdir(root)
    out = tmp_path / "r.csv"
    code, _, err = cli("lpn", "simulate", "jpeg-decoder", "--inputs", "examples/images/*.jpg",
                       "--out", str(out))
    rows = read_rows(out)
    assert code == 0, err
    assert len(rows) == len(list((root / "examples" / "images").glob("*.jpg"))) >= 8
    assert all(r["latency"] and not r["error"] for r in rows)
    # several sizes and qualities: the latencies differ and both stages bound some image
    assert len({r["latency"] for r in rows}) == len(rows)
    assert {r["bottleneck"] for r in rows} == {"entropy_decode", "idct_y"}


# ---------------------------------------------------------------------- nothing is lost
CRASHY = """
import dataclasses
import os
import signal
from pathlib import Path

from accelperf.lpn.library import LIBRARY


def build():
    \"\"\"block-pipeline whose Ψ kills its own process for {"crash": "always"} and, the
    first time only, for {"crash": {"marker": path}}: a worker that dies.\"\"\"
    model = LIBRARY["block-pipeline"]()
    plain = model.tokens_from_input

    def psi(given):
        if isinstance(given, dict) and "crash" in given:
            given = dict(given)
            how = given.pop("crash")
            marker = Path(how["marker"]) if isinstance(how, dict) else None
            if isinstance(how, dict) and "times" in how:   # crash the first `times` runs
                runs = len(marker.read_text()) if marker.exists() else 0
                marker.write_text("x" * (runs + 1))
                if runs < how["times"]:
                    os.kill(os.getpid(), signal.SIGKILL)
            elif how == "always" or (marker is not None and not marker.exists()):
                if marker is not None:
                    marker.touch()
                os.kill(os.getpid(), signal.SIGKILL)
        return plain(given)
    return dataclasses.replace(model, tokens_from_input=psi)
"""


def crashy(tmp_path):
    path = tmp_path / "crashy.py"
    path.write_text(CRASHY)
    marker = tmp_path / "crashed-once"
    inputs = [("a", {"blocks": 5, "nnz": 3}),
              ("once", {"blocks": 6, "nnz": 9, "crash": {"marker": str(marker)}}),
              ("always", {"blocks": 2, "nnz": 1, "crash": "always"}),
              ("b", {"blocks": 9, "nnz": 60})]
    return f"{path}:build", inputs, marker


def expected_rows(inputs):
    model = LIBRARY["block-pipeline"]()
    return {name: simulate(model, {k: v for k, v in given.items() if k != "crash"}).latency
            for name, given in inputs if given.get("crash") != "always"}


def test_a_dead_worker_costs_a_retry_and_a_twice_crashing_input_is_a_failed_row(tmp_path):
    from accelperf.lpn.batch import CRASHED
    spec, inputs, marker = crashy(tmp_path)
    result = simulate_many(spec, inputs, workers=2)
    rows = {r.name: r for r in result.rows}
    assert marker.exists()                                   # "once" did take one down
    assert {n: r.latency for n, r in rows.items() if r.ok} == expected_rows(inputs)
    assert [r.name for r in result.failures] == ["always"]
    assert rows["always"].error == CRASHED


def test_a_lost_dask_worker_costs_a_retry(tmp_path):
    distributed = pytest.importorskip("distributed", reason="Dask is optional: "
                                      "pip install 'accelperf[dask]'")
    import dask
    spec, inputs, marker = crashy(tmp_path)
    # Dask gives up on a task after allowed-failures + 1 lost workers: at the first, here.
    # Three workers die (the first task, then "always" in each of its two rounds alone) and
    # four are started, so one is alive throughout: a Nanny whose restarted worker dies
    # before reporting in closes for good, and with two workers the batch could be left
    # with none (issue 33 item 5: a run hung there).
    with dask.config.set({"distributed.scheduler.allowed-failures": 0}), \
            distributed.LocalCluster(n_workers=4, threads_per_worker=1, processes=True,
                                     dashboard_address=None) as cluster:
        result = simulate_many(spec, inputs, scheduler=cluster.scheduler_address)
    rows = {r.name: r for r in result.rows}
    assert marker.exists()
    assert {n: r.latency for n, r in rows.items() if r.ok} == expected_rows(inputs)
    assert [r.name for r in result.failures] == ["always"]
    assert "took its worker down each time Dask ran it, alone" in rows["always"].error


def test_dask_convicts_an_input_only_after_two_rounds_alone(tmp_path):
    # With allowed-failures 0 Dask gives up on a task at its first lost worker. "flaky"
    # takes its worker down in its first two runs: in its first task, and in its first
    # round alone (which a worker lost for another reason could also cause); the second
    # round alone runs it to the end, so it is a row, not a failure. Two workers die and
    # three are started, so one is alive throughout whatever the Nannies do.
    distributed = pytest.importorskip("distributed", reason="Dask is optional: "
                                      "pip install 'accelperf[dask]'")
    import dask
    spec, _, _ = crashy(tmp_path)
    runs = tmp_path / "flaky-runs"
    inputs = [("flaky", {"blocks": 4, "nnz": 2, "crash": {"marker": str(runs), "times": 2}})]
    with dask.config.set({"distributed.scheduler.allowed-failures": 0}), \
            distributed.LocalCluster(n_workers=3, threads_per_worker=1, processes=True,
                                     dashboard_address=None) as cluster:
        result = simulate_many(spec, inputs, scheduler=cluster.scheduler_address)
    assert not result.failures, result.failures
    assert {r.name: r.latency for r in result.rows} == expected_rows(inputs)
    assert len(runs.read_text()) == 3


def test_a_cluster_left_without_workers_is_an_error_not_a_hang(tmp_path, monkeypatch):
    """The scheduler's worker list is read while the batch waits: none left for
    WORKERLESS_SECONDS (0 here) stops the batch with one line, instead of sleeping."""
    distributed = pytest.importorskip("distributed", reason="Dask is optional: "
                                      "pip install 'accelperf[dask]'")
    from accelperf.lpn import batch
    monkeypatch.setattr(batch, "WORKERLESS_SECONDS", 0.0)
    with distributed.LocalCluster(n_workers=0, processes=False,
                                  dashboard_address=None) as cluster:
        with pytest.raises(ModelError, match="has had no worker for 0 s with 1 task"):
            simulate_many("block-pipeline", [("a", {"blocks": 2, "nnz": 1})],
                          scheduler=cluster.scheduler_address)


def many_inputs(folder: Path, n: int) -> list[Path]:
    folder.mkdir()
    paths = []
    for i in range(n):
        path = folder / f"in{i:05d}.json"
        path.write_text(json.dumps({"blocks": 3 + i % 17, "nnz": i % 50}))
        paths.append(path)
    return paths


def accelperf_command(*args) -> list[str]:
    return ACCELPERF + list(args)


def test_a_killed_client_then_resume_gives_every_input_exactly_once(tmp_path):
    """kill -9 of the command mid-batch keeps the rows it wrote; --resume runs the rest;
    the file ends with every input once, with a plain loop's latencies."""
    import signal
    import subprocess
    paths = many_inputs(tmp_path / "in", 1500)
    out = tmp_path / "r.csv"
    args = ["lpn", "simulate", "block-pipeline", "--inputs", str(tmp_path / "in"),
            "--out", str(out), "--workers", "2"]
    _, err = signal_when(args, rows_in(out, 50), signal.SIGKILL)
    assert "Traceback" not in err and "BrokenPipeError" not in err, err   # workers: quiet
    first = read_rows(out)
    assert 49 <= len(first) < len(paths), "the client was killed mid-batch"
    done = subprocess.run(accelperf_command(*args, "--resume"), capture_output=True,
                          text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    assert f"--resume: {len(first)} input(s) already in {out}" in done.stderr
    rows = read_rows(out)
    names = [r["name"] for r in rows]
    assert len(names) == len(set(names)) == len(paths)
    assert rows[:len(first)] == first                           # kept as they were
    model = LIBRARY["block-pipeline"]()
    for row in rows[::97]:
        given = json.loads(Path(row["name"]).read_text())
        assert int(row["latency"]) == simulate(model, given).latency


def test_parquet_rows_and_resume(cli, tmp_path):
    pq = pytest.importorskip("pyarrow.parquet", reason="Parquet needs pyarrow")
    paths = many_inputs(tmp_path / "in", 12)
    out = tmp_path / "r.parquet"
    code, _, err = cli("lpn", "simulate", "block-pipeline", "--input", *map(str, paths[:5]),
                       "--out", str(out), "--workers", "1")
    assert code == 0, err
    code, _, err = cli("lpn", "simulate", "block-pipeline", "--inputs", str(tmp_path / "in"),
                       "--out", str(out), "--workers", "2", "--resume")
    assert code == 0, err and "5 input(s) already in" in err
    table = pq.read_table(out).to_pylist()
    assert sorted(r["name"] for r in table) == sorted(map(str, paths))
    assert {r["model"] for r in table} == {"block-pipeline"}
    assert not (tmp_path / "r.parquet.rows.csv").exists()
    code, _, err = cli("lpn", "simulate", "block-pipeline", "--input", str(paths[0]),
                       "--out", str(out), "--workers", "1")          # afresh: one row
    assert code == 0 and [r["name"] for r in pq.read_table(out).to_pylist()] == [str(paths[0])]
    model = LIBRARY["block-pipeline"]()
    for r in table:
        assert r["latency"] == simulate(model, json.loads(Path(r["name"]).read_text())).latency


def _header_and_row(model="block-pipeline", name="x.json", provenance=""):
    return (provenance + "model,name,latency,commits,bottleneck,seconds,backend,error\n"
            f"{model},{name},10,4,idct,0.1,python,\n")


@pytest.mark.parametrize("content,words", [
    ("a,b,c\n1,2,3\n", "its columns are a, b, c, not a batch's"),
    (_header_and_row(), "it does not record what produced it"),
    (_header_and_row(model="jpeg-decoder", provenance="{mark}"), "its rows are of model "
                                                                 "'jpeg-decoder', not "
                                                                 "'block-pipeline'"),
    (_header_and_row() + "block-pipeline,y.json,12,4", "its last row is half-written"),
    (_header_and_row(provenance="{mark}") + "block-pipeline,y.json,12\n",
     "line 4 is unreadable"),
])
def test_resume_refuses_an_out_it_cannot_continue(cli, tmp_path, content, words):
    paths = many_inputs(tmp_path / "in", 3)
    out = tmp_path / "r.csv"
    args = ("lpn", "simulate", "block-pipeline", "--inputs", str(tmp_path / "in"),
            "--out", str(out))
    assert cli(*args, "--workers", "1")[0] == 0                 # a real provenance line
    content = content.replace("{mark}", out.read_text().splitlines()[0] + "\n")
    out.write_text(content)
    code, _, err = cli(*args, "--resume")
    assert code == 2 and words in err and len(err.strip().splitlines()) == 1, err
    assert "the rows in it are kept" in err and out.read_text() == content
    assert len(paths) == 3


def test_resume_with_everything_done_runs_nothing(cli, tmp_path):
    many_inputs(tmp_path / "in", 3)
    out = tmp_path / "r.csv"
    args = ("lpn", "simulate", "block-pipeline", "--inputs", str(tmp_path / "in"),
            "--out", str(out), "--workers", "1")
    assert cli(*args)[0] == 0
    before = out.read_text()
    code, stdout, err = cli(*args, "--resume")
    assert code == 0 and "3 input(s) already in" in err and out.read_text() == before


def _wait_for_port(port: int, process, seconds: float = 60) -> None:
    """Until something listens on ``port`` of this host (a fixed 3 s wait was longer than
    the scheduler takes to start, and might one day be shorter)."""
    import socket
    import time
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline and process.poll() is None:
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.05)
    raise AssertionError(f"nothing listens on port {port} after {seconds} s")


def test_a_scheduler_that_goes_away_is_one_line_and_the_rows_stay(tmp_path):
    """The scheduler killed mid-batch: exit 2, one line saying what to do, every row
    written so far still in --out."""
    pytest.importorskip("distributed", reason="Dask is optional: pip install 'accelperf[dask]'")
    import shutil
    import signal
    import subprocess
    import sys
    import time
    dask = shutil.which("dask", path=str(Path(sys.executable).parent))
    if dask is None:
        pytest.skip("the dask command is not installed")
    many_inputs(tmp_path / "in", 3000)
    port = 20000 + os.getpid() % 20000
    address = f"tcp://127.0.0.1:{port}"
    log = (tmp_path / "cluster.log").open("w")
    cluster = [subprocess.Popen([dask, "scheduler", "--host", "127.0.0.1", "--port",
                                 str(port), "--dashboard-address", ":0"], stdout=log, stderr=log)]
    out = tmp_path / "r.csv"
    try:
        _wait_for_port(port, cluster[0])
        cluster.append(subprocess.Popen([dask, "worker", address, "--nthreads", "1",
                                         "--dashboard-address", ":0"], stdout=log, stderr=log))
        client = subprocess.Popen(accelperf_command(
            "lpn", "simulate", "block-pipeline", "--inputs", str(tmp_path / "in"), "--out",
            str(out), "--scheduler", address), stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE, text=True)
        while client.poll() is None and (not out.exists() or
                                         out.read_bytes().count(b"\n") < 50):
            time.sleep(0.05)
        cluster[0].send_signal(signal.SIGKILL)
        _, err = client.communicate(timeout=300)
    finally:
        for p in cluster:
            if p.poll() is None:
                p.kill()
    assert client.returncode == 2, err
    assert len(err.strip().splitlines()) == 1
    assert f"scheduler {address} went away after" in err and "--resume" in err
    rows = read_rows(out)
    assert len(rows) >= 49 and all(r["latency"] for r in rows)


@pytest.mark.parametrize("workers", ["1", "2"])
def test_ctrl_c_stops_the_batch_keeps_its_rows_and_resume_finishes_it(tmp_path, workers):
    import signal
    import subprocess
    paths = many_inputs(tmp_path / "in", 1500)
    out = tmp_path / "r.csv"
    args = ["lpn", "simulate", "block-pipeline", "--inputs", str(tmp_path / "in"),
            "--out", str(out), "--workers", workers]
    status, err = signal_when(args, rows_in(out, 30), signal.SIGINT)
    assert status == 130, err
    assert "interrupted after" in err and "run again with --resume" in err
    kept = read_rows(out)
    assert 29 <= len(kept) < len(paths) and all(r["latency"] for r in kept)
    done = subprocess.run(accelperf_command(*args, "--resume"), capture_output=True,
                          text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    names = [r["name"] for r in read_rows(out)]
    assert len(names) == len(set(names)) == len(paths)
