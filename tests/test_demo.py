"""`accelperf demo`, run once for this file (a module fixture: 50 s, a third of it `openssl
speed`), and what each of its sections must show. The sections' own tests used to build
their section again in a report of their own (the proved bounds 6 s, the explorer, the
answers, the hierarchy fit); they read the demo's report instead, which is the one users
get. Its GPU section's fits are shared with tests/test_logca_select.py (tests/shared_fits.py).
"""

import json

import pytest

from accelperf.logca import preset
from shared_fits import reusing_fits

MiB = 2 ** 20


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    """(the report's folder, what the progress line said), from the demo run in-process
    as `accelperf demo --out DIR`."""
    import accelperf.cli.app as app
    from accelperf.cli import main
    said = []
    out_dir = tmp_path_factory.mktemp("demo") / "report"
    with pytest.MonkeyPatch.context() as mp, reusing_fits():
        mp.setattr(app, "progress_run", lambda total, label, work: work(said.append))
        code = main(["demo", "--out", str(out_dir)])
    assert code == 0
    return out_dir, said


def test_demo_writes_report(demo):
    out_dir, said = demo
    # The progress line names every section and what is being measured on this machine.
    assert "LogCA: the ISCA'17 presets" in said
    assert any(s.startswith("measuring this machine with openssl speed: aes") for s in said)
    assert any(s.startswith("probing this machine's caches and memory: L1") for s in said)
    index = (out_dir / "index.html").read_text()
    assert "LogCA" in index and "figures/logca-aes.svg" in index
    assert "logca-case-study-crypto.svg" in index and "logca-case-study-gpu.svg" in index
    assert "logca-regions-ultrasparc-t2.svg" in index
    assert "density-src-map-c.svg" in index and "density-this-machine.svg" in index
    assert "LogCA fitted to this machine" in index
    assert "lpn-jpeg-decoder.svg" in index
    assert (out_dir / "figures" / "lpn-jpeg-decoder.svg").exists()
    data = json.loads((out_dir / "data" / "logca-presets.json").read_text())
    assert data["ultrasparc-t2/aes"]["g1"]["value"] == pytest.approx(337.486, rel=1e-5)
    assert (out_dir / "figures" / "logca-aes.png").stat().st_size > 1000


def test_demo_section_shows_both_bounds_with_witnesses_beside_random_inputs(demo):
    out_dir, _ = demo
    index = (out_dir / "index.html").read_text()
    assert "lpn-verify-jpeg18.svg" in index and "proved bounds" in index
    data = json.loads((out_dir / "data" / "lpn-verify-jpeg18.json").read_text())
    assert data["min"]["bound"] == data["min"]["simulated"] == 1717
    assert data["max"]["bound"] == data["max"]["simulated"] == 3836
    assert len(data["random"]) == 300
    assert 1717 <= min(data["random"]) and max(data["random"]) <= 3836
    assert (out_dir / "figures" / "lpn-verify-jpeg18.png").stat().st_size > 1000


def test_demo_report_links_the_explorer(demo):
    from accelperf.explore import MAX_PAGE_BYTES
    from test_explore_cli import page_data
    out_dir, _ = demo
    index = (out_dir / "index.html").read_text()
    assert '<a href="explorer.html">Open the interactive explorer</a>' in index
    page = (out_dir / "explorer.html").read_text()
    assert len(page.encode()) < MAX_PAGE_BYTES
    # the size the report states is the page's (it said "about 5 MB" of a 0.97 MB page)
    assert f"one file of {len(page.encode()) / 1e6:.2g} MB" in index
    data = page_data(page)
    assert data["lpn"]["model"] == "jpeg-decoder" and data["lpn"]["frequency_hz"] == 75e6
    assert len(data["logca"]["models"]) == 4 and data["density"]["algorithm"] == "matmul"


def test_demo_answers_section(demo):
    out_dir, _ = demo
    index = (out_dir / "index.html").read_text()
    assert "logca advise, several designs ranked per size" in index
    assert "figures/logca-uncertainty-band.svg" in index and "90% band" in \
        (out_dir / "figures" / "logca-uncertainty-band.svg").read_text()
    data = json.loads((out_dir / "data" / "logca-advise.json").read_text())
    assert [a["model"] for a in data["1024"]][0] == "sparc-t4-instr/aes"
    assert data["1024"][0]["speedup"] == pytest.approx(
        float(preset("sparc-t4-instr", "aes").speedup(1024)))


def test_demo_section_fits_the_shipped_full_range_dataset(demo):
    """The shipped offload (16 B..128 MiB, 4x this machine's L3) and probed layers: the
    hierarchy is chosen, g1 lands within 5% of the measured crossing (issue 24's target),
    and the report shows both curves beside the measurements."""
    out_dir, _ = demo
    index = (out_dir / "index.html").read_text()
    assert "figures/logca-hierarchy-aes-offload.svg" in index
    data = json.loads((out_dir / "data" / "logca-hierarchy-aes-offload.json").read_text())
    assert data["chosen"] == "hierarchical"
    assert data["hierarchical"]["aic"] < data["plain"]["aic"] - 2
    assert data["error"]["max"] < data["plain"]["error"]["max"] / 5
    assert data["g1"]["model"] == pytest.approx(data["g1"]["measured"], rel=0.05)
    assert data["error"]["mean"] <= 0.015                 # issue 24's targets: mean 1.5%,
    assert data["error"]["max"] <= 0.03                   # max 3% (2.73% measured)
    sizes = [r["granularity"] for r in data["error"]["per_granularity"]]
    assert sizes[0] == 16 and sizes[-1] == 4 * 32 * MiB
    # the fit's warnings about its own data are read for the reader, not left bare
    assert any(w.startswith("check the measurement") for w in data["warnings"])
    assert "notes are the fit&#x27;s sanity checks" in index or \
        "notes are the fit's sanity checks" in index


def test_demo_gpu_section_names_the_fit_its_notes_are_of(demo):
    """The shipped H200 kernels' table (training halves) and the GEMM fitted on all sizes;
    the notes under the curve say which fit they explain (a new user read them as the
    table's, whose terms differ)."""
    out_dir, said = demo
    index = (out_dir / "index.html").read_text()
    section = index.split("Will my GPU pay off? Real offloads to an NVIDIA H200</h2>")[1]
    section = section.split("</section>")[0]
    assert all(f"<td class=\"words\">gpu-{k}</td>" in section for k in ("gemm", "scale", "sort"))
    assert 'src="figures/gpu-gemm-fit.svg"' in section
    assert 'src="figures/gpu-gemm-regions.svg"' in section
    assert "Why each term was kept or left out, fp32 GEMM fitted on all 15 sizes" in section
    assert "fitting gpu-gemm on all sizes (with the jackknife for g1)" in said
