"""The allow-listed environment of every command run for a tool or the checker in a sandbox.

inspect's ``exec(env=...)`` *adds* variables: the local sandbox passes the whole host
environment through (``{**os.environ, **env}``), so a bash tool printing ``env`` put the
host's API keys into the log (GitHub issue 13). Every such command therefore runs under
``env -i`` with exactly `ALLOWED` taken from the sandbox, ``LANG``, ``PYTHONHASHSEED``, on the
local sandbox the sample's own ``TMPDIR`` and the task's own variables; this is one mechanism for the local, docker and k8s kinds alike (coreutils
``env`` is in every image readbench builds).
"""

from __future__ import annotations

__all__ = ["ALLOWED", "HASH_SEED", "LANG", "PROBE", "TMP_NAMES", "isolated", "workspace_env"]

ALLOWED = ("PATH", "HOME")
"""Variables taken from the sandbox's own environment (probed once per sample with `PROBE`)."""
LANG = "C.UTF-8"
"""``LANG`` of every tool command (fixed, so output does not depend on the host's locale)."""
HASH_SEED = "0"
"""``PYTHONHASHSEED`` of every tool command: Python's per-process random string hashing otherwise
orders sets (and anything printed from them: test output, scripts) differently in every run of
the same command (GitHub issue 29); the checker uses the same seed (corpus._testrun.CHECK_ENV)."""
TMP_NAMES = ("TMPDIR", "TMP", "TEMP")
"""Variables naming the temporary directory (POSIX tools and mktemp read ``TMPDIR``; Python's
``tempfile`` reads ``TMPDIR``, ``TEMP``, ``TMP``)."""
PROBE = ["sh", "-c", 'printf "%s\\0%s" "$PATH" "$HOME"']
"""Command whose stdout is the sandbox's PATH and HOME, NUL-separated (see `workspace_env`)."""


def workspace_env(probe_stdout: str, task_env: dict[str, str], tmpdir: str | None = None) -> dict[str, str]:
    """The allow-listed environment: PATH and HOME from `PROBE`'s output, `LANG`,
    ``PYTHONHASHSEED`` (`HASH_SEED`), `TMP_NAMES` = `tmpdir` when given (the local sandbox's
    private temporary directory of the sample, readbench.sandbox.local.sample_tmpdir: without it
    the sample's commands share the host's ``/tmp`` with every other process, GitHub issue 29),
    then the task's own variables (e.g. ``PYTHONPATH`` of the deps dir), which win on a clash.

    Raises:
        ValueError: the probe output is not two NUL-separated fields, or a task variable name
            is empty or contains ``=`` (it could not be passed to ``env``).
    """
    fields = probe_stdout.split("\0")
    if len(fields) != len(ALLOWED):
        raise ValueError(f"environment probe printed {probe_stdout!r}, not PATH and HOME separated by NUL")
    env = {name: value for name, value in zip(ALLOWED, fields) if value}
    env["LANG"] = LANG
    env["PYTHONHASHSEED"] = HASH_SEED
    if tmpdir is not None:
        env.update(dict.fromkeys(TMP_NAMES, tmpdir))
    for name in task_env:
        if not name or "=" in name:
            raise ValueError(f"task environment variable name {name!r} is empty or contains '='")
    return {**env, **task_env}


def isolated(argv: list[str], env: dict[str, str]) -> list[str]:
    """`argv` run by ``env -i`` with exactly `env` (names must not contain ``=``)."""
    return ["env", "-i", *(f"{k}={v}" for k, v in env.items()), *argv]
