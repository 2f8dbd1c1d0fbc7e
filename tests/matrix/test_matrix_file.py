"""Matrix files: arms, user-defined presets, YAML's `off`, and errors that name the input."""

from __future__ import annotations

import re

import pytest

from readbench.analysis.table import _spec_name
from readbench.matrix import load_matrix
from readbench.task import dcp_spec, first_per_family


def write(tmp_path, text):
    path = tmp_path / "m.yaml"
    path.write_text(text)
    return path


def test_product_then_extra_arms_with_presets_and_unquoted_off(tmp_path):
    m = load_matrix(write(tmp_path, """
name: t
variants: [stock, B-1500]
dcp: [off]
arms: [[stock, pi-dcp], [stock, off]]
presets: {B-1500: {base: B, max_lines: 1500}}
"""))
    b1500 = {"base": "B", "max_lines": 1500, "name": "B-1500"}
    assert m.arms() == [("stock", "off"), (b1500, "off"), ("stock", "pi-dcp")]
    assert m.models == ["readbench/sim-mixed"] and m.epochs == 1


@pytest.mark.parametrize("text, message", [
    ("variants: [nosuch]", "variants:"),
    ("dcp: [nosuch]", "dcp:"),
    ("arms: [[stock]]", "each arm is [variant, dcp]"),
    ("epochs: 0", "epochs must be an integer >= 1, got 0"),
    ("epochs: 1.7", "epochs must be an integer >= 1, got 1.7"),
    ("colour: red", "unknown matrix keys ['colour']"),
    ("name: [x", "not valid YAML"),
    ("presets: [a]", "`presets` must be a mapping"),
    ("presets: {X: 5}", "presets.X must be a mapping"),
    ("models: readbench/sim-mixed", "`models` must be a list"),
    ("models: [sim-mixed]", "models must be inspect model strings"),
    ("cache_models: [nosuch]", "cache_models: unknown cache model(s) ['nosuch']"),
    ("max_samples: -3", "max_samples must be an integer >= 1, got -3"),
    ("task_args: {bogus: 1}", "task_args: unknown task argument(s) ['bogus']"),
    ("task_args: {limit: 0}", "task_args: limit must be an integer >= 1, got 0"),
    ("variants: [stock, stock]", "must not repeat a name"),
])
def test_bad_matrix_names_the_key(tmp_path, text, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        load_matrix(write(tmp_path, text))
    # every one of these fails before any sample could start: load_matrix runs no eval


def test_yaml_false_is_the_off_configuration():
    assert dcp_spec(False) == "off" and dcp_spec("pi-dcp") == "pi-dcp"
    assert _spec_name(False) == "off"


def test_first_per_family_keeps_corpus_order():
    class R:
        def __init__(self, id, family):
            self.id, self.family = id, family

    recs = [R("a", "x"), R("b", "y"), R("c", "x"), R("d", "x"), R("e", "y")]
    assert [r.id for r in first_per_family(recs, 2)] == ["a", "b", "c", "e"]


def test_run_metadata_names_every_arm():
    from readbench.matrix import _label

    m = load_matrix("evals/smoke.yaml")
    labels = [f"{_label(v)} × {_label(d)}" for v, d in m.arms()]
    assert len(labels) == 16 and labels[0] == "stock × off" and labels[-1] == "stock × obs-mask-5"
