"""Run a task's test command and parse which tests failed.

docs/specs/corpus.md §3.1 "Findings": pytest 9 reports unittest subtests separately, a failing
subtest prints ``SUBFAILED(i=2) path::Class::test`` while its parent counts as passed, so failures
are parsed with ``^(SUB)?FAILED(\\(.*?\\))? (\\S+)`` from the short summary (``-rfE``), plus
``ERROR`` lines for setup/collection errors.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

__all__ = ["TestRun", "expand_env", "parse_pytest_summary", "run_tests", "scrub_message", "command_passed"]

_FAIL = re.compile(r"^(SUB)?FAILED(\(.*?\))? (\S+?)(?: - (.*))?$")
_ERROR = re.compile(r"^ERROR (\S+?)(?: - (.*))?$")
_ADDR = re.compile(r"0x[0-9a-fA-F]{6,}")


@dataclass(frozen=True)
class TestRun:
    """Outcome of one test command.

    Attributes:
        returncode: process exit status; None when killed by the timeout.
        failed: sorted unique ids of failed tests (subtest failures count for their parent id).
        errors: sorted unique ids reported as ``ERROR`` (collection or fixture setup).
        messages: test id -> first failure message from the short summary (scrubbed).
        duration_seconds: wall time.
        timed_out: the command exceeded its timeout and its process group was killed.
        output_tail: the last 4,000 characters of stdout+stderr, for diagnostics.
    """

    returncode: int | None
    failed: tuple[str, ...]
    errors: tuple[str, ...]
    messages: dict[str, str]
    duration_seconds: float
    timed_out: bool
    output_tail: str

    @property
    def passed(self) -> bool:
        """Exit 0, no failure, no error, no timeout."""
        return not self.timed_out and self.returncode == 0 and not self.failed and not self.errors


def scrub_message(msg: str, root: str | None = None) -> str:
    """Make a failure message reproducible: drop the work dir prefix and object addresses."""
    if root:
        msg = msg.replace(root.rstrip("/") + "/", "").replace(root, ".")
    return _ADDR.sub("0x…", msg).strip()


def parse_pytest_summary(output: str, root: str | None = None):
    """Parse pytest's short test summary.

    Args:
        output: combined stdout/stderr of a pytest run with ``-rfE``.
        root: work dir to scrub from messages.

    Returns:
        (failed, errors, messages): sorted id tuples and id -> first message.
    """
    failed: set[str] = set()
    errors: set[str] = set()
    messages: dict[str, str] = {}
    for line in output.splitlines():
        m = _FAIL.match(line)
        if m:
            tid, msg = m.group(3), m.group(4) or ""
            failed.add(tid)
            messages.setdefault(tid, scrub_message(msg, root))
            continue
        m = _ERROR.match(line)
        if m:
            errors.add(m.group(1))
            messages.setdefault(m.group(1), scrub_message(m.group(2) or "", root))
    return tuple(sorted(failed)), tuple(sorted(errors)), messages


def command_passed(returncode: int | None, output: str) -> bool:
    """Whether a test command passed: it exited 0 and pytest's short summary in its `output`
    lists no FAILED, SUBFAILED or ERROR line (`parse_pytest_summary`). One rule for the corpus
    self-check (`TestRun.passed`) and the benchmark's scorer (the command run in the sandbox)."""
    failed, errors, _ = parse_pytest_summary(output)
    return returncode == 0 and not failed and not errors


#: environment every checker run gets: COLUMNS so pytest's summary lines are not cut at 80
#: columns (the failure parser reads them), no bytecode, fixed hash seed, UTF-8
CHECK_ENV = {"LANG": "C.UTF-8", "COLUMNS": "200", "PYTHONDONTWRITEBYTECODE": "1", "PYTHONHASHSEED": "0"}


def expand_env(env: dict[str, str], deps: Path) -> dict[str, str]:
    """Replace the ``{deps}`` placeholder in task env values with the deps dir path."""
    return {k: v.replace("{deps}", str(deps)) for k, v in env.items()}


def run_tests(
    cmd: str,
    cwd: Path,
    env: dict[str, str],
    timeout_seconds: float,
    extra_args: str = "",
) -> TestRun:
    """Run ``cmd`` (+ ``extra_args``) with bash in ``cwd``; kill its process group on timeout.

    The environment is the minimal ``PATH``/``HOME``/``LANG`` plus ``env``, ``COLUMNS=200`` (so
    summary lines are not cut at 80 columns) and ``PYTHONDONTWRITEBYTECODE=1``.
    """
    full_env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": os.environ.get("HOME", "/root"),
        **CHECK_ENV,
        **env,
    }
    line = f"{cmd} {extra_args}".strip()
    t0 = time.monotonic()
    proc = subprocess.Popen(
        ["bash", "-c", line],
        cwd=cwd,
        env=full_env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    timed_out = False
    try:
        out, _ = proc.communicate(timeout=timeout_seconds)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, _ = proc.communicate()
        timed_out = True
    text = out.decode("utf-8", "replace")
    failed, errors, messages = parse_pytest_summary(text, str(cwd))
    return TestRun(
        returncode=None if timed_out else proc.returncode,
        failed=failed,
        errors=errors,
        messages=messages,
        duration_seconds=time.monotonic() - t0,
        timed_out=timed_out,
        output_tail=text[-4000:],
    )
