"""`logca curve ... --out band.png` writes the figure and still prints the band's summary
(issue 27: the README's example shows the g1 and g_A/2 lines beside the written file)."""

import re


def test_curve_with_out_prints_the_band_summary(cli, tmp_path):
    out = tmp_path / "band.png"
    code, stdout, err = cli("logca", "curve", "--preset", "ultrasparc-t2", "--kernel", "aes",
                            "--L", "1500±20%", "--o", "lognormal(2.9e4, 0.2)", "--draws", "300",
                            "--out", str(out))
    assert code == 0, err
    assert out.stat().st_size > 1000
    assert f"wrote {out}" in err
    lines = stdout.strip().splitlines()
    assert [line.split(":")[0] for line in lines] == ["g1", "g_A/2"]
    g1 = re.match(r"g1: median (\S+ \S+), 90% in (\S+ \S+)\.\.(\S+ \S+) \(exists in 100%", lines[0])
    assert g1, lines[0]


def test_curve_with_out_and_no_band_prints_nothing(cli, tmp_path):
    out = tmp_path / "curve.png"
    code, stdout, _ = cli("logca", "curve", "--preset", "ultrasparc-t2", "--kernel", "aes",
                          "--out", str(out))
    assert code == 0 and stdout == ""
