"""The claude-code family: Claude Code's Read tool behind pi's read schema.

- no `limit` means the first `default_limit` (2000) lines from `offset`; no notice when the
  file goes on (Claude Code's classic silent partial read, anchors.md §7 #92979);
- each line `{n:>6}\\t{line}` (parameter `line_numbers`, default `padded-tab`; real Claude Code
  writes `{n:>6}→{line}` or `{n}\\t{line}` depending on its version: `readbench.read.notices.
  NUMBER_STYLES`), lines longer than 2000 characters (JS `.length`) cut;
- if the returned text is over `max_tokens` (25,000) tokens, a hard error and no text:
  `File content (N tokens) exceeds maximum allowed tokens (25000). Please use offset and
  limit parameters to read specific portions of the file, or use the GrepTool to search for
  specific content.` (anchors.md §7 #4002; also for explicit ranges, #77489);
- an empty file returns Claude Code's `<system-reminder>` warning instead of empty text, an
  offset past the end its "shorter than the provided offset" warning;
- `requires_read_before_edit`: the paired edit tool refuses a file not read in the sample
  (`File has not been read yet. Read it first before writing to it.`).
Tokens are counted with `readbench.cache.tokenizer.count_tokens` (caching.md §8), family
"anthropic" by default. Spec: docs/specs/variants.md "claude-code".
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import ClassVar

from readbench.base.js import utf16_head
from readbench.read._params import check_int, params_to_dict
from readbench.read._pi import check_line_arg, split_lines
from readbench.read._session import ReadSession, file_key_for
from readbench.read._types import ReadResult, ReadVariant, call_facts, decoded, make_details
from readbench.read.notices import NUMBER_STYLES, number_rows, token_block_notice

__all__ = ["EDIT_NOT_READ_ERROR", "ClaudeCodeParams", "ClaudeCodeRead"]

EDIT_NOT_READ_ERROR = "File has not been read yet. Read it first before writing to it."
EMPTY_FILE_WARNING = (
    "<system-reminder>Warning: the file exists but the contents are empty.</system-reminder>"
)


@dataclass(frozen=True)
class ClaudeCodeParams:
    """Parameters of the claude-code family.

    Attributes:
        default_limit: lines read when no `limit` is given.
        max_line_chars: longer lines are cut to this many characters (UTF-16 code units).
        max_tokens: token budget of the returned text; above it the read is a hard error.
        token_family: tokenizer family for `count_tokens` ("anthropic", "openai", ...).
        line_numbers: the line-number prefix, a `readbench.read.notices.NUMBER_STYLES` name:
            `padded-tab` (`{n:>6}<TAB>`, variants.md), `padded-arrow` (`{n:>6}→`), `tab`
            (`{n}<TAB>`) or `arrow` (`{n}→`). A replay of a recorded Claude Code session uses
            the style each recorded read shows (`readbench.replay.read_counterfactual`).
    """

    default_limit: int = 2000
    max_line_chars: int = 2000
    max_tokens: int = 25_000
    token_family: str = "anthropic"
    line_numbers: str = "padded-tab"

    def __post_init__(self) -> None:
        check_int("default_limit", self.default_limit, minimum=1)
        check_int("max_line_chars", self.max_line_chars, minimum=1)
        check_int("max_tokens", self.max_tokens, minimum=1)
        if not isinstance(self.token_family, str) or not self.token_family:
            raise ValueError(
                f"parameter 'token_family' must be a non-empty string, got {self.token_family!r}"
            )
        if self.line_numbers not in NUMBER_STYLES:
            raise ValueError(
                f"parameter 'line_numbers' must be one of {list(NUMBER_STYLES)}, got {self.line_numbers!r}"
            )


def _default_counter(family: str) -> Callable[[str], int]:
    from readbench.cache.tokenizer import count_tokens  # lazy: loads the BPE vocabulary

    return lambda text: count_tokens(text, family)


class ClaudeCodeRead(ReadVariant):
    """Claude Code's Read (preset `claude-code`); see the module docstring.

    Args:
        count_tokens: optional `text -> tokens` function; defaults to the project tokenizer
            with `params.token_family` (injectable for tests).
    """

    family: ClassVar[str] = "claude-code"
    Params: ClassVar[type] = ClaudeCodeParams
    requires_read_before_edit = True

    def __init__(
        self,
        name: str,
        origin: str,
        params: ClaudeCodeParams,
        count_tokens: Callable[[str], int] | None = None,
    ) -> None:
        super().__init__(name, origin, params_to_dict(params))
        self.p = params
        self._count_tokens = count_tokens

    def count_tokens(self, text: str) -> int:
        """Tokens of `text` under this variant's tokenizer."""
        if self._count_tokens is None:
            self._count_tokens = _default_counter(self.p.token_family)
        return self._count_tokens(text)

    @property
    def tool_description(self) -> str:
        """Claude Code's Read usage notes with this preset's numbers."""
        return (
            "Reads a file from the local filesystem.\n\n"
            "Usage:\n"
            f"- By default, it reads up to {self.p.default_limit} lines starting from the beginning of the file\n"
            "- You can optionally specify a line offset and limit (especially handy for long files), "
            "but it's recommended to read the whole file by not providing these parameters\n"
            f"- Any lines longer than {self.p.max_line_chars} characters will be truncated\n"
            "- Results are returned using cat -n format, with line numbers starting at 1"
        )

    def token_error(self, n_tokens: int) -> str:
        """The hard error for a result over the budget."""
        return token_block_notice(n_tokens, self.p.max_tokens)

    def read(
        self,
        data: bytes,
        path: str,
        offset: int | None,
        limit: int | None,
        *,
        call_id: str | None,
        session: ReadSession,
        visible_call_ids: frozenset[str] | None,
        file_key: str | None = None,
    ) -> ReadResult:
        """See `ReadVariant.read`. Warnings (empty file, offset past the end) are normal
        results; the token error is `is_error=True` with `blocked`."""
        offset = check_line_arg("offset", offset)
        limit = check_line_arg("limit", limit)
        key = file_key or file_key_for(path)
        text = decoded(data)
        facts = call_facts(self.name, text, data, path, offset, limit, call_id)
        lines = split_lines(text)  # shared with other presets' reads of this text: not changed here
        total = len(lines) - (lines[-1] == "")  # no phantom line after the final newline
        if total == 0:
            session.note_read(key)
            return ReadResult(EMPTY_FILE_WARNING, False, make_details(facts))
        start0 = offset - 1 if offset and offset > 0 else 0
        count = self.p.default_limit if limit is None else max(limit, 0)
        selected = lines[start0 : min(start0 + count, total)]
        if not selected:
            msg = (
                "<system-reminder>Warning: the file exists but is shorter than the provided "
                f"offset ({start0 + 1}). The file has {total} lines.</system-reminder>"
            )
            return ReadResult(msg, False, make_details(facts))
        if 2 * max(map(len, selected)) <= self.p.max_line_chars:  # no line can be over (JS length <= 2 x len)
            cut, any_cut = selected, False
        else:
            cut = [utf16_head(line, self.p.max_line_chars) for line in selected]
            any_cut = any(a != b for a, b in zip(selected, cut, strict=True))
        out = number_rows(cut, start0 + 1, self.p.line_numbers)
        n_tokens = self.count_tokens(out)
        if n_tokens > self.p.max_tokens:
            return ReadResult(
                self.token_error(n_tokens),
                True,
                make_details(facts, blocked=True, error="over_token_budget"),
            )
        ranges = ((start0 + 1, start0 + len(selected)),)
        partial = limit is None and start0 + len(selected) < total
        session.record_read(key, call_id, ranges, facts.content_sha256)
        return ReadResult(out, False, make_details(facts, ranges=ranges, capped=partial or any_cut))
