"""What a recorded session's bill shows about the provider's cache (sessions.md §5; caching.md §2.1,
§3, §4): the billed usage there is to compare with (`billed`), the tokens a call left cached
(`cached_after`), the TTL tier of the writes (`infer_tier`) and the hit granularity of providers
that floor cache reads (`infer_granularity`).

These read the bill and the price table only (no request rendering, no simulation): the replay's
calibration (readbench.replay.calibrate (d), (g)), the bill check (readbench.replay.bill), the read
audit and the DCP x cache-model replays share them.
"""

from __future__ import annotations

import datetime as dt

from readbench.cache.prices import get_price, price_date
from readbench.sessions import BilledUsage, Call, Session

__all__ = ["MAX_GRANULARITY", "MIN_GRANULARITY_READS", "billed", "cached_after", "infer_granularity", "infer_tier"]

#: models.csv rule sets whose providers cache the whole prompt automatically, with no write charge.
_AUTOMATIC_RULES = ("openai-automatic", "gemini-implicit", "deepseek-units")
#: Non-zero billed reads of a model `infer_granularity` needs before the bill's granularity replaces
#: the table's: 8 reads all multiples of 4g by chance when the truth is g happens with (1/4)^8 < 2e-5.
MIN_GRANULARITY_READS = 8
#: The largest granularity `infer_granularity` reports (tokens): the coarsest implicit-breakpoint
#: interval the spec knows is 2,048 (caching.md §2.1); above 4,096 a common factor is taken as chance.
MAX_GRANULARITY = 4096


def billed(call: Call) -> BilledUsage | None:
    """The call's billed usage, or None when there is none to compare with: no usage recorded,
    or a prompt of 0 tokens (a request aborted before the provider reported usage: pi writes
    zeros for those)."""
    u = call.usage
    return u if u is not None and u.input_tokens > 0 else None


def cached_after(usage: BilledUsage, model: str, granularity: int | None = None) -> int:
    """Tokens a call left cached for the next one, as its bill shows them: read + write where the
    provider charges writes (Anthropic, GPT-5.6+); where caching is automatic without a write
    charge (OpenAI before GPT-5.6, Gemini implicit, DeepSeek: caching.md §2.1, §3, §4) the
    whole prompt, floored to the model's hit granularity (`granularity`, else the table's), and 0
    below its minimum."""
    from readbench.cache.prices import get_model_spec

    try:
        spec = get_model_spec(model)
    except ValueError:
        return usage.cache_read_tokens + usage.cache_write_tokens
    if spec.rules not in _AUTOMATIC_RULES:
        return usage.cache_read_tokens + usage.cache_write_tokens
    prompt = usage.input_tokens
    if prompt < spec.min_cacheable_tokens:
        return 0
    g = max(granularity if granularity is not None else spec.granularity_tokens, 1)
    return prompt // g * g


def infer_granularity(session: Session, models: list[str], window: range | list[int]) -> dict[str, int]:
    """Per priced model whose provider floors cache hits (`_AUTOMATIC_RULES`), the granularity its
    bills show over the calls in `window` (readbench.replay.calibrate's module docstring (g)): the
    largest power of two, at most
    `MAX_GRANULARITY`, that divides every non-zero billed cache read; a model with fewer than
    `MIN_GRANULARITY_READS` such reads is absent (the table's granularity stands). `models`: the
    canonical priced model of each call."""
    from readbench.cache.prices import get_model_spec

    reads: dict[str, list[int]] = {}
    for i in window:
        u = billed(session.calls[i])
        if u is None or u.cache_read_tokens <= 0:
            continue
        reads.setdefault(models[i], []).append(int(u.cache_read_tokens))
    out: dict[str, int] = {}
    for model, rs in reads.items():
        try:
            if get_model_spec(model).rules not in _AUTOMATIC_RULES:
                continue
        except ValueError:
            continue
        if len(rs) < MIN_GRANULARITY_READS:
            continue
        g = MAX_GRANULARITY
        while g > 1 and any(r % g for r in rs):
            g //= 2
        out[model] = g
    return out


def infer_tier(session: Session, models: list[str], when: dt.date) -> str | None:
    """`5m` or `1h` from the recorded writes (readbench.replay.calibrate's module docstring (d)): the
    recorded write split (Claude Code, pi >= 0.84), else the write price the harness's own cost
    implies (pi legacy records cost per token class); None when nothing tells. `models`: the
    canonical priced model of each call."""
    w5 = w1 = 0
    implied: list[tuple[float, str]] = []
    for i, c in enumerate(session.calls):
        u = c.usage
        if u is None or u.cache_write_tokens == 0:
            continue
        if u.cache_write_1h_tokens is not None or u.cache_write_5m_tokens is not None:
            w5 += u.cache_write_5m_tokens or 0
            w1 += u.cache_write_1h_tokens or 0
        elif c.cost_detail and "cacheWrite" in c.cost_detail:
            try:
                row = get_price(models[i], u.input_tokens, as_of=price_date(models[i], when))
            except ValueError:
                continue
            per_mtok = c.cost_detail["cacheWrite"] / u.cache_write_tokens * 1e6
            for tier, price in (("5m", row.cache_write_5m_usd_per_mtok), ("1h", row.cache_write_1h_usd_per_mtok)):
                if price:
                    implied.append((abs(per_mtok - price) / price, tier))
    if w5 or w1:
        return "1h" if w1 > w5 else "5m"
    close = [t for err, t in implied if err < 0.02]
    if close:
        return max(set(close), key=close.count)
    return None
