"""Protoacc message types for the interface tests: the model's default message and the
authors' ``forty_scalars`` (tests/data/authors/protoacc.json), their typed interfaces, and
messages of the same structure with element sizes scaled at random."""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path

from accelperf.lpn.analysis.interface import extract_interface
from accelperf.lpn.analysis.space import structure_space
from accelperf.lpn.library import build

AUTHORS = Path(__file__).parent / "data" / "authors" / "protoacc.json"


def resized(msg, rng, lo=0.5, hi=2.0):
    """``msg`` with every element's size scaled by a factor drawn from [lo, hi]."""
    out = {}
    for name, spec in msg.items():
        data = resized(spec["data"], rng, lo, hi) if spec["type"] == "submessage" else \
            [max(0, round(b * rng.uniform(lo, hi))) for b in spec["data"]]
        out[name] = {**spec, "data": data}
    return out


@lru_cache(maxsize=None)
def protoacc_types():
    """(model, {type: message}, {type: interface over that message's structure}), built
    once per test session (three test files read them); a test must not change them."""
    model = build("protoacc")
    own = {c["name"]: c["message"]
           for c in json.loads(AUTHORS.read_text())["own_inputs"]}
    types = {"default": model.default_input, "forty_scalars": own["forty_scalars"]}
    return model, types, {t: extract_interface(model, structure_space(model, x))
                          for t, x in types.items()}
