"""`readbench tasks list|stats|build` on a small hand-written JSONL (no build, no network)."""

import json

from click.testing import CliRunner

from readbench.corpus._cli import tasks_group
from readbench.corpus._records import Check, Oracle, Step, TaskRecord, write_jsonl
from readbench.corpus.sizes import size_bucket


def _rec(tid, family, lines, line):
    st = Step(kind="answer", target_file="m.py", answer="1", target_line=line)
    return TaskRecord(id=tid, family=family, source=tid.split("/")[0], source_version="1",
                      prompts=("q",), file="m.py", file_lines=lines, target_line=line,
                      oracle=Oracle.from_steps([st]), check=Check(kind="answer", answer="1"), files={})


def _jsonl(tmp_path):
    path = tmp_path / "t.jsonl"
    write_jsonl([_rec("a/locate/0", "locate", 5644, 4986), _rec("a/wholefile/0", "wholefile", 5644, None),
                 _rec("b/locate/0", "locate", 676, 300)], path)
    return str(path)


def test_size_buckets_match_issue_6():
    assert [size_bucket(n) for n in (999, 1000, 2000, 2001, 5000, 5001)] == \
        ["<1000", "1000-2000", "1000-2000", "2000-5000", "2000-5000", ">5000"]


def test_the_report_groups_files_by_the_same_buckets():
    """A 2,000-line file was `1000-2000` in `tasks stats` and `2-5k` in the report's figure."""
    import pandas as pd

    from readbench.analysis._figures import size_bin

    lines = [0, 999, 1000, 2000, 2001, 5000, 5001, 80_000]
    assert list(size_bin(pd.Series(lines))) == [size_bucket(n) for n in lines]
    assert size_bin(pd.Series([2000, float("nan")])).tolist()[0] == "1000-2000"
    assert pd.isna(size_bin(pd.Series([float("nan")]))[0])


def test_list_prints_a_header_then_one_row_per_task(tmp_path):
    """A new user could not tell what the two numbers of each row were (issue 27 trial)."""
    res = CliRunner().invoke(tasks_group, ["list", "--path", _jsonl(tmp_path)])
    assert res.exit_code == 0
    assert res.output.splitlines() == [
        "id\tfamily\tsource\tfile\tfile_lines\ttarget_line",
        "a/locate/0\tlocate\ta\tm.py\t5644\t4986",
        "a/wholefile/0\twholefile\ta\tm.py\t5644\t-",
        "b/locate/0\tlocate\tb\tm.py\t676\t300",
    ]
    res = CliRunner().invoke(tasks_group, ["list", "--json", "--path", _jsonl(tmp_path)])
    assert json.loads(res.output.splitlines()[1]) == {
        "id": "a/wholefile/0", "family": "wholefile", "source": "a", "file": "m.py",
        "file_lines": 5644, "target_line": None}


def test_stats_counts_family_source_and_size(tmp_path):
    res = CliRunner().invoke(tasks_group, ["stats", "--path", _jsonl(tmp_path)])
    assert res.exit_code == 0
    assert res.output.splitlines() == [
        "family:", "  locate\t2", "  wholefile\t1",
        "source:", "  a\t2", "  b\t1",
        "file lines:", "  <1000\t1", "  >5000\t2",
        "total\t3",
    ]


def test_bad_inputs_exit_2_naming_the_input(tmp_path):
    res = CliRunner().invoke(tasks_group, ["build", "--families", "bugfix,nope"])
    assert res.exit_code == 2 and "unknown families ['nope']" in res.output
    res = CliRunner().invoke(tasks_group, ["check", "zzz/locate/9", "--path", _jsonl(tmp_path)])
    assert res.exit_code == 2 and "unknown task ids ['zzz/locate/9']" in res.output
    res = CliRunner().invoke(tasks_group, ["list", "--path", str(tmp_path / "missing.jsonl")])
    assert res.exit_code == 2 and "run `readbench tasks build` first" in res.output
