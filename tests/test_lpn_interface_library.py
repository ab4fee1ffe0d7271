"""Issue 23 item 3: an interface for every library model, checked against the model's
own simulation: Fig. 2's pipeline with its classes grouped, and the symbolic execution
that makes the links analysable. The credit link and the PCIe decoder have their own
file, test_lpn_interface_link.py."""

import pytest

from accelperf.lpn import Net, simulate
from accelperf.lpn.analysis.accuracy import check, sampled_inputs, simulated_latency
from accelperf.lpn.analysis.classes import input_classes
from accelperf.lpn.analysis.emit import load_module, module_source
from accelperf.lpn.analysis.critical import critical_path
from accelperf.lpn.analysis.interface import extract_interface
from accelperf.lpn.analysis.space import default_space, space_from_dict, structure_space
from accelperf.lpn.library import LIBRARY, build
from accelperf.lpn.net import Out
from extracted import default_interface


def _module(name):
    model, iface = default_interface(name)
    return model, iface, load_module(module_source(iface, model, name))


def test_every_library_model_has_an_interface_over_its_default_space():
    """Every model extracts without error (the heavy ones are measured below and in the
    benchmark; this only asks for classes)."""
    for name in LIBRARY:
        model = build(name)
        classes = input_classes(model, default_space(model))
        assert [c for c in classes if not c.stuck], name


def test_pipeline_over_link_is_one_stream_class():
    """Every block of 16..144 bytes is one 256-byte packet: the packet count is the
    constant 1 over the space's ranges, so the stream needs no fixed count."""
    model, iface, module = _module("pipeline-over-link")
    (c,) = iface.classes
    assert str(c.latency) == "n_link_transactions*Max(40, 3*mean_link_transactions_nnz + 4)"
    image = {"blocks": 1200, "nnz": 30}
    sim = simulate(model, image).latency
    assert abs(module.latency(image, True) - sim) / sim < 0.02


def test_fig2_classes_are_exact_by_phase_and_equal_formulas_merge():
    """16 paths over the shipped space, 11 of which deadlock; the 5 that finish have
    different critical paths or different plain maxima, so none merge. Two classes with
    the same two formulas do: one class whose condition is either's."""
    from dataclasses import replace

    import sympy

    from accelperf.lpn.analysis.interface import group_classes
    model, iface, module = _module("fig2-pipeline")
    assert len(iface.classes) == 5 and not any(c.grouped for c in iface.classes)
    a, b = iface.classes[2], iface.classes[4]
    assert a.phased_latency == b.phased_latency
    (merged,) = group_classes((a, replace(b, latency=a.latency)))
    assert merged.grouped == (2, 4)
    (cond,) = merged.input_class.conditions
    assert isinstance(cond, sympy.Or)
    inputs = sampled_inputs(model, iface)
    for x in inputs:
        assert module.latency(x, True) == simulated_latency(model, x)
    plain = check(model, module, inputs, phases=False)
    assert plain.max_error > 0.2          # the plain max misses the fetch and the chain


def test_a_fully_fixed_program_is_its_critical_path():
    """A VTA program has no ranged property: its by-phase latency is the critical path of
    its commit records, a number equal to the simulation's."""
    model = build("vta")
    iface = extract_interface(model, structure_space(model, model.default_input))
    (c,) = iface.classes
    assert c.phased_latency == simulate(model, model.default_input).latency
    assert critical_path(model, c.input_class) is not None


def _link_net():
    net = Net("mini-link")
    msg, pkt = net.token_type("Msg", "bytes"), net.token_type("Pkt", "packets")
    src, q, done = net.place("msgs", msg), net.place("queue", pkt), net.place("done", pkt)
    net.transition("split", inputs={src: 1}, outputs=[
        (q, Out(lambda m: (m.bytes - 1) // 64, props=lambda m: {"packets": (m.bytes + 63) // 64})),
        (q, Out(1, props=lambda m: {"packets": (m.bytes + 63) // 64}))])
    net.transition("send", inputs={q: lambda p: p.packets},
                   outputs={done: Out(1, copy="queue")}, delay=3)
    net.start, net.done = src, done
    net.tokens_from_input = lambda sizes: [{"bytes": b} for b in sizes]
    net.default_input = [100, 1000]
    return net.build()


def test_a_weight_equal_to_the_first_entries_takes_them():
    model = _link_net()
    space = structure_space(model, [100, 1000], {"msgs": {"bytes": (1, 100000)}})
    (c,) = input_classes(model, space)
    assert not c.stuck
    assert c.commit_counts()["send"] == 2


@pytest.mark.parametrize("hi, constant", [(64, True), (65, False)])
def test_a_stream_value_steers_only_when_constant_over_its_range(hi, constant):
    from accelperf.lpn.analysis.symexec import AnalysisError
    model = _link_net()
    space = space_from_dict(model, {"places": {"msgs": {"count": [1, 1000],
                                                         "properties": {"bytes": [1, hi]}}}})
    if constant:
        (c,) = input_classes(model, space)
        assert str(c.commit_counts()["send"]) == "n_msgs"
    else:
        with pytest.raises(AnalysisError, match="count into 'queue'"):
            input_classes(model, space)
