"""Typed parameters of the three pruning families (defaults = the extensions' defaults).

docs/specs/dcp.md §5 (pi-dcp `types.ts`/`config.ts`), §7.3 (sister defaults), anchors.md §1
(SWE-agent "last-5 observations collapsed"). Every field name is the override key accepted by
`get_config({"base": ..., "name": ..., <field>: value})`.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any

__all__ = ["PiDcpParams", "SisterParams", "ObsMaskParams", "BANDS"]

BANDS = ("unknown", "low", "medium", "high", "critical")


def _check_extra(family: str, names: object) -> None:
    if not isinstance(names, tuple) or not all(isinstance(n, str) for n in names):
        raise ValueError(f"{family} parameter 'extra_strategies' must be a list of strategy names, got {names!r}")
    if names:
        from readbench.dcp._strategy import check_extra_strategies  # the registry loads the strategy modules

        check_extra_strategies(family, names)


@dataclass(frozen=True)
class PiDcpParams:
    """PSU3D0/pi-dcp configuration (dcp.md §5 table; defaults verified there)."""

    turn_protection: bool = True
    """`turnProtection.enabled`."""
    turns: int = 8
    """`turnProtection.turns`: messages with turnAge < turns are protected."""
    step_protection: bool = True
    """`stepProtection.enabled`."""
    steps: int = 2
    """`stepProtection.steps`: newest steps kept when step protection is engaged."""
    nudge: float = 0.7
    """`thresholds.nudge` (fraction of the context window): medium band at or above."""
    auto_prune: float = 0.8
    """`thresholds.autoPrune`: high band at or above."""
    force_compact: float = 0.9
    """`thresholds.forceCompact`: critical band at or above."""
    protected_tools: tuple[str, ...] = ("todo", "subagent", "send_to_session", "plan_enter", "plan_exit")
    """Exact, case-sensitive tool names whose calls and results are never pruned."""
    protected_file_patterns: tuple[str, ...] = ("**/CHANGELOG.md", "**/*.plan.md", "**/progress.md")
    """Globs matched against `args.path`/`args.file` candidates."""
    deduplicate: bool = True
    """`strategies.deduplicate.enabled`."""
    purge_errors: bool = True
    """`strategies.purgeErrors.enabled`."""
    min_turn_age: int = 3
    """`strategies.purgeErrors.minTurnAge` (user turns)."""
    output_body_replace: bool = True
    """`strategies.outputBodyReplace.enabled`."""
    min_chars: int = 1200
    """`strategies.outputBodyReplace.minChars` (UTF-16 code units of text; images count minChars+1)."""
    supersede_writes: bool = False
    """`strategies.supersedeWrites.enabled` (also needs band >= high)."""
    frontier_pins: bool = True
    """Harness switch (dcp.md §9): False disables the four frontier pins (pi-dcp has no switch)."""
    turn_counter: bool = True
    """Harness switch (dcp.md §9): False drops ` (Turn N)` from the outputBodyReplace placeholder."""
    force_band: str | None = None
    """Harness switch: use this band instead of the one computed from usage (`low`..`critical`)."""
    debug: bool = False
    """`debug`: footer text shown even when 0 tokens were saved."""
    cwd: str | None = None
    """Working directory used to make relative tool paths absolute (pi: `ctx.cwd`); None = skip."""
    extra_strategies: tuple[str, ...] = ()
    """Registered pi-dcp strategies without a flag of their own that this configuration runs
    (`readbench.dcp._strategy`), in their registration order."""

    def __post_init__(self) -> None:
        _check_extra("pi-dcp", self.extra_strategies)
        for name in ("turns", "steps", "min_turn_age", "min_chars"):
            v = getattr(self, name)
            if not isinstance(v, int) or isinstance(v, bool) or v < 0:
                raise ValueError(f"pi-dcp parameter {name!r} must be an integer >= 0, got {v!r}")
        for name in ("nudge", "auto_prune", "force_compact"):
            v = getattr(self, name)
            if not isinstance(v, (int, float)) or isinstance(v, bool) or v < 0:
                raise ValueError(f"pi-dcp parameter {name!r} must be a number >= 0, got {v!r}")
        if self.force_band is not None and self.force_band not in BANDS[1:]:
            raise ValueError(f"pi-dcp parameter 'force_band' must be one of {BANDS[1:]} or null, got {self.force_band!r}")


@dataclass(frozen=True)
class SisterParams:
    """diegopetrucci pi-dynamic-context-pruning configuration (dcp.md §7.3 defaults)."""

    recent_turns: int = 4
    """`protections.recentTurns`: everything from the Nth-newest user message on is untouchable."""
    protected_tools: tuple[str, ...] = (
        "todo", "task", "subagent", "agent", "skill", "oracle", "librarian", "contrarian",
        "code_reviewer", "gnosis", "triage_comments",
    )
    """`protections.toolNames`, matched case-insensitively."""
    protected_path_globs: tuple[str, ...] = (
        "**/.env", "**/.env.*", "**/*.pem", "**/*.key", "**/id_rsa*", "**/id_ed25519*",
        "**/secrets/**", "**/*.p12", "**/*.pfx",
    )
    """`protections.pathGlobs`, matched against every string argument (depth 2)."""
    min_chars_saved: int = 200
    """`thresholds.minCharsSaved`: original text chars minus placeholder chars; 0 disables."""
    dedupe: bool = True
    """`strategies.dedupe.enabled`."""
    error_purge: bool = True
    """`strategies.errorPurge.enabled`."""
    min_turns_old: int = 4
    """`strategies.errorPurge.minTurnsOld`: eligible when more than this many user messages follow."""
    superseded_file_ops: bool = True
    """`strategies.supersededFileOps.enabled`."""
    gate_mode: str = "on"
    """`gate.mode`: `on`, `off` or `always-apply`."""
    cached_price_ratio: float = 0.1
    """`gate.cachedPriceRatio` r: fraction of the full input price paid for a cached token (0..1)."""
    threshold_idle: float = 22
    """`gate.breakEvenThresholdByState.idle` T (calls)."""
    threshold_mid_loop: float = 22
    """`gate.breakEvenThresholdByState.mid_loop` T (calls)."""
    cwd: str | None = None
    """Working directory for resolving relative file paths; None = normalise only."""
    extra_strategies: tuple[str, ...] = ()
    """Registered sister strategies without a flag of their own that this configuration runs."""

    def __post_init__(self) -> None:
        _check_extra("sister", self.extra_strategies)
        for name in ("recent_turns", "min_chars_saved", "min_turns_old"):
            v = getattr(self, name)
            if not isinstance(v, int) or isinstance(v, bool) or v < 0:
                raise ValueError(f"sister parameter {name!r} must be an integer >= 0, got {v!r}")
        if self.gate_mode not in ("on", "off", "always-apply"):
            raise ValueError(f"sister parameter 'gate_mode' must be on|off|always-apply, got {self.gate_mode!r}")
        r = self.cached_price_ratio
        if not isinstance(r, (int, float)) or isinstance(r, bool) or not 0 <= r <= 1:
            raise ValueError(f"sister parameter 'cached_price_ratio' must be in [0, 1], got {r!r}")
        for name in ("threshold_idle", "threshold_mid_loop"):
            v = getattr(self, name)
            if not isinstance(v, (int, float)) or isinstance(v, bool) or v < 0:
                raise ValueError(f"sister parameter {name!r} must be a number >= 0, got {v!r}")


@dataclass(frozen=True)
class ObsMaskParams:
    """SWE-agent `LastNObservations` (anchors.md §1: "last-5 observations collapsed")."""

    keep_last: int = 5
    """Tool observations kept verbatim, newest first."""
    placeholder: str = "Old environment output: ({lines} lines omitted)"
    """SWE-agent's elision text; `{lines}` = line count of the original text (fixed per message)."""

    def __post_init__(self) -> None:
        if not isinstance(self.keep_last, int) or isinstance(self.keep_last, bool) or self.keep_last < 0:
            raise ValueError(f"obs-mask parameter 'keep_last' must be an integer >= 0, got {self.keep_last!r}")
        if not isinstance(self.placeholder, str):
            raise ValueError(f"obs-mask parameter 'placeholder' must be a string, got {self.placeholder!r}")


def params_to_dict(params: Any) -> dict[str, Any]:
    """Dataclass params as a JSON-ready dict (tuples become lists)."""
    out: dict[str, Any] = {}
    for f in fields(params):
        v = getattr(params, f.name)
        out[f.name] = list(v) if isinstance(v, tuple) else v
    return out
