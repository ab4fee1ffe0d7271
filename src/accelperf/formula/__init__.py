"""One formula language for every formula accelperf reads as text: density formulas,
space constraints and ``input``, properties to prove, buffer budgets and the read-back of
a generated interface module. :mod:`.tree` parses the text into one tree;
:mod:`.backends` gives it a meaning in NumPy, SymPy, Z3 and JavaScript."""

from .backends import NOT_MINE, fold, to_javascript
from .tree import Node, NotAFormula, TooDeep, parse, walk

__all__ = ["Node", "NotAFormula", "TooDeep", "parse", "walk", "fold", "to_javascript",
           "NOT_MINE"]
