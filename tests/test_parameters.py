"""One Parameter type for LogCA fits and LPN delays; values passed to the Net explicitly;
the params file format and its strictness in accelperf.parameters (issue 37, item 4)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from accelperf.errors import ModelError
from accelperf.lpn import params as lpn_params
from accelperf.lpn.library import build
from accelperf.lpn.net import Net
from accelperf.lpn.sim import simulate
from accelperf.parameters import (Estimate, Parameter, Parameters, ParamsFile,
                                  read_params_file)


def test_every_former_parameter_type_is_the_one_type():
    from accelperf.logca.fit import FittedParameter as LogcaFitted
    from accelperf.lpn.calibrate import FittedParameter as LpnFitted
    from accelperf.lpn.uncertainty import Estimate as LpnEstimate
    assert LogcaFitted is LpnFitted is lpn_params.Parameter is Parameter
    assert LpnEstimate is Estimate
    declared = build("jpeg-decoder").parameter("idct_cycles")
    assert type(declared) is Parameter and declared.integer and declared.bounds == (0, None)


def test_a_logca_fit_and_an_lpn_calibration_hand_back_parameters():
    from accelperf.logca.fit import fit_logca
    g = np.logspace(4, 24, 12, base=2)
    t0 = 1e-9 * g
    t1 = 2e-6 + 1e-9 * g / 8
    fit = fit_logca(g, t0, t1, latency="independent", bootstrap=0)
    assert isinstance(fit.parameters, Parameters)
    a = fit.parameters["A"]
    assert type(a.value) is not int and a.value == pytest.approx(8, rel=0.05)
    assert a.bounds == (0.0, math.inf) and a.to_dict()["bounds"] == [0.0, math.inf]
    assert list(fit.parameters) == ["L", "o", "C", "A", "beta"]


def test_the_uncertainty_part_round_trips_through_a_parameter():
    p = Parameter.declared("d", 5, 7, minimum=1, doc="cycles").with_estimate(
        Estimate(0.5, 6, 8, open=True))
    assert (p.value, p.default, p.stderr, p.interval, p.open) == (7, 5, 0.5, (6, 8), True)
    assert p.uncertainty == Estimate(0.5, 6, 8, True)
    assert p.with_estimate(None).uncertainty is None
    with pytest.raises(ModelError, match="parameter d = 0 is invalid: an integer >= 1"):
        p.check(0)
    assert Parameter("x", 1.5, bounds=(0.0, 2.0)).check(1.25) == 1.25
    with pytest.raises(ModelError, match="x = 3.0 is invalid: a real number >= 0.0 and "
                                         "<= 2.0"):
        Parameter("x", 1.5, bounds=(0.0, 2.0)).check(3.0)


def _two(params=None):
    net = Net("two", params=params)
    a, b = net.place("a"), net.place("b")
    net.transition("t", inputs={a: 1}, outputs={b: 1}, delay=net.parameter("per_item", 2) + 1)
    net.start, net.done, net.tokens_from_input = a, b, lambda n: [{}] * n
    return net.build()


def test_a_net_reads_the_values_it_was_created_with_not_ambient_ones():
    assert simulate(_two(), 1).latency == 2 + 1
    assert simulate(_two({"per_item": 5}), 1).latency == 5 + 1
    assert _two(Parameters.from_values({"per_item": 4})).parameter("per_item").value == 4
    seen = []

    def builder(params=None):                   # takes params: gets them, no scope set
        seen.append(lpn_params._UNPASSED.get())
        return _two(params)
    assert lpn_params.build_with(builder, {"per_item": 6}).parameter("per_item").value == 6
    assert seen == [None]
    # a Net given its own values inside a build of other values keeps its own
    model = lpn_params.build_with(lambda: _two({"per_item": 3}), {"per_item": 9})
    assert model.parameter("per_item").value == 3


def test_a_user_build_function_with_params_gets_them_from_the_loader(tmp_path):
    from accelperf.lpn.loader import load_model
    source = tmp_path / "mine.py"
    source.write_text("from accelperf.lpn.net import Net\n\n"
                      "def model(params=None):\n"
                      "    net = Net('mine', params=params)\n"
                      "    p = net.place('p')\n"
                      "    q = net.place('q')\n"
                      "    d = net.parameter('d', 3)\n"
                      "    net.transition('t', inputs={p: 1}, outputs={q: 1}, delay=d)\n"
                      "    net.start, net.done = p, q\n"
                      "    net.tokens_from_input = lambda n: [{}] * n\n"
                      "    return net\n")
    model = load_model(f"{source}:model", {"d": 8})
    assert model.parameter("d").value == 8 and model.parameter("d").default == 3


def test_the_params_file_round_trips_and_refuses_by_field(tmp_path):
    params = Parameters([Parameter.declared("idct_cycles", 66, 70),
                         Parameter("header_base", 5, integer=True, note="kept")])
    path = tmp_path / "p.toml"
    params.save(path, "jpeg-decoder", "from a test")
    assert path.read_text() == ('# from a test\nmodel = "jpeg-decoder"\n\n[parameters]\n'
                                'idct_cycles = 70\nheader_base = 5  # kept\n')
    assert Parameters.load(path).valuesdict() == {"idct_cycles": 70, "header_base": 5}
    read = read_params_file(path)
    assert read == ParamsFile("jpeg-decoder", {"idct_cycles": 70, "header_base": 5}, None)
    with pytest.raises(ModelError, match=r"^params file \S+: model = 'jpeg-decoder' is "
                                         r"invalid: the command's model is 'vta'"):
        read.check(str(path), ("vta",), "vta", ["x"])
    with pytest.raises(ModelError, match=r"parameter = 'header_base' is invalid: model "
                                         r"'jpeg-decoder' declares idct_cycles"):
        read.check(str(path), ("jpeg-decoder",), "jpeg-decoder", ["idct_cycles"])
    path.write_text("[params]\nidct_cycles = 3\n")
    with pytest.raises(ModelError, match=r"^params file .*table = '\[params\]' is invalid"):
        read_params_file(path)


def test_the_cli_names_its_option_where_the_model_names_the_file(tmp_path):
    from accelperf.cli.common import load_params_file
    path = tmp_path / "p.toml"
    path.write_text("[params]\nidct_cycles = 3\n")
    with pytest.raises(ModelError, match=r"^--params \S+: table = '\[params\]' is invalid"):
        load_params_file(path)
    with pytest.raises(ModelError, match=r"^--params = '\S+' is invalid: no such file"):
        load_params_file(tmp_path / "none.toml")
