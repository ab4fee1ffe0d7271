"""Level 1b: computational density against a memory hierarchy (Steffen 2007)."""

from .algorithms import (Algorithm, algorithm, all_pairs, dot_product, from_formula, matmul)
from .hierarchy import (DensityBound, Hierarchy, Layer, LayerRate, built_in_hierarchies,
                        hierarchy, rate_bound)

__all__ = ["Algorithm", "algorithm", "dot_product", "matmul", "all_pairs", "from_formula",
           "Hierarchy", "Layer", "LayerRate", "DensityBound", "hierarchy",
           "built_in_hierarchies", "rate_bound"]
