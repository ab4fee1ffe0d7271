"""An option the command has no use for in the mode asked is refused, never dropped.

Each case was found accepted and silently ignored (exit 0, the output the same as without
it): the user believed a number that did not carry their option. Each is now one line that
names the option and what to do instead, exit status 2, before any fit or extraction.
"""

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
GEMM = str(ROOT / "examples" / "measurements" / "gpu-h200" / "gpu-gemm.csv")
LAYERS = str(ROOT / "examples" / "measurements" / "gpu-h200" / "host-layers.toml")
T4 = ["--preset", "sparc-t4-engine", "--kernel", "aes"]

CASES = [
    (["logca", "fit", GEMM, "--hierarchy", LAYERS, "--frequency", "2GHz"],
     "--frequency = 2GHz is not used with --hierarchy without --select"),
    (["logca", "fit", GEMM, "--hierarchy", LAYERS, "--bootstrap", "5000"],
     "--bootstrap = 5000 is not used with --hierarchy without --select"),
    (["logca", "fit", GEMM, "--hierarchy", LAYERS, "--cv", "3"],
     "--cv = 3 is not offered with --hierarchy alone"),
    (["logca", "curve", *T4, "--draws", "5"],
     "--draws = 5 is not used with this curve: no parameter is uncertain"),
    (["logca", "curve", *T4, "--seed", "3"], "--seed = 3 is not used"),
    (["logca", "curve", "--preset", "sparc-t4-engine", "--preset", "sparc-t3", "--kernel",
      "aes", "--name", "X"], "two curves are named 'X'"),
    (["logca", "curve", *T4, "--preset", "sparc-t4-engine"],
     "two curves are named 'sparc-t4-engine/aes'"),
    (["logca", "bounds", *T4, "--from", "1KiB", "--to", "2KiB", "--json"],
     "--from = 1KiB is not used with bounds without --out"),
    (["logca", "bounds", "--hierarchy", LAYERS, "--data", GEMM, "--to", "2KiB"],
     "--to = 2KiB is not used with --data"),
    (["logca", "design", *T4, "--target", "g1<=1KiB", "--points", "5"],
     "--points = 5 is not used with design without --pair"),
    (["explore", "--model", "none", "--hierarchy", "none", "--kernel", "sha256", "--out",
      "{tmp}/e.html"], "--kernel needs --preset"),
    (["explore", "--model", "none", "--hierarchy", "none", "--fit", GEMM, "--name", "MINE",
      "--out", "{tmp}/e.html"], "--name = MINE is not used with --fit alone"),
    (["explore", "--model", "none", "--hierarchy", "none", "--lpn-frequency", "1GHz",
      "--out", "{tmp}/e.html"], "--lpn-frequency = 1GHz is not used with --model none"),
    (["explore", "--model", "none", "--hierarchy", "none", "--algorithm", "dot", "--out",
      "{tmp}/e.html"], "--algorithm = dot is not used with --hierarchy none"),
    (["measure", "gpu", "--resident", "--pageable", "--device", "cpu", "--out",
      "{tmp}/x.csv"], "--pageable is not used with --resident"),
    (["density", "bound", "--algorithm", "rho = sqrt(alpha)/4", "--operand-bytes", "8"],
     "--operand-bytes = 8.0 is invalid: given to a formula in s"),
]


@pytest.mark.parametrize("argv, words", CASES, ids=[" ".join(c[0][:2] + c[0][-2:])[:60]
                                                     for c in CASES])
def test_an_unused_option_is_refused(cli, tmp_path, argv, words):
    code, out, err = cli(*[a.replace("{tmp}", str(tmp_path)) for a in argv])
    assert code == 2, (out, err)
    assert err.count("\n") == 1 and words in err
    assert list(tmp_path.iterdir()) == []


def test_the_layered_curve_takes_its_points_and_leaves_a_pipe_to_the_file(cli, tmp_path):
    out = tmp_path / "h.csv"
    code, said, err = cli("logca", "curve", "--hierarchy", LAYERS, "--data", GEMM,
                          "--points", "7", "--out", str(out))
    assert code == 0, err
    assert len(out.read_text().splitlines()) == 1 + 7
    assert said == "" and f"wrote {out}" in err     # no table after it, as the plain curve


def test_a_formula_without_s_does_not_claim_an_operand_size(cli):
    code, out, _ = cli("density", "bound", "--algorithm", "rho = sqrt(alpha)/4", "--json")
    assert code == 0 and "(s = " not in out
    code, out, _ = cli("density", "bound", "--algorithm", "rho = sqrt(alpha)/(4*s)",
                       "--operand-bytes", "8", "--json")
    assert code == 0 and "(s = 8 B)" in out
