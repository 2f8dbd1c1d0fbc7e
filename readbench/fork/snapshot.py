"""Workspace snapshots for forked arms: an archive of the workspace's changes since setup.

A fork continues from the trunk's sandbox as it was at the fork point (GitHub issue 25 item 2).
The trunk marks the workspace right after setup (`mark_workspace`: a time stamp, the list of files
and the list of directories); at a fork point `take_snapshot` archives every file changed since
the mark (its mtime, or its ctime for one that kept an old mtime) and every directory made since
(pax tar.gz, modes and mtimes kept; a directory alone, without its contents, so an empty one such
as pytest-benchmark's ``.benchmarks`` is kept too) and lists the files and directories deleted
since; `restore_snapshot` removes the deleted ones from a fork's freshly set-up workspace and
extracts the archive, after which the fork's tree equals the trunk's at that point entry for entry
(paths, kinds, modes, bytes; only the mode of a directory that existed at the mark and was
chmod'ed since is not carried). That equality is what lets a fork's test runs hit the local
sandbox's memo of the trunk's (readbench.sandbox.runmemo keys them by the tree's entries: a
missing empty directory made every fork's check run again). Everything runs through
inspect's sandbox interface (``exec``, ``read_file``, ``write_file``), so the same code serves
the local, Docker and k8s sandboxes. The files live outside the workspace (``/tmp``), so the
agent's ``ls`` never sees them.

Docker alternative: ``docker commit`` of the sample's container; measured against the archive
by the developers (the archive is what readbench uses: it is smaller and faster, and
works in every sandbox).
"""

from __future__ import annotations

import base64
import json
import shlex
import uuid
from dataclasses import dataclass
from typing import Any

__all__ = ["Snapshot", "mark_workspace", "restore_snapshot", "take_snapshot", "drop_mark"]


@dataclass(frozen=True)
class Snapshot:
    """The workspace's changes since the trunk's setup.

    Attributes:
        archive: tar.gz of the files modified or created since the mark (paths relative to cwd).
        deleted: files and directories present at the mark and gone now (relative paths, ``./a/b.py``).
    """

    archive: bytes
    deleted: tuple[str, ...]

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict (the archive base64-encoded)."""
        return {"archive_b64": base64.b64encode(self.archive).decode(), "deleted": list(self.deleted)}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Snapshot:
        """Inverse of `to_dict`.

        Raises:
            KeyError: a key is missing.
        """
        return cls(base64.b64decode(data["archive_b64"]), tuple(data["deleted"]))


_LIST = "find . -path ./sandbox-tools -prune -o ! -type d -print | LC_ALL=C sort"
_DIRS = "find . -mindepth 1 -path ./sandbox-tools -prune -o -type d -print | LC_ALL=C sort"


async def _sh(sb: Any, script: str, cwd: str, what: str) -> str:
    res = await sb.exec(["sh", "-c", script], cwd=cwd)
    if not res.success:
        raise RuntimeError(f"fork snapshot: {what} failed in the sandbox: {res.stderr.strip()[:500]}")
    return res.stdout


async def mark_workspace(sb: Any, cwd: str) -> str:
    """Record the workspace's state after setup: its file list, its directory list and a time stamp file.

    Args:
        sb: the sample's sandbox (inspect ``SandboxEnvironment``).
        cwd: the workspace directory.

    The stamp is dated 2 s back: file times tick coarsely (a kernel tick), so an edit right
    after the mark could carry the stamp's own time; a file setup wrote in those 2 s is archived
    needlessly but harmlessly (same content). A second stamp, ``cstamp``, has the mark's own
    time: a file whose inode changed after it (its ctime, which cannot be set back) is a change
    too, though its mtime is old -- a mode changed alone, a file unpacked with its old mtime (a
    Docker memo hit, ``cp -p``, ``tar x``). `find -newer` of the first stamp alone missed those.

    Returns:
        The mark's directory in the sandbox (``/tmp/readbench-fork-<uuid>``), passed to
        `take_snapshot` and `drop_mark`.

    Raises:
        RuntimeError: the sandbox could not run the listing.
    """
    mark = f"/tmp/readbench-fork-{uuid.uuid4().hex}"
    q = shlex.quote(mark)
    await _sh(sb, f"mkdir -p {q} && {_LIST} > {q}/files && {_DIRS} > {q}/dirs && "
                  f"touch -d @$(( $(date +%s) - 2 )) {q}/stamp && touch {q}/cstamp", cwd, "marking the workspace")
    return mark


async def take_snapshot(sb: Any, cwd: str, mark: str) -> Snapshot:
    """Archive the workspace's changes since `mark_workspace`.

    Raises:
        RuntimeError: find/tar failed in the sandbox.
    """
    q = shlex.quote(mark)
    # new directories first (tar --no-recursion: each listed path alone), then the changed files
    script = (f"{_DIRS} > {q}/dirsnow && LC_ALL=C comm -13 {q}/dirs {q}/dirsnow | tr '\\n' '\\0' > {q}/changed && "
              f"find . -path ./sandbox-tools -prune -o ! -type d \\( -newer {q}/stamp -o -cnewer {q}/cstamp \\) "
              f"-print0 >> {q}/changed && "
              f"{_LIST} > {q}/now && LC_ALL=C comm -23 {q}/files {q}/now > {q}/deleted && "
              f"LC_ALL=C comm -23 {q}/dirs {q}/dirsnow >> {q}/deleted && "
              f"tar --format=posix --no-recursion -czf {q}/snap.tgz --null -T {q}/changed && cat {q}/deleted")
    deleted = tuple(line for line in (await _sh(sb, script, cwd, "archiving the workspace")).splitlines() if line)
    archive = await sb.read_file(f"{mark}/snap.tgz", text=False)
    return Snapshot(archive=archive, deleted=deleted)


async def restore_snapshot(sb: Any, cwd: str, snapshot: Snapshot) -> None:
    """Apply a snapshot to a freshly set-up workspace (remove the deleted files and directories, then
    extract the archive: a path deleted and made again as another kind ends as the trunk left it).

    Raises:
        RuntimeError: tar or rm failed in the sandbox.
    """
    tmp = f"/tmp/readbench-fork-restore-{uuid.uuid4().hex}.tgz"
    await sb.write_file(tmp, snapshot.archive)
    removal = ""
    if snapshot.deleted:
        removal = "rm -rf -- " + " ".join(shlex.quote(p) for p in snapshot.deleted) + " && "
    await _sh(sb, f"{removal}tar -xzf {shlex.quote(tmp)}; rc=$?; rm -f {shlex.quote(tmp)}; exit $rc", cwd,
              "restoring the workspace")


async def drop_mark(sb: Any, mark: str) -> None:
    """Remove the mark's directory (best effort: a failure leaves a few files in /tmp)."""
    await sb.exec(["rm", "-rf", mark])


def snapshot_json(snapshot: Snapshot) -> str:
    """`Snapshot.to_dict` as JSON text."""
    return json.dumps(snapshot.to_dict())
