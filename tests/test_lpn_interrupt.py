"""Ctrl-C stops a compiled run (issue 22): SIGINT reaches the C loop, which stops with
Interrupted and the report of where it was; the CLI exits 130."""

import os
import signal
import threading
import time
from pathlib import Path

import pytest
from child_process import signal_when

from accelperf.lpn import Interrupted, Net, Out, simulate
from accelperf.lpn import compiled

pytestmark = pytest.mark.skipif(compiled.compiler_missing() is not None,
                                reason=f"compiled backend: {compiled.compiler_missing()}")

HUNDRED_MILLION = 100_000_000
LOOP_NET = '''
from accelperf.lpn import Net, Out


def build():
    """One job that goes round a one-cycle loop n times: n commits."""
    net = Net("countdown")
    job = net.token_type("Job", "n")
    work, done = net.place("work", job), net.place("done", job)
    net.transition("step", inputs={work: 1}, outputs=[], delay=1,
                   route=[(done, lambda j: j.n == 0, Out(1, copy="work")),
                          (work, lambda j: j.n > 0, Out(1, props=lambda j: {"n": j.n - 1}))])
    net.start, net.done = work, done
    net.tokens_from_input = lambda given: {"work": [(int(given["n"]),)]}
    return net.build()
'''


def countdown(tmp_path: Path):
    path = tmp_path / "countdown.py"
    path.write_text(LOOP_NET)
    namespace = {}
    exec(compile(LOOP_NET, str(path), "exec"), namespace)
    return path, namespace["build"]()


def test_a_small_countdown_runs_to_the_end(tmp_path):
    _, model = countdown(tmp_path)
    r = simulate(model, {"n": 5000}, backend="compiled")
    assert r.total_commits == 5001 and r.latency == 5001


@pytest.fixture
def python_sigint():
    """Python's own SIGINT handler for the test: a library an earlier test loaded (Dask,
    Playwright) may have left its own, and the engine must hand back Python's."""
    before = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, before)


@pytest.mark.skipif(threading.current_thread() is not threading.main_thread(),
                    reason="signals reach only the main thread")
def test_sigint_stops_a_compiled_run_in_this_process(tmp_path, python_sigint):
    _, model = countdown(tmp_path)
    compiled.engine(model)                      # compiled before the clock starts
    timer = threading.Timer(0.3, os.kill, (os.getpid(), signal.SIGINT))
    timer.start()
    try:
        with pytest.raises(Interrupted) as caught:
            simulate(model, {"n": HUNDRED_MILLION}, backend="compiled")
    finally:
        timer.cancel()
    stopped = caught.value
    assert "interrupted at cycle" in str(stopped)
    assert 0 < stopped.result.total_commits < HUNDRED_MILLION
    assert stopped.result.backend == "compiled"
    assert "work: 1 free" in stopped.report          # where it was: the job still going
    # Python's own handler is back: the next SIGINT is a KeyboardInterrupt again
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def _engine_loaded(pid: int) -> bool:
    try:
        return "/net-" in Path(f"/proc/{pid}/maps").read_text()
    except OSError:
        return False


@pytest.mark.skipif(not Path("/proc/self/maps").exists(), reason="needs Linux's /proc")
def test_ctrl_c_on_the_cli_exits_130_with_the_report(tmp_path):
    path, model = countdown(tmp_path)
    compiled.engine(model)                      # the child finds the engine in the cache
    def in_the_c_loop(pid):
        if not _engine_loaded(pid):
            return False
        time.sleep(0.2)                          # the engine is loaded: the run starts
        return True
    status, err = signal_when(["lpn", "simulate", f"{path}:build", "--input",
                               f'{{"n": {HUNDRED_MILLION}}}', "--backend", "compiled"],
                              in_the_c_loop, signal.SIGINT, timeout=60)
    assert status == 130, err
    assert "interrupted at cycle" in err and "after" in err and "work: 1 free" in err
