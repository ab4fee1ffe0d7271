"""Protoacc's serializer LPN against the OSDI'24 authors' own simulator.

tests/data/authors/protoacc.json holds the cycle counts the authors' model (dslab-epfl/lpn,
run by their lpnlang) gives on their processed Hyperprotobench inputs and on small messages
written for these tests; accelperf must give the same latency and the same number of
commits.
"""

import hashlib
import json
import re
from pathlib import Path

import pytest

from accelperf.errors import ModelError
from accelperf.lpn import simulate
from accelperf.lpn.inputs.protobuf import read_messages
from accelperf.lpn.library import build
from accelperf.lpn.library.protoacc import (END_OF_MESSAGE, END_OF_TOP_MESSAGE, FIELD_RUN,
                                            SUBMESSAGE, message_tokens, protoacc_serializer)
from authors import authors_file

AUTHORS = json.loads((Path(__file__).parent / "data/authors/protoacc.json").read_text())


_models = {}


def _model(pipelines, mem_latency):
    key = (pipelines, mem_latency)
    if key not in _models:
        _models[key] = protoacc_serializer(pipelines, mem_latency)
    return _models[key]


def _run_id(run):
    return f"{Path(run['input']).stem}-p{run['pipelines']}-L{run['mem_latency']}"


@pytest.mark.parametrize("run", AUTHORS["runs"], ids=_run_id)
def test_equals_the_authors_on_their_inputs(run):
    raw = authors_file(run["input"])
    assert hashlib.sha256(raw).hexdigest() == run["sha256"], "not the input the numbers are for"
    r = simulate(_model(run["pipelines"], run["mem_latency"]), json.loads(raw))
    assert (r.latency, r.total_commits) == (run["latency"], run["commits"])


@pytest.mark.parametrize("case", AUTHORS["own_inputs"], ids=lambda c: c["name"])
def test_equals_the_authors_on_small_messages(case):
    for run in case["runs"]:
        r = simulate(_model(run["pipelines"], run["mem_latency"]), case["message"])
        assert (run["pipelines"], run["mem_latency"], r.latency, r.total_commits) == \
            (run["pipelines"], run["mem_latency"], run["latency"], run["commits"])


# The authors' transition names -> ours.
_COMMON = {"t2": "load_has_bits", "tadvance_ok": "advance", "t1": "load_control",
           "t3": "field_run_loaded", "t5": "hasbits_memory", "t8": "request_descriptor",
           "t10": "fetch_field_descriptors", "t9": "load_submessage_adt", "t19": "issue_write",
           "t23": "write_body", "t24": "write_top_end", "tinject_write_dist": "route_write",
           "tdispatch_dist": "next_dispatch_turn", "twrite_dist": "next_write_turn",
           "split_msg": "split_descriptor"}
_STEP = {"25": "scalar_start", "26": "string_start", "28": "repeated_start",
         "30": "scalar_load", "31": "scalar_key", "36": "string_header", "37": "string_data",
         "40": "string_key", "44": "repeated_array", "write_req_out": "write_request",
         "resume": "resume", "eom": "end_of_message", "dist": "decode"}


def _ours(name):
    if name in _COMMON:
        return _COMMON[name]
    if name.startswith("dispatch_"):
        return f"{name[len('dispatch_'):]}_dispatch"
    pipeline, step = name.split("_", 1)
    return f"{pipeline}_{_STEP[step]}"


@pytest.mark.parametrize("case", [c for c in AUTHORS["own_inputs"]
                                  if "commit_times_6_pipelines" in c], ids=lambda c: c["name"])
def test_every_commit_at_the_authors_cycle(case):
    r = simulate(_model(6, 10), case["message"], trace=True)
    ours = {}
    for f in r.trace:
        ours.setdefault(f.transition, []).append(f.end)
    for name, cycles in case["commit_times_6_pipelines"].items():
        assert sorted(ours[_ours(name)]) == sorted(cycles), name


def test_one_pipeline_is_slower_on_many_fields():
    msg = next(c["message"] for c in AUTHORS["own_inputs"] if c["name"] == "forty_scalars")
    six, one = (simulate(_model(p, 10), msg).latency for p in (6, 1))
    assert one > 4 * six


def test_default_input_runs_and_ends_in_writes():
    r = simulate(build("protoacc"))
    assert r.latency == 140 and r.done_tokens == r.commits["issue_write"]


def test_psi_walks_depth_first_and_cuts_runs_at_32():
    fields = {f"s{i}": {"type": "scalar", "is_repeated": False, "data": [4]} for i in range(40)}
    fields["sub"] = {"type": "submessage", "is_repeated": False,
                     "data": {"x": {"type": "nonscalar", "is_repeated": True, "data": [3, 9]}}}
    t = message_tokens(read_messages(fields))
    assert [(c["kind"], c["fields"]) for c in t["message_tasks"]] == \
        [(FIELD_RUN, 32), (FIELD_RUN, 8), (SUBMESSAGE, 0), (FIELD_RUN, 2), (FIELD_RUN, 1)]
    kinds = [d["kind"] for d in t["field_descriptors"]]
    assert len(kinds) == 43 and kinds[-3:] == [1, END_OF_MESSAGE, END_OF_TOP_MESSAGE]
    assert [u["bytes"] for u in t["field_data"]][-4:] == [3, 9, 1, 1]


@pytest.mark.parametrize("doc, where", [
    ([], "protobuf input"),
    ({"a": {"type": "string", "is_repeated": False, "data": [1]}}, "message.a.type"),
    ({"a": {"type": "scalar", "is_repeated": "no", "data": [1]}}, "message.a.is_repeated"),
    ({"a": {"type": "scalar", "is_repeated": False, "data": []}}, "message.a.data"),
    ({"a": {"type": "scalar", "is_repeated": False, "data": [1, 2]}}, "message.a.data"),
    ([{"a": {"type": "submessage", "is_repeated": False,
             "data": {"b": {"type": "nonscalar", "is_repeated": True, "data": [4, -1]}}}}],
     "message[0].a.data.b.data[1]"),
    ({"a": {"type": "scalar", "data": [1]}}, "message.a"),
])
def test_malformed_messages_name_the_field(doc, where):
    with pytest.raises(ModelError, match="^" + re.escape(f"{where} = ")):
        read_messages(doc)


@pytest.mark.parametrize("kw", [dict(pipelines=0), dict(pipelines=7), dict(mem_latency=-1),
                                dict(pipelines=True)])
def test_bad_configuration_is_rejected(kw):
    with pytest.raises(ModelError, match=next(iter(kw))):
        protoacc_serializer(**kw)


def test_cli_one_line_error_for_a_malformed_message(cli, tmp_path):
    bad = tmp_path / "m.json"
    bad.write_text(json.dumps({"a": {"type": "scalar", "is_repeated": False, "data": ["8"]}}))
    code, out, err = cli("lpn", "simulate", "protoacc", "--input", str(bad))
    assert code == 2 and err.count("\n") == 1 and "message.a.data[0]" in err


def test_cli_json_latency(cli):
    code, out, _ = cli("lpn", "simulate", "protoacc", "--json")
    assert code == 0 and json.loads(out)["latency"] == 140
