"""pi-dcp pressure bands and footer text (docs/specs/dcp.md §3, §6; `observability.ts`,
`pressure-policy.ts`)."""

from __future__ import annotations

from readbench.dcp._params import PiDcpParams
from readbench.dcp._types import ContextUsage

__all__ = ["compute_band", "effective_band", "band_at_least", "footer_text"]

_RANK = {"unknown": -1, "low": 0, "medium": 1, "high": 2, "critical": 3}


def compute_band(params: PiDcpParams, usage: ContextUsage | None) -> tuple[str, float | None]:
    """(band, usage ratio) before pruning: >= force_compact critical, >= auto_prune high,
    >= nudge medium, else low; unknown when the ratio is unknown. `force_band` overrides."""
    ratio = usage.ratio if usage is not None else None
    if params.force_band is not None:
        return params.force_band, ratio
    if ratio is None:
        return "unknown", None
    if ratio >= params.force_compact:
        return "critical", ratio
    if ratio >= params.auto_prune:
        return "high", ratio
    if ratio >= params.nudge:
        return "medium", ratio
    return "low", ratio


def effective_band(band: str) -> str:
    """`unknown` counts as `low` ("low-band defaults stay on")."""
    return "low" if band == "unknown" else band


def band_at_least(band: str, minimum: str) -> bool:
    """Effective band rank >= `minimum` rank."""
    return _RANK[effective_band(band)] >= _RANK[minimum]


def _label(band: str) -> str:
    eff = effective_band(band)
    if eff == "low":
        return "low default policy" if band == "unknown" else "baseline safe wins"
    return {
        "medium": "baseline safe wins",
        "high": "broader stale payload pruning active",
        "critical": "compaction preferred",
    }[eff]


def footer_text(tokens_saved: int, band: str, debug: bool) -> str | None:
    """`✂️ DCP: ~<N> tokens saved · <effectiveBand> pre-prune pressure (<label>)`; None when
    N = 0 (pi clears the status) unless `debug` (then `DCP: 0 tokens saved · ...`)."""
    suffix = f" · {effective_band(band)} pre-prune pressure ({_label(band)})"
    if tokens_saved > 0:
        return f"✂️ DCP: ~{tokens_saved} tokens saved{suffix}"
    if debug:
        return f"DCP: 0 tokens saved{suffix}"
    return None
