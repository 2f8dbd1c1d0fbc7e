"""Attributes of a package imported on first use (PEP 562), so importing the package does not
import what they need (inspect_ai: ~2 s, which `readbench <cmd> --help` never needs; readbench/cli.py).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

__all__ = ["lazy_attributes"]


def lazy_attributes(package: str, modules: dict[str, str], namespace: dict[str, Any]) -> Callable[[str], Any]:
    """A module `__getattr__` for `package`: attribute `name` of `modules` is imported from the
    module `modules[name]` on first access and kept in `namespace` (the package's `globals()`), so
    it is looked up once.

    Raises (from the returned function):
        AttributeError: `name` is not one of `modules`, as for any module attribute.
    """

    def __getattr__(name: str) -> Any:
        if name in modules:
            value = getattr(importlib.import_module(modules[name]), name)
            namespace[name] = value
            return value
        raise AttributeError(f"module {package!r} has no attribute {name!r}")

    return __getattr__
