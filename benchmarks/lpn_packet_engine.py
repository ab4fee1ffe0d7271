"""The AES-GCM packet engine end to end (issue 33): how long its interface over any number
of packets takes to extract, how close it is to the simulation on seeded lists it was not
built from, the same for the classic max of per-stage works without fill and drain (the
model-free floor a user would write by hand), and how long the one-packet 1..1500 B proof
takes.

Run: .venv/bin/python benchmarks/lpn_packet_engine.py [--seed S] [--lists N]
Last line: ``aes_gcm_max_error: X`` (the interface's largest relative error).
"""

from __future__ import annotations

import argparse
import random
import time
from pathlib import Path

from accelperf.lpn import simulate
from accelperf.lpn.analysis.space import default_space, load_space
from accelperf.lpn.analysis.interfaces.token_stream import interface_for
from accelperf.lpn.analysis.proofs.verify import latency_bound
from accelperf.lpn.library import build

ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seed", type=int, default=33_2026)
    ap.add_argument("--lists", type=int, default=15, help="lists per packet count")
    args = ap.parse_args()
    engine = build("aes-gcm")
    began = time.perf_counter()
    iface = interface_for(engine, default_space(engine))
    extraction = time.perf_counter() - began
    print(f"extraction: {extraction:.1f} s, {len(iface.classes)} token classes")
    rng = random.Random(args.seed)
    errors, floor_errors = [], []
    for n in (1, 3, 4):
        for _ in range(args.lists):
            sizes = [rng.randint(64, 9000) for _ in range(n)]
            simulated = simulate(engine, sizes).latency
            tokens = [{"bytes": b} for b in sizes]
            predicted = iface.latency(tokens)
            works = {}
            for t in tokens:
                for k, v in iface.stage_values(t).items():
                    works[k] = works.get(k, 0) + v[0]
            errors.append(abs(predicted - simulated) / simulated)
            floor_errors.append(abs(max(works.values()) - simulated) / simulated)
    print(f"lists: {len(errors)} of 1, 3, 4 packets of 64..9000 B, seed {args.seed}")
    print(f"max of works alone (no fill, no drain): mean {sum(floor_errors) / len(errors):.2%}"
          f", max {max(floor_errors):.2%}")
    four = simulate(engine, [64] * 4).latency
    print(f"four 64-B packets: simulated {four}, interface "
          f"{iface.latency([{'bytes': 64}] * 4):.0f}, max of works alone 80 "
          f"({(four - 80) / four:.1%} low)")
    began = time.perf_counter()
    bound = latency_bound(engine, load_space(
        engine, ROOT / "examples" / "spaces" / "aes-gcm-one-packet.toml"), "max")
    print(f"proof, one packet of 1..1500 B: {bound.bound} cycles {bound.status} in "
          f"{time.perf_counter() - began:.1f} s")
    print(f"interface: mean {sum(errors) / len(errors):.3%}")
    print(f"aes_gcm_max_error: {max(errors):.4%}")


if __name__ == "__main__":
    main()
