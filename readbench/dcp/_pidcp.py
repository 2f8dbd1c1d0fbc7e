"""The pi-dcp transform for one model call (docs/specs/dcp.md §1 "Order").

Stateless: every placeholder is recomputed from the unpruned history on each call. Order:
age model + tool-call index + protection policy -> pressure band -> the registered pi-dcp
strategies in order (`readbench.dcp._strategy`: deduplicate -> purgeErrors -> supersedeWrites ->
outputBodyReplace), each only if enabled and the effective band reaches its minimum -> footer.
"""

from __future__ import annotations

from readbench.dcp._ages import build_age_model
from readbench.dcp._params import PiDcpParams
from readbench.dcp._pidcp_run import PiDcpRun
from readbench.dcp._pressure import band_at_least, compute_band, footer_text
from readbench.dcp._protection import ProtectionPolicy
from readbench.dcp._strategy import DcpStrategy, family_strategies
from readbench.dcp._types import ContextUsage
from readbench.dcp._view import PiView, calls_of

__all__ = ["PiDcpOutcome", "run_pi_dcp", "running_strategies"]


def running_strategies(params: PiDcpParams, band: str) -> list[DcpStrategy]:
    """The registered pi-dcp strategies this call runs, in order: enabled by `params` and allowed
    at the effective `band` (their `min_band`, dcp.md §3)."""
    return [s for s in family_strategies("pi-dcp") if s.enabled(params) and band_at_least(band, s.min_band)]


class PiDcpOutcome:
    """Counters and band of one pi-dcp transform (read by `project`)."""

    def __init__(self, run: PiDcpRun, band: str, ratio: float | None, ran: tuple[str, ...]) -> None:
        self.run = run
        self.band = band
        self.ratio = ratio
        self.ran = ran
        self.footer = footer_text(run.tokens_saved, band, run.params.debug)


def run_pi_dcp(view: PiView, params: PiDcpParams, usage: ContextUsage | None) -> PiDcpOutcome:
    """Apply pi-dcp to `view` in place (copy-on-write) and return its counters."""
    ages = build_age_model(view)
    args_index = {c.id: c.arguments for pos in range(len(view)) for c in calls_of(view.original(pos))}
    policy = ProtectionPolicy(view, params, ages, args_index)
    run = PiDcpRun(view, params, policy, tuple(s.name for s in family_strategies("pi-dcp")))
    band, ratio = compute_band(params, usage)
    ran = running_strategies(params, band)
    for strategy in ran:
        strategy.apply(run)
    return PiDcpOutcome(run, band, ratio, tuple(s.name for s in ran))

