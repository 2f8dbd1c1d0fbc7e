"""Worked example (issue 23): a new read family is one module and two registry rows.

Adding a read family touches these files:
1. `readbench/read/_<family>.py`: the `ReadVariant` subclass with its `Params`, and its notices
   (format function and pattern side by side, as `Notice` records; or in `readbench/read/notices.py`);
2. `readbench/read/registry.py`: one `FAMILIES` row (implementation, notices) and its preset rows;
3. a test like this one.
Below, the family lives in a module written to a temp directory and is registered through the
registry API. Its refusal is a `block` notice, so every reader of read results knows it without
an edit: the simulated agent's perception (`readbench.sim.observe`) and `readbench sim fit`
(`readbench.sim.evidence`) through `readbench.read.registry.blocked`.
"""

from __future__ import annotations

import json
import sys
import textwrap

import pytest
from click.testing import CliRunner

from readbench.read._cli import variants_cmd
from readbench.read.registry import FAMILIES, PRESETS, Preset, ReadFamily, blocked, get_variant

MODULE = textwrap.dedent('''
    """blind-guard: refuse a blind read of a file over `max_blind_lines`; ranged reads as stock."""
    import re
    from dataclasses import dataclass
    from typing import ClassVar

    from readbench.read._paged import PagedRead
    from readbench.read._pi import check_line_arg
    from readbench.read._types import ReadResult, call_facts, make_details
    from readbench.read.notices import Notice


    def refusal(total: int) -> str:
        return f"Blind read refused: the file has {total} lines. Pass offset and limit."


    REFUSAL = Notice("blind_refusal", "block", re.compile(r"^Blind read refused: the file has (?P<total>\\d+) lines\\."),
                     refusal, "a test")


    @dataclass(frozen=True)
    class GuardParams:
        max_blind_lines: int = 100


    class BlindGuardRead(PagedRead):
        family: ClassVar[str] = "blind-guard"
        Params: ClassVar[type] = GuardParams

        def __init__(self, name, origin, params):
            self.guard = params
            from readbench.read._paged import PagedParams
            super().__init__(name, origin, PagedParams())
            self.params = {"max_blind_lines": params.max_blind_lines}

        def read(self, data, path, offset, limit, *, call_id, session, visible_call_ids, file_key=None):
            text = data.decode("utf-8", errors="replace")
            facts = call_facts(self.name, text, data, path, check_line_arg("offset", offset),
                               check_line_arg("limit", limit), call_id)
            if offset is None and limit is None and facts.total_lines > self.guard.max_blind_lines:
                return ReadResult(refusal(facts.total_lines), True, make_details(facts, blocked=True, error="over_cap"))
            return super().read(data, path, offset, limit, call_id=call_id, session=session,
                                visible_call_ids=visible_call_ids, file_key=file_key)
''')


@pytest.fixture
def family(tmp_path, monkeypatch):
    (tmp_path / "rb_blind_guard.py").write_text(MODULE)
    monkeypatch.syspath_prepend(str(tmp_path))
    import rb_blind_guard

    fam = FAMILIES.register(ReadFamily("blind-guard", "rb_blind_guard:BlindGuardRead", (rb_blind_guard.REFUSAL,),
                                       "a test: refuse blind reads of long files"))
    PRESETS.register(Preset("guard-100", "blind-guard", {}, "a test: blind reads up to 100 lines"))
    try:
        yield fam
    finally:
        PRESETS.unregister("guard-100")
        FAMILIES.unregister("blind-guard")
        sys.modules.pop("rb_blind_guard", None)


def test_the_preset_reads_and_derives(family):
    from readbench.read._session import ReadSession

    data = "".join(f"line {k}\n" for k in range(1, 301)).encode()
    v = get_variant("guard-100")
    res = v.read(data, "f.py", None, None, call_id="c1", session=ReadSession(), visible_call_ids=None)
    assert (res.text, res.is_error, res.details.blocked) == (
        "Blind read refused: the file has 300 lines. Pass offset and limit.", True, True)
    res = v.read(data, "f.py", 10, 2, call_id="c2", session=ReadSession(), visible_call_ids=None)
    # pi counts the empty segment after the final newline: 301 - 11 = 290 lines left
    assert res.text == "line 10\nline 11\n\n[290 more lines in file. Use offset=12 to continue.]"
    wide = get_variant({"base": "guard-100", "name": "guard-500", "max_blind_lines": 500})
    res = wide.read(data, "f.py", None, None, call_id="c3", session=ReadSession(), visible_call_ids=None)
    assert not res.is_error and res.text.startswith("line 1\n")


def test_readers_of_read_results_know_its_refusal(family):
    from readbench.sim.observe import parse_read

    text = "Blind read refused: the file has 300 lines. Pass offset and limit."
    assert blocked(text).group("total") == "300"
    obs = parse_read(text, True, {"path": "f.py"})
    assert (obs.blocked, obs.total_lines, obs.lines) == (True, 300, {})


def test_the_cli_lists_it(family):
    res = CliRunner().invoke(variants_cmd, ["--json"])
    (row,) = [d for d in json.loads(res.output) if d["name"] == "guard-100"]
    assert row == {"name": "guard-100", "family": "blind-guard", "origin": "a test: blind reads up to 100 lines",
                   "params": {"max_blind_lines": 100}}


def test_a_matrix_file_names_it(family, tmp_path):
    from readbench.run.matrix import load_matrix

    path = tmp_path / "m.yaml"
    path.write_text("presets:\n  guard-20: {base: guard-100, max_blind_lines: 20}\nvariants: [stock, guard-100, guard-20]\n")
    assert load_matrix(path).variants == ["stock", "guard-100", {"base": "guard-100", "max_blind_lines": 20,
                                                                  "name": "guard-20"}]
    path.write_text("variants: [all]\n")
    assert load_matrix(path).variants[-1] == "guard-100"


def test_the_replay_counterfactual_and_its_report_show_it(family, tmp_path):
    import pandas as pd

    from readbench.replay._cli import replay_cmd
    from readbench.sessions.synth import write_pi_session

    session = write_pi_session(tmp_path / "s.jsonl", seed=2, calls=40, prompts=4)
    out = tmp_path / "out"
    res = CliRunner().invoke(replay_cmd, [str(session), "--audit", "--presets", "stock,guard-100",
                                          "--cache", "anthropic-5m", "--out", str(out)])
    assert res.exit_code == 0, res.output
    arms = pd.read_parquet(out / "read_arms.parquet")
    assert sorted(set(arms["preset"])) == ["guard-100", "stock"]
    reads = pd.read_parquet(out / "read_arm_reads.parquet")
    # every read of this session is ranged (offset and limit): the guard changes none of them
    assert reads.groupby("preset")["outcome"].agg(lambda o: sorted(set(o))).to_dict() == {
        "guard-100": ["same"], "stock": ["same"]}
    assert (reads["preset"] == "guard-100").sum() == (reads["preset"] == "stock").sum() == 12
    assert "guard-100" in (out / "report.md").read_text()
