"""The registries of read-tool variants: families and presets (`readbench.records.Registry`).

A family (`ReadFamily`) is one implementation class with the notices it writes
(`readbench.read.notices`); every variant of docs/specs/variants.md is a preset (`Preset`) of a
family with parameter overrides; a matrix file defines a new one without code as
`{"base": "B", "name": "B-1500", "max_lines": 1500}`. Family classes load lazily (C and
swe-agent pull in tree-sitter only when built). A new family is a module plus one `FAMILIES`
row and a preset; `FAMILIES`, `PRESETS` (plus user registrations) are the package's only mutable
state.
"""

from __future__ import annotations

import importlib
import re
from dataclasses import dataclass, field
from typing import Any

from readbench.read._params import params_from_dict
from readbench.read._types import ReadVariant
from readbench.read.notices import NOTICES, Notice
from readbench.records import Registry, derivation_origin

__all__ = ["FAMILIES", "PRESETS", "Preset", "ReadFamily", "blocked", "get_variant", "list_presets", "preset_names",
           "register_preset"]


@dataclass(frozen=True)
class ReadFamily:
    """A parametric read-variant family.

    Attributes:
        name: registry name (a preset's `family`).
        implementation: `module:Class` of its `ReadVariant` subclass, imported on first use.
        notices: the notices it writes (`readbench.read.notices.Notice`), which readers of its
            results parse with the same records.
        origin: where the behaviour comes from.
    """

    name: str
    implementation: str
    notices: tuple[Notice, ...]
    origin: str

    def load(self) -> type[ReadVariant]:
        """The implementation class."""
        module, _, cls = self.implementation.partition(":")
        return getattr(importlib.import_module(module), cls)

    def describe(self) -> dict[str, Any]:
        """JSON-ready facts; notices by name."""
        return {"name": self.name, "implementation": self.implementation, "origin": self.origin,
                "notices": [x.name for x in self.notices]}


def blocked(text: str) -> re.Match[str] | None:
    """The refusal (notice kind `block`) of any registered read family that `text` starts with,
    else None: B's over-cap refusal, Claude Code's token error, and any a new family's record
    carries (`readbench.sim.observe`, `readbench.sim.evidence`)."""
    for family in FAMILIES:
        for notice in family.notices:
            if notice.kind == "block" and (m := notice.pattern.match(text)):
                return m
    return None


_N = NOTICES
_PI = (_N["cap"], _N["more"], _N["long_line"], _N["beyond_eof"])
FAMILIES: Registry[ReadFamily] = Registry("read family", (
    ReadFamily("paged", "readbench.read._paged:PagedRead", (*_PI, _N["char_line"], _N["block"]),
               "pi's read (pi-tools.md §1-2) with its caps as parameters; B's refusal (variants.md)"),
    ReadFamily("dedup", "readbench.read._dedup:DedupRead", (*_PI, _N["char_line"], _N["block"], _N["stub"]),
               "B plus a stub for repeat reads (variants.md \"B+dedup\")"),
    ReadFamily("mapped", "readbench.read._mapped:MappedRead", (_N["cut"], _N["more"], _N["long_line"], _N["beyond_eof"]),
               "C: a cut to numbered lines with a structural map (variants.md \"C\")"),
    ReadFamily("swe-agent", "readbench.read._swe_agent:SweAgentRead", (_N["clipped"], _N["elided"]),
               "SWE-agent's str_replace_editor view (variants.md \"swe-agent\")"),
    ReadFamily("claude-code", "readbench.read._claude_code:ClaudeCodeRead", (_N["token_block"], _N["numbered"]),
               "Claude Code's Read (variants.md \"claude-code\")"),
))
"""name -> ReadFamily."""


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
        return FAMILIES.get(self.family).load()

    def build(self) -> ReadVariant:
        """Instantiate the variant.

        Raises:
            ValueError: if a parameter is unknown or out of range (naming it).
        """
        family = self.family_class()
        params = params_from_dict(family.Params, self.params, preset=self.name)
        return family(self.name, self.origin, params)

    def describe(self) -> dict[str, Any]:
        """`{"name", "family", "origin", "params"}` with the family's effective parameters
        (`readbench variants`)."""
        return self.build().describe()


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

def _derive(base: Preset, name: str, overrides: dict[str, Any]) -> Preset:
    """`base` with `name` and parameter overrides (`Registry.derive`); validated when built."""
    params = {k: v for k, v in overrides.items() if k != "origin"}
    origin = overrides.get("origin") or derivation_origin(base.name, params)
    return Preset(name, base.family, {**base.params, **params}, str(origin))


PRESETS: Registry[Preset] = Registry("read variant", _BUILTIN, derive=_derive)
"""name -> Preset, built-ins first in spec order."""


def preset_names() -> list[str]:
    """Registered preset names, built-ins first in spec order."""
    return PRESETS.names()


def list_presets() -> list[Preset]:
    """Registered presets, built-ins first in spec order."""
    return list(PRESETS)


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
    if not isinstance(spec, (str, dict)):
        raise TypeError(f"read variant spec must be a preset name or a dict, got {type(spec).__name__}")
    return PRESETS.resolve(spec).build()


def register_preset(spec: dict[str, Any]) -> Preset:
    """Add a user-defined preset (same dict form as `get_variant`) to the registry so later
    lookups by its name work, e.g. as the `base` of another. The variant is built once to
    validate it.

    Raises:
        ValueError: as `get_variant`, or if the name is already registered.
    """
    preset = PRESETS.derive(spec)
    if preset.name in PRESETS:
        raise ValueError(f"read variant {preset.name!r} is already registered")
    preset.build()
    return PRESETS.register(preset)
