"""``readbench-local``: inspect's local sandbox with a workspace path that is the same in every run.

GitHub issue 29 item 1 ("two identical runs give identical tables and reports"). inspect's
``local`` sandbox gives every sample a fresh ``tempfile.TemporaryDirectory`` (``/tmp/tmpXXXXXXXX``).
That directory is the agent's working directory: it is in pi's system prompt ("Current working
directory: ...", readbench.agent.prompt) and in any tool output that prints an absolute path
(``pwd``, tracebacks), so two runs of the same inputs differed by a few input tokens per sample
(measured on the smoke matrix: up to ~400 of 13-16 M per sample).

What this module changes, and only this: where the sample's directory is. `ReadbenchLocalSandbox`
is inspect's `LocalSandboxEnvironment` (exec, read_file, write_file unchanged); the setup solver
(readbench.run.task.setup_workspace) calls `claim_workspace` with the sample id and epoch, which
moves the sample from its temporary directory to ``workspace_root() / workspace_name(id, epoch)``,
e.g. ``/tmp/readbench-ws/tomlkit-longsession-0-e1``. The path does not depend on the arm or the
model, so every arm of a sample sees the same cwd, as every arm does on Docker (the image's fixed
repository directory): the path is no source of token differences between arms either.

Concurrency: one directory can be wanted by two samples at once (arms run together with
``--max-tasks`` > 1, two runs on one machine, two sample ids with the same slug). A claim holds an
exclusive ``flock`` on ``<root>/<name>.lock`` until the sample's sandbox is cleaned up (the OS
releases it if the process dies), so such samples take turns instead of sharing a tree; the wait
is logged. A claimed directory is emptied first (a killed run's leftovers) and removed at cleanup.

A claim also gives the sample a private temporary directory, `sample_tmpdir` (``<path>.tmp``
beside the workspace, so the workspace's tree, content digest and ``git status`` do not change;
emptied on claim, removed at cleanup, guarded by the same lock). readbench.run.task passes it to
every tool and checker command as ``TMPDIR``/``TMP``/``TEMP``. Before, every sample's commands used
the host's ``/tmp`` (GitHub issue 29): pytest numbers its ``tmp_path`` base directories
``/tmp/pytest-of-<user>/pytest-N`` there and each session removes all but the newest 3 at its end
(rename to ``garbage-<uuid>``, then delete), so concurrent pytest processes (other samples, other
arms, an outer test suite) race; when the race hits, pytest adds a warnings summary
``PytestWarning: (rm_rf) error removing /tmp/pytest-of-<user>/garbage-<uuid> ... Directory not
empty`` (~180-200 tokens) to the agent's tool result (reproduced with
concurrent sessions sharing one temp root). In a private directory the sample's pytest runs follow
one another, their numbering starts at ``pytest-0`` and any path printed is the same in every run.
Docker and Kubernetes samples each have their own container, hence their own ``/tmp``.

Every command runs with the kernel's address-space randomisation off for it and its children
(util-linux ``setarch <machine> -R``, `no_aslr_prefix`): Python prints objects with their address
(``<click.testing.CliRunner object at 0x7f446599a590>`` in a failing test's report), which ASLR
made different in every run of the same test (measured: click's bugfix/0 output, 13 addresses,
41 of 639 lines differing between two runs; tomlkit's bugfix/0, 1 address; with ``-R`` both
identical). This pins the values the way ``PYTHONHASHSEED`` pins set order: the text keeps its
form. Where ``setarch -R`` is missing or not permitted, commands run as before (logged once).

Every command of a claimed sample runs pinned to one CPU (``taskset -c``, readbench.sandbox.cpupin),
as a container with a one-CPU cpuset would: the corpus's threaded tests cost a third of the CPU time
on one CPU that they cost spread over two, with the same outcome.

Test commands run in a claimed directory are memoised by the content of the tree and of the
sample's temporary directory (readbench.sandbox.runmemo, GitHub issue 26 item 2): the arms of a
sample share the directory, so an arm running the same test command on byte-identical trees gets
the first run's result and its effect on both instead of running it again.
"""

from __future__ import annotations

import fcntl
import functools
import logging
import os
import platform
import re
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio
import anyio.to_thread
from inspect_ai.util import ExecResult, SandboxEnvironment, sandboxenv
from inspect_ai.util._sandbox._cli import SANDBOX_CLI
from inspect_ai.util._sandbox.local import LocalSandboxEnvironment

from readbench.sandbox import cpupin, runmemo

__all__ = ["SANDBOX_NAME", "ReadbenchLocalSandbox", "claim_workspace", "no_aslr_prefix", "sample_tmpdir",
           "workspace_name", "workspace_root"]

logger = logging.getLogger(__name__)

SANDBOX_NAME = "readbench-local"
"""The sandbox type name a sample's spec uses (readbench.run.task._sandbox_spec)."""
#: seconds between two tries of a lock another sample holds
POLL_SECONDS = 0.5
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")
#: this process's memo of test runs in claimed directories (readbench.sandbox.runmemo)
RUN_MEMO = runmemo.RunMemo()
#: the CPUs claimed samples run on, one each (readbench.sandbox.cpupin)
CPUS = cpupin.CpuPool()


@functools.lru_cache(maxsize=1)
def no_aslr_prefix() -> tuple[str, ...]:
    """``("setarch", <machine>, "-R")`` when that runs here (``setarch <machine> -R true`` exits 0),
    else ``()`` (no util-linux setarch, or the personality call is refused, e.g. by a seccomp
    profile), logged once. Checked once per process."""
    import subprocess

    prefix = ("setarch", platform.machine(), "-R")
    try:
        ok = subprocess.run([*prefix, "true"], capture_output=True, timeout=30).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        ok = False
    if not ok:
        logger.warning("`%s true` failed: local sandbox commands run with address-space randomisation "
                       "(object addresses in their output differ from run to run)", " ".join(prefix))
        return ()
    return prefix


def workspace_root() -> Path:
    """``$READBENCH_WORKSPACES`` if set, else ``<tempfile.gettempdir()>/readbench-ws`` (``/tmp/readbench-ws``)."""
    root = os.environ.get("READBENCH_WORKSPACES")
    return Path(root) if root else Path(tempfile.gettempdir()) / "readbench-ws"


def workspace_name(sample_id: str | int, epoch: int) -> str:
    """The directory name of one sample and epoch: the id with every run of characters outside
    ``[A-Za-z0-9._-]`` replaced by ``-``, then ``-e<epoch>`` (``tomlkit/longsession/0``, 1 ->
    ``tomlkit-longsession-0-e1``).

    Raises:
        ValueError: the id is empty after that, or the epoch is below 1.
    """
    slug = _UNSAFE.sub("-", str(sample_id)).strip("-.")
    if not slug or epoch < 1:
        raise ValueError(f"no workspace name for sample id {sample_id!r}, epoch {epoch!r} (need a non-empty id, epoch >= 1)")
    return f"{slug}-e{epoch}"


def sample_tmpdir(workspace: str | Path) -> Path:
    """The private temporary directory of the sample working in `workspace`: ``<workspace>.tmp``
    beside it (``/tmp/readbench-ws/tomlkit-midsize-0-e1.tmp``). No workspace name ends in ``.tmp``
    (`workspace_name` ends in ``-e<epoch>``), so it is never another sample's workspace."""
    path = Path(workspace)
    return path.with_name(f"{path.name}.tmp")


class _Claimed:
    """The claimed directory in the place of inspect's TemporaryDirectory (``name``, ``cleanup()``),
    with the sample's private temporary directory ``tmp`` and the CPU its commands run on ``cpu``
    (None: unpinned; readbench.sandbox.cpupin)."""

    def __init__(self, path: Path, lock_fd: int) -> None:
        self.name = str(path)
        self.tmp = sample_tmpdir(path)
        self._lock_fd: int | None = lock_fd
        self.cpu = CPUS.acquire()

    def cleanup(self) -> None:
        shutil.rmtree(self.name, ignore_errors=True)
        shutil.rmtree(self.tmp, ignore_errors=True)
        CPUS.release(self.cpu)
        self.cpu = None
        if self._lock_fd is not None:
            os.close(self._lock_fd)  # releases the flock
            self._lock_fd = None


@sandboxenv(name=SANDBOX_NAME)
class ReadbenchLocalSandbox(LocalSandboxEnvironment):
    """inspect's local sandbox whose directory `claim_workspace` can fix (see the module docstring)."""

    #: seconds between inspect's agent-bridge polls for a real harness's model requests here
    #: (readbench.agents.bridge_poll; inspect's own: 2): a poll (setarch, sh, find) costs ~8 ms CPU
    BRIDGE_POLL_SECONDS = 0.25

    @classmethod
    async def sample_init(cls, task_name: str, config: Any, metadata: dict[str, str]) -> dict[str, SandboxEnvironment]:
        """One `ReadbenchLocalSandbox` (inspect's returns its own class, not ``cls``)."""
        return {"default": cls()}

    async def claim(self, path: Path) -> None:
        """Move this sandbox to ``path`` (empty, created), waiting for any other holder of it; its
        `sample_tmpdir` is created empty too.

        Raises:
            RuntimeError: this sandbox already claimed a directory.
            OSError: ``path``'s parent or lock file cannot be created.
        """
        if isinstance(self.directory, _Claimed):
            raise RuntimeError(f"this sandbox already works in {self.directory.name}")
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path.parent / f"{path.name}.lock", os.O_RDWR | os.O_CREAT, 0o644)
        waited_since = None
        try:
            while True:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    if waited_since is None:
                        waited_since = time.monotonic()
                        logger.info("workspace %s is in use by another sample; waiting for it", path)
                    await anyio.sleep(POLL_SECONDS)
        except BaseException:
            os.close(fd)
            raise
        if waited_since is not None:
            logger.info("workspace %s free after %.1f s", path, time.monotonic() - waited_since)
        shutil.rmtree(path, ignore_errors=True)
        shutil.rmtree(sample_tmpdir(path), ignore_errors=True)
        path.mkdir()
        sample_tmpdir(path).mkdir()
        previous = self.directory
        self.directory = _Claimed(path, fd)  # type: ignore[assignment]
        self._sandbox_tools_dir = path / "sandbox-tools"
        previous.cleanup()

    async def exec(self, cmd: list[str], input: str | bytes | None = None, cwd: str | None = None,  # noqa: A002
                   env: dict[str, str] | None = None, user: str | None = None, timeout: int | None = None,
                   timeout_retry: bool = True, concurrency: bool = True) -> ExecResult[str]:
        """inspect's exec of `cmd` prefixed with `no_aslr_prefix` and, in a claimed directory, pinned
        to the sample's CPU (readbench.sandbox.cpupin) (neither for inspect's own sandbox tools
        CLI); a test command in a claimed
        directory (no input, env or user given) is looked up in `RUN_MEMO` by the content of the
        workspace tree and of the sample's temporary directory first, and its result and effect on
        both stored after it ran (readbench.sandbox.runmemo says which results are kept). The memo's
        key holds the command without the CPU: the output does not depend on it."""
        claimed = self.directory if isinstance(self.directory, _Claimed) else None
        memo = (claimed is not None and input is None and not env and user is None
                and runmemo.enabled() and runmemo.is_test_command(cmd))
        pinned = cmd
        if cmd and cmd[0] != SANDBOX_CLI:  # inspect recognises its sandbox tools by argv[0]
            cmd = [*no_aslr_prefix(), *cmd]
            pinned = [*cpupin.pin_prefix(claimed.cpu if claimed is not None else None), *cmd]
        if claimed is None or not memo:
            return await super().exec(pinned, input, cwd, env, user, timeout, timeout_retry, concurrency)
        roots = (Path(claimed.name), claimed.tmp)
        before = [await anyio.to_thread.run_sync(runmemo.snapshot, root) for root in roots]
        key = (tuple(cmd), cwd, timeout, *map(str, roots), *map(runmemo.tree_digest, before))
        found = RUN_MEMO.get(key)
        if found is not None:
            result, effects = found
            for root, effect in zip(roots, effects, strict=True):
                await anyio.to_thread.run_sync(runmemo.apply_effect, root, effect)
            return ExecResult(result.success, result.returncode, result.stdout, result.stderr)
        result = await super().exec(pinned, input, cwd, env, user, timeout, timeout_retry, concurrency)
        if runmemo.storable(result.returncode):
            made = []
            for root, snap in zip(roots, before, strict=True):
                after = await anyio.to_thread.run_sync(runmemo.snapshot, root)
                made.append(await anyio.to_thread.run_sync(runmemo.tree_effect, root, snap, after))
            RUN_MEMO.put(key, result, tuple(made))
        return result


async def claim_workspace(sb: Any, sample_id: str | int, epoch: int) -> str:
    """Give the sample's ``readbench-local`` sandbox its fixed directory and return it.

    Args:
        sb: the sample's sandbox (``inspect_ai.util.sandbox()``; inspect's proxy is fine).
        sample_id, epoch: the sample (see `workspace_name`).

    Returns:
        The absolute directory (``workspace_root() / workspace_name(sample_id, epoch)``).

    Raises:
        TypeError: ``sb`` is not a ``readbench-local`` sandbox.
        ValueError: see `workspace_name`.
    """
    path = workspace_root() / workspace_name(sample_id, epoch)
    await sb.as_type(ReadbenchLocalSandbox).claim(path)
    return str(path)
