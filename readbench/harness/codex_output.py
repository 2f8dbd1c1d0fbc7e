"""Codex CLI's shell tool result as the model sees it (docs/specs/sessions.md §3; GitHub issue 24).

The text of a Codex `exec_command` / `shell` / `shell_command` result, in the forms seen:
- unified exec (cli 0.171.0, through inspect's bridge and in its rollout)::

    Chunk ID: 7d932e
    Wall time: 0.0000 seconds
    Process exited with code 0          (or `Process running with session ID N`)
    Original token count: 18
    Output:
    <what the command printed>

- the older freeform form `Exit code: N\\nWall time: ...\\n[Total output lines: T\\n]Output:\\n...`,
  which 0.171.0 also nests inside the unified form for an `apply_patch` the shell intercepted
  (`Wall time: ...\\nOutput:\\nExit code: 0\\nWall time: 0 seconds\\nOutput:\\nSuccess. ...`);
- JSON `{"output": ..., "metadata": {"exit_code": N, ...}}` (older rollouts).

An output over the call's token budget (`max_output_tokens`, 10,000 by default in 0.171.0) is cut
in the middle, mid-line on both sides, around `…N chars truncated…` (or `…N tokens truncated…`),
after a header `Warning: truncated output (original token count: N)` and `Total output lines: T`
(T = the lines the command printed) and a blank line (seen on 0.171.0 with `nl -ba` of a 3,999-line
file: 327 lines kept before the marker, 295 after it).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

__all__ = ["CUT_MARKER", "CodexOutput", "parse_codex_output", "strip_cut_header"]

CUT_MARKER = re.compile(r"…(\d+) (chars|tokens) truncated…")
"""Codex's middle-truncation marker (codex-rs `utils/string/src/truncate.rs`)."""

_HEADER = re.compile(r"^(Chunk ID: .*|Wall time: .*|Original token count: \d+|Process running with session ID (\d+)"
                     r"|Process exited with code (-?\d+)|Exit code: (-?\d+)|Total output lines: (\d+))$")
_WARNING = re.compile(r"^Warning: truncated output \(original token count: \d+\)\n")
_TOTAL = re.compile(r"^Total output lines: (\d+)\n\n?")


@dataclass(frozen=True)
class CodexOutput:
    """One parsed Codex shell result.

    Attributes:
        body: what the command printed as Codex passed it on (a cut output keeps its marker; the
            cut header lines are removed).
        exit_code: the command's exit status (None: still running, or not stated).
        total_lines: the lines the command printed, when Codex cut the output and said so.
        cut: Codex cut the output (a `…N chars/tokens truncated…` marker or a `Total output lines` header).
        session_id: the unified-exec session of a command still running when Codex yielded (its
            default `yield_time_ms` is 10,000); `write_stdin {session_id}` polls it for more output.
    """

    body: str
    exit_code: int | None
    total_lines: int | None
    cut: bool
    session_id: int | None = None


def strip_cut_header(body: str) -> tuple[str, int | None]:
    """`body` without Codex's cut header (`Warning: truncated output ...` and `Total output lines: T`
    and the blank line after it), and T (None when there was no header)."""
    body = _WARNING.sub("", body, count=1)
    if m := _TOTAL.match(body):
        return body[m.end():], int(m.group(1))
    return body, None


def _headed(text: str) -> tuple[str, int | None, int | None, int | None] | None:
    """(rest after `Output:`, exit code, total lines, running session) of a text that opens with
    Codex's header lines."""
    lines = text.split("\n")
    exit_code = total = running = None
    for i, line in enumerate(lines):
        if line == "Output:" and i > 0:
            return "\n".join(lines[i + 1:]), exit_code, total, running
        m = _HEADER.match(line)
        if m is None:
            return None
        if m.group(2) is not None:
            running = int(m.group(2))
        if m.group(3) is not None or m.group(4) is not None:
            exit_code = int(m.group(3) or m.group(4))
        if m.group(5) is not None:
            total = int(m.group(5))
    return None


def parse_codex_output(text: str) -> CodexOutput | None:
    """Parse the text of one Codex shell result (module docstring), or None when `text` is in none
    of Codex's forms (another harness's output)."""
    if text.startswith("{") and '"output"' in text[:200]:
        try:
            obj = json.loads(text)
        except ValueError:
            obj = None
        if isinstance(obj, dict) and isinstance(obj.get("output"), str):
            meta = obj.get("metadata")
            code = meta.get("exit_code") if isinstance(meta, dict) else None
            body, total = strip_cut_header(obj["output"])
            return CodexOutput(body, code if isinstance(code, int) else None, total,
                               total is not None or CUT_MARKER.search(body) is not None)
    parsed = _headed(text)
    if parsed is None:
        return None
    body, exit_code, total, running = parsed
    inner = _headed(body)  # an intercepted apply_patch: its own freeform result inside
    if inner is not None:
        body, exit_code, total = inner[0], inner[1] if inner[1] is not None else exit_code, inner[2] or total
    body, header_total = strip_cut_header(body)
    total = header_total if header_total is not None else total
    return CodexOutput(body, exit_code, total, total is not None or CUT_MARKER.search(body) is not None,
                       running if exit_code is None else None)
