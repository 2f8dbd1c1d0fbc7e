"""The DCP strategy record and its registry (issue 23; docs/specs/dcp.md §1-§3, §7.2).

A strategy is one pruning rule of a family (`pi-dcp`, `sister`, `obs-mask`). Its record carries
what the projection, the fast path and the readers of a projected history need:

- `flag`: the family parameter that switches it on (`PiDcpParams.deduplicate` ...); None for a
  strategy with no flag of its own, which runs when a configuration lists it in its family's
  `extra_strategies` (pi-dcp) and otherwise never (so registering one changes no configuration);
- `min_band`: the lowest effective pressure band at which it runs (pi-dcp, dcp.md §3;
  `supersedeWrites` needs `high`);
- `placeholder`: the text every replacement it writes starts with (the simulated agent's
  perception tells pruned content by it, `readbench.sim.observe`);
- `apply`: the rule. pi-dcp: `apply(run: PiDcpRun)`, changing the run's view in place; sister:
  `apply(view, params) -> list[Proposal]`; obs-mask: `apply(view, params) -> masked positions`;
- `incremental`: the fast path that computes it on a growing history (dotted name), or None.
  `readbench.dcp.project` takes a family's fast path only when every strategy that runs in the
  call has one, else the from-scratch reference path, which applies every registered strategy
  of the family in registration order: a new strategy is never silently skipped.

A strategy is one module exposing `STRATEGY` plus one line in `_MODULES` (registration order is
the family's run order), or `STRATEGIES.register(...)` at run time.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from readbench.records import Registry

__all__ = ["STRATEGIES", "DcpStrategy", "check_extra_strategies", "family_strategies"]

_MODULES = (
    "readbench.dcp.strategies.deduplicate",
    "readbench.dcp.strategies.purge_errors",
    "readbench.dcp.strategies.supersede_writes",
    "readbench.dcp.strategies.output_replace",
    "readbench.dcp.strategies.sister_dedupe",
    "readbench.dcp.strategies.sister_error_purge",
    "readbench.dcp.strategies.sister_file_ops",
    "readbench.dcp.strategies.obs_mask",
)


@dataclass(frozen=True)
class DcpStrategy:
    """One pruning strategy (module docstring).

    Attributes:
        name: its id in `ProjectionStats.pruned` (pi-dcp's `deduplicate`, the sister's `dedupe`).
        family: `pi-dcp`, `sister` or `obs-mask`.
        origin: where the rule comes from (spec section, upstream source).
        apply: the rule (signature per family, module docstring).
        placeholder: the prefix of every replacement text it writes.
        flag: the family parameter that enables it; None: enabled only through `extra_strategies`.
        min_band: lowest effective pressure band it runs at (`low` = any).
        incremental: the fast path computing it incrementally (dotted name), None for none.
    """

    name: str
    family: str
    origin: str
    apply: Callable[..., Any]
    placeholder: str
    flag: str | None = None
    min_band: str = "low"
    incremental: str | None = None

    def enabled(self, params: Any) -> bool:
        """Whether a configuration with family parameters `params` turns this strategy on: its
        flag; without one, being listed in `params.extra_strategies` (a family without that
        parameter, obs-mask, always runs its strategies)."""
        if self.flag is not None:
            return bool(getattr(params, self.flag))
        if hasattr(params, "extra_strategies"):
            return self.name in params.extra_strategies
        return True

    def describe(self) -> dict[str, Any]:
        """JSON-ready facts (the rule as `module:function`)."""
        return {"name": self.name, "family": self.family, "origin": self.origin, "flag": self.flag,
                "min_band": self.min_band, "placeholder": self.placeholder,
                "apply": f"{self.apply.__module__}:{self.apply.__qualname__}", "incremental": self.incremental}


STRATEGIES: Registry[DcpStrategy] = Registry("DCP strategy", modules=_MODULES, attribute="STRATEGY")
"""name -> DcpStrategy, families interleaved; within a family, registration order is run order."""


def family_strategies(family: str) -> list[DcpStrategy]:
    """The registered strategies of `family`, in run order."""
    return [s for s in STRATEGIES if s.family == family]


def check_extra_strategies(family: str, names: tuple[str, ...]) -> None:
    """Validate a configuration's `extra_strategies`: registered strategies of `family` without a
    flag of their own.

    Raises:
        ValueError: naming the strategy and the valid names.
    """
    valid = [s.name for s in family_strategies(family) if s.flag is None]
    for name in names:
        if name not in valid:
            raise ValueError(f"{family} parameter 'extra_strategies': {name!r} is not a registered {family} strategy "
                             f"without a flag of its own; valid: {valid or 'none registered'}")
