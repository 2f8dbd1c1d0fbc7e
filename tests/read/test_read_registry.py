"""The read-variant registry: presets, user-defined presets, validation messages."""

from __future__ import annotations

import pytest
from read_helpers import BIG, run

from readbench.read import get_variant, list_presets, preset_names, register_preset
from readbench.read import registry as reg

ALL = [
    "stock",
    "A",
    "B",
    "B-soft",
    "B+dedup",
    "B+dedup-naive",
    "C",
    "swe-agent",
    "claude-code",
    "nocap",
]


def test_every_spec_preset_is_registered_in_spec_order():
    assert preset_names()[: len(ALL)] == ALL


@pytest.mark.parametrize("name", ALL)
def test_every_preset_builds_and_describes_itself(name):
    v = get_variant(name)
    d = v.describe()
    assert d["name"] == name and d["origin"] and "\n" not in d["origin"]
    assert d["params"] == v.params
    assert v.tool_description and v.prompt_lines


def test_preset_families_and_key_params():
    fam = {p.name: p.family for p in list_presets()}
    assert [fam[n] for n in ALL] == [
        "paged",
        "paged",
        "paged",
        "paged",
        "dedup",
        "dedup",
        "mapped",
        "swe-agent",
        "claude-code",
        "paged",
    ]
    assert (
        get_variant("A").params["max_chars"] == 10_000
        and get_variant("A").params["max_bytes"] is None
    )
    assert get_variant("B-soft").params["as_error"] is False
    assert get_variant("B+dedup").params["over_cap"] == "block"
    assert get_variant("C").params["max_lines"] == 400
    assert get_variant("nocap").params["max_lines"] is None


def test_user_preset_overrides_base_params_and_names_its_origin():
    v = get_variant({"base": "B", "name": "B-1500", "max_lines": 1500})
    assert v.name == "B-1500"
    assert v.params["max_lines"] == 1500 and v.params["over_cap"] == "block"
    assert v.origin == "user preset: B with max_lines=1500"
    assert get_variant({"base": "C", "name": "C2", "origin": "my note"}).origin == "my note"
    r = run({"base": "B", "name": "B-1500", "max_lines": 1500}, BIG)
    assert r.details.variant == "B-1500" and r.details.blocked


def test_unknown_preset_lists_valid_names():
    with pytest.raises(ValueError, match=r"unknown read variant 'Z'; valid: stock, A, B, "):
        get_variant("Z")
    with pytest.raises(ValueError, match=r"unknown base read variant 'Q'"):
        get_variant({"base": "Q", "name": "x"})


def test_bad_dicts_and_params_are_named():
    with pytest.raises(ValueError, match="needs string keys 'base' and 'name'"):
        get_variant({"base": "B"})
    with pytest.raises(
        ValueError, match=r"unknown parameter\(s\) \['max_line'\] for read variant 'B-x'"
    ):
        get_variant({"base": "B", "name": "B-x", "max_line": 10})
    with pytest.raises(
        ValueError, match="parameter 'max_lines' must be an integer >= 1 or null, got 0"
    ):
        get_variant({"base": "B", "name": "B-x", "max_lines": 0})
    with pytest.raises(ValueError, match="'max_bytes' and 'max_chars' are exclusive"):
        get_variant({"base": "stock", "name": "s", "max_chars": 100})
    with pytest.raises(
        ValueError, match=r"parameter 'over_cap' must be one of \['truncate', 'block'\], got 'cut'"
    ):
        get_variant({"base": "stock", "name": "s", "over_cap": "cut"})
    with pytest.raises(
        ValueError, match=r"parameter 'map' must be one of \['lazy', 'always', 'off'\]"
    ):
        get_variant({"base": "C", "name": "c", "map": "eager"})
    with pytest.raises(ValueError, match="parameter 'as_error' must be true or false, got 'no'"):
        get_variant({"base": "B", "name": "b", "as_error": "no"})
    with pytest.raises(TypeError, match="must be a preset name or a dict"):
        get_variant(3)  # type: ignore[arg-type]


def test_register_preset_makes_it_a_base():
    register_preset({"base": "C", "name": "C-300", "max_lines": 300})
    try:
        v = get_variant({"base": "C-300", "name": "C-300-off", "map": "off"})
        assert (v.params["max_lines"], v.params["map"]) == (300, "off")
        with pytest.raises(ValueError, match="already registered"):
            register_preset({"base": "C", "name": "C-300"})
        with pytest.raises(ValueError, match="max_lines"):
            register_preset({"base": "C", "name": "C-0", "max_lines": 0})
        assert "C-0" not in preset_names()
    finally:
        reg.PRESETS.unregister("C-300")


def test_importing_the_package_loads_neither_tree_sitter_nor_tokenizer():
    import subprocess
    import sys

    code = "import sys, readbench.read as r; r.get_variant('C'); r.get_variant('claude-code'); print(sorted(m for m in ('tree_sitter', 'bpe_openai', 'inspect_ai') if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
