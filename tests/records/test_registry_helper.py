"""The shared registry helper (readbench.records.Registry): name -> record, derivation, `all`."""

from __future__ import annotations

import dataclasses
import subprocess
import sys
from typing import Any

import pytest

from readbench.records import ALL, Registry, derivation_origin


@dataclasses.dataclass(frozen=True)
class Thing:
    name: str
    size: int = 1
    origin: str = ""

    def describe(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


def _derive(base: Thing, name: str, overrides: dict[str, Any]) -> Thing:
    unknown = set(overrides) - {"size", "origin"}
    if unknown:
        raise ValueError(f"unknown thing field(s) {sorted(unknown)}")
    return dataclasses.replace(base, name=name, **overrides)


def _registry() -> Registry[Thing]:
    return Registry("thing", [Thing("a"), Thing("b", 2)], derive=_derive)


def test_lookup_iteration_and_describe_keep_registration_order():
    r = _registry()
    assert r.names() == ["a", "b"] and len(r) == 2 and "b" in r and "c" not in r
    assert r.get("b") == Thing("b", 2)
    assert r.describe() == [{"name": "a", "size": 1, "origin": ""}, {"name": "b", "size": 2, "origin": ""}]
    with pytest.raises(ValueError, match="^unknown thing 'c'; valid: a, b$"):
        r.get("c")


def test_derive_resolve_and_register():
    r = _registry()
    new = r.derive({"base": "b", "name": "b3", "size": 3})
    assert new == Thing("b3", 3) and "b3" not in r
    assert r.resolve("a") == Thing("a") and r.resolve({"base": "a", "name": "x"}) == Thing("x") and r.resolve(new) is new
    with pytest.raises(ValueError, match=r"unknown thing field\(s\) \['colour'\]"):
        r.derive({"base": "a", "name": "x", "colour": 1})
    with pytest.raises(ValueError, match="needs string keys 'base' and 'name'"):
        r.derive({"base": "a"})
    with pytest.raises(ValueError, match="^unknown base thing 'zz'; valid: a, b$"):
        r.derive({"base": "zz", "name": "x"})
    r.register(new)
    assert r.names() == ["a", "b", "b3"] and r.derive({"base": "b3", "name": "b4"}).size == 3
    with pytest.raises(ValueError, match="^thing 'b3' is already registered$"):
        r.register(Thing("b3"))
    with pytest.raises(ValueError, match="'all' selects every thing; it cannot name one"):
        r.register(Thing(ALL))
    version = r.version
    assert r.unregister("b3") == new and "b3" not in r and r.version != version
    with pytest.raises(ValueError, match="cannot be derived"):
        Registry("fixed", [Thing("a")]).derive({"base": "a", "name": "x"})


def test_the_all_selector_and_lists():
    r = _registry()
    assert [t.name for t in r.select("all")] == ["a", "b"]
    assert [t.name for t in r.select("b, a")] == ["b", "a"]
    assert [t.name for t in r.select(["b", {"base": "a", "name": "a9", "size": 9}, "all"])] == ["b", "a9", "a"]
    with pytest.raises(ValueError, match="no thing selected by ''"):
        r.select("")
    with pytest.raises(TypeError, match="a thing is a name or"):
        r.resolve(3)  # type: ignore[arg-type]


def test_records_load_lazily_from_their_modules(tmp_path, monkeypatch):
    (tmp_path / "rb_thing_one.py").write_text(
        "import dataclasses\n"
        "@dataclasses.dataclass(frozen=True)\n"
        "class T:\n    name: str\n    def describe(self):\n        return {'name': self.name}\n"
        "RECORD = T('one')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    r: Registry[Any] = Registry("thing", modules=["rb_thing_one"])
    assert "rb_thing_one" not in sys.modules
    assert r.names() == ["one"] and "rb_thing_one" in sys.modules


def test_derivation_origin():
    assert derivation_origin("B", {"max_lines": 1500}) == "user preset: B with max_lines=1500"
    assert derivation_origin("B", {}) == "user preset: same as B"


def test_the_helper_imports_nothing_from_readbench():
    code = "import sys, readbench.records; print(sorted(m for m in sys.modules if m.startswith('readbench')))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "['readbench', 'readbench.records']"
