"""Behaviour profiles of the simulated agent, loaded from the data table ``profiles.toml``.

docs/specs/sim-agent.md ("Behaviour knobs", "Profiles are data (a table), not code
branches"): every profile is one ``[profiles.<name>]`` row of ``profiles.toml`` that sets every
knob; a mixture (``sim-mixed``) is a ``[mixtures.<name>]`` row of weights and draws one
profile per sample. ``-M knob=value`` model arguments override knobs (:func:`get_profile`).

User profiles (fitted from the user's own recorded sessions by ``readbench sim fit``, issue 16)
live outside the package, in the TOML file :func:`user_profiles_path` names
(``$READBENCH_PROFILES``, else ``~/.config/readbench/profiles.toml``); its ``[profiles.<name>]``
rows have the same shape plus ``evidence`` and a ``fit`` table, and run as
``readbench/<name>`` exactly like the built-in rows. A user row may not reuse a built-in name.
"""

from __future__ import annotations

import functools
import os
import re
import tomllib
from dataclasses import dataclass, fields, replace
from importlib import resources
from pathlib import Path
from typing import Any

__all__ = [
    "PROFILES_ENV", "KnobDoc", "Mixture", "Profile", "builtin_profile_names", "get_mixture", "get_profile",
    "knob_docs", "mixture_names", "profile_fit", "profile_names", "profile_row", "user_profiles_path",
]

#: Environment variable naming the user profile file.
PROFILES_ENV = "READBENCH_PROFILES"

PROFILE_NAME_RE = re.compile(r"sim-[A-Za-z0-9][A-Za-z0-9._-]*")
"""A user profile's name: `sim-` then letters, digits, `.`, `_`, `-` (it becomes the model name
`readbench/<name>`, so no `/` or `..` path parts; GitHub issue 27)."""


def check_profile_name(name: str, where: str) -> None:
    """Raise `ValueError("{where}: profile name {name!r} ...")` unless `name` matches `PROFILE_NAME_RE`."""
    if not PROFILE_NAME_RE.fullmatch(name) or ".." in name:
        raise ValueError(f"{where}: profile name {name!r} must be 'sim-' then letters, digits, '.', '_' or '-' "
                         "(no '/' or '..'): it becomes the model name readbench/<name>")


@dataclass(frozen=True)
class Profile:
    """One behaviour profile: the knobs of docs/specs/sim-agent.md (units in ``profiles.toml``).

    Probabilities are fractions in [0, 1], drawn per decision from the sample's seeded
    stream (readbench.sim.draws). Ranges are inclusive ``(low, high)`` pairs drawn uniformly.
    """

    name: str
    """Profile name, e.g. ``sim-pager``."""
    summary: str
    """One-line description."""
    p_grep_first: float
    """Chance to locate by grep before reading (per sub-goal)."""
    window_lines: tuple[int, int]
    """Size of a targeted read, lines."""
    p_follow_paging: float
    """Chance to follow a continuation notice that did not yet show the target (per notice)."""
    p_restart_reread: float
    """Chance to re-read a paged file from line 1 before acting (per sub-goal)."""
    p_comply_block: float
    """Chance to switch to ranged reads after a block error (per error)."""
    max_block_retries: int
    """Blind reads repeated after block errors before complying anyway."""
    p_use_map: float
    """Chance to use C's structural map to jump to the target (per file and sub-goal)."""
    p_verify_reread: float
    """Chance to re-read the edited region after a successful edit."""
    range_chunk_lines: int
    """Chunk size of ranged reads, lines."""
    context_window_tokens: int
    """Prompt size above which the request overflows, tokens."""
    think_tokens: tuple[int, int]
    """Prose tokens per turn."""
    ttft_seconds: float
    """Time to first token at an empty prompt, seconds."""
    ttft_seconds_per_1k_input_tokens: float
    """Prefill time per 1,000 prompt tokens, seconds."""
    output_tokens_per_second: float
    """Decode throughput, tokens per second."""
    tool_seconds: float
    """Modelled run time of one non-test tool call, seconds."""
    test_seconds: float
    """Modelled run time of the task's test command, seconds."""
    user_gap_seconds: float
    """Idle time before the next prompt of a multi-prompt session, seconds."""
    max_fix_attempts: int
    """Failed test runs after which the fix is submitted as is."""
    max_step_actions: int
    """Tool calls per sub-goal after which the sim gives up."""
    calls_per_prompt: tuple[int, int]
    """Model calls per user prompt the sim fills up to with exploration calls (drawn per prompt;
    ``(0, 0)`` = no exploration), calls."""
    explore_before_share: float
    """Fraction of the drawn calls per prompt spent exploring before locating the target."""
    explore_tools: tuple[tuple[str, float], ...]
    """Weights of the exploration tools (``read``, ``grep``, ``bash``), normalised on draw."""
    evidence: str = ""
    """Where the row's numbers come from (user rows: "fitted from N sessions: ...")."""


@dataclass(frozen=True)
class KnobDoc:
    """Documentation row of one knob: ``name``, ``unit``, ``meaning``, ``evidence`` (the spec's column)."""

    name: str
    unit: str
    meaning: str
    evidence: str


@dataclass(frozen=True)
class Mixture:
    """A profile mixture: ``weights`` maps profile names to positive weights (normalised on draw)."""

    name: str
    summary: str
    weights: tuple[tuple[str, float], ...]


KNOB_NAMES: tuple[str, ...] = tuple(f.name for f in fields(Profile) if f.name not in ("name", "summary", "evidence"))
_PROBABILITIES = {n for n in KNOB_NAMES if n.startswith("p_")} | {"explore_before_share"}
_RANGES = {"window_lines", "think_tokens", "calls_per_prompt"}
_WEIGHTS = {"explore_tools": ("read", "grep", "bash")}
_COUNTS = {"max_block_retries", "max_fix_attempts", "max_step_actions"}
_POSITIVE_INTS = {"range_chunk_lines", "context_window_tokens"}


@functools.lru_cache(maxsize=1)
def _builtin() -> dict[str, Any]:
    text = resources.files("readbench.sim").joinpath("profiles.toml").read_text(encoding="utf-8")
    table = tomllib.loads(text)
    documented = set(table.get("knobs", {}))
    if documented != set(KNOB_NAMES):
        raise RuntimeError(f"profiles.toml documents knobs {sorted(documented)}, expected {sorted(KNOB_NAMES)}")
    for name, row in table.get("profiles", {}).items():
        _build(name, row)  # validate every row once
    for name, row in table.get("mixtures", {}).items():
        for member in row["weights"]:
            if member not in table["profiles"]:
                raise RuntimeError(f"mixture {name!r} names unknown profile {member!r}")
    return table


def user_profiles_path() -> Path:
    """The user profile file: ``$READBENCH_PROFILES``, else ``$XDG_CONFIG_HOME/readbench/profiles.toml``
    (``~/.config/readbench/profiles.toml``). It need not exist."""
    env = os.environ.get(PROFILES_ENV)
    if env:
        return Path(env)
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "readbench" / "profiles.toml"


@functools.lru_cache(maxsize=8)
def _user(path: str, mtime_ns: int) -> dict[str, Any]:
    try:
        table = tomllib.loads(Path(path).read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ValueError(f"{path}: not a readable profile file ({exc})") from None
    except OSError as exc:  # a directory, no permission
        raise ValueError(f"{path}: cannot read the profile file ({exc.strerror or exc})") from None
    rows = table.get("profiles", {})
    if not isinstance(rows, dict) or not all(isinstance(row, dict) for row in rows.values()):
        raise ValueError(f"{path}: not a readable profile file ('profiles' must be a table of [profiles.NAME] tables)")
    builtin = _builtin()
    for name, row in rows.items():
        check_profile_name(name, path)
        if name in builtin["profiles"] or name in builtin.get("mixtures", {}):
            raise ValueError(f"{path}: profile {name!r} reuses a built-in name; rename it")
        _build(name, row, where=path)
    return {"profiles": rows}


def _table() -> dict[str, Any]:
    """Built-in rows plus the user file's rows (re-read when the file changes)."""
    builtin = _builtin()
    path = user_profiles_path()
    try:
        mtime = path.stat().st_mtime_ns
    except OSError:
        return builtin
    user = _user(str(path), mtime)
    if not user["profiles"]:
        return builtin
    return {**builtin, "profiles": {**builtin["profiles"], **user["profiles"]}}


def _check(name: str, value: Any, where: str) -> Any:
    """Validate and normalise one knob value; raise ValueError naming ``where`` and the knob."""
    bad = ValueError(f"{where}: bad value for knob {name!r}: {value!r}")
    if name in _WEIGHTS:
        if isinstance(value, (list, tuple)):
            try:
                value = dict(value)
            except (TypeError, ValueError):
                raise bad from None
        if not isinstance(value, dict) or set(value) - set(_WEIGHTS[name]) or any(
                isinstance(v, bool) or not isinstance(v, (int, float)) or v < 0 for v in value.values()):
            raise bad
        return tuple((k, float(value.get(k, 0.0))) for k in _WEIGHTS[name])
    if name in _RANGES:
        if not (isinstance(value, (list, tuple)) and len(value) == 2 and all(isinstance(v, int) for v in value)):
            raise bad
        low, high = int(value[0]), int(value[1])
        if not 0 <= low <= high:
            raise bad
        return (low, high)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise bad
    if name in _PROBABILITIES:
        if not 0.0 <= float(value) <= 1.0:
            raise bad
        return float(value)
    if name in _COUNTS or name in _POSITIVE_INTS:
        if int(value) != value or value < (1 if name in _POSITIVE_INTS else 0):
            raise bad
        return int(value)
    if float(value) < 0 or (name == "output_tokens_per_second" and float(value) == 0):
        raise bad
    return float(value)


def _build(name: str, row: dict[str, Any], where: str | Path = "profiles.toml") -> Profile:
    missing = [k for k in KNOB_NAMES if k not in row]
    extra = [k for k in row if k not in KNOB_NAMES and k not in ("summary", "evidence", "fit")]
    if missing or extra:
        error = RuntimeError if where == "profiles.toml" else ValueError
        raise error(f"{where} row {name!r}: missing knobs {missing}, unknown keys {extra}")
    values = {k: _check(k, row[k], f"{where} row {name!r}") for k in KNOB_NAMES}
    return Profile(name=name, summary=str(row.get("summary", "")), evidence=str(row.get("evidence", "")), **values)


def profile_row(profile: Profile) -> dict[str, Any]:
    """The TOML row of ``profile`` (every knob; ranges as lists, tool weights as a table)."""
    row: dict[str, Any] = {"summary": profile.summary}
    if profile.evidence:
        row["evidence"] = profile.evidence
    for k in KNOB_NAMES:
        value = getattr(profile, k)
        row[k] = dict(value) if k in _WEIGHTS else list(value) if isinstance(value, tuple) else value
    return row


def profile_fit(name: str) -> dict[str, Any] | None:
    """The ``fit`` table of a user row (per knob: ``identified``, ``observations``, ``note``,
    ``interval``), or None for a built-in or unknown profile."""
    row = _table()["profiles"].get(name)
    return None if row is None or name in _builtin()["profiles"] else row.get("fit")


def builtin_profile_names() -> list[str]:
    """Names of the hand-set profiles shipped in the package's ``profiles.toml``."""
    return list(_builtin()["profiles"])


def profile_names() -> list[str]:
    """Names of the plain profiles, in table order (built-in rows, then the user file's).

    Raises:
        ValueError: the user profile file is malformed (named).
    """
    return list(_table()["profiles"])


def mixture_names() -> list[str]:
    """Names of the mixtures (e.g. ``sim-mixed``), in table order."""
    return list(_table().get("mixtures", {}))


def knob_docs() -> list[KnobDoc]:
    """The knob documentation rows (unit, meaning, evidence), in :class:`Profile` field order."""
    docs = _builtin()["knobs"]
    return [KnobDoc(name=k, unit=docs[k]["unit"], meaning=docs[k]["meaning"], evidence=docs[k]["evidence"])
            for k in KNOB_NAMES]


def parse_overrides(overrides: dict[str, Any] | None) -> dict[str, Any]:
    """Validate ``-M`` knob overrides (values may arrive as strings or YAML-parsed numbers/lists).

    Raises:
        ValueError: an unknown knob name, or a value outside the knob's domain (both named).
    """
    out: dict[str, Any] = {}
    for key, value in (overrides or {}).items():
        if key not in KNOB_NAMES:
            raise ValueError(f"unknown sim knob {key!r} (known: {', '.join(KNOB_NAMES)})")
        if key in _WEIGHTS and (isinstance(value, str) or (
                isinstance(value, list) and all(isinstance(v, str) for v in value))):
            value = _parse_weights(key, value if isinstance(value, str) else ",".join(value))
        elif isinstance(value, str):
            value = _parse_text(key, value)
        out[key] = _check(key, value, "model argument")
    return out


def _parse_text(key: str, text: str) -> Any:
    try:
        if key in _RANGES:
            low, high = text.strip("[]() ").replace("-", ",").split(",")
            return [int(low), int(high)]
        return float(text) if any(c in text for c in ".eE") else int(text)
    except ValueError:
        raise ValueError(f"model argument: bad value for knob {key!r}: {text!r}") from None


def _parse_weights(key: str, text: str) -> dict[str, float]:
    """``read:0.5,grep:0.2,bash:0.3`` -> weights."""
    try:
        return {k.strip(): float(v) for k, v in (item.split(":") for item in text.split(",") if item.strip())}
    except ValueError:
        raise ValueError(f"model argument: bad value for knob {key!r}: {text!r} (want read:W,grep:W,bash:W)") from None


def get_profile(name: str, overrides: dict[str, Any] | None = None) -> Profile:
    """The plain profile ``name`` with validated knob ``overrides`` applied.

    Raises:
        ValueError: ``name`` is not a plain profile (mixtures are drawn per sample, see
            :func:`get_mixture`), an override is invalid (see :func:`parse_overrides`), or the
            user profile file is malformed.
    """
    table = _table()
    if name not in table["profiles"]:
        known = ", ".join(profile_names() + mixture_names())
        raise ValueError(f"unknown sim profile {name!r} (known: {known}; user profiles: {user_profiles_path()})")
    where = "profiles.toml" if name in _builtin()["profiles"] else user_profiles_path()
    profile = _build(name, table["profiles"][name], where)
    return replace(profile, **parse_overrides(overrides))


def get_mixture(name: str) -> Mixture | None:
    """The mixture ``name``, or None if ``name`` is not a mixture."""
    row = _table().get("mixtures", {}).get(name)
    if row is None:
        return None
    weights = tuple((str(k), float(v)) for k, v in row["weights"].items())
    return Mixture(name=name, summary=str(row.get("summary", "")), weights=weights)
