"""Batch simulation: one row per input, failures kept per input, the same rows from one
process, a local pool and a Dask cluster; the CLI's batch options."""

import csv
from pathlib import Path
import json

import pytest

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
    rows = list(csv.DictReader(out.open()))
    assert [r["name"].rsplit("/", 1)[-1] for r in rows] == \
        ["bad.json", "dense.json", "image.json", "small.json"]
    assert "= 99 is invalid" in rows[0]["error"] and rows[1]["latency"] == str(
        simulate(LIBRARY["block-pipeline"](), INPUTS[1][1]).latency)
    assert f"wrote {out}" in err


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
                                                "or .json file"),
    (["--inputs", "nowhere/*.json"], "--inputs = 'nowhere/*.json' is invalid: no files"),
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
    rows = {Path(r["name"]).name: r for r in csv.DictReader(out.open())}
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
    rows = list(csv.DictReader(out.open()))
    assert code == 0, err
    assert len(rows) == len(list((root / "examples" / "images").glob("*.jpg"))) >= 8
    assert all(r["latency"] and not r["error"] for r in rows)
    # several sizes and qualities: the latencies differ and both stages bound some image
    assert len({r["latency"] for r in rows}) == len(rows)
    assert {r["bottleneck"] for r in rows} == {"entropy_decode", "idct_y"}
