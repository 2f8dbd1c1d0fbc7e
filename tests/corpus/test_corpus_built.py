"""Invariants of the built corpus (GitHub issue 6). Skips when `readbench tasks build` has not run.

`make eval` builds the corpus; these tests then check counts, id stability rules, oracle
consistency and the datasets schema on the real file.
"""

import hashlib
import json
import re
from collections import Counter

import pytest

from readbench.corpus import FAMILIES, default_corpus_dir, load_tasks
from readbench.corpus.sizes import size_bucket

JSONL = default_corpus_dir() / "tasks.jsonl"
pytestmark = pytest.mark.skipif(
    not JSONL.exists(), reason=f"no built corpus at {JSONL} (run `readbench tasks build`)")


@pytest.fixture(scope="module")
def tasks():
    return load_tasks(JSONL)


def test_counts_per_family_and_total(tasks):
    c = Counter(t.family for t in tasks)
    assert len(tasks) >= 60, c
    assert all(c[f] >= 8 for f in FAMILIES), c


def test_sources_and_file_sizes_span_the_buckets(tasks):
    assert len({t.source for t in tasks}) >= 6
    assert {size_bucket(t.file_lines) for t in tasks} == {"<1000", "1000-2000", "2000-5000", ">5000"}


def test_ids_are_unique_and_shaped(tasks):
    ids = [t.id for t in tasks]
    assert len(set(ids)) == len(ids)
    for t in tasks:
        assert re.fullmatch(rf"{re.escape(t.source)}/{t.family}/\d+", t.id)


def test_fix_tasks_are_consistent(tasks):
    for t in tasks:
        if t.family not in ("bugfix", "midsize", "session"):
            continue
        text = t.files[t.file]
        assert text.count(t.oracle.old_text) == 1, t.id
        fixed = text.replace(t.oracle.old_text, t.oracle.new_text)
        assert fixed != text and t.check.fail_to_pass, t.id
        assert t.mutation.line == t.target_line and t.file_lines == text.count("\n")
        assert f"line {t.target_line}" not in t.prompts[0]  # the issue never gives the line
        if t.family == "bugfix":
            assert t.file_lines > 2000
        if t.family == "midsize":
            assert 1000 <= t.file_lines <= 2000
        if t.family == "session":
            assert 3 <= len(t.prompts) <= 5 and len(t.check.answers) == len(t.prompts)


def test_question_tasks_have_answers(tasks):
    for t in tasks:
        if t.family in ("locate", "wholefile", "log"):
            assert t.check.kind == "answer" and t.check.answer == t.oracle.answer != ""
            assert "ANSWER: <value>" in t.prompts[-1]
        if t.family == "log":
            assert 30000 <= t.file_lines <= 60000 and t.files[t.file].count("\n") == t.file_lines


def test_manifest_hash_matches_and_datasets_loads(tasks):
    import datasets

    from readbench.corpus import FEATURES

    manifest = json.loads((JSONL.parent / "manifest.json").read_text())
    assert manifest["tasks_jsonl_sha256"] == hashlib.sha256(JSONL.read_bytes()).hexdigest()
    ds = datasets.load_dataset("json", data_files=str(JSONL), features=FEATURES, split="train")
    assert ds.num_rows == len(tasks)
    assert ds[0]["id"] == tasks[0].id
