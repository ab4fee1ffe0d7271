import os

import matplotlib
import pytest
from hypothesis import settings

matplotlib.use("Agg")

# CI runs a fixed, reproducible set of examples; developers get fresh ones each run.
settings.register_profile("ci", derandomize=True, print_blob=True)
if os.environ.get("CI"):
    settings.load_profile("ci")


@pytest.fixture
def cli(capsys):
    """Run `accelperf ARGS...` in-process: returns (exit status, stdout, stderr)."""
    from accelperf.cli import main

    def run(*argv):
        code = main(list(argv))
        out, err = capsys.readouterr()
        return code, out, err
    return run
