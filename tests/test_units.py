import pytest

from accelperf import ModelError
from accelperf.units import format_size, parse_frequency, parse_size, powers_of_two


@pytest.mark.parametrize("text, expected", [
    ("16B", 16), ("16", 16), ("2KB", 2000), ("2KiB", 2048), ("1.5MB", 1.5e6),
    ("32MiB", 2**25), ("1GiB", 2**30), ("3GB", 3e9), (4096, 4096), ("4 KiB", 4096),
])
def test_parse_size(text, expected):
    assert parse_size(text) == expected


@pytest.mark.parametrize("bad", ["", "abc", "12XB", "-4KB", "0B", "1e400B"])
def test_parse_size_rejects_with_named_parameter(bad):
    with pytest.raises(ModelError, match="--from"):
        parse_size(bad, name="--from")


@pytest.mark.parametrize("text, hz", [("3.4GHz", 3.4e9), ("2270MHz", 2.27e9), ("3.4e9", 3.4e9),
                                      (1e9, 1e9), ("100kHz", 1e5)])
def test_parse_frequency(text, hz):
    assert parse_frequency(text) == pytest.approx(hz)


@pytest.mark.parametrize("bad", ["fast", "3.4THz", "0GHz"])
def test_parse_frequency_rejects(bad):
    with pytest.raises(ModelError, match="frequency"):
        parse_frequency(bad)


@pytest.mark.parametrize("text, taken", [("250", None), (250, None), ("99999", None),
                                         ("250Hz", 250.0), ("32.768kHz", 32768.0),
                                         ("1e5", 1e5), ("250e6", 250e6)])
def test_a_bare_number_too_small_for_a_clock_asks_for_its_unit(text, taken):
    # An FPGA user's `--frequency 250` meant 250 MHz and got a clock 10^6 times too slow.
    if taken is None:
        with pytest.raises(ModelError, match=r"^--frequency = \S+ is invalid: a bare number "
                                             r"is hertz.*\((250|99999)MHz, \1GHz\)") as raised:
            parse_frequency(text, "--frequency")
        assert len(str(raised.value).splitlines()) == 1
    else:
        assert parse_frequency(text, "--frequency") == taken


def test_paper_sweep_is_22_powers_of_two():
    g = powers_of_two(16, parse_size("32MiB"))
    assert len(g) == 22 and g[0] == 16 and g[-1] == 2**25


def test_format_size_prints_binary_units_only():
    assert format_size(2048) == "2 KiB"
    assert format_size(2**25) == "32 MiB"
    assert format_size(600e3) == "586 KiB"              # the MAP-C's 0.6 MB block RAM
    assert format_size(3e9) == "2.79 GiB"
    assert format_size(16) == "16 B"
    assert format_size(1023.4 * 1024) == "1023 KiB"     # not "1.02e+03 KiB"
    assert format_size(1000) == "1000 B" and format_size(999.4) == "999 B"
    with pytest.raises(TypeError):                       # no second, decimal spelling
        format_size(3e9, binary=False)


def test_a_crossing_below_one_byte_reads_as_such_not_as_1e_minus_19():
    # a bootstrap draw with no overhead crosses at ~1e-19 B: zero in all but print
    from accelperf.cli.common import crossing_size, size_range
    assert size_range(2.14e-19, 3.15) == "< 1 B..3.15 B"
    assert size_range(0.999, 2048) == "< 1 B..2 KiB"
    assert crossing_size(1.0) == "1 B" and crossing_size(5.6034) == "5.6 B"
