import os

import matplotlib
import pytest
from hypothesis import settings

matplotlib.use("Agg")

# pytest-xdist's workers (`make test`) run with COLUMNS=80 in their environment, which
# rich reads as a fixed console width: accelperf's output would wrap at 80 columns there
# and nowhere else, and the tests that read whole lines of it would fail only under -n.
if os.environ.get("PYTEST_XDIST_WORKER"):
    os.environ.pop("COLUMNS", None)
    os.environ.pop("LINES", None)

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
