"""Interface extraction with and without its two memos, in one process.

The extractor remembers ``sympy.simplify`` per distinct expression
(``interfaces/simplify.py``) and translates each question's repeated subexpressions to Z3
once (``solver._to_z3``'s memo). Here each model is extracted over its default space with
both memos (as shipped) and with both turned off (``simplify`` called afresh, every
occurrence translated: the code before them), in alternating rounds so that a change of
load on the machine hits both. The simplify memo is emptied before every run, so no run
reads what another computed. Printed per model: the best of the rounds of each and their
ratio; last, the geometric mean of the ratios.

Turned off, the credit link's credit-round question runs out of Z3's 10 s and its
module keeps a max(0, ...) that the shipped extraction proves away (see
``interfaces/solver.py``): that model's ratio is partly a different answer, not only
less work, and the script says whether the two emitted modules are equal.

Run: PYTHONPATH=src .venv/bin/python benchmarks/lpn_extract_memo.py [MODEL ...]
"""

from __future__ import annotations

import contextlib
import math
import sys
import time

import sympy

from accelperf.lpn.analysis.interfaces import simplify, solver
from accelperf.lpn.analysis.interfaces.emit import module_source
from accelperf.lpn.analysis.interfaces.stream_emit import stream_module_source
from accelperf.lpn.analysis.interfaces.token_stream import StreamInterface, interface_for
from accelperf.lpn.analysis.space import default_space
from accelperf.lpn.library import build

MODELS = ("credit-link", "aes-gcm", "fig2-pipeline", "jpeg-decoder")
ROUNDS = 2
REMEMBERED = simplify._simplified           # the lru_cache, emptied before each run


@contextlib.contextmanager
def without_memos():
    remembered, translate = simplify._simplified, solver._to_z3
    simplify._simplified = sympy.simplify
    solver._to_z3 = lambda expr, env, ctx, memo=None: translate(expr, env, ctx, None)
    try:
        yield
    finally:
        simplify._simplified, solver._to_z3 = remembered, translate


def extraction(name: str):
    """(seconds, the module `lpn interface --out` writes) of one extraction over the
    default space, the simplify memo emptied first; the module is written outside the
    time."""
    REMEMBERED.cache_clear()
    model = build(name)
    space = default_space(model)
    start = time.perf_counter()
    iface = interface_for(model, space)
    seconds = time.perf_counter() - start
    if isinstance(iface, StreamInterface):
        return seconds, stream_module_source(iface, model, name, 1e9)
    return seconds, module_source(iface, model, name)


def main(names) -> None:
    ratios = []
    for name in names:
        with_memo, without = [], []
        for _ in range(ROUNDS):
            seconds, shipped = extraction(name)
            with_memo.append(seconds)
            with without_memos():
                seconds, before = extraction(name)
            without.append(seconds)
        ratio = min(without) / min(with_memo)
        ratios.append(ratio)
        same = "same module" if shipped == before else "the modules differ"
        print(f"{name:<16} without memos {min(without):6.2f} s, with {min(with_memo):6.2f} s:"
              f" {ratio:.2f}x ({same}; best of {ROUNDS})")
    print(f"extract_memo_speedup: {math.exp(sum(map(math.log, ratios)) / len(ratios)):.2f}")


if __name__ == "__main__":
    main(sys.argv[1:] or MODELS)
