"""The pi-dcp transform for one model call (shared/specs/dcp.md §1 "Order").

Stateless: every placeholder is recomputed from the unpruned history on each call. Order:
age model + tool-call index + protection policy -> pressure band -> deduplicate ->
purgeErrors -> supersedeWrites -> outputBodyReplace (each only if enabled and the effective
band reaches its minimum) -> footer.
"""

from __future__ import annotations

from readbench.dcp._ages import build_age_model
from readbench.dcp._params import PiDcpParams
from readbench.dcp._pidcp_run import STRATEGY_NAMES, PiDcpRun
from readbench.dcp._pressure import MINIMUM_BAND, band_at_least, compute_band, footer_text
from readbench.dcp._protection import ProtectionPolicy
from readbench.dcp._types import ContextUsage
from readbench.dcp._view import PiView, calls_of
from readbench.dcp.strategies import deduplicate, output_replace, purge_errors, supersede_writes

__all__ = ["PiDcpOutcome", "run_pi_dcp"]

_APPLY = {
    "deduplicate": deduplicate.apply,
    "purgeErrors": purge_errors.apply,
    "supersedeWrites": supersede_writes.apply,
    "outputBodyReplace": output_replace.apply,
}
_ENABLED = {
    "deduplicate": "deduplicate",
    "purgeErrors": "purge_errors",
    "supersedeWrites": "supersede_writes",
    "outputBodyReplace": "output_body_replace",
}


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
    run = PiDcpRun(view, params, policy)
    band, ratio = compute_band(params, usage)
    ran = []
    for name in STRATEGY_NAMES:
        if getattr(params, _ENABLED[name]) and band_at_least(band, MINIMUM_BAND[name]):
            _APPLY[name](run)
            ran.append(name)
    return PiDcpOutcome(run, band, ratio, tuple(ran))

