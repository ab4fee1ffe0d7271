"""The command-line contract: JSON keys, output files, one-line errors with exit status 2."""

import csv
import json

import pytest





def test_show_json_contract(cli):
    code, out, err = cli("logca", "show", "--preset", "ultrasparc-t2", "--kernel", "aes",
                         "--json")
    assert code == 0
    info = json.loads(out)
    assert set(info) >= {"parameters", "g1", "g_half", "g_A", "bound", "peak"}
    for key in ("g1", "g_half", "g_A"):
        assert set(info[key]) >= {"value", "exists", "reason", "closed_form"}
    assert info["bound"] == "compute" and info["peak"] is None
    assert info["g1"]["value"] == pytest.approx(337.486, rel=1e-5)
    assert info["parameters"]["L"] == 1500


def test_show_explicit_parameters_with_peak(cli):
    code, out, _ = cli("logca", "show", "--L", "1", "--o", "100", "--C", "50", "--A", "30",
                       "--beta", "0.5", "--latency", "dependent", "--json")
    info = json.loads(out)
    assert code == 0 and info["bound"] == "latency"
    assert info["peak"]["granularity"] == pytest.approx(100)
    assert len(info["g1"]["crossings"]) == 2
    assert info["g_half"]["exists"] is False and info["g_half"]["value"] is None
    assert "never reaches" in info["g_half"]["reason"]


def test_show_human_output_mentions_metrics(cli):
    code, out, _ = cli("logca", "show", "--preset", "apu", "--kernel", "radix-sort")
    assert code == 0
    assert "g1" in out and "does not exist" in out and "latency-bound" in out and "peak" in out


def test_preset_override_and_seconds(cli):
    code, out, _ = cli("logca", "show", "--preset", "sandy-bridge", "--kernel", "aes",
                       "--o", "100", "--unit", "seconds", "--json")
    info = json.loads(out)
    assert code == 0 and info["parameters"]["unit"] == "seconds"
    assert info["parameters"]["o"] == pytest.approx(100 / 3.4e9)


@pytest.mark.parametrize("argv, words", [
    (["logca", "show", "--L", "-3", "--o", "1", "--C", "1", "--A", "2"], "L = -3.0 is invalid"),
    (["logca", "show", "--L", "1", "--o", "1", "--C", "1", "--A", "0.5"], "A = 0.5 is invalid"),
    (["logca", "show", "--L", "1", "--o", "1", "--C", "1"], "missing --A"),
    (["logca", "show", "--L", "one", "--o", "1", "--C", "1", "--A", "2"], "'--L'"),
    (["logca", "show", "--preset", "tpu", "--kernel", "aes"], "valid devices are"),
    (["logca", "show", "--preset", "apu"], "--kernel is missing"),
    (["logca", "show", "--preset", "apu", "--kernel", "md5"], "valid kernels are"),
    (["logca", "curve", "--preset", "apu", "--kernel", "aes", "--from", "9XB"], "--from"),
    (["logca", "curve", "--preset", "apu", "--kernel", "aes", "--from", "1MiB", "--to", "1KiB"],
     "need from < to"),
    (["logca", "curve", "--preset", "apu", "--kernel", "aes", "--out", "x.pdf"], "--out"),
    (["logca", "show", "--L", "1", "--o", "1", "--C", "1", "--A", "2", "--frequency", "fast"],
     "--frequency"),
    (["logca", "nothing"], "No such command"),
])
def test_bad_input_is_one_line_and_exit_2(cli, argv, words):
    code, out, err = cli(*argv)
    assert code == 2
    assert words in err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err


def test_curve_csv_overlay(cli, tmp_path):
    path = tmp_path / "curve.csv"
    code, _, _ = cli("logca", "curve", "--preset", "sandy-bridge", "--kernel", "aes",
                     "--preset", "ultrasparc-t2", "--from", "16B", "--to", "32MiB",
                     "--points", "50", "--out", str(path))
    rows = list(csv.reader(path.open()))
    assert code == 0 and rows[0] == ["granularity_bytes", "sandy-bridge/aes", "ultrasparc-t2/aes"]
    assert len(rows) == 51
    assert float(rows[1][0]) == pytest.approx(16) and float(rows[-1][0]) == pytest.approx(2**25)


@pytest.mark.parametrize("suffix, magic", [(".png", b"\x89PNG"), (".svg", b"<?xml")])
def test_curve_figures(cli, tmp_path, suffix, magic):
    path = tmp_path / f"curve{suffix}"
    code, _, _ = cli("logca", "curve", "--preset", "ultrasparc-t2", "--kernel", "aes",
                     "--preset", "sparc-t4-instr", "--out", str(path))
    assert code == 0 and path.read_bytes()[:5].startswith(magic[:4])


def test_curve_json_at_powers_of_two(cli):
    code, out, _ = cli("logca", "curve", "--preset", "sandy-bridge", "--kernel", "aes",
                       "--from", "16B", "--to", "32MiB", "--json")
    data = json.loads(out)
    assert code == 0 and len(data["granularity_bytes"]) == 22


def test_presets_listing(cli):
    code, out, _ = cli("logca", "presets", "--json")
    data = json.loads(out)
    assert code == 0 and "ultrasparc-t2" in data["devices"] and data["kernels"]["gemm"] == 1.7
    assert "pcie-crypto" in data["omitted"]


# ---------------------------------------------------------------- shared CLI behaviour
def _my_commands():
    from accelperf.cli import cli as root
    for group in ("density", "measure"):
        for name, command in root.get_command(None, group).commands.items():
            yield f"{group} {name}", command
    yield "demo", root.get_command(None, "demo")


@pytest.mark.parametrize("name, command", list(_my_commands()), ids=lambda x: str(x)[:20])
def test_every_option_has_help(name, command):
    import click
    bare = [p.opts[0] for p in command.params if isinstance(p, click.Option)
            and not (p.help or "").strip()]
    assert not bare, f"`accelperf {name}` options without help: {bare}"
    assert (command.help or "").strip()


def test_tables_keep_long_names_when_piped(cli, tmp_path):
    long_name = "a-layer-whose-name-is-much-longer-than-eighty-columns-" + "x" * 40
    path = tmp_path / "h.toml"
    path.write_text(f'name = "h"\n[[layer]]\nname = "{long_name}"\nsize_bytes = 1e6\n'
                    f'bandwidth_bytes_per_s = 1e9\n')
    code, out, _ = cli("density", "bound", "--algorithm", "dot", "--hierarchy", str(path))
    assert code == 0 and long_name in out and "…" not in out
    assert max(len(line) for line in out.splitlines()) > 80


def test_density_warnings_reach_human_and_json_output(cli, tmp_path):
    path = tmp_path / "u.toml"
    path.write_text('name = "u"\n[[layer]]\nname = "r"\nsize_bytes = 0\n'
                    'bandwidth_bytes_per_s = inf\n')
    code, out, _ = cli("density", "bound", "--algorithm", "dot", "--hierarchy", str(path))
    assert code == 0 and "no limit" in out and "warning: no layer limits the rate" in out
    code, out, _ = cli("density", "bound", "--algorithm", "dot", "--hierarchy", str(path),
                       "--json")
    data = json.loads(out)
    assert data["bound"] is None and "no layer limits the rate" in data["warnings"][0]
    code, out, _ = cli("density", "bound", "--algorithm", "rho = 0*alpha", "--json")
    data = json.loads(out)
    assert code == 0 and data["bound"] == 0 and "the bound is 0" in data["warnings"][0]
    code, out, _ = cli("density", "bound", "--algorithm", "dot", "--json")
    assert json.loads(out)["warnings"] == []


def test_no_warning_leaks_to_stderr(cli, tmp_path):
    figure = tmp_path / "zero.png"
    code, _, err = cli("density", "bound", "--algorithm", "rho = 0*alpha", "--out",
                       str(figure))
    assert code == 0 and figure.exists()
    assert err.strip().splitlines() == [f"wrote {figure}"]
    code, _, err = cli("density", "bound", "--algorithm", "exp(alpha)/exp(alpha)")
    assert "Warning" not in err


def test_outputs_are_never_given_new_directories(cli, tmp_path):
    code, _, err = cli("density", "bound", "--algorithm", "dot", "--out",
                       str(tmp_path / "new" / "d.svg"))
    assert code == 2 and "does not exist; create it first" in err
    assert not (tmp_path / "new").exists()


def test_every_command_is_strict():
    """A command made with click.command and added to a group is a plain click.Command: it
    lets an option repeat and its model errors keep the field's name instead of the flag
    (lpn verify, moved to its own module, said `size = 'blocks'` for --size; lpn check was
    plain too)."""
    import click
    from accelperf.cli import cli as root
    from accelperf.cli.common import StrictCommand

    def walk(command, path):
        # through get_command: the groups load their commands when asked (lpn check was
        # plain, and this test passed whenever no test before it had loaded the lpn group)
        if isinstance(command, click.Group):
            ctx = click.Context(command)
            for name in command.list_commands(ctx):
                yield from walk(command.get_command(ctx, name), path + [name])
        else:
            yield " ".join(path), command
    found = list(walk(root, []))
    assert len(found) > 25 and "lpn check" in dict(found)
    assert [p for p, c in found if not isinstance(c, StrictCommand)] == []


def test_a_check_table_never_rounds_a_prediction_into_its_simulation():
    # "32 vs 32, 1.56%": an interface's 32.5 cycles were printed as 32
    from accelperf.cli.common import cycles_text, input_label
    assert [cycles_text(x) for x in (32.5, 32.0, 25429, 1234.56)] == \
        ["32.5", "32", "25,429", "1,234.6"]
    path = "examples/images/hopper_128x96_q50_420.jpg"
    assert input_label(path) == "…" + path[-39:] and input_label(path).endswith(".jpg")
    assert input_label("[" + "1, " * 30 + "1]").startswith("[1, 1,") and \
        len(input_label("[" + "1, " * 30 + "1]")) == 40
    assert input_label("[3,4,5]") == "[3,4,5]"
