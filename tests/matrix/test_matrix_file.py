"""Matrix files: arms, user-defined presets, YAML's `off`, and errors that name the input."""

from __future__ import annotations

import re

import pytest

from readbench.analysis.arms import spec_name
from readbench.run.matrix import load_matrix
from readbench.run.task import dcp_spec, first_per_family


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
    ("variants: [nosuch]", "variants[0]: unknown read variant 'nosuch'"),
    ("dcp: [nosuch]", "dcp[0]: unknown DCP configuration 'nosuch'"),
    ("arms: [[stock]]", "each arm is [variant, dcp]"),
    ("epochs: 0", "epochs must be an integer from 1 to 100, got 0"),
    ("epochs: 1.7", "epochs must be an integer from 1 to 100, got 1.7"),
    ("colour: red", "unknown matrix keys ['colour']"),
    ("name: [x", "not valid YAML"),
    ("presets: [a]", "`presets` must be a mapping"),
    ("presets: {X: 5}", "presets.X must be a mapping"),
    ("models: readbench/sim-mixed", "`models` must be a list"),
    ("models: [sim-mixed]", "models must be inspect model strings"),
    ("cache_models: [nosuch]", "cache_models: unknown cache model(s) ['nosuch']"),
    ("max_samples: -3", "max_samples must be an integer from 1 to 1000, got -3"),
    ("task_args: {bogus: 1}", "task_args: unknown task argument(s) ['bogus']"),
    ("task_args: {limit: 0}", "task_args: limit must be an integer from 1 to 100000 (tasks), got 0"),
    # issue 13, defect 3: unbounded work is refused with the bound
    ("epochs: 1000000000", "epochs must be an integer from 1 to 100, got 1000000000"),
    ("max_sandboxes: 100000", "max_sandboxes must be an integer from 1 to 1000, got 100000"),
    ("task_args: {max_turns: 10000000}", "task_args: max_turns must be an integer from 1 to 1000 (model calls per sample)"),
    ("task_args: {context_window_tokens: 1.0e+12}", "context_window_tokens must be an integer from 1000 to 10000000"),
    # issue 13, defect 4: only booleans for allow_local
    ("task_args: {allow_local: maybe}", "task_args: allow_local must be true or false, got 'maybe'"),
    # issue 13, defect 6: types are named errors, not TypeError tracebacks
    # issue 27 probe: a 300-byte alias bomb printed a 225 MB error after 46 s
    ("a: &a [x,x,x,x,x,x,x,x,x]\nb: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]\nc: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]\n"
     "d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]\ne: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]\nf: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]\n"
     "variants: *f",
     "the YAML expands to more than 100000 values (nested aliases?)"),
    ("variants: [1, 2]", "variants[0]: must be a read variant name or a {base: ..., name: ...} mapping, got 1"),
    ("dcp: [[off]]", "dcp[0]: must be a DCP configuration name or a {base: ..., name: ...} mapping, got [False]"),
    ("task_args: {families: 5}", "task_args: families must be a comma string or a list of names, got 5"),
    ("task_args: {variant: B}", "task_args: variant is set per arm by the matrix's `variants` (or `arms`)"),
    ("variants: [{base: B, max_lines: 10}]", "variants[0]: a user-defined read variant needs string keys 'base' and 'name'"),
    # issue 13, defect 2: built-in names cannot be redefined; one name, one definition
    ("presets: {B: {base: B, max_lines: 10}}", "presets.B would redefine the built-in read variant 'B'"),
    ("dcp_presets: {pi-dcp: {base: pi-dcp}}", "dcp_presets.pi-dcp would redefine the built-in DCP configuration 'pi-dcp'"),
    ("variants: [{base: B, name: C, max_lines: 10}]", "variants[0]: 'C' is a built-in read variant"),
    ("variants: [{base: B, name: X, max_lines: 10}, {base: B, name: X, max_lines: 20}]",
     "variants: the name 'X' has two definitions"),
    ("variants: [stock]\narms: [[{base: B, name: stock2, max_lines: 9}, off], [{base: B, name: stock2, max_lines: 8}, off]]",
     "variants: the name 'stock2' has two definitions"),
    # issue 13, defect 5: the default run id must stay under results/
    ("name: ../../x", "name: run id '../../x' must be one name"),
    ("name: ''", "name: run id '' must be one name"),
    ("name: /tmp/abs", "name: run id '/tmp/abs' must be one name"),
    ("name: latest", "name: run id 'latest' must be one name"),
    ("variants: [stock, stock]", "must not repeat a name"),
    # issue 28: the smallest difference that matters
    ("smallest_difference: {success_pp: 0}", "smallest_difference: smallest_difference.success_pp must be a number "
     "of percentage points in (0, 100), got 0"),
    ("smallest_difference: {cost_ratio: 1}", "smallest_difference.cost_ratio must be a ratio > 0 and != 1"),
    ("smallest_difference: {success: 5}", "smallest_difference: unknown key(s) ['success']; known: success_pp, "
     "cost_ratio"),
    ("smallest_difference: 5", "smallest_difference must be a mapping like {success_pp: 5, cost_ratio: 0.9}"),
])
def test_bad_matrix_names_the_key(tmp_path, text, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        load_matrix(write(tmp_path, text))
    # every one of these fails before any sample could start: load_matrix runs no eval


def test_inline_variant_definitions_are_arms_keyed_by_their_definition(tmp_path):
    m = load_matrix(write(tmp_path, """
variants: [stock, {base: B, name: B-700, max_lines: 700}]
dcp: [off, {base: pi-dcp, name: pi-dcp-t4, turns: 4}]
"""))
    b700 = {"base": "B", "name": "B-700", "max_lines": 700}
    t4 = {"base": "pi-dcp", "name": "pi-dcp-t4", "turns": 4}
    assert m.arms() == [("stock", "off"), ("stock", t4), (b700, "off"), (b700, t4)]


def test_task_args_from_the_command_line_use_the_matrix_rules(tmp_path):
    m = load_matrix(write(tmp_path, "task_args: {limit: 3}"))
    assert m.with_task_args({"limit": 5, "allow_local": True}).task_args == {"limit": 5, "allow_local": True}
    for bad, message in [({"limit": 0}, "limit must be an integer from 1 to 100000 (tasks), got 0"),
                         ({"foo": 1}, "unknown task argument(s) ['foo']"),
                         ({"dcp": "pi-dcp"}, "dcp is set per arm by the matrix's `dcp` (or `arms`)"),
                         ({"allow_local": "maybe"}, "allow_local must be true or false, got 'maybe'")]:
        with pytest.raises(ValueError, match=re.escape(message)):
            m.with_task_args(bad)


def test_yaml_false_is_the_off_configuration():
    assert dcp_spec(False) == "off" and dcp_spec("pi-dcp") == "pi-dcp"
    assert spec_name(False) == "off"


def test_first_per_family_keeps_corpus_order():
    class R:
        def __init__(self, id, family):  # noqa: A002 - a task record's field name
            self.id, self.family = id, family

    recs = [R("a", "x"), R("b", "y"), R("c", "x"), R("d", "x"), R("e", "y")]
    assert [r.id for r in first_per_family(recs, 2)] == ["a", "b", "c", "e"]


def test_run_metadata_names_every_arm():
    m = load_matrix("evals/smoke.yaml")
    labels = [f"{spec_name(v)} × {spec_name(d)}" for v, d in m.arms()]
    assert len(labels) == 16 and labels[0] == "stock × off" and labels[-1] == "stock × obs-mask-5"


def test_the_smallest_difference_that_matters_is_read_and_recorded_in_run_json(tmp_path):
    from readbench.analysis.smallest import SmallestDifference
    from readbench.run.runner import RunPlan

    m = load_matrix(write(tmp_path, "smallest_difference: {success_pp: 15}"))
    assert m.smallest == SmallestDifference(success_pp=15, cost_ratio=0.9)
    assert RunPlan(m, ["readbench/sim-mixed"], "local", []).metadata()["smallest_difference"] == {
        "success_pp": 15.0, "cost_ratio": 0.9}
    assert load_matrix(write(tmp_path, "variants: [stock]")).smallest == SmallestDifference(5.0, 0.9)


def test_a_key_given_twice_is_refused_not_silently_the_last(tmp_path):
    """brk13: two `variants:` lines ran only the second list, and nothing said so."""
    path = write(tmp_path, "name: t\nvariants: [stock]\nvariants: [A]\ndcp: [\"off\"]\n")
    with pytest.raises(ValueError) as info:
        load_matrix(path)
    lines = str(info.value).splitlines()
    assert lines[0] == f"{path}: not valid YAML: while constructing a mapping"
    assert "found duplicate key 'variants' (only the last one would count)" in lines
    assert '    variants: [A]' in lines


def test_merge_keys_may_still_be_overridden(tmp_path):
    m = load_matrix(write(tmp_path, "name: t\npresets:\n  B-1: &b {base: B, max_lines: 100}\n"
                                    "  B-2: {<<: *b, max_lines: 200}\nvariants: [B-1, B-2]\n"))
    assert [v["max_lines"] for v, _ in m.arms()] == [100, 200]


@pytest.mark.parametrize("text", ["", "# nothing yet\n"])
def test_an_empty_matrix_file_is_refused_not_the_whole_corpus(tmp_path, text):
    """brk13: an empty file loaded as every default and started all 75 corpus tasks."""
    path = write(tmp_path, text)
    with pytest.raises(ValueError) as info:
        load_matrix(path)
    assert str(info.value) == (f"{path}: the matrix file is empty; write at least its `variants` and `dcp` "
                               "(`{}` runs every default: stock x off on the whole corpus)")
    assert load_matrix(write(tmp_path, "{}")).arms() == [("stock", "off")]
