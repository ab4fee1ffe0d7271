import os

import matplotlib
from hypothesis import settings

matplotlib.use("Agg")

# CI runs a fixed, reproducible set of examples; developers get fresh ones each run.
settings.register_profile("ci", derandomize=True, print_blob=True)
if os.environ.get("CI"):
    settings.load_profile("ci")
