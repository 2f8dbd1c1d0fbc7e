"""`gemini-implicit`: Gemini implicit caching (docs/specs/caching.md §3, §8.2).

On by default for 2.5+: the longest live prefix at or above the model minimum (2,048 for 2.5
Flash/Pro, 4,096 for 3.x) is read at the cached rate (90% discount), with no write fee and no
storage charge. The TTL is undocumented ("on average 3-5 min" [3p]); the model table uses
300 s from the start of the last request that used the prefix. Hits are best effort in
reality (probability rho, to calibrate from logs, §8.2); this is the documented-rules variant,
rho = 1. Explicit `CachedContent` caching (storage per token-hour) is not modelled.
"""

from __future__ import annotations

from readbench.cache.policies.openai import PrefixAutomatic
from readbench.cache.prices import ModelSpec

__all__ = ["make_gemini"]


def make_gemini(spec: ModelSpec, *, ttl_seconds: float | None = None,
                granularity_tokens: int | None = None) -> PrefixAutomatic:
    """Longest-prefix automatic caching with the model's minimum, exact counts, no write fee.

    Raises:
        ValueError: `spec` is not a Gemini model.
    """
    if spec.rules != "gemini-implicit":
        raise ValueError(f"model {spec.model!r} has rules {spec.rules!r}, not gemini-implicit")
    return PrefixAutomatic(spec, name="gemini-implicit", ttl_seconds=ttl_seconds, granularity_tokens=granularity_tokens)
