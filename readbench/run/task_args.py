"""Task arguments of the `read_strategies` task: one validation path for a matrix file's
`task_args`, `readbench eval -T KEY=VALUE` and `inspect eval ... -T KEY=VALUE` (GitHub issue 13).

Every value is checked for its type and bound before any sample runs, and every message names
the key, the rule and the value. The per-arm arguments (`variant`, `dcp`, `cache_models`,
`sandbox_kind`) are set by the matrix and the flags of `readbench eval`, so a matrix run
refuses them as `-T` with a pointer to where they belong.
"""

from __future__ import annotations

from typing import Any

import yaml

from readbench.base.yamltext import load_bounded

__all__ = [
    "BOUNDS",
    "PER_ARM",
    "TASK_ARGS",
    "check_task_args",
    "names",
    "parse_cli_model_args",
    "parse_cli_task_args",
]

BOUNDS: dict[str, tuple[int, int, str]] = {
    "limit": (1, 100_000, "tasks"),
    "per_family": (1, 100_000, "tasks per family"),
    "max_turns": (1, 1_000, "model calls per sample"),
    "context_window_tokens": (1_000, 10_000_000, "tokens"),
}
"""Inclusive integer bounds (low, high, unit) of the numeric task arguments. The highs are far
beyond any use (the corpus has tens of tasks; the largest context windows are 2M tokens) and
exist so that a typo fails with a message instead of running for ever."""

TASK_ARGS = frozenset(set(BOUNDS) | {"families", "sources", "allow_local", "k8s_registry"})
"""Task arguments a matrix file's `task_args` or `-T` may set."""

PER_ARM = {
    "variant": "the matrix's `variants` (or `arms`)",
    "dcp": "the matrix's `dcp` (or `arms`)",
    "cache_models": "the matrix's `cache_models`",
    "sandbox_kind": "the --sandbox option",
}
"""Arguments a matrix run sets itself, and where the user sets them instead."""


def names(value: list[str] | str | None) -> list[str] | None:
    """A comma string or a list of names as a list of stripped non-empty names; None stays None."""
    if value is None:
        return None
    listed = value.split(",") if isinstance(value, str) else list(value)
    return [str(n).strip() for n in listed if str(n).strip()]


def _check_one(key: str, value: Any) -> None:
    if key in BOUNDS:
        low, high, unit = BOUNDS[key]
        if not isinstance(value, int) or isinstance(value, bool) or not low <= value <= high:
            raise ValueError(f"{key} must be an integer from {low} to {high} ({unit}), got {value!r}")
    elif key in ("families", "sources"):
        ok = isinstance(value, str) or (isinstance(value, list) and all(isinstance(v, str) for v in value))
        if not ok or not names(value):
            raise ValueError(f"{key} must be a comma string or a list of names, got {value!r}")
    elif key == "allow_local":
        if not isinstance(value, bool):
            raise ValueError(f"allow_local must be true or false, got {value!r}")
    elif key == "k8s_registry":
        if not isinstance(value, str) or not value.strip():
            raise ValueError(f"k8s_registry must be a registry host such as registry.example:5000, got {value!r}")


def check_task_args(args: dict[str, Any], *, per_arm_allowed: bool = False) -> None:
    """Validate task arguments (names, types, bounds) before any sample runs.

    Args:
        args: argument name -> value (None means "not set" and is accepted for every key).
        per_arm_allowed: accept `variant`/`dcp`/`cache_models`/`sandbox_kind` (the task itself
            takes them; a matrix's `task_args` and `readbench eval -T` do not).

    Raises:
        ValueError: an unknown key, a per-arm key where it is not allowed, or a value of the
            wrong type or out of `BOUNDS`; the message names the key and the value.
    """
    allowed = TASK_ARGS | (set(PER_ARM) if per_arm_allowed else set())
    for key in args:
        if key in PER_ARM and not per_arm_allowed:
            raise ValueError(f"{key} is set per arm by {PER_ARM[key]}, not as a task argument")
    unknown = sorted(set(args) - allowed)
    if unknown:
        raise ValueError(f"unknown task argument(s) {unknown}; allowed: {sorted(allowed)}")
    for key, value in args.items():
        if value is not None and key in TASK_ARGS:
            _check_one(key, value)


def _key_values(items: tuple[str, ...] | list[str]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for item in items:
        key, sep, text = item.partition("=")
        if not sep or not key:
            raise ValueError(f"{item!r} is not KEY=VALUE")
        try:
            out[key] = load_bounded(text, f"-T {key}")
        except yaml.YAMLError as ex:
            problem = getattr(ex, "problem", None) or str(ex).splitlines()[0]
            raise ValueError(f"{item!r}: the value is not valid YAML ({problem})") from None
    return out


def parse_cli_model_args(items: tuple[str, ...] | list[str]) -> dict[str, Any]:
    """Parse `-M KEY=VALUE` model arguments (YAML values, as inspect parses its own ``-M``).

    Raises:
        ValueError: an item without ``=`` or a value that is not YAML.
    """
    return _key_values(items)


def parse_cli_task_args(items: tuple[str, ...] | list[str]) -> dict[str, Any]:
    """Parse `-T KEY=VALUE` items (values are YAML, as inspect parses them) and validate them
    with `check_task_args`.

    Raises:
        ValueError: an item without ``=``, a value that is not YAML, or what `check_task_args`
            raises; the message starts with ``-T KEY=VALUE``-style context.
    """
    out = _key_values(items)
    check_task_args(out)
    return out
