"""Test runs in readbench's Docker sandbox memoised by the container's tree content (GitHub issue 26).

The local sandbox's memo (readbench.sandbox.runmemo, which says why a test run's result is a
function of its inputs and which results are kept) brought to a container. Every arm of a
sample starts its own container from the same image, and the simulated agent makes the same
edits in most arms, so the same test command runs on byte-identical trees up to once per arm
(the bugfix task: the agent's ``pytest`` and the checker's, 3.0-3.8 CPU s each in a container for
tomlkit's suite, measured at load 8-12 with the container's cgroup counter).

Per test command (`runmemo.is_test_command`, no input/env/user, memo enabled):

1. one exec lists the trees the command can write -- the working directory (``/repo``) and
   ``/tmp`` (the commands' temporary directory in a container) -- in the container: every
   directory, file (BLAKE2b of its bytes), symlink and other entry with its permission bits, by
   absolute path (`LISTING_SCRIPT`; ~55 ms of container CPU for tomlkit's 1,157 entries);
2. the key is (compose file = image, command, cwd, timeout, the listing's digest);
3. a hit: the paths the stored run removed are removed (one exec, the paths on its stdin) and
   the files and directories it made are unpacked from the stored tar (one Engine API call; modes and mtimes from the run
   that made them), and the stored result is returned;
4. a miss: the command runs; a storable result (runmemo.storable) is kept with its effect: a
   second listing, the difference, and a tar of what was made or changed (``tar -T -``, one exec).

The memo is `readbench.sandbox.local.RUN_MEMO`, the same object the local sandbox uses, so a run
empties both when it starts (readbench.run.runner.run_plan); keys start with ``"docker"``.
Set ``READBENCH_RUN_MEMO=0`` to run every test command.
"""

from __future__ import annotations

import posixpath
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from inspect_ai.util import ExecResult

from readbench.sandbox import runmemo

__all__ = ["LISTING_SCRIPT", "PRIVATE_PREFIX", "REMOVE_SCRIPT", "DockerEffect", "effect_paths", "parse_listing",
           "top_removed"]

#: paths readbench's fork snapshots keep in a container (readbench.fork.snapshot.mark_workspace:
#: ``/tmp/readbench-fork-<uuid>``; restore: ``/tmp/readbench-fork-restore-<uuid>.tgz``), not
#: part of what a test run sees
PRIVATE_PREFIX = "/tmp/readbench-fork-"

#: python3 script (argv: roots) printing one line per entry under the roots, sorted:
#: ``<kind> <octal mode> <path>\0<digest or link target>`` (kind d, f, l or o); it leaves out
#: `PRIVATE_PREFIX` (readbench.fork.snapshot's mark and restore files: a trunk's mark is in /tmp,
#: a fork's tree has none, and keyed with it no fork's test run could ever hit the trunk's)
LISTING_SCRIPT = r"""
import hashlib, os, stat, sys
PRIVATE = @PRIVATE@
out = []
for root in sys.argv[1:]:
    stack = [root]
    while stack:
        d = stack.pop()
        try:
            it = os.scandir(d)
        except (FileNotFoundError, NotADirectoryError):
            continue
        with it:
            for e in it:
                if e.path.startswith(PRIVATE):
                    continue
                st = e.stat(follow_symlinks=False)
                m = stat.S_IMODE(st.st_mode)
                if stat.S_ISLNK(st.st_mode):
                    out.append("l %o %s\0%s" % (m, e.path, os.readlink(e.path)))
                elif stat.S_ISDIR(st.st_mode):
                    out.append("d %o %s\0" % (m, e.path))
                    stack.append(e.path)
                elif stat.S_ISREG(st.st_mode):
                    h = hashlib.blake2b(digest_size=16)
                    with open(e.path, "rb") as fh:
                        for chunk in iter(lambda: fh.read(1 << 20), b""):
                            h.update(chunk)
                    out.append("f %o %s\0%s" % (m, e.path, h.hexdigest()))
                else:
                    out.append("o %o %s\0" % (m, e.path))
out.sort()
sys.stdout.buffer.write("\n".join(out).encode("utf-8", "surrogateescape"))
""".replace("@PRIVATE@", repr(PRIVATE_PREFIX))

#: (kind, mode, digest or link target) of one entry
Entry = tuple[str, str, str]


def parse_listing(text: str) -> dict[str, Entry]:
    """`LISTING_SCRIPT`'s output as {absolute path: (kind, octal mode, digest/link target/"")}.

    Raises:
        ValueError: a line is not ``<kind> <mode> <path>\\0<rest>``.
    """
    out: dict[str, Entry] = {}
    for line in text.split("\n") if text else []:
        head, sep, rest = line.partition("\0")
        kind, _, tail = head.partition(" ")
        mode, _, path = tail.partition(" ")
        if not sep or kind not in ("d", "f", "l", "o") or not path:
            raise ValueError(f"tree listing line {line!r} is not '<kind> <mode> <path>\\0<rest>'")
        out[path] = (kind, mode, rest)
    return out


def effect_paths(before: dict[str, Entry], after: dict[str, Entry]) -> tuple[list[str], list[str]]:
    """(made, removed): paths new or changed in `after`, parents first; paths gone, children first."""
    made = sorted((p for p, e in after.items() if before.get(p) != e), key=lambda p: (p.count("/"), p))
    removed = sorted((p for p in before if p not in after), key=lambda p: (-p.count("/"), p))
    return made, removed


@dataclass(frozen=True)
class DockerEffect:
    """A test run's net change to the container's trees: `made` as RunMemo expects it ((path,
    entry, None) per made entry), `removed` paths, and `tar`, the made entries' archive."""

    made: tuple[tuple[str, Entry, None], ...]
    removed: tuple[str, ...]
    tar: bytes

    @property
    def nbytes(self) -> int:
        """Bytes held (the archive)."""
        return len(self.tar)


#: exec(argv, input bytes or None) -> (returncode, stdout bytes, stderr bytes), raw
RawExec = Callable[[list[str], bytes | None], Awaitable[tuple[int, bytes, bytes]]]

#: python3 script removing the NUL-separated absolute paths on its stdin (a directory with all it
#: holds; a path already gone is fine); on stdin, not argv: a run may remove more paths than an argv
#: holds (ARG_MAX, 2 MB: 40,000 files of 60-character paths)
REMOVE_SCRIPT = r"""
import os, shutil, sys
for p in sys.stdin.buffer.read().decode("utf-8", "surrogateescape").split("\0"):
    if not p:
        continue
    if os.path.isdir(p) and not os.path.islink(p):
        shutil.rmtree(p)
    elif os.path.lexists(p):
        os.unlink(p)
"""


def top_removed(removed: tuple[str, ...] | list[str]) -> list[str]:
    """The paths of `removed` not inside another removed path (removing those removes the rest), sorted."""
    gone = set(removed)
    return sorted(p for p in gone if posixpath.dirname(p) not in gone)


async def _remove(raw: RawExec, removed: tuple[str, ...]) -> None:
    """Remove `removed` in the container (`REMOVE_SCRIPT`, the top-most paths only).

    Raises:
        RuntimeError: the removal failed (the memo hit cannot leave the run's tree).
    """
    names = "\0".join(top_removed(removed)).encode("utf-8", "surrogateescape")
    code, _, err = await raw(["python3", "-c", REMOVE_SCRIPT], names)
    if code != 0:
        raise RuntimeError(f"run memo: removing the {len(removed)} paths a stored test run removed failed in "
                           f"the container (exit {code}): {err.decode(errors='replace').strip()[-500:]}")


async def _listing(raw: RawExec, roots: tuple[str, ...]) -> dict[str, Entry] | None:
    code, out, _ = await raw(["python3", "-c", LISTING_SCRIPT, *roots], None)
    return parse_listing(out.decode("utf-8", "surrogateescape")) if code == 0 else None


async def memo_exec(memo: runmemo.RunMemo, key_base: tuple[Any, ...], roots: tuple[str, ...], raw: RawExec,
                    run: Callable[[], Awaitable[ExecResult[str]]],
                    put_archive: Callable[[bytes], Awaitable[None]]) -> ExecResult[str]:
    """Run a test command through `memo` (module docstring, steps 1-4).

    Args:
        memo: the store (readbench.sandbox.local.RUN_MEMO).
        key_base: what names the command (compose file, argv, cwd, timeout).
        roots: absolute directories whose content keys the run and whose changes are replayed.
        raw: an exec in the container returning bytes (listing, tar, rm).
        run: the command's own exec (a miss).
        put_archive: unpack a tar at ``/`` in the container.

    Raises:
        whatever `run` raises (a TimeoutError is not memoised).
        RuntimeError: a hit's removals failed in the container.
    """
    before = await _listing(raw, roots)
    if before is None:  # no python3 in the image, or a root unreadable: run as usual
        return await run()
    key = ("docker", *key_base, roots, runmemo.tree_digest(before))  # the local memo's digest of a tree map
    found = memo.get(key)
    if found is not None:
        result, effects = found
        effect: Any = effects[0]  # a DockerEffect (RunMemo's annotation names the local TreeEffect)
        if effect.removed:
            await _remove(raw, effect.removed)
        if effect.made:
            await put_archive(effect.tar)
        return ExecResult(result.success, result.returncode, result.stdout, result.stderr)
    result = await run()
    if not runmemo.storable(result.returncode):
        return result
    after = await _listing(raw, roots)
    if after is None:
        return result
    made, removed = effect_paths(before, after)
    if any("\n" in p for p in made):  # `tar -T -` reads one name a line
        return result
    tar = b""
    if made:
        names = "\n".join(p.lstrip("/") for p in made).encode("utf-8", "surrogateescape") + b"\n"
        code, tar, _ = await raw(["tar", "-C", "/", "--no-recursion", "-cf", "-", "-T", "-"], names)
        if code != 0:
            return result
    stored: Any = (DockerEffect(tuple((p, after[p], None) for p in made), tuple(removed), tar),)
    memo.put(key, result, stored)
    return result
