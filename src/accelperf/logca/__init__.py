"""Level 1: the LogCA accelerator model (Altaf & Wood, ISCA'17)."""

from .metrics import (Bound, GranularityResult, ModelSummary, Peak, bound_type, break_even_granularity,
                      granularity_for_speedup, half_acceleration_granularity, metric_batch,
                      peak_acceleration_granularity, peak_speedup, summary)
from .model import DEFAULT_RANGE, LogCA, speedup_array
from .presets import all_presets, devices, kernels, preset

__all__ = ["LogCA", "DEFAULT_RANGE", "ModelSummary", "speedup_array", "GranularityResult", "Peak", "Bound",
           "break_even_granularity", "half_acceleration_granularity",
           "peak_acceleration_granularity", "granularity_for_speedup", "peak_speedup",
           "bound_type", "summary", "metric_batch", "preset", "all_presets", "devices",
           "kernels"]
