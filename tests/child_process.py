"""The command line in a child process, stopped by a signal once it is under way (the
batch and Ctrl-C tests of issue 22)."""

import signal
import subprocess
import sys
import time

ACCELPERF = [sys.executable, "-c", "from accelperf.cli import main; raise SystemExit(main())"]


def _as_from_a_shell():
    """The child's signals as a shell leaves them: SIGINT handled by default and not
    blocked, whatever this test process inherited or set (an ignored SIGINT is inherited
    across exec, and Python then leaves it ignored)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT, signal.SIGTERM})


def signal_when(args, ready, sig, timeout: float = 120) -> tuple[int, str]:
    """Run ``accelperf ARGS``, send ``sig`` once ``ready(pid)`` is true (or it has
    ended), and return its exit status and stderr."""
    child = subprocess.Popen(ACCELPERF + list(args), stdout=subprocess.DEVNULL,
                             stderr=subprocess.PIPE, text=True, preexec_fn=_as_from_a_shell)
    try:
        while child.poll() is None and not ready(child.pid):
            time.sleep(0.01)
        if child.poll() is None:
            child.send_signal(sig)
        _, err = child.communicate(timeout=timeout)
    finally:
        if child.poll() is None:
            child.kill()
    return child.returncode, err


def rows_in(path, at_least: int):
    """A ``ready`` test: the CSV at ``path`` has ``at_least`` rows under its header."""
    return lambda _pid: path.exists() and path.read_bytes().count(b"\n") > at_least
