"""One process per data directory (R-HOST-2): an OS file lock `open_memory` takes and the
service's close releases.

Two processes on one data dir once ended with the DuckDB vector files quarantined and empty,
no caller told and `doctor` healthy: the embedded stores are single-process by design. The
choice here is a clear refusal, not sharing: the second process gets StoreError("data
directory … is in use by process N") at open. The lock is `flock` on `<data dir>/.lock`, so
the kernel drops it when the holder dies (a SIGKILL leaves no stale lock to clean up), and
the holder's pid is written into the file only to name it in the error.

Within one process several services may open the same directory (tests, a host reopening
after a failure): they share the one lock, counted, and the last close releases it.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path

from memory_core.domain.errors import StoreError

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows: no flock; the embedded stores still open
    fcntl = None  # type: ignore[assignment]

__all__ = ["LOCK_FILE", "DataDirLock", "lock_data_dir"]

LOCK_FILE = ".lock"

_guard = threading.Lock()
_held: dict[Path, tuple[int, int]] = {}  # resolved dir -> (fd, holders in this process)


class DataDirLock:
    """This process's hold on one data dir; `release` is idempotent."""

    def __init__(self, root: Path) -> None:
        self._root = root
        self._released = False

    def release(self) -> None:
        with _guard:
            if self._released:
                return
            self._released = True
            fd, holders = _held[self._root]
            if holders > 1:
                _held[self._root] = (fd, holders - 1)
                return
            del _held[self._root]
            os.close(fd)  # closing the only descriptor drops the flock


def lock_data_dir(root: Path) -> DataDirLock:
    """Hold `root` for this process, or raise StoreError naming the process that does."""
    root = root.resolve()
    with _guard:
        if root in _held:
            fd, holders = _held[root]
            _held[root] = (fd, holders + 1)
            return DataDirLock(root)
        path = root / LOCK_FILE
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        if fcntl is not None:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                holder = _holder(fd)
                os.close(fd)
                raise StoreError(
                    f"data directory {root} is in use by process {holder}: one process "
                    "per data directory (close it, or give this one another --data-dir)"
                ) from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        _held[root] = (fd, 1)
        return DataDirLock(root)


def _holder(fd: int) -> str:
    try:
        text = os.pread(fd, 32, 0).decode("ascii", "replace").strip()
    except OSError:
        text = ""
    return text if text.isdigit() else "(unknown)"
