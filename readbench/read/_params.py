"""Validation helpers for variant parameter records (each family's frozen `Params`).

Every check raises `ValueError` naming the parameter and the bad value, so a typo in a
matrix file fails loudly at `get_variant` time, not mid-run.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import asdict, fields
from typing import Any

__all__ = ["check_bool", "check_choice", "check_int", "params_from_dict", "params_to_dict"]


def check_int(name: str, value: object, *, minimum: int, optional: bool = False) -> None:
    """Require an int >= `minimum` (or None when `optional`).

    Raises:
        ValueError: naming `name` and the value.
    """
    if value is None and optional:
        return
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        allowed = f"an integer >= {minimum}" + (" or null" if optional else "")
        raise ValueError(f"parameter {name!r} must be {allowed}, got {value!r}")


def check_bool(name: str, value: object) -> None:
    """Require a bool.

    Raises:
        ValueError: naming `name` and the value.
    """
    if not isinstance(value, bool):
        raise ValueError(f"parameter {name!r} must be true or false, got {value!r}")


def check_choice(name: str, value: object, choices: Iterable[str]) -> None:
    """Require one of `choices`.

    Raises:
        ValueError: naming `name`, the value and the choices.
    """
    options = tuple(choices)
    if value not in options:
        raise ValueError(f"parameter {name!r} must be one of {list(options)}, got {value!r}")


def params_from_dict(cls: type, data: dict[str, Any], *, preset: str) -> Any:
    """Build the params record `cls` from `data`, rejecting unknown keys.

    Raises:
        ValueError: for a key `cls` does not have (listing the valid ones) or a bad value.
    """
    valid = [f.name for f in fields(cls)]
    unknown = sorted(set(data) - set(valid))
    if unknown:
        raise ValueError(
            f"unknown parameter(s) {unknown} for read variant {preset!r}; valid: {valid}"
        )
    return cls(**data)


def params_to_dict(params: Any) -> dict[str, Any]:
    """The params record as a plain dict (field order)."""
    return asdict(params)
