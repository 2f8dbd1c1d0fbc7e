"""Workspace snapshots (readbench.fork.snapshot): the changes since the mark (edited, created
and deleted files, nested directories, mtimes) applied to a fresh copy give the same tree."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

from inspect_ai.util._sandbox.local import LocalSandboxEnvironment

from readbench.fork.snapshot import Snapshot, drop_mark, mark_workspace, restore_snapshot, take_snapshot

ORIGINAL = {"a.py": "x = 1\n", "pkg/b.py": "y = 2\n", "pkg/gone.txt": "bye\n", "keep.txt": "same\n"}


def _tree(root: Path) -> dict[str, str]:
    return {str(p.relative_to(root)): p.read_text() for p in sorted(root.rglob("*")) if p.is_file()}


async def _fill(sb: LocalSandboxEnvironment) -> str:
    for rel, text in ORIGINAL.items():
        await sb.write_file(rel, text)
    for rel in ORIGINAL:  # the source tree's files are old (setup copies them with cp -a)
        os.utime(Path(sb.directory.name) / rel, (1_000_000_000, 1_000_000_000))
    return sb.directory.name


def test_snapshot_restores_edits_new_files_and_deletions():
    async def run():
        trunk, fork = LocalSandboxEnvironment(), LocalSandboxEnvironment()
        try:
            cwd = await _fill(trunk)
            mark = await mark_workspace(trunk, cwd)
            await trunk.write_file("a.py", "x = 42\n")
            await trunk.write_file("pkg/new/c.py", "z = 3\n")
            await trunk.exec(["rm", "pkg/gone.txt"], cwd=cwd)
            snap = await take_snapshot(trunk, cwd, mark)
            await drop_mark(trunk, mark)
            assert not Path(mark).exists()
            assert snap.deleted == ("./pkg/gone.txt",)
            again = Snapshot.from_dict(snap.to_dict())
            fork_cwd = await _fill(fork)
            await restore_snapshot(fork, fork_cwd, again)
            assert _tree(Path(fork_cwd)) == _tree(Path(cwd)) == {
                "a.py": "x = 42\n", "keep.txt": "same\n", "pkg/b.py": "y = 2\n", "pkg/new/c.py": "z = 3\n"}
            assert os.stat(Path(fork_cwd) / "a.py").st_mtime_ns == os.stat(Path(cwd) / "a.py").st_mtime_ns
        finally:
            trunk.directory.cleanup()
            fork.directory.cleanup()

    asyncio.run(run())


def test_an_unchanged_workspace_gives_an_empty_snapshot():
    async def run():
        sb = LocalSandboxEnvironment()
        try:
            cwd = await _fill(sb)
            mark = await mark_workspace(sb, cwd)
            snap = await take_snapshot(sb, cwd, mark)
            assert snap.deleted == ()
            import io
            import tarfile

            assert tarfile.open(fileobj=io.BytesIO(snap.archive)).getnames() == []
        finally:
            sb.directory.cleanup()

    asyncio.run(run())


def test_directories_made_or_removed_after_the_mark_are_restored():
    """An empty directory a test run leaves (pytest-benchmark's ``.benchmarks``), a new directory's
    mode, a removed directory and a directory replaced by a file: the fork's tree then equals the
    trunk's entry for entry, as readbench.sandbox.runmemo keys test runs by it (a missing
    ``.benchmarks`` made every fork's checker miss the memo)."""
    def entries(root: Path) -> dict[str, tuple[str, int]]:
        return {str(p.relative_to(root)): ("d" if p.is_dir() else "f", p.stat().st_mode & 0o7777)
                for p in sorted(root.rglob("*"))}

    async def run():
        trunk, fork = LocalSandboxEnvironment(), LocalSandboxEnvironment()
        try:
            cwd = await _fill(trunk)
            os.makedirs(Path(cwd) / "old" / "inner")
            os.makedirs(Path(cwd) / "was_dir")
            mark = await mark_workspace(trunk, cwd)
            await trunk.exec(["sh", "-c", "mkdir .benchmarks && mkdir -m 700 private && rm -r old && "
                              "rmdir was_dir && echo now-a-file > was_dir"], cwd=cwd)
            snap = await take_snapshot(trunk, cwd, mark)
            await drop_mark(trunk, mark)
            fork_cwd = await _fill(fork)
            os.makedirs(Path(fork_cwd) / "old" / "inner")
            os.makedirs(Path(fork_cwd) / "was_dir")
            await restore_snapshot(fork, fork_cwd, Snapshot.from_dict(snap.to_dict()))
            assert entries(Path(fork_cwd)) == entries(Path(cwd))
            assert entries(Path(cwd))[".benchmarks"][0] == "d" and entries(Path(cwd))["private"] == ("d", 0o700)
            assert "old" not in entries(Path(fork_cwd)) and (Path(fork_cwd) / "was_dir").read_text() == "now-a-file\n"
        finally:
            trunk.directory.cleanup()
            fork.directory.cleanup()

    asyncio.run(run())


def test_changes_that_keep_an_old_mtime_are_restored():
    """A file's mode changed alone (``chmod +x``) and a file made with an old mtime (a Docker memo
    hit unpacks the made files with the mtimes of the run that made them, in another container
    earlier; likewise ``cp -p``, ``tar x``) are changes since the mark, though ``find -newer`` of
    the mark's stamp misses them (review6 exp6: a trunk's memo hit left ``c/__pycache__/m.pyc``;
    its snapshot had only the empty directories). The fork's tree must equal the trunk's."""
    import time

    def entries(root: Path) -> dict[str, tuple[int, str]]:
        return {str(p.relative_to(root)): (p.stat().st_mode & 0o7777, p.read_text())
                for p in sorted(root.rglob("*")) if p.is_file()}

    async def run():
        trunk, fork = LocalSandboxEnvironment(), LocalSandboxEnvironment()
        try:
            cwd = await _fill(trunk)
            mark = await mark_workspace(trunk, cwd)
            time.sleep(0.05)  # past the mark's clock tick, as any later command is
            await trunk.exec(["sh", "-c", "chmod 755 keep.txt && mkdir -p c/__pycache__ && printf x > c/__pycache__/m.pyc"],
                             cwd=cwd)
            os.utime(Path(cwd) / "c" / "__pycache__" / "m.pyc", (1_000_000_500, 1_000_000_500))
            snap = await take_snapshot(trunk, cwd, mark)
            await drop_mark(trunk, mark)
            fork_cwd = await _fill(fork)
            await restore_snapshot(fork, fork_cwd, Snapshot.from_dict(snap.to_dict()))
            assert entries(Path(cwd))["keep.txt"] == (0o755, "same\n")
            assert entries(Path(cwd))["c/__pycache__/m.pyc"][1] == "x"
            assert entries(Path(fork_cwd)) == entries(Path(cwd))
            assert os.stat(Path(fork_cwd) / "c/__pycache__/m.pyc").st_mtime == 1_000_000_500
        finally:
            trunk.directory.cleanup()
            fork.directory.cleanup()

    asyncio.run(run())
