"""Every library model's emitted interface module stays byte for byte what it was
(issue 37: the LPN core is re-laid without changing what `lpn interface --out` writes).

Both forms of ``latency(x)`` are kept (plain and phase-aware), so a change in either the
class analysis or the emitter shows. The link models and the AES-GCM stream are checked
beside the fixtures that already extract them (test_lpn_interface_link.py,
test_lpn_interface_stream.py), not extracted again here.

A module's text is a function of the model and its space alone: not of what the process
extracted before it (the credit link's golden is checked after another extraction; below,
a process emits these in the opposite order), nor of Python's hash seed (that process has
another one)."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from accelperf.lpn.analysis.emit import module_source
from extracted import default_interface
from golden_modules import assert_same_module

MODELS = ("fig2-pipeline", "jpeg-decoder", "block-pipeline", "darwin", "pipeline-over-link",
          "protoacc", "menshen", "vta")


def check_both_forms(name: str, model, iface) -> None:
    """The module as `lpn interface NAME --plain/--phases --out F` writes it."""
    for phases, suffix in ((False, ""), (True, "-phases")):
        assert_same_module(name + suffix, module_source(iface, model, name, 1e9,
                                                        phases=phases))


@pytest.mark.parametrize("name", MODELS)
def test_emitted_module_is_unchanged(name):
    model, iface = default_interface(name)
    check_both_forms(name, model, iface)


def test_the_text_depends_on_neither_the_hash_seed_nor_what_ran_before():
    """A process with another hash seed than this one's emits every model above in the
    opposite order (each module after the others' extractions): every text is its golden,
    as in this process."""
    seed = "2" if os.environ.get("PYTHONHASHSEED") == "1" else "1"
    script = ("import sys; sys.path.insert(0, 'tests'); "
              "from extracted import default_interface; "
              "from test_emitted_modules import check_both_forms; "
              "[check_both_forms(n, *default_interface(n)) for n in sys.argv[1:]]")
    done = subprocess.run([sys.executable, "-c", script, *MODELS[::-1]],
                          cwd=Path(__file__).parents[1], capture_output=True, text=True,
                          env={**os.environ, "PYTHONHASHSEED": seed})
    assert done.returncode == 0, done.stderr[-3000:]
