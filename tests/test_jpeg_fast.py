"""The fast JPEG readers against the reference scanner (issue 22): the C decoder (what
read_jpeg uses) and libjpeg's coefficients (measured, not used) give the same counts and
block ends on every shipped image and on generated images of many sizes, qualities,
samplings and restart intervals; the C decoder gives the same errors on bad and damaged
files, word for word."""

import io
import itertools
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from accelperf.errors import ModelError
from accelperf.lpn import simulate
from accelperf.lpn.inputs import jpeg_dct, jpeg_native, read_jpeg
from accelperf.lpn.inputs.jpeg import SAMPLES, scan_jpeg
from accelperf.lpn.library import LIBRARY
from test_jpeg_decoder import DAMAGE_SOURCES, _bad_files, _encode, _photo

ROOT = Path(__file__).resolve().parents[1]
SHIPPED = sorted(SAMPLES.glob("*.jpg")) + sorted((ROOT / "examples" / "images").glob("*.jpg"))


def native(path: Path, data: bytes):
    if not jpeg_native.available():
        pytest.skip("no C compiler for the C decoder")
    return jpeg_native.scan_jpeg_native(data, str(path))


def libjpeg(path: Path, data: bytes):
    if not jpeg_dct.available():
        pytest.skip("jpeglib is not installed (pip install 'accelperf[fast]')")
    return jpeg_dct.read_jpeg_dct(path, data)


READERS = [native, libjpeg]


def same_blocks(fast, ref):
    assert (fast.name, fast.width, fast.height, fast.sampling, fast.size) == \
        (ref.name, ref.width, ref.height, ref.sampling, ref.size)
    assert list(fast.symbols) == list(ref.symbols)
    assert list(fast.ends) == list(ref.ends)


@pytest.mark.parametrize("reader", READERS)
@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: p.name)
def test_every_shipped_image(reader, path):
    data = path.read_bytes()
    same_blocks(reader(path, data), scan_jpeg(data, str(path)))


def generated():
    """Sizes with and without partial MCUs, qualities, 4:4:4 / 4:2:2 / 4:2:0 / grey,
    restart intervals of 1 and 3 MCUs and of one MCU row, optimised Huffman tables."""
    photo = _photo((160, 130))
    cases = itertools.product([(8, 8), (17, 9), (33, 47), (100, 90), (160, 130)],
                              [10, 50, 95], ["4:4:4", "4:2:2", "4:2:0", "grey"],
                              [{}, {"restart_marker_blocks": 1}, {"restart_marker_blocks": 3},
                               {"restart_marker_rows": 1}], [False, True])
    for (w, h), quality, sampling, restart, optimize in cases:
        img = photo.resize((w, h))
        options = dict(quality=quality, optimize=optimize, **restart)
        if sampling == "grey":
            img = img.convert("L")
        else:
            options["subsampling"] = sampling
        yield f"{w}x{h}-q{quality}-{sampling}-{restart}-{optimize}", img, options


def test_generated_images(tmp_path):
    checked = restarts = 0
    for label, img, options in generated():
        try:
            data = _encode(img, **options)
        except (TypeError, ValueError):          # an older Pillow: no restart markers
            continue
        path = tmp_path / "g.jpg"
        path.write_bytes(data)
        ref = scan_jpeg(data, str(path))
        for reader in READERS:
            try:
                same_blocks(reader(path, data), ref)
            except pytest.skip.Exception:
                continue
            except AssertionError as exc:
                raise AssertionError(f"{reader.__name__} on {label}: {exc}") from None
        checked += 1
        restarts += b"\xff\xdd" in data
    assert checked >= 240 and restarts >= 90


@pytest.mark.parametrize("reader", [native])
def test_bad_files_give_the_reference_errors(reader, tmp_path):
    for name, (path, words) in _bad_files(tmp_path).items():
        data = path.read_bytes()
        with pytest.raises(ModelError) as ref:
            scan_jpeg(data, str(path))
        with pytest.raises(ModelError) as fast:
            reader(path, data)
        assert str(fast.value) == str(ref.value) and words in str(fast.value), name


@settings(max_examples=150, deadline=None)
@given(edits=st.lists(st.tuples(st.integers(0, 10**6), st.integers(0, 255)), min_size=1,
                      max_size=4),
       cut=st.one_of(st.none(), st.integers(0, 10**6)),
       source=st.sampled_from(DAMAGE_SOURCES))
def test_damaged_files_give_the_reference_answer(edits, cut, source, tmp_path_factory):
    """Bytes overwritten anywhere, the file cut anywhere: the C decoder gives the
    reference's blocks or raises the reference's error, word for word. (libjpeg patches
    over corrupt data, so its reader is held to well-formed files only.)"""
    data = bytearray(source)
    for at, value in edits:
        data[at % len(data)] = value
    if cut is not None:
        data = data[:cut % len(data)]
    data = bytes(data)
    path = tmp_path_factory.mktemp("damaged") / "d.jpg"
    path.write_bytes(data)
    try:
        expected = scan_jpeg(data, str(path))
    except ModelError as exc:
        expected = str(exc)
    for reader in [native]:
        try:
            got = reader(path, data)
        except pytest.skip.Exception:
            continue
        except ModelError as exc:
            got = str(exc)
        if isinstance(expected, str):
            assert got == expected, reader.__name__
        else:
            same_blocks(got, expected)


def test_read_jpeg_tokens_reach_both_engines_alike():
    """The fast reader's counts come as an array (a TokenArray in the marking): the
    compiled engine copies it, the Python engine sees tuples; the same result."""
    model = LIBRARY["jpeg-decoder"]()
    blocks = read_jpeg(ROOT / "examples" / "images" / "hopper_256x192_q90_420.jpg")
    marking = model.marking(blocks)
    reference = model.marking(scan_jpeg((ROOT / "examples" / "images" /
                                         "hopper_256x192_q90_420.jpg").read_bytes()))
    assert list(marking.tokens[model.start]) == list(reference.tokens[model.start])
    python = simulate(model, marking)
    assert python.latency == simulate(model, reference).latency
    from accelperf.lpn.compiled import compiler_missing
    if compiler_missing() is None:
        compiled = simulate(model, marking, backend="compiled")
        assert (compiled.latency, compiled.total_commits) == \
            (python.latency, python.total_commits)


def test_an_array_of_bad_counts_is_named_like_a_list():
    from accelperf.lpn.inputs import JpegBlocks
    model = LIBRARY["jpeg-decoder"]()

    def blocks(counts):
        return JpegBlocks("x.jpg", 16, 16, ((2, 2), (1, 1), (1, 1)), np.array(counts))
    with pytest.raises(ModelError, match=r"input\[5\] \(AC symbols of a block\) = 64 is invalid"):
        model.marking(blocks([1, 1, 1, 1, 1, 64]))
    with pytest.raises(ModelError, match="a list of 3 blocks is invalid"):
        model.marking(blocks([1, 2, 3]))
