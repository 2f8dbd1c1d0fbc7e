"""The one registry helper every extension point uses (GitHub issue 23; ARCHITECTURE "one registry
per extension point").

An extension point (read variant, DCP configuration and strategy, cache model, session format,
agent harness) is a set of named, self-describing records: each carries every fact other packages
need, so consumers iterate the registry instead of keeping side tables. `Registry` is the common
part:

- name -> record (`get`, `in`, iteration in registration order, `names`);
- `register` for user additions (a name is never silently redefined) and `unregister`;
- `derive({"base": NAME, "name": NEW, **overrides})`: a new record from an existing one, by the
  registry's own `derive` function (which fields an override may set is the record's business);
- `resolve` (a name, a derivation dict or a record) and `select` (the `all` selector of matrix
  files and CLI options, a comma string, or a list of names and dicts);
- `describe()`: every record's `describe()` dict (what `readbench variants`, `readbench dcp
  configs`, `readbench cache models` print).

Records load lazily from a list of modules when given (`modules=`, each module exposing the record
under `attribute`), so a registry costs nothing at import and adding a record is one module plus
one line. This module imports nothing from readbench (it is the bottom of the dependency graph).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any, Generic, Protocol, TypeVar

__all__ = ["ALL", "Record", "Registry", "derivation_origin"]

ALL = "all"
"""The selector naming every registered record (matrix files, `--dcp all`, `--cache all`)."""


class Record(Protocol):
    """What a registry holds: a `name` and a JSON-ready `describe()` (its first key `name`)."""

    @property
    def name(self) -> str:
        """The record's registry name."""
        ...

    def describe(self) -> dict[str, Any]:
        """Every fact of the record as a JSON-ready dict."""
        ...


R = TypeVar("R", bound=Record)


def derivation_origin(base: str, overrides: dict[str, Any]) -> str:
    """The one-line origin of a record derived without an explicit `origin`:
    `user preset: B with max_lines=1500` (or `... same as B` without overrides)."""
    if not overrides:
        return f"user preset: same as {base}"
    return f"user preset: {base} with " + ", ".join(f"{k}={v!r}" for k, v in overrides.items())


class Registry(Generic[R]):
    """Named records of one extension point (module docstring).

    Args:
        kind: what a record is, for messages (`read variant`, `DCP configuration`, ...).
        records: built-in records, in their listing order.
        derive: `derive(base_record, new_name, overrides) -> record` for `{"base", "name", ...}`
            dicts; it raises ValueError naming a bad override. None: records cannot be derived.
        modules: modules to import on first use, each exposing its record(s) under `attribute`
            (a record or an iterable of records), registered after `records` in this order.
        attribute: see `modules`.
    """

    def __init__(self, kind: str, records: Iterable[R] = (), *,
                 derive: Callable[[R, str, dict[str, Any]], R] | None = None,
                 modules: Sequence[str] = (), attribute: str = "RECORD") -> None:
        self.kind = kind
        self._derive = derive
        self._records: dict[str, R] = {}
        self._builtin: list[R] = list(records)
        self._modules = tuple(modules)
        self._attribute = attribute
        self._loaded = False
        self._version = 0

    # -- loading --

    def _load(self) -> dict[str, R]:
        if not self._loaded:
            self._loaded = True  # set first: a module may look its own registry up while it loads
            for record in self._builtin:
                self._add(record)
            for module in self._modules:
                found = getattr(importlib.import_module(module), self._attribute)
                for record in (found if isinstance(found, (list, tuple)) else (found,)):
                    self._add(record)
        return self._records

    def _add(self, record: R) -> None:
        name = getattr(record, "name", None)
        if not isinstance(name, str) or not name:
            raise ValueError(f"a {self.kind} needs a non-empty string name, got {name!r}")
        if name == ALL:
            raise ValueError(f"{ALL!r} selects every {self.kind}; it cannot name one")
        if name in self._records:
            raise ValueError(f"{self.kind} {name!r} is already registered")
        self._records[name] = record
        self._version += 1

    # -- lookup --

    def names(self) -> list[str]:
        """Registered names, built-ins first, in registration order."""
        return list(self._load())

    def __iter__(self) -> Iterator[R]:
        return iter(list(self._load().values()))

    def __len__(self) -> int:
        return len(self._load())

    def __contains__(self, name: object) -> bool:
        return name in self._load()

    @property
    def version(self) -> int:
        """A number that changes whenever a record is added or removed (for derived caches)."""
        self._load()
        return self._version

    def get(self, name: str) -> R:
        """The record named `name`.

        Raises:
            ValueError: no such record (the message lists the registered names).
        """
        records = self._load()
        if name not in records:
            raise ValueError(f"unknown {self.kind} {name!r}; valid: {', '.join(records)}")
        return records[name]

    def describe(self) -> list[dict[str, Any]]:
        """`describe()` of every record, in registration order."""
        return [r.describe() for r in self]

    # -- additions --

    def register(self, record: R) -> R:
        """Add `record`; returns it.

        Raises:
            ValueError: an empty or reserved name, or a name already registered.
        """
        self._load()
        self._add(record)
        return record

    def unregister(self, name: str) -> R:
        """Remove and return the record named `name` (a test undoing its registration).

        Raises:
            ValueError: no such record.
        """
        record = self.get(name)
        del self._records[name]
        self._version += 1
        return record

    def derive(self, spec: dict[str, Any]) -> R:
        """A new record from `{"base": <registered name>, "name": <new name>, **overrides}`
        (not registered; `register` it to look it up by name later).

        Raises:
            ValueError: `base` or `name` missing or not a non-empty string, an unknown base, a
                derivation on a registry that has none, or an override the record refuses.
        """
        base, name = spec.get("base"), spec.get("name")
        if not isinstance(base, str) or not isinstance(name, str) or not name:
            raise ValueError(f"a user-defined {self.kind} needs string keys 'base' and 'name', got {spec!r}")
        if self._derive is None:
            raise ValueError(f"a {self.kind} cannot be derived from another; choose one of: {', '.join(self.names())}")
        if base not in self:
            raise ValueError(f"unknown base {self.kind} {base!r}; valid: {', '.join(self.names())}")
        return self._derive(self.get(base), name, {k: v for k, v in spec.items() if k not in ("base", "name")})

    def resolve(self, spec: str | dict[str, Any] | R) -> R:
        """A record from a registered name, a derivation dict (see `derive`) or a record itself.

        Raises:
            ValueError: as `get` / `derive`.
            TypeError: `spec` is none of these.
        """
        if isinstance(spec, str):
            return self.get(spec)
        if isinstance(spec, dict):
            return self.derive(spec)
        if hasattr(spec, "name") and hasattr(spec, "describe"):
            return spec
        raise TypeError(f"a {self.kind} is a name or a {{base: ..., name: ...}} mapping, got {type(spec).__name__}")

    def select(self, spec: str | Iterable[str | dict[str, Any]]) -> list[R]:
        """The records a selector names: `all` (every registered record), a comma string of names,
        or a list of names, derivation dicts and `all`; duplicates are dropped (first kept).

        Raises:
            ValueError: an empty selection, or as `resolve`.
        """
        items: list[Any] = [s.strip() for s in spec.split(",") if s.strip()] if isinstance(spec, str) else list(spec)
        out: dict[str, R] = {}
        for item in items:
            for record in (list(self) if item == ALL else [self.resolve(item)]):
                out.setdefault(record.name, record)
        if not out:
            raise ValueError(f"no {self.kind} selected by {spec!r}; valid: {ALL}, {', '.join(self.names())}")
        return list(out.values())
