"""Issue 37 item 5: the analyses ask the model (``model.declared``) instead of its name;
every initial marking is built by one rule (``Model.with_tokens``); the classes of
symbolic execution and of refinement are one type (``InputClass``)."""

import ast
import inspect
from dataclasses import replace
from pathlib import Path

import pytest

from accelperf.errors import ModelError
from accelperf.lpn.analysis.adapters import ADAPTERS
from accelperf.lpn.analysis.classes import marking_of
from accelperf.lpn.analysis.input_class import InputClass
from accelperf.lpn.analysis.refine import TraceClass, initial_marking, partition
from accelperf.lpn.analysis.space import default_space, load_space
from accelperf.lpn.library import LIBRARY, build

SPACES = Path(__file__).resolve().parents[1] / "examples" / "spaces"


def test_a_model_is_known_by_what_it_declares_not_by_its_name():
    protoacc = build("protoacc")
    renamed = replace(protoacc, name="my-serializer")
    # the structured default space follows the declaration, under any name
    assert [(p.place, p.count, p.properties) for p in default_space(renamed).places] == \
        [(p.place, p.count, p.properties) for p in default_space(protoacc).places]
    assert default_space(renamed).places[2].properties == {"bytes": (0, 1 << 30)}
    # and a name alone gives nothing: a stream model called "protoacc" stays a stream
    impostor = replace(build("aes-gcm"), name="protoacc")
    (place,) = default_space(impostor).places
    assert place.stream and place.count == (1, 100_000)


def test_every_standalone_reader_lives_beside_its_model_and_needs_no_accelperf():
    declared = {name: build(name).declared.reader for name in LIBRARY}
    assert ADAPTERS == {build(n).name: r for n, r in declared.items() if r is not None}
    assert set(ADAPTERS) == {"block-pipeline", "darwin", "jpeg-decoder", "protoacc",
                             "menshen", "aes-gcm"}
    for name, reader in ADAPTERS.items():
        assert reader.__module__ == build(name).tokens_from_input.__module__
        tree = ast.parse(inspect.getsource(reader))
        imported = [a.name for node in ast.walk(tree) if isinstance(node, ast.Import)
                    for a in node.names]
        assert not any(isinstance(node, ast.ImportFrom) for node in ast.walk(tree))
        assert set(imported) <= {"random", "re"}, (name, imported)


def test_one_rule_builds_every_marking():
    model = build("block-pipeline")
    x = {"width": 24, "height": 16, "mean_nnz": 9, "seed": 3}
    tokens = ADAPTERS["block-pipeline"](x)
    by_psi = model.marking(x).tokens
    assert marking_of(model, tokens).tokens == by_psi == model.with_tokens(tokens).tokens
    space = default_space(model)
    assert initial_marking(model, space, tokens) == {p: list(ts) for p, ts in by_psi.items()}
    # the rule checks what it is given, whoever gives it
    with pytest.raises(ModelError, match="'blocks'.*integers"):
        marking_of(model, {"blocks": [{"nnz": 2.5}]})
    with pytest.raises(ModelError, match="exactly the properties"):
        model.with_tokens({"blocks": [{"nnz": 2, "size": 1}]})


def test_symbolic_and_refined_classes_are_one_type():
    assert TraceClass is InputClass
    darwin = build("darwin")
    problem = partition(darwin, load_space(darwin, SPACES / "darwin-16x-steps.toml"))
    cls = problem.classes[0]
    assert type(cls) is InputClass and cls.latency is not None and cls.exact
    assert cls.constraints()[:len(cls.conditions)] == list(cls.conditions)
    assert repr(cls).startswith("InputClass(0: ") and "sample latency" in repr(cls)
