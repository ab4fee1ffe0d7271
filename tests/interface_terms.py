"""Issue 23 item 2's check of an emitted interface, shared by the tests of the library's
models (tests/test_lpn_interface_derived.py) and of the link models
(tests/test_lpn_interface_link.py): no term is measured, and the module says so."""

from __future__ import annotations

from accelperf.lpn.analysis.emit import module_source


def assert_no_term_measured(model, iface, name: str) -> None:
    """No gap of ``iface`` is bounded by a measurement, and the module emitted for it says
    "No term is measured" and names nothing else measured."""
    assert not [g for c in iface.classes for g in c.gaps if "measured" in g.bound], name
    text = module_source(iface, model, name)
    assert "No term is measured" in text, name
    assert "measured" not in text.replace("No term is measured", "").lower(), name
