"""Ctrl-C and the time budget of the Z3 commands, `lpn verify` and `lpn interface` (issue
33 items 3 and 4).

Z3 catches SIGINT itself while it solves: its own handler cancels the check, which returns
``unknown`` ("interrupted from keyboard"), and Python never sees the signal; the proofs
read that ``unknown`` as a time-out and went on with the next query, so Ctrl-C took a
minute and ended with exit 3. Here Z3's handler is turned off (``ctrl_c=false``) and
Python's own stays: its C handler writes the signal's number to a wake-up socket, a
watcher thread reading it calls ``Z3_interrupt`` (the running check returns at once), and
the main thread raises KeyboardInterrupt at its next instruction. The budget's timer does
the same from its thread, so a run past its budget stops even inside one long check.

The command prints what was decided so far (the progress lines it was given) and exits
130 on Ctrl-C, 3 when the budget ran out.
"""

from __future__ import annotations

import _thread
import ctypes
import re
import signal
import socket
import sys
import threading
import time
from contextlib import contextmanager

DEFAULT_BUDGET = "10m"
"""The time budget of one `lpn verify` or `lpn interface` run unless --timeout says."""


def duration(text: str | None) -> float | None:
    """--timeout: '60s', '2m', '500ms' or a number of seconds (None: no budget)."""
    import re

    from ..errors import invalid
    if text is None:
        return None
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*(ms|s|m|min)?\s*", text)
    if not m or float(m.group(1)) <= 0:
        raise invalid("--timeout", text, "a duration > 0 such as 60s, 2m or 500ms")
    scale = {"ms": 0.001, "s": 1, None: 1, "m": 60, "min": 60}[m.group(2)]
    return float(m.group(1)) * scale


class BudgetSpent(Exception):
    """The run's time budget ran out (raised in the main thread by the budget's timer)."""


class Stopper:
    """What the run has decided so far: the progress lines, in order, and when it began."""

    def __init__(self, seconds: float | None):
        self.seconds, self.began, self.lines = seconds, time.monotonic(), []
        self.expired = False
        self.stopping = False       # Ctrl-C or the budget asked the run to stop
        self.lock, self.left = threading.Lock(), threading.Event()

    def close(self) -> None:
        """The run is over: the budget's timer interrupts nothing from now on."""
        with self.lock:
            self.left.set()

    def note(self, text: str) -> None:
        self.lines.append(str(text))

    def where(self) -> str:
        elapsed = time.monotonic() - self.began
        done = "; ".join(self.lines[-3:]) if self.lines else "nothing decided yet"
        return f"after {elapsed:.1f} s: {done}"


def _interrupt_z3() -> None:
    import z3

    from ..lpn.analysis.interfaces.solver import interrupt_questions
    z3.main_ctx().interrupt()           # the proofs' checks
    interrupt_questions()               # the interface's, each in a context of its own


@contextmanager
def stoppable(seconds: float | None):
    """Within: Ctrl-C raises KeyboardInterrupt within a moment even inside a Z3 check, and
    after ``seconds`` (None: never) BudgetSpent is raised the same way. Yields the
    :class:`Stopper` that progress lines go to. Off the main thread signals cannot be
    caught, so there only the budget applies."""
    import z3

    # imported here: the timer's thread must not wait on the import lock to stop a check
    from ..lpn.analysis.interfaces import solver  # noqa: F401
    stopper = Stopper(seconds)
    main = threading.current_thread() is threading.main_thread()
    reader, writer = socket.socketpair()
    writer.setblocking(False)
    previous_fd = signal.set_wakeup_fd(writer.fileno(), warn_on_full_buffer=False) \
        if main else None
    # Python's own SIGINT handler for the run: the budget raises through interrupt_main(),
    # which does nothing while SIGINT is ignored or left to the C default (a process that
    # ignored it, e.g. after a forked worker's set-up ran in it, would never stop)
    previous_handler = signal.signal(signal.SIGINT, signal.default_int_handler) \
        if main else None

    lock, left = stopper.lock, stopper.left

    def insist(raise_now: bool, expired: bool = False):
        # Again each half second until the run has left the block: an interrupt that lands
        # in a finaliser (__del__, a weakref callback; Z3's Context.__del__ once the
        # interface asks in contexts of its own) is lost ("unraisable"), and the run went
        # on to exit 0 after Ctrl-C, about one run in four.
        while True:
            with lock:                      # never once the run has left the block
                if left.is_set():
                    return
                stopper.expired = stopper.expired or expired
                stopper.stopping = True
                if raise_now:
                    _thread.interrupt_main()    # KeyboardInterrupt at the next instruction
                _interrupt_z3()             # ... which a running Z3 check returns to
            raise_now = True
            if left.wait(0.5):
                return

    def watch():
        while True:
            try:
                got = reader.recv(64)
            except OSError:
                return
            if not got:
                return
            if signal.SIGINT in got:
                insist(raise_now=False)     # Python's own handler has raised once already
                return

    def expire():
        insist(raise_now=True, expired=True)

    ctrl_c = z3.get_param("ctrl_c")
    z3.set_param("ctrl_c", False)
    watcher = threading.Thread(target=watch, name="accelperf-ctrl-c", daemon=True)
    watcher.start()
    timer = None
    if seconds is not None:
        timer = threading.Timer(seconds, expire)
        timer.daemon = True
        timer.start()
    try:
        yield stopper
    except KeyboardInterrupt:
        if stopper.expired:
            raise BudgetSpent(stopper.where()) from None
        raise
    except z3.Z3Exception:
        # Z3_interrupt cancels the context: a push or a check begun before the
        # KeyboardInterrupt reaches the main thread fails with "push canceled" instead
        if not stopper.stopping:
            raise
        if stopper.expired:
            raise BudgetSpent(stopper.where()) from None
        raise KeyboardInterrupt from None
    finally:
        stopper.close()
        if timer is not None:
            timer.cancel()
        if main:
            signal.set_wakeup_fd(previous_fd)
            signal.signal(signal.SIGINT, previous_handler)
        writer.close()                      # the watcher reads the end of the socket
        watcher.join(timeout=1)
        reader.close()
        z3.set_param("ctrl_c", ctrl_c)
        # An interrupt of the main context that found no check running there (the
        # interface asks in contexts of its own) stays pending, and the next proof in this
        # process drew a sample outside its space (an AC symbol count of -3 for the JPEG
        # decoder). Nothing interrupts any more: one empty check takes the pending one.
        z3.Solver().check()


WRAPPED_INTERRUPT = re.compile(r"argument \d+: KeyboardInterrupt\b")
"""How ctypes words a KeyboardInterrupt raised while it converted a call's argument."""


def _is_interrupt(exc: BaseException | None) -> bool:
    return isinstance(exc, KeyboardInterrupt) or (
        isinstance(exc, ctypes.ArgumentError) and bool(WRAPPED_INTERRUPT.match(str(exc))))


@contextmanager
def interrupts_kept(period: float = 0.25):
    """Within: a Ctrl-C that lands in a finaliser still stops the run.

    Python runs ``__del__`` and weakref callbacks wherever an object happens to be freed,
    and an exception raised there is "unraisable": printed as "Exception ignored" and
    dropped. Z3 frees its terms in ``__del__``, so a Ctrl-C in the seconds a command
    spends building a space or a model, before its stoppable block, was lost there:
    `lpn interface` ran to the end and exited 0. Here such an interrupt starts a thread
    that raises KeyboardInterrupt in the main thread again, every ``period`` seconds
    until the block is left. Not from the hook itself: the main thread runs the hook,
    and an interrupt raised there is dropped like the first. Every other unraisable
    exception goes where it went before."""
    previous = sys.unraisablehook
    lock, left, insisting = threading.Lock(), threading.Event(), []

    def insist():
        delay = 0.01                        # the hook returns first
        while not left.wait(delay):
            with lock:                      # never once the block is left
                if left.is_set():
                    return
                _thread.interrupt_main()    # nothing where SIGINT is not Python's
            delay = period

    def hook(unraisable):
        if not _is_interrupt(unraisable.exc_value):
            previous(unraisable)
            return
        with lock:
            if insisting or left.is_set():
                return
            insisting.append(threading.Thread(target=insist, daemon=True,
                                              name="accelperf-lost-ctrl-c"))
        insisting[0].start()
    sys.unraisablehook = hook
    try:
        yield
    finally:
        while True:
            try:
                with lock:
                    left.set()
                break
            except KeyboardInterrupt:       # the thread's last, fired as the block ended
                continue
        sys.unraisablehook = previous


def run_stopping(command: str, label: str, seconds: float | None, func):
    """``func(tick)`` under a progress spinner, stoppable: Ctrl-C prints what was decided
    so far and exits 130; the budget's end prints where the run was and exits 3."""
    import click

    from ..lpn import Interrupted
    from .common import progress_run
    with stoppable(seconds) as stopper:
        def tick(text, show):
            stopper.note(text)
            show(text)
        try:
            try:
                return progress_run(None, label, lambda show: func(lambda t: tick(t, show)))
            except ctypes.ArgumentError as exc:
                # the interrupt landed while ctypes converted an argument of a Z3 call,
                # and ctypes wraps whatever is raised there ("argument 1:
                # KeyboardInterrupt"): it is still the interrupt. Not only once the
                # watcher has seen the signal (stopper.stopping): Python's own handler
                # raises first, and a run once stopped there before the watcher ran
                # ("internal error: ArgumentError", exit 1, for Ctrl-C)
                if _is_interrupt(exc):
                    raise KeyboardInterrupt from None
                raise
        except (KeyboardInterrupt, Interrupted):
            stopper.close()
            if stopper.expired:
                click.echo(f"accelperf: {command}: its time budget ({seconds:g} s) ran out "
                           f"{stopper.where()}; give --timeout a longer one", err=True)
                raise SystemExit(3) from None
            click.echo(f"accelperf: {command}: interrupted {stopper.where()}", err=True)
            raise SystemExit(130) from None


__all__ = ["BudgetSpent", "DEFAULT_BUDGET", "Stopper", "duration", "interrupts_kept",
           "run_stopping", "stoppable"]
