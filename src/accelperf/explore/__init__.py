"""The interactive explorer (issue 25): one self-contained HTML page in which LogCA,
computational density and an LPN's performance interface answer as the user drags a
slider. :mod:`.formulas` prints the models' formulas to JavaScript from SymPy,
:mod:`.delays` keeps an LPN model's named delays as symbols of its interface,
:mod:`.panels` gathers each panel's data, :mod:`.page` assembles the page."""

from .delays import DelaySlider, SymbolicInterface, symbolic_interface
from .formulas import density_javascript, interface_formulas, logca_javascript
from .page import MAX_PAGE_BYTES, build_page
from .panels import (DEFAULT_DESIGNS, DENSITY_ALGORITHMS, DensityPanel, LogcaPanel, LpnPanel,
                     density_panel, lpn_panel)

__all__ = ["build_page", "MAX_PAGE_BYTES", "LogcaPanel", "DensityPanel", "LpnPanel",
           "lpn_panel", "density_panel", "logca_javascript", "density_javascript",
           "interface_formulas", "DEFAULT_DESIGNS", "DENSITY_ALGORITHMS", "DelaySlider",
           "SymbolicInterface", "symbolic_interface"]
