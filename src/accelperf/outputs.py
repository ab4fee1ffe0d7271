"""Writing output files safely: one writer per file, and no half-written file left behind.

Two kinds of output need two guards (issue 34):

* a file written **over time** (a batch's ``--out`` and its ``.rows.csv`` / ``.partial``
  companions) is held under :class:`OutputLock`, an exclusive advisory lock
  (``flock``) on ``FILE.lock`` beside it that records the holder's PID and command. A
  second command on the same file is refused in one line naming that process, instead of
  both appending (duplicate rows) or the second truncating the first's rows. The kernel
  drops the lock of a process that dies, so a lock file left by a killed command is simply
  taken over, with a note. A forked child (a batch's local worker) lets go of its copy
  at once, so that a client killed with SIGKILL frees the file even while its orphaned
  workers are still winding down.
* a file written **at once** (a report, a figure, a params file, a JSON result) goes
  through :func:`replacing` / :func:`write_atomic`: written to a temporary file in the
  same directory, flushed to disk, then renamed over the target (``os.replace``, atomic
  on POSIX). A crash or Ctrl-C mid-write leaves the old file, never a truncated one.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import sys
import tempfile
import weakref
from pathlib import Path

from .errors import invalid

LOCK_SUFFIX = ".lock"
_HELD: weakref.WeakSet = weakref.WeakSet()        # the OutputLocks this process holds


def _drop_inherited_locks() -> None:
    """In a forked child: close the copies of the parent's lock files. ``flock`` belongs
    to the open file, which the child shares, so a child that kept its copy would hold
    the parent's lock after the parent died. The child never owned it: nothing else."""
    for lock in list(_HELD):
        if lock.fd is not None:
            with contextlib.suppress(OSError):
                os.close(lock.fd)
            lock.fd = None
    _HELD.clear()


os.register_at_fork(after_in_child=_drop_inherited_locks)


def lock_path(path: Path) -> Path:
    return path.with_name(path.name + LOCK_SUFFIX)


def _command_line() -> str:
    words = [Path(sys.argv[0]).name, *sys.argv[1:]] if sys.argv and sys.argv[0] else ["python"]
    return " ".join(words)[:200]


def _holder(fd: int) -> tuple[str, str]:
    """(PID, command) recorded in an open lock file; empty strings when it holds none."""
    os.lseek(fd, 0, os.SEEK_SET)
    text = os.read(fd, 4096).decode("utf-8", "replace")
    pid, _, command = text.partition("\n")
    return pid.strip(), command.strip()


class OutputLock:
    """The exclusive right to write ``path`` (and its companions) for as long as it is
    held: ``with OutputLock(out, "--out"): ...``, or :meth:`acquire` / :meth:`release`.

    Refused (``ModelError``: exit 2 on the command line) while another live process holds
    it; a lock file whose process is gone is taken over, with a one-line note on stderr.
    """

    def __init__(self, path: Path, option: str = "out", note=None):
        self.path, self.option = Path(path), option
        self.lock = lock_path(self.path)
        self.note = note or (lambda text: print(text, file=sys.stderr))
        self.fd: int | None = None

    def acquire(self) -> OutputLock:
        while True:
            try:
                fd = os.open(self.lock, os.O_RDWR | os.O_CREAT, 0o644)
            except OSError as exc:
                raise invalid(self.option, str(self.path), f"its lock file {self.lock} "
                                                           f"cannot be created "
                                                           f"({exc.strerror or exc})") from None
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                pid, command = _holder(fd)
                os.close(fd)
                who = f"process {pid} ({command})" if pid else "another process"
                raise invalid(self.option, str(self.path),
                              f"in use by {who}: wait for it to finish or stop it, or give "
                              f"another {self.option} (two writers would mix or wipe each "
                              f"other's rows)") from None
            # The holder before us may have removed the file between our open and our
            # lock: then we hold a lock on a name nobody sees. Open the name again.
            try:
                same = os.fstat(fd).st_ino == os.stat(self.lock).st_ino
            except FileNotFoundError:
                same = False
            if same:
                break
            os.close(fd)
        pid, command = _holder(fd)
        if pid and pid != str(os.getpid()):
            self.note(f"note: {self.lock} was left by process {pid} ({command}), which is "
                      f"no longer running: taken over")
        os.ftruncate(fd, 0)
        os.lseek(fd, 0, os.SEEK_SET)
        os.write(fd, f"{os.getpid()}\n{_command_line()}\n".encode())
        self.fd = fd
        _HELD.add(self)
        return self

    def release(self) -> None:
        if self.fd is None:
            return
        with contextlib.suppress(FileNotFoundError):
            os.unlink(self.lock)          # removed while still locked: see acquire
        os.close(self.fd)
        self.fd = None
        _HELD.discard(self)

    def __enter__(self) -> OutputLock:
        return self.acquire() if self.fd is None else self

    def __exit__(self, *exc) -> None:
        self.release()

    def __repr__(self) -> str:
        return f"OutputLock({str(self.path)!r}, {'held' if self.fd is not None else 'free'})"


def _new_file_mode() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return 0o666 & ~mask


def fsync_dir(directory: Path) -> None:
    """Make a rename in ``directory`` durable (a no-op where directories cannot be opened)."""
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


@contextlib.contextmanager
def replacing(path: Path | str):
    """Yield a temporary path beside ``path`` (same suffix, so writers that go by it still
    work); when the block ends without an error the file is flushed to disk and renamed
    over ``path`` in one step, and on an error it is removed and ``path`` is untouched."""
    path = Path(path)
    parent = path.parent if str(path.parent) else Path(".")
    fd, name = tempfile.mkstemp(prefix=f".{path.stem}.", suffix=path.suffix or ".tmp",
                                dir=parent)
    os.close(fd)
    temp = Path(name)
    try:
        yield temp
        mode = path.stat().st_mode & 0o777 if path.exists() else _new_file_mode()
        os.chmod(temp, mode)
        with open(temp, "rb+") as fh:
            os.fsync(fh.fileno())
        os.replace(temp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            temp.unlink()
        raise
    fsync_dir(parent)


def write_atomic(path: Path | str, data: str | bytes, encoding: str = "utf-8") -> None:
    """``path`` holds ``data`` (text or bytes), all of it or (on a crash) its old content."""
    with replacing(path) as temp:
        if isinstance(data, str):
            temp.write_text(data, encoding=encoding)
        else:
            temp.write_bytes(data)
