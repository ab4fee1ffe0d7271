"""Darwin's GACT alignment as an LPN, matching the latency formula of OSDI'24 Fig. 6.

A systolic array of ``num_pe`` processing elements fills the score matrix one stripe of
``num_pe`` query rows at a time: a stripe streams the ``ref_len`` reference bases through
the array, plus ``num_pe + 2`` cycles to fill and drain it. After the last stripe the
traceback starts (``num_pe + 2`` cycles) and takes 3 cycles per alignment step. So for a
query length divisible by ``num_pe``

    cycles = (ref_len + num_pe + 2) · query_len / num_pe + num_pe + 2 + 3 · steps

(for other lengths the last, partial stripe still takes a whole stripe's time).

The authors' released model (dslab-epfl/lpn ``lpn_family/accel_lib/darwin/normal``) is
one transition with the Fig. 6 delay as a fraction; on their 10 test pairs (both lengths
320) accelperf gives their cycles exactly (tests/data/authors/darwin.json). For a query
length not divisible by ``num_pe`` accelperf is later by
(ref_len + num_pe + 2) · (num_pe − query_len mod num_pe) / num_pe cycles.
"""

from __future__ import annotations

from ..declared import Declared
from ..inputs.values import record, whole
from ..net import Net, NetError, Out


def darwin_latency_formula(ref_len: int, query_len: int, steps: int, num_pe: int = 4) -> float:
    """OSDI'24 Fig. 6."""
    return (ref_len + num_pe + 2) * query_len / num_pe + num_pe + 2 + 3 * steps


def darwin_gact(num_pe: int = 4, params=None):
    if not isinstance(num_pe, int) or num_pe < 1:
        raise NetError(f"num_pe = {num_pe!r} is invalid: an integer >= 1")
    net = Net("darwin", f"Darwin GACT alignment, {num_pe} processing elements",
              input_format="a JSON object {ref_len, query_len, steps}", params=params)
    stripe = net.token_type("Stripe", "ref_len")
    align = net.token_type("Alignment", "steps", "stripes")
    step = net.token_type("Step")
    stripes = net.place("stripes", stripe)
    filled = net.place("stripes_filled", stripe)
    waiting = net.place("alignment", align)
    ready = net.place("traceback_ready", align)
    steps = net.place("traceback_steps", step)
    done = net.place("aligned", step)
    net.transition("fill_stripe", inputs={stripes: 1}, outputs={filled: 1},
                   delay=lambda s: s.ref_len + num_pe + 2)
    net.transition("matrix_complete", inputs={waiting: 1, filled: lambda a, s: a.stripes},
                   outputs={ready: Out(1, copy="alignment")})
    net.transition("traceback_start", inputs={ready: 1},
                   outputs={steps: lambda a: a.steps}, delay=num_pe + 2)
    step_cycles = net.parameter("traceback_step_cycles", 3,
                                doc="cycles of one traceback step")
    net.transition("traceback_step", inputs={steps: 1}, outputs={done: 1}, delay=step_cycles)

    def tokens(pair):
        pair = record(pair, "input (a DNA pair)", ("ref_len", "query_len", "steps"))
        ref, query, n_steps = (whole(pair[k], f"input.{k}", low=1, high=2 ** 32)
                               for k in ("ref_len", "query_len", "steps"))
        n_stripes = -(-query // num_pe)
        return {"stripes": [{"ref_len": ref}] * n_stripes,
                "alignment": [{"steps": n_steps, "stripes": n_stripes}]}

    net.start, net.done = [stripes, waiting], done
    net.tokens_from_input = tokens
    net.declared = Declared(reader=psi_darwin)
    net.default_input = {"ref_len": 320, "query_len": 128, "steps": 180}
    return net.build()


def psi_darwin(pair, num_pe=4):
    """Tokens of Darwin GACT for {"ref_len", "query_len", "steps"} (4 processing
    elements): one stripe per num_pe query rows, and the alignment."""
    ref, query, steps = (int(pair[k]) for k in ("ref_len", "query_len", "steps"))
    stripes = -(-query // num_pe)
    return {"stripes": [{"ref_len": ref}] * stripes,
            "alignment": [{"steps": steps, "stripes": stripes}]}
