"""jpeg-decoder (the OSDI'24 decoder's LPN) and its Ψ from real JPEG files, checked against
the numbers the authors' own simulator gives on their test images."""

from __future__ import annotations

import io
import json
import math
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from accelperf.errors import ModelError
from accelperf.lpn import simulate
from accelperf.lpn.inputs import JpegSample, read_jpeg, scan_jpeg
from accelperf.lpn.inputs.jpeg import SAMPLES, sample_names, symbols_digest
from accelperf.lpn.library import build
from authors import authors_file

AUTHORS = Path(__file__).parent / "data" / "authors"
AUTHORS_RECORD = json.loads((AUTHORS / "jpeg_420.json").read_text("utf-8"))
RECORDS = {r["name"]: r for r in AUTHORS_RECORD["images"]}
# Images small enough for the suite: their per-block counts are recorded, so the cycle
# tests run anywhere; Ψ is checked on the files themselves when the authors' repository
# is on this machine (they are the authors' data, never copied into ours).
SMALL = sorted(name for name, r in RECORDS.items() if "symbols" in r)


def authors_image(name: str, tmp_path: Path) -> Path:
    raw = authors_file(f"{AUTHORS_RECORD['repository_folder']}/{name}",
                       RECORDS[name]["sha256"])
    path = tmp_path / name
    path.write_bytes(raw)
    return path
# The authors' driver (lpn_def/cpp/jpeg_bit_buffer.h) reports end of data as soon as its
# read pointer enters the scan's last byte and then reads zero bits: a symbol coded in
# that byte is misread. In their test set this changes 9.jpg's last block (a Cr block:
# zero bits decode as EOB, so 1 symbol instead of 2), and no cycle count.
DRIVER_LAST_BYTE = {"9.jpg"}
DAMAGE_SOURCES = [(SAMPLES / name).read_bytes() for name in sample_names()[:2]]


@pytest.fixture(scope="module")
def model():
    return build("jpeg-decoder")


def _pil():
    return pytest.importorskip("PIL.Image", reason="Pillow writes the test JPEGs")


def _photo(size=(64, 48)):
    from matplotlib import cbook
    Image = _pil()
    with Image.open(cbook.get_sample_data("grace_hopper.jpg", asfileobj=False)) as img:
        return img.convert("RGB").resize(size)


def _encode(img, **options) -> bytes:
    buf = io.BytesIO()
    img.save(buf, "JPEG", **options)
    return buf.getvalue()


# ---------------------------------------------------------------- against the authors
def test_recorded_counts_are_the_authors():
    assert len(SMALL) >= 8
    for name in SMALL:
        rec = RECORDS[name]
        assert symbols_digest(tuple(rec["symbols"])) == rec["counts_sha256"]
        assert rec["symbols"][-6:] == rec["last_mcu_counts"]


@pytest.mark.parametrize("name", SMALL)
def test_psi_gives_the_authors_block_counts(name, tmp_path):
    rec = RECORDS[name]
    blocks = read_jpeg(authors_image(name, tmp_path))
    assert (blocks.width, blocks.height, blocks.chroma) == (rec["width"], rec["height"], "4:2:0")
    assert blocks.blocks == rec["blocks"] == 6 * math.ceil(rec["width"] / 16) * \
        math.ceil(rec["height"] / 16)
    if name in DRIVER_LAST_BYTE:
        assert blocks.digest() != rec["counts_sha256"]
        patched = tuple(blocks.symbols[:-6]) + tuple(rec["last_mcu_counts"])
        assert symbols_digest(patched) == rec["counts_sha256"]
    else:
        assert blocks.digest() == rec["counts_sha256"]
        assert list(blocks.symbols[-6:]) == rec["last_mcu_counts"]


@pytest.mark.parametrize("name", SMALL)
def test_simulation_gives_the_authors_cycles(model, name):
    assert simulate(model, RECORDS[name]["symbols"]).latency == RECORDS[name]["cycles"]


def test_small_jpg_known_numbers(model, cli, tmp_path):
    path = authors_image("small.jpg", tmp_path)
    assert tuple(read_jpeg(path).symbols) == (1, 1, 1, 1, 16, 22)
    code, out, _ = cli("lpn", "simulate", "jpeg-decoder", "--input", str(path), "--json")
    result = json.loads(out)
    assert code == 0 and result["latency"] == 665 == RECORDS["small.jpg"]["cycles"]
    assert result["commits"]["entropy_decode"] == 6 and result["commits"]["colour_convert"] == 4
    # the same blocks as a JSON list of counts
    code, out, _ = cli("lpn", "simulate", "jpeg-decoder", "--input", "[1,1,1,1,16,22]", "--json")
    assert code == 0 and json.loads(out)["latency"] == 665


def test_every_unit_is_a_single_server(model):
    assert [t.name for t in model.transitions] == [
        "entropy_decode", "idct_y", "idct_cb", "idct_cr", "colour_convert"]
    assert all(t.concurrency == 1 for t in model.transitions)


def test_entropy_delay_is_three_cycles_per_symbol(model):
    """One more AC symbol in a block costs 3 cycles when the entropy decoder is the
    bottleneck (every block dense), nothing when the back end is (every block sparse)."""
    dense = [60] * 60
    busy = simulate(model, dense).latency
    assert simulate(model, dense[:-6] + [60] * 5 + [61]).latency == busy + 3
    sparse = [2] * 60
    idle = simulate(model, sparse).latency
    assert simulate(model, sparse[:-6] + [3] + [2] * 5).latency == idle


# ---------------------------------------------------------------- what Ψ counts
def test_flat_blocks_cost_one_symbol_each():
    Image = _pil()
    blocks = scan_jpeg(_encode(Image.new("RGB", (32, 16), (90, 120, 200)), quality=90,
                               subsampling="4:2:0"), "flat")
    assert blocks.blocks == 12 and set(blocks.symbols) == {1}       # only the EOB


def test_restart_markers_do_not_change_the_counts():
    img = _photo()
    plain = scan_jpeg(_encode(img, quality=85, subsampling="4:2:0"), "plain")
    try:
        data = _encode(img, quality=85, subsampling="4:2:0", restart_marker_blocks=2)
    except TypeError:
        pytest.skip("this Pillow cannot write restart markers")
    assert b"\xff\xdd" in data and b"\xff\xd0" in data
    assert scan_jpeg(data, "restarts").symbols == plain.symbols


def test_444_and_grey_are_read_but_refused_by_the_model(model):
    img = _photo()
    full = scan_jpeg(_encode(img, quality=80, subsampling="4:4:4"), "full")
    assert full.chroma == "4:4:4" and full.blocks == 3 * 8 * 6
    grey = scan_jpeg(_encode(img.convert("L"), quality=80), "grey")
    assert grey.chroma == "grey" and grey.blocks == 8 * 6
    for blocks in (full, grey):
        with pytest.raises(ModelError, match="4:2:0 JPEGs only"):
            simulate(model, blocks)


# ---------------------------------------------------------------- the shipped samples
def test_samples_parse_and_the_default_input_is_one():
    names = sample_names()
    assert any("_420" in n for n in names) and any("_444" in n for n in names)
    for name in names:
        blocks = JpegSample(name).read()
        assert blocks.chroma == ("4:2:0" if "_420" in name else "4:4:4")
        per_mcu, side = (6, 16) if blocks.chroma == "4:2:0" else (3, 8)
        assert blocks.blocks == per_mcu * math.ceil(blocks.width / side) * \
            math.ceil(blocks.height / side)
    default = build("jpeg-decoder").default_input
    assert isinstance(default, JpegSample) and default.name in names


def test_higher_quality_costs_more_symbols_and_cycles(model):
    low = JpegSample("hopper_256x192_q50_420.jpg").read()
    high = JpegSample("hopper_256x192_q95_420.jpg").read()
    assert low.blocks == high.blocks and sum(high.symbols) > 2 * sum(low.symbols)
    r_low, r_high = simulate(model, low), simulate(model, high)
    assert r_high.latency > r_low.latency
    # Fig. 4: sparse blocks leave the back end as the bottleneck, dense ones the entropy
    # decoder.
    assert r_low.bottleneck != "entropy_decode" and r_high.bottleneck == "entropy_decode"


def test_show_draws_the_decoder(cli, tmp_path):
    svg = tmp_path / "jpeg.svg"
    assert cli("lpn", "show", "jpeg-decoder", "--out", str(svg))[0] == 0
    text = svg.read_text()
    for name in ("entropy_decode", "idct_y", "idct_cb", "idct_cr", "colour_convert"):
        assert name in text


# ---------------------------------------------------------------- bad input
def _bad_files(tmp_path) -> dict:
    img = _photo()
    good = _encode(img, quality=80, subsampling="4:2:0")
    sof = good.index(b"\xff\xc0")
    files = {
        "empty.jpg": (b"", "the file is empty"),
        "truncated.jpg": (good[:len(good) // 2], "truncated"),
        "png.jpg": (None, "it is a PNG image, not a JPEG"),
        "progressive.jpg": (_encode(img, quality=80, progressive=True), "progressive JPEG"),
        "arithmetic.jpg": (good[:sof + 1] + b"\xc9" + good[sof + 2:], "arithmetic-coded"),
        "cmyk.jpg": (_encode(img.convert("CMYK"), quality=80), "4 colour components"),
        "text.jpg": (b"hello, not an image\n", "does not start with the JPEG"),
    }
    paths = {}
    for name, (data, words) in files.items():
        path = tmp_path / name
        if data is None:
            img.save(path, "PNG")
        else:
            path.write_bytes(data)
        paths[name] = (path, words)
    return paths


def test_bad_files_one_line_exit_2(cli, tmp_path):
    for name, (path, words) in _bad_files(tmp_path).items():
        code, out, err = cli("lpn", "simulate", "jpeg-decoder", "--input", str(path))
        assert code == 2, name
        assert words in err and str(path) in err and len(err.strip().splitlines()) == 1, err
        with pytest.raises(ModelError, match=words):
            read_jpeg(path)


def test_444_sample_one_line_exit_2(cli):
    from accelperf.lpn.inputs.jpeg import sample_path
    code, _, err = cli("lpn", "simulate", "jpeg-decoder", "--input",
                       str(sample_path("hopper_128x96_q75_444.jpg")))
    assert code == 2 and "it is 4:4:4" in err and len(err.strip().splitlines()) == 1


@pytest.mark.parametrize("text, words", [
    ("[1, 2, 3]", "MCUs of 6 blocks"),
    ("[1, 1, 1, 1, 1, 64]", "an integer 1..63"),
    ("[1, 1, 1, 1, 1, 0]", "an integer 1..63"),
    ("[]", "non-empty JSON list"),
    ('{"blocks": 6}', "non-empty JSON list"),
])
def test_bad_count_lists(cli, text, words):
    code, _, err = cli("lpn", "simulate", "jpeg-decoder", "--input", text)
    assert code == 2 and words in err and len(err.strip().splitlines()) == 1


def test_missing_file_is_one_line(tmp_path):
    with pytest.raises(ModelError, match="readable JPEG file"):
        read_jpeg(tmp_path / "nope.jpg")


@settings(max_examples=300, deadline=None)
@given(edits=st.lists(st.tuples(st.integers(0, 10**6), st.integers(0, 255)), min_size=1,
                      max_size=4),
       cut=st.one_of(st.none(), st.integers(0, 10**6)),
       source=st.sampled_from(DAMAGE_SOURCES))
def test_damaged_files_give_blocks_or_a_model_error(edits, cut, source):
    """Any damage — bytes overwritten anywhere (headers, tables, scan), the file cut
    anywhere — gives either blocks or one ModelError, never another exception."""
    data = bytearray(source)
    for at, value in edits:
        data[at % len(data)] = value
    if cut is not None:
        data = data[:cut % len(data)]
    try:
        blocks = scan_jpeg(bytes(data), "damaged")
    except ModelError as exc:
        assert "\n" not in str(exc)
    else:
        assert all(1 <= s <= 63 for s in blocks.symbols)


UNIFORM = json.loads((AUTHORS / "jpeg_uniform.json").read_text("utf-8"))["runs"]


@pytest.mark.parametrize("run", UNIFORM, ids=lambda r: f"{r['symbols']}x{r['blocks']}")
def test_uniform_blocks_match_the_authors(model, run):
    assert simulate(model, [run["symbols"]] * run["blocks"]).latency == run["cycles"]


@pytest.mark.parametrize("symbols", [1, 10, 26, 27, 30, 45, 63])
def test_steady_state_against_fig4(model, symbols):
    """Fig. 4's interface charges max(6·(3s + 6), 509) cycles per MCU. The entropy term is
    the model's exactly; when the back end limits, the released model (and so this one)
    takes 526 cycles per MCU, not 509."""
    per_mcu = (simulate(model, [symbols] * 1200).latency -
               simulate(model, [symbols] * 600).latency) / 100
    assert per_mcu == max(6 * (3 * symbols + 6), 526)
