"""pi 0.84.1's bash tool output formatting as pure functions (docs/specs/pi-tools.md §3.1;
`dist/core/tools/bash.js`, `output-accumulator.js`).

The command runs elsewhere (the sandbox adapter); this module turns its combined stdout+stderr
bytes and exit status into pi's tool-result text and error flag:

- tail truncation to the last 2000 lines or 51,200 bytes, with one of three notices naming the
  full-output file (`[Showing lines S-T of T. ...]`, `... (50.0KB limit). ...`, and the partial
  last line `[Showing last X of line T (line is Y). ...]`, whose `Y` is the size of the
  *unterminated* last line, so `0B` when the output ends in a newline);
- `(no output)` for empty output; `{output}\\n\\nCommand exited with code N` (isError) for a
  non-zero exit; `{output\\n\\n}Command timed out after N seconds` and `Command aborted` (isError).

pi decodes the stream incrementally and keeps only a rolling tail (about 100-200 KB) in memory;
when that tail is cut mid-line the cut line is dropped from the snapshot, so for outputs over
204,800 bytes the kept text can depend on how the bytes arrived. Pass `output` as the list of
chunks as read from the pipe to reproduce that exactly; a single `bytes` is one chunk.
"""

from __future__ import annotations

import codecs
import math
from collections.abc import Sequence
from dataclasses import dataclass

from readbench.base.js import format_size, js_number_str, utf8_len
from readbench.base.truncate import DEFAULT_MAX_BYTES, DEFAULT_MAX_LINES, Truncation, truncate_tail

__all__ = ["BashOutput", "OutputAccumulator", "format_bash_output", "validate_bash_timeout"]

_MAX_TIMEOUT_MS = 2_147_483_647


def validate_bash_timeout(timeout_seconds: float | None) -> str | None:
    """pi's `resolveTimeoutMs` check on the `timeout` argument (seconds; None = no timeout).

    Returns:
        None when valid, else pi's isError text: `Invalid timeout: must be a finite number of
        seconds` (<= 0, NaN, infinite) or `Invalid timeout: maximum is 2147483.647 seconds`.
    """
    if timeout_seconds is None:
        return None
    if not math.isfinite(timeout_seconds) or timeout_seconds <= 0:
        return "Invalid timeout: must be a finite number of seconds"
    if timeout_seconds * 1000 > _MAX_TIMEOUT_MS:
        return f"Invalid timeout: maximum is {js_number_str(_MAX_TIMEOUT_MS / 1000)} seconds"
    return None


class OutputAccumulator:
    """Port of pi's `OutputAccumulator`: streaming UTF-8 decode (WHATWG `TextDecoder`, which
    drops a leading BOM), line and byte totals, and a rolling decoded tail.

    Mutable; feed chunks with `append`, then `finish`, then `snapshot`.
    """

    def __init__(self, max_lines: int = DEFAULT_MAX_LINES, max_bytes: int = DEFAULT_MAX_BYTES) -> None:
        self.max_lines = max_lines
        self.max_bytes = max_bytes
        self.max_rolling_bytes = max(max_bytes * 2, 1)
        self._decoder = codecs.getincrementaldecoder("utf-8-sig")(errors="replace")
        self._tail = ""
        self._tail_bytes = 0
        self._tail_starts_at_line_boundary = True
        self.total_raw_bytes = 0
        self.total_decoded_bytes = 0
        self._completed_lines = 0
        self.total_lines = 0
        self.current_line_bytes = 0
        self._has_open_line = False
        self._finished = False

    def append(self, data: bytes) -> None:
        """Add one chunk of raw output bytes."""
        if self._finished:
            raise RuntimeError("Cannot append to a finished output accumulator")
        self.total_raw_bytes += len(data)
        self._append_decoded(self._decoder.decode(data, final=False))

    def finish(self) -> None:
        """Flush the decoder (an incomplete trailing sequence becomes U+FFFD)."""
        if not self._finished:
            self._finished = True
            self._append_decoded(self._decoder.decode(b"", final=True))

    def snapshot(self) -> Truncation:
        """pi `snapshot()`: `truncateTail` of the kept tail, with totals over the whole output."""
        tail = truncate_tail(self._snapshot_text(), max_lines=self.max_lines, max_bytes=self.max_bytes)
        truncated = self.total_lines > self.max_lines or self.total_decoded_bytes > self.max_bytes
        truncated_by = None
        if truncated:
            truncated_by = tail.truncated_by or ("bytes" if self.total_decoded_bytes > self.max_bytes else "lines")
        return Truncation(
            content=tail.content,
            truncated=truncated,
            truncated_by=truncated_by,
            total_lines=self.total_lines,
            total_bytes=self.total_decoded_bytes,
            output_lines=tail.output_lines,
            output_bytes=tail.output_bytes,
            last_line_partial=tail.last_line_partial,
            first_line_exceeds_limit=tail.first_line_exceeds_limit,
            max_lines=self.max_lines,
            max_bytes=self.max_bytes,
        )

    def _append_decoded(self, text: str) -> None:
        if not text:
            return
        n_bytes = utf8_len(text)
        self.total_decoded_bytes += n_bytes
        self._tail += text
        self._tail_bytes += n_bytes
        if self._tail_bytes > self.max_rolling_bytes * 2:
            self._trim_tail()
        newlines = text.count("\n")
        if newlines == 0:
            self.current_line_bytes += n_bytes
            self._has_open_line = True
        else:
            self._completed_lines += newlines
            rest = text[text.rindex("\n") + 1 :]
            self.current_line_bytes = utf8_len(rest)
            self._has_open_line = len(rest) > 0
        self.total_lines = self._completed_lines + (1 if self._has_open_line else 0)

    def _trim_tail(self) -> None:
        data = self._tail.encode("utf-8")
        if len(data) <= self.max_rolling_bytes:
            self._tail_bytes = len(data)
            return
        start = len(data) - self.max_rolling_bytes
        while start < len(data) and (data[start] & 0xC0) == 0x80:
            start += 1
        if start != 0:
            self._tail_starts_at_line_boundary = data[start - 1] == 0x0A
        self._tail = data[start:].decode("utf-8", errors="replace")
        self._tail_bytes = utf8_len(self._tail)

    def _snapshot_text(self) -> str:
        if self._tail_starts_at_line_boundary:
            return self._tail
        first_newline = self._tail.find("\n")
        return self._tail if first_newline == -1 else self._tail[first_newline + 1 :]


@dataclass(frozen=True)
class BashOutput:
    """pi's bash tool result: `text` (what the model sees), `is_error`, and the truncation record
    (`truncation.truncated` tells whether the full output must be kept at `full_output_path`)."""

    text: str
    is_error: bool
    truncation: Truncation


def format_bash_output(
    output: bytes | Sequence[bytes],
    exit_code: int | None,
    *,
    timed_out: bool = False,
    timeout_seconds: float | None = None,
    aborted: bool = False,
    full_output_path: str = "",
) -> BashOutput:
    """Build pi 0.84.1's bash tool-result text (pi-tools.md §3.1).

    Args:
        output: combined stdout+stderr bytes in arrival order, or the list of chunks as read.
        exit_code: the shell's exit status; None when it ended without one (killed by a
            signal), which 0.84.1 treats as success.
        timed_out: the command was killed at `timeout_seconds` (the `timeout` argument, in
            seconds, printed as JS prints the number).
        aborted: the run was aborted (takes precedence over `timed_out`, as in pi).
        full_output_path: where the untruncated output is kept; it appears in the truncation
            notice (pi: `os.tmpdir()/pi-bash-<16 hex>.log`).

    Returns:
        BashOutput(text, is_error, truncation). Exit 0/None gives is_error False.

    Raises:
        ValueError: if `timed_out` is set without `timeout_seconds`.
    """
    if timed_out and timeout_seconds is None:
        raise ValueError("timed_out=True needs timeout_seconds (the timeout argument, in seconds)")
    accumulator = OutputAccumulator()
    for chunk in [output] if isinstance(output, (bytes, bytearray)) else output:
        accumulator.append(bytes(chunk))
    accumulator.finish()
    truncation = accumulator.snapshot()
    # pi formats with emptyText "" on the timeout/abort path and "(no output)" otherwise, and the
    # substitution happens before the notice is appended.
    text = truncation.content or ("" if (aborted or timed_out) else "(no output)")
    if truncation.truncated:
        start_line = truncation.total_lines - truncation.output_lines + 1
        end_line = truncation.total_lines
        if truncation.last_line_partial:
            text += (
                f"\n\n[Showing last {format_size(truncation.output_bytes)} of line {end_line} "
                f"(line is {format_size(accumulator.current_line_bytes)}). Full output: {full_output_path}]"
            )
        elif truncation.truncated_by == "lines":
            text += f"\n\n[Showing lines {start_line}-{end_line} of {truncation.total_lines}. Full output: {full_output_path}]"
        else:
            text += (
                f"\n\n[Showing lines {start_line}-{end_line} of {truncation.total_lines} "
                f"({format_size(DEFAULT_MAX_BYTES)} limit). Full output: {full_output_path}]"
            )

    def with_status(status: str) -> str:
        return f"{text}\n\n{status}" if text else status

    if aborted:
        return BashOutput(with_status("Command aborted"), True, truncation)
    if timed_out:
        return BashOutput(with_status(f"Command timed out after {js_number_str(timeout_seconds or 0)} seconds"), True, truncation)
    if exit_code is not None and exit_code != 0:
        return BashOutput(with_status(f"Command exited with code {exit_code}"), True, truncation)
    return BashOutput(text, False, truncation)
