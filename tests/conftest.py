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

# `logca fit --select`, the demo and explore solve a fit's folds on every core by default
# (accelperf.logca.validation); here pytest-xdist already runs a test process on each, so
# they solve in the test's process. tests/test_logca_validation.py asks for processes.
import accelperf.logca.validation  # noqa: E402

accelperf.logca.validation.WORKERS = 1

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


@pytest.fixture(autouse=True)
def sigint_left_as_found(request):
    """A test that leaves SIGINT's handler changed is named in a warning and the handler put
    back: a clean-clone run once had SIGINT ignored in one worker, and the run budgets
    (accelperf.cli.stopping) of the tests after it never fired."""
    import signal
    import warnings
    before = signal.getsignal(signal.SIGINT)
    yield
    after = signal.getsignal(signal.SIGINT)
    if after is not before:
        signal.signal(signal.SIGINT, before)
        warnings.warn(f"{request.node.nodeid} left SIGINT's handler as {after!r}")


# ------------------------------------------------------------------ scheduling on workers
# `make test` runs on 2 cores (CI). Left to pytest-xdist's `load`, the long tests land
# wherever collection order puts them, often last on one worker while the other idles
# (the suite was 384 s on CI). Instead each of the tests below is a work unit of its own,
# every other test file one unit (its module fixtures stay on one worker), and the units
# go out longest first (LPT scheduling): a worker that is free takes the next longest.
# Seconds measured on the shared 2-core VM under a load average of 7.5 (`pytest -n 2
# --dist load --durations=60`, 24 min; CI is 3 to 4 times faster): only their order
# matters. A test listed alone must not share an expensive module fixture with its file.
LONG_TESTS = {f"tests/{k}": v for k, v in {
    "test_explore_delays.py::test_jpeg_page_equals_fresh_extraction_at_random_delays": 164,
    "test_lpn_interface_link.py::test_the_pcie_decoder_prices_its_file_layout": 140,
    "test_lpn_compiled.py::test_compiled_follows_the_reference_on_random_nets": 78,
    "test_lpn_verify.py::test_smt_latency_equals_the_simulator_on_one_point_spaces": 49,
    "test_lpn_interface_library.py::"
    "test_every_library_model_has_an_interface_over_its_default_space": 34,
    "test_lpn_interface_form.py::test_the_choice_follows_the_errors": 26,
    "test_lpn_compiled.py::test_nets_wider_than_one_word_of_the_dirty_set[150]": 25,
    "test_lpn_spaces.py::test_an_endless_sample_is_recognised_before_it_is_followed": 21,
    "test_logca_uncertainty.py::test_g1_quantiles_follow_eq_5_under_a_uniform_overhead": 21,
    "test_lpn_verify.py::test_token_counts_as_ranges_are_one_space_per_count": 21,
    "test_lpn_verify.py::test_bounds_over_ranges_enclose_random_runs_of_random_nets": 17,
    "test_lpn_compiled.py::test_nets_wider_than_one_word_of_the_dirty_set[65]": 14,
    "test_lpn_compiled.py::test_nets_wider_than_one_word_of_the_dirty_set[64]": 12,
}.items()}
# Files whose every test is a unit of its own (their module fixtures are cheap), with the
# seconds of their long tests.
SPLIT_FILES = {"tests/test_docs.py"}
LONG_TESTS.update({f"tests/test_docs.py::test_every_code_block_runs[{k}]": v for k, v in {
    # (the GPU page and the README run in tests/test_demo.py's unit: SHARED below)
    # with tests/test_lpn_interface_stream.py and tests/test_lpn_interface_link.py (SHARED
    # below): 172 + 105 and 75 + 59 apart, scaled by what sharing saved in one process
    "docs/how-to/packet-engine.md": 85, "docs/explanation/interfaces.md": 65,
    "docs/how-to/verify.md": 43,
    "docs/how-to/logca-hierarchy.md": 33,
    "docs/how-to/logca-answers.md": 28, "docs/tutorial/logca.md": 15,
    "docs/explanation/logca.md": 15, "docs/how-to/density-bound.md": 10}.items()})
LONG_TESTS.update({"tests/test_docs.py::test_the_site_builds_strictly": 12,
                   "tests/test_docs.py::test_the_tutorial_notebook_runs": 10})
# The other files with long tests or set-ups (module fixtures shared by their tests): the
# sum of what --durations listed of them.
LONG_FILES = {f"tests/{k}": v for k, v in {
    # the demo, run once for the file's tests, with the tests and pages that share its GPU
    # fits and a calibration (SHARED below): 118, test_logca_select.py 59, the GPU page 92,
    # the README 60, the calibration page 30, the calibration's command-line test 36
    "test_demo.py": 395,
    "test_lpn_calibrate_trust.py": 65,
    "test_lpn_aes_gcm.py": 17, "test_lpn_batch.py": 22,
    "test_explore_delays.py": 12, "test_logca_design.py": 11, "test_lpn_stopping.py": 19,
    "test_lpn_semantics.py": 10, "test_lpn_sizing.py": 10, "test_lpn_classes.py": 9,
    "test_measure.py": 9,
    # with test_lpn_interface.py (71), test_lpn_interface_derived.py (46),
    # test_lpn_interface_library.py and test_explore_formulas.py (12): SHARED below
    "test_emitted_modules.py": 170}.items()}


# Tests (or whole files) that share one expensive extraction (tests/extracted.py keeps it
# per worker process): they run as one unit, under the name of a listed test.
SHARED = {f"tests/{k}": f"tests/{v}" for k, v in {
    "test_lpn_interface_link.py::test_emitted_link_modules_are_unchanged[jpeg-decoder-pcie]":
        "test_lpn_interface_link.py::test_the_pcie_decoder_prices_its_file_layout",
    # the AES-GCM stream's interface and label; the credit link's interface
    # (tests/extracted.py: reusing_extractions)
    "test_lpn_interface_stream.py": "test_docs.py::test_every_code_block_runs["
                                    "docs/how-to/packet-engine.md]",
    "test_lpn_interface_link.py": "test_docs.py::test_every_code_block_runs["
                                  "docs/explanation/interfaces.md]",
    # the shipped GPU data's fits (tests/shared_fits.py: reusing_fits), and the README's
    # `lpn calibrate` (reusing_calibrations)
    "test_logca_select.py": "test_demo.py",
    "test_docs.py::test_every_code_block_runs[docs/how-to/gpu-pays-off.md]": "test_demo.py",
    "test_docs.py::test_every_code_block_runs[README.md]": "test_demo.py",
    "test_docs.py::test_every_code_block_runs[docs/how-to/calibrate.md]": "test_demo.py",
    "test_lpn_calibrate.py::test_cli_calibrate_writes_params_that_simulate_reads":
        "test_demo.py",
    # Fig. 2's interface over its default space (2 s) and Menshen's over its 100 packets
    # (3 s), each read by several files (tests/extracted.py: default_interface,
    # space_interface)
    "test_lpn_interface.py": "test_emitted_modules.py",
    "test_lpn_interface_derived.py": "test_emitted_modules.py",
    "test_lpn_interface_library.py": "test_emitted_modules.py",
    "test_explore_formulas.py": "test_emitted_modules.py",
}.items()}


def _unit(nodeid: str) -> str:
    """The work unit a test belongs to: its shared unit, else itself when listed, else
    its file's shared unit, else its file."""
    file = nodeid.split("::")[0]
    if nodeid in SHARED:
        return SHARED[nodeid]
    if nodeid in LONG_TESTS or file in SPLIT_FILES:
        return nodeid
    return SHARED.get(file, file)


def _unit_seconds(unit: str) -> float:
    return LONG_TESTS.get(unit, LONG_FILES.get(unit, 0.0))


def pytest_collection_modifyitems(config, items):
    # stable: the units nobody listed keep pytest's order, after the long ones
    items.sort(key=lambda item: -_unit_seconds(_unit(item.nodeid)))


@pytest.hookimpl(optionalhook=True)     # pytest-xdist may be absent
def pytest_xdist_make_scheduler(config, log):
    """`--dist load` (what `make test` asks for) as units in the order above."""
    if config.getvalue("dist") != "load":
        return None
    from xdist.scheduler import LoadScopeScheduling

    class LongestFirst(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return _unit(nodeid)

    config.option.loadscopereorder = False      # keep the collection's (longest first) order
    return LongestFirst(config, log)
