"""Write the small inputs that the README and the docs' commands name (issue 27 item 6), into
examples/inputs/, so every command block runs as written from a fresh clone:

    .venv/bin/python tools/make_example_inputs.py

* ``image.json``, ``a.json``, ``b.json``, ``c.json``: block-pipeline images (per-block
  non-zero counts), drawn from a fixed seed so the files never change.
* ``message.json``: a protobuf message for ``protoacc`` (the authors' processed
  Hyperprotobench format), a small record with scalars, a string, a repeated field and a
  submessage, written for accelperf.
* ``packets.csv``: a Menshen packet stream with the ``n_words,kind`` header.
* ``program.insns``: a VTA instruction stream (the artifact's text format): the shipped
  19-instruction mixed stream repeated twice. The authors' ``reference.insns`` is theirs
  and is not shipped.
* ``aes-cbc.csv`` (only with ``--measure``): a short ``accelperf measure aes`` run of the
  machine that made it (16 B-1 MiB, 3 repeats, about two minutes), so ``logca fit`` has a
  real measurement to read without waiting for one.

Files are written only when their content changes, so re-running is a no-op.
"""
from __future__ import annotations

import json
import random
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "examples" / "inputs"


def _block_image(seed: int, blocks: int, mean_nnz: int) -> list[int]:
    rng = random.Random(seed)
    return [max(0, min(64, round(rng.gauss(mean_nnz, mean_nnz / 3)))) for _ in range(blocks)]


def _message() -> dict:
    def scalar(*sizes):
        return {"type": "scalar", "is_repeated": len(sizes) > 1, "data": list(sizes)}
    return {
        "id": scalar(8),
        "flags": scalar(4),
        "name": {"type": "nonscalar", "is_repeated": False, "data": [24]},
        "samples": scalar(4, 4, 4, 4, 4, 4),
        "origin": {"type": "submessage", "is_repeated": False,
                   "data": {"x": scalar(8), "y": scalar(8),
                            "label": {"type": "nonscalar", "is_repeated": False,
                                      "data": [12]}}},
    }


def _packets() -> str:
    rng = random.Random(27)
    rows = ["n_words,kind", "2,control", "2,control"]
    rows += [f"{rng.randint(4, 30)},{rng.choice(['data'] * 5 + ['drop'])}" for _ in range(22)]
    return "\n".join(rows) + "\n"


def _program() -> str:
    mixed = (ROOT / "src" / "accelperf" / "lpn" / "inputs" / "data" / "vta_mixed.insns")
    lines = [ln for ln in mixed.read_text().splitlines() if ln.strip()]
    return "\n".join(lines + lines) + "\n"


def files() -> dict[str, str]:
    out = {
        "image.json": json.dumps(_block_image(1, 96, 12)),
        "a.json": json.dumps(_block_image(2, 48, 4)),
        "b.json": json.dumps(_block_image(3, 48, 12)),
        "c.json": json.dumps(_block_image(4, 48, 30)),
        "message.json": json.dumps(_message(), indent=1),
        "packets.csv": _packets(),
        "program.insns": _program(),
    }
    return {name: text if text.endswith("\n") else text + "\n" for name, text in out.items()}


def measure_aes(path: Path) -> None:
    """A short AES-CBC run of this machine (about two minutes): 16 B-1 MiB, 3 repeats."""
    accelperf = Path(sys.executable).with_name("accelperf")
    subprocess.run([str(accelperf), "measure", "aes", "--mode", "cbc", "--host", "vpaes",
                    "--from", "16B", "--to", "1MiB", "--repeats", "3", "--out", str(path)],
                   check=True)


def main(argv: list[str]) -> int:
    OUT.mkdir(parents=True, exist_ok=True)
    for name, text in files().items():
        path = OUT / name
        if not path.exists() or path.read_text() != text:
            path.write_text(text)
            print(f"wrote {path.relative_to(ROOT)}")
    if "--measure" in argv:
        measure_aes(OUT / "aes-cbc.csv")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
