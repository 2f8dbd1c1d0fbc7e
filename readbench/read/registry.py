"""The one registry of read-tool variants: preset name -> (family, params, origin).

Every variant of shared/specs/variants.md is a preset of a parametric family; a matrix file
defines a new one without code as `{"base": "B", "name": "B-1500", "max_lines": 1500}`.
Families load lazily (C and swe-agent pull in tree-sitter only when built).
This module's `_PRESETS` (plus user registrations) is the package's only mutable state.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from typing import Any

from readbench.read._params import params_from_dict
from readbench.read._types import ReadVariant

__all__ = ["Preset", "get_variant", "list_presets", "preset_names", "register_preset"]

# family name -> "module:Class"; imported on first use.
_FAMILIES: dict[str, str] = {
    "paged": "readbench.read._paged:PagedRead",
    "dedup": "readbench.read._dedup:DedupRead",
    "mapped": "readbench.read._mapped:MappedRead",
    "swe-agent": "readbench.read._swe_agent:SweAgentRead",
    "claude-code": "readbench.read._claude_code:ClaudeCodeRead",
}


@dataclass(frozen=True)
class Preset:
    """A named variant: its family, the parameter overrides of that family's defaults,
    and a one-line origin."""

    name: str
    family: str
    params: dict[str, Any] = field(default_factory=dict)
    origin: str = ""

    def family_class(self) -> type[ReadVariant]:
        """The family's implementation class (imported lazily)."""
        module, _, cls = _FAMILIES[self.family].partition(":")
        return getattr(importlib.import_module(module), cls)

    def build(self) -> ReadVariant:
        """Instantiate the variant.

        Raises:
            ValueError: if a parameter is unknown or out of range (naming it).
        """
        family = self.family_class()
        params = params_from_dict(family.Params, self.params, preset=self.name)  # type: ignore[attr-defined]
        return family(self.name, self.origin, params)


_BUILTIN: tuple[Preset, ...] = (
    Preset(
        "stock",
        "paged",
        {},
        "pi 0.84.1 read tool (pi-tools.md §1-2): 2000 lines / 51,200 bytes per portion, continuation notice",
    ),
    Preset(
        "A",
        "paged",
        {"max_lines": 1000, "max_bytes": None, "max_chars": 10_000},
        "seed variant A: stock mechanics with caps 1000 lines / 10,000 characters",
    ),
    Preset(
        "B",
        "paged",
        {"over_cap": "block"},
        "seed variant B: an over-cap read returns only a one-line error with the file's size and a range directive",
    ),
    Preset(
        "B-soft",
        "paged",
        {"over_cap": "block", "as_error": False},
        "seed variant B, patch-the-result path: B's message as a normal (non-error) result",
    ),
    Preset(
        "B+dedup",
        "dedup",
        {"dedup": "context"},
        "seed B + dedup stub, served only while the earlier result is intact in the model's last view",
    ),
    Preset(
        "B+dedup-naive",
        "dedup",
        {"dedup": "naive"},
        "Claude Code style dedup on B: stub whenever an earlier read of the unchanged range exists",
    ),
    Preset(
        "C",
        "mapped",
        {},
        "seed variant C: cut to 400 numbered lines, first cut carries a tree-sitter structural map",
    ),
    Preset(
        "swe-agent",
        "swe-agent",
        {},
        "SWE-agent str_replace_editor view: 16,000-char clip, Python file map with long bodies elided",
    ),
    Preset(
        "claude-code",
        "claude-code",
        {},
        "Claude Code Read: 2000-line default, cat -n numbers, 2000-char lines, 25,000-token hard error",
    ),
    Preset(
        "nocap",
        "paged",
        {"max_lines": None, "max_bytes": None, "limit_notice": False},
        "early Cline: the whole file or range, no cap, no notice",
    ),
)

_PRESETS: dict[str, Preset] = {p.name: p for p in _BUILTIN}


def preset_names() -> list[str]:
    """Registered preset names, built-ins first in spec order."""
    return list(_PRESETS)


def list_presets() -> list[Preset]:
    """Registered presets, built-ins first in spec order."""
    return list(_PRESETS.values())


def _derive(spec: dict[str, Any]) -> Preset:
    if (
        not isinstance(spec.get("base"), str)
        or not isinstance(spec.get("name"), str)
        or not spec["name"]
    ):
        raise ValueError(
            f"a user-defined read variant needs string keys 'base' and 'name', got {spec!r}"
        )
    base_name = spec["base"]
    if base_name not in _PRESETS:
        raise ValueError(f"unknown base read variant {base_name!r}; valid: {preset_names()}")
    base = _PRESETS[base_name]
    overrides = {k: v for k, v in spec.items() if k not in ("base", "name", "origin")}
    origin = spec.get("origin") or (
        f"user preset: {base_name} with " + ", ".join(f"{k}={v!r}" for k, v in overrides.items())
        if overrides
        else f"user preset: same as {base_name}"
    )
    return Preset(spec["name"], base.family, {**base.params, **overrides}, str(origin))


def get_variant(spec: str | dict[str, Any]) -> ReadVariant:
    """Build a read variant from a preset name or a user-defined preset dict.

    Args:
        spec: a registered preset name (`stock`, `A`, `B`, `B-soft`, `B+dedup`,
            `B+dedup-naive`, `C`, `swe-agent`, `claude-code`, `nocap`, or one added by
            `register_preset`), or `{"base": <preset>, "name": <new name>, **overrides}`
            with an optional `"origin"` line.

    Returns:
        A fresh `ReadVariant` (variants are immutable; build one per arm).

    Raises:
        ValueError: unknown preset (the message lists the valid names), missing
            `base`/`name`, or an unknown or out-of-range parameter.
        TypeError: if `spec` is neither a str nor a dict.
    """
    if isinstance(spec, str):
        if spec not in _PRESETS:
            raise ValueError(f"unknown read variant {spec!r}; valid: {preset_names()}")
        return _PRESETS[spec].build()
    if isinstance(spec, dict):
        return _derive(spec).build()
    raise TypeError(f"read variant spec must be a preset name or a dict, got {type(spec).__name__}")


def register_preset(spec: dict[str, Any]) -> Preset:
    """Add a user-defined preset (same dict form as `get_variant`) to the registry so later
    lookups by its name work, e.g. as the `base` of another. The variant is built once to
    validate it.

    Raises:
        ValueError: as `get_variant`, or if the name is already registered.
    """
    preset = _derive(spec)
    if preset.name in _PRESETS:
        raise ValueError(f"read variant {preset.name!r} is already registered")
    preset.build()
    _PRESETS[preset.name] = preset
    return preset
