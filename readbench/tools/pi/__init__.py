"""pi 0.84.1's non-read tool semantics as pure functions (docs/specs/pi-tools.md §3-4).

No sandbox, no inspect: the tool adapters in `readbench.tools` run commands and file I/O and call
these to produce exactly the text (and error flag) pi's shipped tools produce. The differential
suite `tests/differential/` checks them against the real npm package.

- `edit`: `normalize_edit_args`, `apply_edits` -> `EditOutcome`
- `bash`: `format_bash_output` -> `BashOutput`, `validate_bash_timeout`
- `grep`: `rg_argv`, `format_grep` -> `GrepOutput`, `path_not_found_text`
- `write`: `write_success_text`
"""

from __future__ import annotations

from readbench.base.truncate import DEFAULT_MAX_BYTES, DEFAULT_MAX_LINES, GREP_MAX_LINE_LENGTH
from readbench.tools.pi.bash import BashOutput, format_bash_output, validate_bash_timeout
from readbench.tools.pi.edit import (
    EditArgs,
    EditOutcome,
    PiEditError,
    apply_edits,
    missing_file_text,
    normalize_edit_args,
)
from readbench.tools.pi.grep import DEFAULT_GREP_LIMIT, GrepOutput, format_grep, path_not_found_text, rg_argv
from readbench.tools.pi.write import write_success_text

__all__ = [
    "DEFAULT_GREP_LIMIT",
    "DEFAULT_MAX_BYTES",
    "DEFAULT_MAX_LINES",
    "GREP_MAX_LINE_LENGTH",
    "BashOutput",
    "EditArgs",
    "EditOutcome",
    "GrepOutput",
    "PiEditError",
    "apply_edits",
    "format_bash_output",
    "format_grep",
    "missing_file_text",
    "normalize_edit_args",
    "path_not_found_text",
    "rg_argv",
    "validate_bash_timeout",
    "write_success_text",
]
