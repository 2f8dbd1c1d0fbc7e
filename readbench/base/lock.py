"""An exclusive, crash-safe lock on an output location: one readbench process writes it at a time.

`fcntl.flock` on a lock file: the kernel drops the lock when the process ends, even on SIGKILL,
so a killed process never leaves the location locked. The file holds the holder's pid and start
time for the message a second process gets (`readbench eval` per run directory, `readbench
replay` per `--out`; GitHub issues 13 and 27).
"""

from __future__ import annotations

import fcntl
import os
import time
from pathlib import Path
from typing import Any

__all__ = ["Locked", "OutputLock"]


class Locked(RuntimeError):
    """Another process holds the lock; the message names the location, the holder and what to do."""


class OutputLock:
    """Exclusive lock on `lock_path` while the `with` block runs.

    Args:
        lock_path: the lock file (its directory is created).
        name: the locked location as the message names it (a run directory, an `--out`).
        what: the kind of process, e.g. `readbench eval`.
        hint: what the refused user can do, e.g. `wait for it to finish or use another --run-id`.
        remove: delete the lock file on exit (for a lock file beside the output, not inside it).

    Raises:
        Locked: on entry, when another process holds the lock:
            `"{name} is in use by another {what} (pid N, started ...); {hint}"`.
    """

    def __init__(self, lock_path: Path, name: str, what: str, hint: str, remove: bool = False) -> None:
        self.path, self.name, self.what, self.hint, self.remove = Path(lock_path), name, what, hint, remove
        self._fh: Any = None

    def __enter__(self) -> OutputLock:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fh = open(self.path, "a+")
        try:
            fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            fh.seek(0)
            holder = fh.read().strip() or "unknown process"
            fh.close()
            raise Locked(f"{self.name} is in use by another {self.what} ({holder}); {self.hint}") from None
        fh.seek(0)
        fh.truncate()
        fh.write(f"pid {os.getpid()}, started {time.strftime('%Y-%m-%d %H:%M:%S')}\n")
        fh.flush()
        self._fh = fh
        return self

    def __exit__(self, *exc: object) -> None:
        if self.remove:
            self.path.unlink(missing_ok=True)
        fcntl.flock(self._fh, fcntl.LOCK_UN)
        self._fh.close()
