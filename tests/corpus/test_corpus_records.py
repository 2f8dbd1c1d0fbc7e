"""Task records: JSONL round trip, the datasets schema, byte-reproducible writing."""

import hashlib

from readbench.corpus._records import (
    Check,
    Mutation,
    Oracle,
    Step,
    TaskRecord,
    read_jsonl,
    write_jsonl,
)


def _records():
    fix = Step(kind="fix", target_file="pkg/m.py", search_key="def f(", old_text="a < b",
               new_text="a <= b", target_line=12)
    bug = TaskRecord(
        id="pkg/bugfix/0", family="bugfix", source="pkg", source_version="1.0",
        prompts=("Running `x` fails.",), file="pkg/m.py", file_lines=2100, target_line=12,
        oracle=Oracle.from_steps([fix]),
        check=Check(kind="tests", test_cmd="python3 -m pytest -q t", env={"PYTHONPATH": "{deps}:src"},
                    timeout_seconds=40.0, fail_to_pass=("t::a", "t::b")),
        files={"pkg/m.py": "é\n" * 3}, question_kind="compare",
        mutation=Mutation("compare", 12, 100, 102, "<=", "<", "f"),
    )
    ans = Step(kind="answer", target_file="pkg/m.py", search_key=None, answer="7", whole_file=True)
    q = TaskRecord(
        id="pkg/wholefile/0", family="wholefile", source="pkg", source_version="1.0",
        prompts=("How many?",), file="pkg/m.py", file_lines=2100, target_line=None,
        oracle=Oracle.from_steps([ans]), check=Check(kind="answer", answer="7"), files={},
        question_kind="count_param",
    )
    sess = TaskRecord(
        id="pkg/session/0", family="session", source="pkg", source_version="1.0",
        prompts=("which?", "fix", "line?"), file="pkg/m.py", file_lines=2100, target_line=12,
        oracle=Oracle.from_steps([Step(kind="locate", target_file="pkg/m.py", answer="f"), fix,
                                  Step(kind="answer", target_file="pkg/m.py", answer="10")]),
        check=Check(kind="session", test_cmd="c", answers=("f", None, "10")), files={},
    )
    return [bug, q, sess]


def test_jsonl_round_trip_is_lossless(tmp_path):
    recs = _records()
    write_jsonl(recs, tmp_path / "t.jsonl")
    assert read_jsonl(tmp_path / "t.jsonl") == recs


def test_oracle_top_level_is_the_fix_step():
    sess = _records()[2]
    assert (sess.oracle.old_text, sess.oracle.new_text, sess.oracle.answer) == ("a < b", "a <= b", None)
    assert len(sess.oracle.steps) == len(sess.prompts) == 3


def test_same_records_same_bytes(tmp_path):
    write_jsonl(_records(), tmp_path / "a.jsonl")
    write_jsonl(_records(), tmp_path / "b.jsonl")
    digest = lambda p: hashlib.sha256(p.read_bytes()).hexdigest()  # noqa: E731
    assert digest(tmp_path / "a.jsonl") == digest(tmp_path / "b.jsonl")


def test_datasets_load_with_explicit_features_round_trips(tmp_path):
    import datasets

    from readbench.corpus import FEATURES
    from readbench.corpus._records import record_from_json

    recs = _records()
    write_jsonl(recs, tmp_path / "t.jsonl")
    ds = datasets.load_dataset("json", data_files=str(tmp_path / "t.jsonl"), features=FEATURES,
                               split="train", cache_dir=str(tmp_path / "hf"))
    assert ds.features == FEATURES
    assert ds.num_rows == 3
    assert ds[0]["check"]["env"] == [{"name": "PYTHONPATH", "value": "{deps}:src"}]
    assert ds[1]["mutation"] is None or ds[1]["mutation"]["operator"] is None
    assert [record_from_json(row) for row in ds] == recs
