"""Test runs in the local sandbox memoised by workspace content (GitHub issue 26 item 2).

Measured on the nightly matrix's simulated samples (2026-12): the test
commands (the agent's own ``pytest`` runs through the bash tool and the checker's run of the
task's ``test_cmd``) are most of a simulated sample's CPU time, e.g. 7-9 CPU s for one run of
more-itertools' ``tests/test_more.py`` against ~1 CPU s for everything readbench and inspect do
in a 100-call sample. Every arm of a sample starts from the same tree in the same directory
(readbench.sandbox.local) and the simulated agent makes the same edits in most arms, so the same
test command runs on byte-identical trees up to once per arm.

A test run's observable result is a function of its inputs: the command line (with its ``env -i``
environment, readbench.tools._env), the working directory, the bytes of the workspace tree and of
the sample's private temporary directory (``TMPDIR``, readbench.sandbox.local.sample_tmpdir:
pytest numbers its ``tmp_path`` directories there from what earlier runs left), and what lies
outside them and does not change during a run (the interpreter, the task's deps directory).
`RunMemo` therefore keys a run by (command, cwd, timeout, both paths, both trees' content digests
before the run) and stores the `ExecResult` together with the run's net effect on each tree (files
and directories created, changed or removed, e.g. ``__pycache__``, ``pytest-of-<user>/pytest-N``).
A later run with the same key gets the stored result and the same effects applied, which leaves
both trees byte-identical to what running the command would have left (file modification times
aside).

What is memoised, and what not:
- only commands whose shell script runs a test runner (`is_test_command`: ``pytest``/``py.test``,
  the corpus's checkers and the simulated agent's test steps); other commands are cheap;
- not a result that looks load-dependent: a ``timeout(1)`` kill (124, 137), a signal or the
  checker's CPU limit (exit >= 128 or < 0), nor an exec that raised (inspect's wall timeout);
- nothing across runs: the memo lives in this process and `readbench eval` empties it when a run
  starts (readbench.run.runner.run_plan), so two runs in one process (the determinism test) each
  run their own tests.

A test whose outcome is not a function of its inputs (wall clock, unseeded randomness, the
network) gives, within one run, the outcome of its first run for every later identical run. Set
``READBENCH_RUN_MEMO=0`` to run every test command.
"""

from __future__ import annotations

import hashlib
import os
import re
import stat
import time
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["ENV_SWITCH", "MAX_BYTES", "RunMemo", "TreeEffect", "apply_effect", "enabled", "is_test_command",
           "snapshot", "storable", "tree_digest", "tree_effect"]

#: ``READBENCH_RUN_MEMO=0`` turns the memo off (every test command runs)
ENV_SWITCH = "READBENCH_RUN_MEMO"
#: bound on the bytes a memo holds (outputs + files of the effects); oldest entries go first
MAX_BYTES = 256 * 1024 * 1024
#: a test runner in a shell script: pytest, ``python -m pytest``, py.test
_TEST_RUNNER = re.compile(r"(^|[\s;&|/(])(pytest|py\.test)(\s|$)")

#: one entry of a snapshot: ("d", mode) a directory, ("f", mode, digest) a file, ("l", target) a symlink
Entry = tuple[Any, ...]

#: (path, inode, size, mtime_ns, ctime_ns) -> BLAKE2b digest of a regular file's bytes; ctime
#: changes on every write and cannot be set from user space, so a hit is the same bytes -- once the
#: clock has moved past the write's tick (`RACY_SECONDS`)
_FILE_DIGESTS: dict[tuple[str, int, int, int, int], bytes] = {}
_FILE_DIGESTS_BOUND = 500_000
#: a digest taken less than this after the file's ctime is not cached: file times tick coarsely (per
#: jiffy, 1-10 ms, on kernels before 6.13), so a same-size rewrite in the same tick keeps the key
#: (git's "racily clean" entries); such a file is hashed again at the next snapshot
RACY_SECONDS = 2.0
_now = time.time


def enabled() -> bool:
    """False when ``READBENCH_RUN_MEMO`` is ``0`` (or ``false``/``no``/``off``)."""
    return os.environ.get(ENV_SWITCH, "1").strip().lower() not in ("0", "false", "no", "off")


def is_test_command(cmd: list[str]) -> bool:
    """Whether `cmd` (an argv, e.g. ``env -i ... bash -c SCRIPT``) runs a test runner: its last
    argument (the shell script) names ``pytest`` or ``py.test`` as a word."""
    return len(cmd) > 1 and _TEST_RUNNER.search(cmd[-1]) is not None


def _file_digest(path: str, st: os.stat_result) -> bytes:
    key = (path, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)
    digest = _FILE_DIGESTS.get(key)
    if digest is None:
        h = hashlib.blake2b(digest_size=16)
        with open(path, "rb") as fh:
            for chunk in iter(lambda: fh.read(1 << 20), b""):
                h.update(chunk)
        digest = h.digest()
        if _now() - st.st_ctime < RACY_SECONDS:  # racily clean: a same-size rewrite may keep these times
            return digest
        if len(_FILE_DIGESTS) >= _FILE_DIGESTS_BOUND:
            _FILE_DIGESTS.clear()
        _FILE_DIGESTS[key] = digest
    return digest


def snapshot(root: Path) -> dict[str, Entry]:
    """Every directory, regular file and symlink under `root` (not following symlinks), by path
    relative to `root`: ``("d", mode)``, ``("f", mode, 16-byte BLAKE2b of the bytes)`` or
    ``("l", link target)``. Files unchanged since they were last hashed (same inode, size, mtime
    and ctime) are not read again. Other kinds (sockets, fifos) are recorded as ``("o", mode)``.

    Raises:
        OSError: `root` cannot be listed.
    """
    out: dict[str, Entry] = {}
    stack = [("", str(root))]
    while stack:
        rel_dir, abs_dir = stack.pop()
        with os.scandir(abs_dir) as it:
            for e in it:
                rel = f"{rel_dir}{e.name}"
                st = e.stat(follow_symlinks=False)
                mode = stat.S_IMODE(st.st_mode)
                if stat.S_ISLNK(st.st_mode):
                    out[rel] = ("l", os.readlink(e.path))
                elif stat.S_ISDIR(st.st_mode):
                    out[rel] = ("d", mode)
                    stack.append((rel + "/", e.path))
                elif stat.S_ISREG(st.st_mode):
                    out[rel] = ("f", mode, _file_digest(e.path, st))
                else:
                    out[rel] = ("o", mode)
    return out


def tree_digest(snap: dict[str, Entry]) -> bytes:
    """A 16-byte digest of a `snapshot` (paths, kinds, modes, contents; not times)."""
    h = hashlib.blake2b(digest_size=16)
    for rel in sorted(snap):
        h.update(repr((rel, snap[rel])).encode("utf-8", "surrogateescape"))
    return h.digest()


@dataclass(frozen=True)
class TreeEffect:
    """The net change a command made to a tree.

    Attributes:
        made: (relative path, entry, bytes or None) of every entry created or changed, parents
            before children; bytes for files, None for directories and symlinks.
        removed: relative paths of entries that are gone, children before parents.
    """

    made: tuple[tuple[str, Entry, bytes | None], ...]
    removed: tuple[str, ...]

    @property
    def nbytes(self) -> int:
        """Bytes of file contents held."""
        return sum(len(b) for _, _, b in self.made if b is not None)


def tree_effect(root: Path, before: dict[str, Entry], after: dict[str, Entry]) -> TreeEffect:
    """The `TreeEffect` that turns `before` into `after` (both snapshots of `root`; the bytes of
    made files are read from `root` now).

    Raises:
        OSError: a made file cannot be read.
    """
    made = []
    for rel in sorted(after, key=lambda p: (p.count("/"), p)):
        entry = after[rel]
        if before.get(rel) == entry:
            continue
        data = (root / rel).read_bytes() if entry[0] == "f" else None
        made.append((rel, entry, data))
    removed = sorted((rel for rel in before if rel not in after), key=lambda p: (-p.count("/"), p))
    return TreeEffect(tuple(made), tuple(removed))


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        for child in sorted(path.iterdir(), reverse=True):
            _remove(child)
        path.rmdir()
    elif path.exists() or path.is_symlink():
        path.unlink()


def apply_effect(root: Path, effect: TreeEffect) -> None:
    """Make `effect`'s changes under `root` (create or replace what it made, remove what it
    removed), so a tree equal to the effect's `before` becomes equal to its `after`.

    Raises:
        OSError: a path cannot be written or removed.
    """
    for rel in effect.removed:
        _remove(root / rel)
    for rel, entry, data in effect.made:
        path = root / rel
        kind = entry[0]
        if kind == "d":
            if path.exists() and not path.is_dir():
                _remove(path)
            path.mkdir(exist_ok=True)
            path.chmod(entry[1])
        elif kind == "l":
            if path.exists() or path.is_symlink():
                _remove(path)
            path.symlink_to(entry[1])
        elif kind == "f":
            if path.is_dir() and not path.is_symlink():
                _remove(path)
            elif path.is_symlink():
                path.unlink()
            path.write_bytes(data or b"")
            path.chmod(entry[1])
        # "o" (socket, fifo): left to whoever made it; a run leaving one is not memoised


def storable(returncode: int) -> bool:
    """Whether an exit status is a test outcome and not load or a kill: 0-123 and 125-127."""
    return 0 <= returncode < 128 and returncode != 124


class RunMemo:
    """Results and tree effects of test runs, by a key naming the command and the trees it ran on
    (readbench.sandbox.local: command, cwd, timeout, the workspace and temporary directories and
    their digests), least recently used first out beyond `max_bytes`."""

    def __init__(self, max_bytes: int = MAX_BYTES) -> None:
        self.max_bytes = max_bytes
        self._entries: OrderedDict[tuple[Any, ...], tuple[Any, tuple[TreeEffect, ...], int]] = OrderedDict()
        self._bytes = 0
        self.hits = 0
        self.misses = 0

    def get(self, key: tuple[Any, ...]) -> tuple[Any, tuple[TreeEffect, ...]] | None:
        """The stored (result, effects) of `key`, or None (counted as a hit or a miss)."""
        found = self._entries.get(key)
        if found is None:
            self.misses += 1
            return None
        self._entries.move_to_end(key)
        self.hits += 1
        return found[0], found[1]

    def put(self, key: tuple[Any, ...], result: Any, effects: tuple[TreeEffect, ...]) -> None:
        """Store `result` (an ExecResult: stdout and stderr str) and `effects` (one per tree the
        key names, in its order) under `key`; an entry larger than the whole bound, or whose
        effects made a socket or fifo, is not stored."""
        size = sum(e.nbytes for e in effects) + len(result.stdout or "") + len(result.stderr or "")
        if size > self.max_bytes or any(entry[0] == "o" for e in effects for _, entry, _ in e.made):
            return
        old = self._entries.pop(key, None)
        if old is not None:
            self._bytes -= old[2]
        self._entries[key] = (result, effects, size)
        self._bytes += size
        while self._bytes > self.max_bytes:
            _, (_, _, dropped) = self._entries.popitem(last=False)
            self._bytes -= dropped

    def clear(self) -> None:
        """Forget every entry (the counters too)."""
        self._entries.clear()
        self._bytes = 0
        self.hits = self.misses = 0

    def __len__(self) -> int:
        return len(self._entries)
