"""Every library model's emitted interface module stays byte for byte what it was
(issue 37: the LPN core is re-laid without changing what `lpn interface --out` writes).

Both forms of ``latency(x)`` are kept (plain and phase-aware), so a change in either the
class analysis or the emitter shows. The link models and the AES-GCM stream are checked
beside the fixtures that already extract them (test_lpn_interface_link.py,
test_lpn_interface_stream.py), not extracted again here."""

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
