"""Named DCP configurations: data in one registry (docs/specs/dcp.md §9, brief §2).

A configuration is a pruning family plus its typed parameters:

| name | family | what it is |
| --- | --- | --- |
| `off` | off | no pruning (the baseline) |
| `pi-dcp` | pi-dcp | PSU3D0/pi-dcp defaults (dcp.md §5) |
| `pi-dcp-dedup-only` | pi-dcp | only `deduplicate` |
| `pi-dcp-stable` | pi-dcp | defaults without ` (Turn N)` in placeholders (isolates dcp.md §2.5) |
| `pi-dcp-aggressive` | pi-dcp | `supersedeWrites` on and band forced `high` |
| `dcp-gated` | sister | diegopetrucci pi-dynamic-context-pruning defaults, r = 0.1, T = 22 (§7.3) |
| `obs-mask-5` | obs-mask | SWE-agent last-5 observations (anchors.md §1) |

User-defined configurations are dicts `{"base": "<name>", "name": "<new name>", <field>: value}`
whose other keys are fields of the base's parameter class (`PiDcpParams`, `SisterParams`,
`ObsMaskParams` in `readbench.dcp._params`). `CONFIGS` is the registry
(`readbench.records.Registry`); the strategies a configuration runs come from the strategy
records (`readbench.dcp._strategy`).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from readbench.dcp._params import ObsMaskParams, PiDcpParams, SisterParams, params_to_dict
from readbench.records import Registry

__all__ = ["CONFIGS", "CONFIG_NAMES", "DcpConfig", "get_config", "list_configs"]

FAMILIES = ("off", "pi-dcp", "sister", "obs-mask")


@dataclass(frozen=True)
class DcpConfig:
    """A pruning configuration. `params` is None for `off`."""

    name: str
    """Registry or user-given name (appears in logs and reports)."""
    family: str
    """`off`, `pi-dcp`, `sister` or `obs-mask`."""
    base: str
    """Preset it was derived from (itself for a preset)."""
    origin: str
    """One line: where the behaviour comes from."""
    params: PiDcpParams | SisterParams | ObsMaskParams | None

    def to_dict(self) -> dict[str, Any]:
        """`{"name", "family", "base", "origin", "params"}`; params JSON-ready."""
        return {
            "name": self.name,
            "family": self.family,
            "base": self.base,
            "origin": self.origin,
            "params": params_to_dict(self.params) if self.params is not None else {},
        }

    def strategies(self) -> list[str]:
        """The registered strategies of its family that its parameters enable, in run order
        (`readbench.dcp._strategy`; pi-dcp's pressure band may still hold some back in a call)."""
        from readbench.dcp._strategy import family_strategies

        if self.params is None:
            return []
        return [s.name for s in family_strategies(self.family) if s.enabled(self.params)]

    def describe(self) -> dict[str, Any]:
        """`to_dict()` plus `strategies` (`readbench dcp configs`)."""
        return {**self.to_dict(), "strategies": self.strategies()}


def _derive(base: DcpConfig, name: str, overrides: dict[str, Any]) -> DcpConfig:
    """`base` with `name` and parameter overrides (`Registry.derive`)."""
    if base.params is None:
        if overrides:
            raise ValueError(f"DCP configuration {base.name!r} takes no parameters, got {sorted(overrides)}")
        return dataclasses.replace(base, name=name, base=base.name)
    valid = {f.name for f in dataclasses.fields(base.params)}
    for key in overrides:
        if key not in valid:
            raise ValueError(
                f"unknown parameter {key!r} for DCP family {base.family!r}; valid: {', '.join(sorted(valid))}"
            )
    fixed = {k: tuple(v) if isinstance(v, list) else v for k, v in overrides.items()}
    params = dataclasses.replace(base.params, **fixed)  # type: ignore[arg-type]  # keys checked above
    origin = f"{base.origin}; overrides {sorted(overrides)}" if overrides else base.origin
    return DcpConfig(name, base.family, base.name, origin, params)


_PI = "PSU3D0/pi-dcp 8d15a33 (docs/specs/dcp.md Part A)"
_BUILTIN = (
    DcpConfig("off", "off", "off", "no pruning: the model sees the full history", None),
    DcpConfig("pi-dcp", "pi-dcp", "pi-dcp", f"{_PI}, default config", PiDcpParams()),
    DcpConfig(
        "pi-dcp-dedup-only", "pi-dcp", "pi-dcp-dedup-only", f"{_PI}, only deduplicate enabled",
        PiDcpParams(purge_errors=False, output_body_replace=False, supersede_writes=False),
    ),
    DcpConfig(
        "pi-dcp-stable", "pi-dcp", "pi-dcp-stable", f"{_PI}, placeholders without the (Turn N) counter",
        PiDcpParams(turn_counter=False),
    ),
    DcpConfig(
        "pi-dcp-aggressive", "pi-dcp", "pi-dcp-aggressive", f"{_PI}, supersedeWrites on, band forced high",
        PiDcpParams(supersede_writes=True, force_band="high"),
    ),
    DcpConfig(
        "dcp-gated", "sister", "dcp-gated",
        "diegopetrucci/pi-dynamic-context-pruning 0.1.6 defaults, cache gate r=0.1 T=22 (dcp.md Part B)",
        SisterParams(),
    ),
    DcpConfig(
        "obs-mask-5", "obs-mask", "obs-mask-5",
        "SWE-agent LastNObservations n=5, 'last-5 observations collapsed' (anchors.md §1)",
        ObsMaskParams(keep_last=5),
    ),
)

CONFIGS: Registry[DcpConfig] = Registry("DCP configuration", _BUILTIN, derive=_derive)
"""name -> DcpConfig (`CONFIGS.register(get_config({...}))` adds one at run time)."""

CONFIG_NAMES: tuple[str, ...] = tuple(c.name for c in _BUILTIN)
"""Names of the built-in presets, in table order."""


def list_configs() -> list[DcpConfig]:
    """All registered configurations: the presets in table order, then registered ones."""
    return list(CONFIGS)


def get_config(spec: str | dict[str, Any] | DcpConfig) -> DcpConfig:
    """Resolve a registered name, a `{"base", "name", **overrides}` dict, or a DcpConfig.

    Raises
    ------
    ValueError
        Unknown configuration (the message lists valid names), a dict without string
        `base`/`name`, an override key that is not a parameter of the base's family (named in the
        message), an invalid parameter value, or a spec of another type.
    """
    if not isinstance(spec, (str, dict, DcpConfig)):
        raise ValueError(f"DCP configuration must be a name or a dict, got {type(spec).__name__}")
    return CONFIGS.resolve(spec)
