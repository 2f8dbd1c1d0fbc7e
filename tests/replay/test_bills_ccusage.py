"""readbench's billed tokens and cost against ccusage 20.0.24 (npm, `--offline`), an independent
client, per session on synthetic fixtures (issue 22): Claude Code sessions with sub-agent files
that repeat the parent's calls (`agent-acompact-*`, `agent-aside_question-*`), hook progress lines
and parallel tool calls, an older fixture with a sub-agent and a malformed line, and a Codex
rollout. Needs `make setup-ccusage`; skipped with the reason otherwise, failed under
READBENCH_REQUIRE_CCUSAGE=1 (CI).

Differences by design, kept out of the fixtures and stated here: ccusage prices a model's >200k
tier per token bucket where readbench bands by the whole prompt (caching.md §1.5), so every
fixture prompt stays below 200k tokens; ccusage reads only compact JSON lines (as Claude Code and
Codex write them: its line filter looks for `"type":"assistant"`), so fixture lines are written
compact; ccusage drops a repeated (`message.id`, `requestId`) across *all* files it reads, readbench
within the files of one session (real ids are unique per response, so only a session that copies
another's lines, e.g. a resumed one, could tell them apart), so fixture ids are unique across
sessions; ccusage's `session --id` path is not used (it filters by id only).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from readbench.cache.simulate import billed_usage_cost
from readbench.replay.bill import session_date
from readbench.sessions import load_sessions

ROOT = Path(__file__).resolve().parents[2]
CCUSAGE = ROOT / "tests" / "ccusage" / "node_modules" / ".bin" / "ccusage"
DATA = ROOT / "tests" / "sessions" / "data"


@pytest.fixture(scope="module")
def ccusage() -> Path:
    if not CCUSAGE.exists() or shutil.which("node") is None:
        if os.environ.get("READBENCH_REQUIRE_CCUSAGE") == "1":
            pytest.fail(f"READBENCH_REQUIRE_CCUSAGE=1 but {CCUSAGE} is missing: run `make setup-ccusage`")
        pytest.skip(f"ccusage 20.0.24 not installed ({CCUSAGE} missing): run `make setup-ccusage`")
    return CCUSAGE


def _compact(src: Path, dst: Path) -> None:
    """Copy a JSONL file with its lines as compact JSON (a malformed line is kept as it is)."""
    out = []
    for line in src.read_text(encoding="utf-8").splitlines():
        try:
            out.append(json.dumps(json.loads(line), separators=(",", ":")))
        except json.JSONDecodeError:
            out.append(line)
    dst.parent.mkdir(parents=True, exist_ok=True)
    dst.write_text("\n".join(out) + "\n", encoding="utf-8")


def _claude_home(tmp_path: Path) -> Path:
    from test_bills_chain import _transcript
    from test_bills_dedup import _project

    home = tmp_path / "claude"
    _project(tmp_path / "a")  # sub-agent copies: projects/-p/...
    shutil.copytree(tmp_path / "a" / "projects", home / "projects")
    _transcript(tmp_path / "b")  # progress lines and parallel tool calls
    (home / "projects" / "-r").mkdir()
    for f in (tmp_path / "b").glob("*.jsonl"):
        shutil.copy(f, home / "projects" / "-r" / f.name)
    for f in (DATA / "claude").rglob("*.jsonl"):
        _compact(f, home / "projects" / "-q" / f.relative_to(DATA / "claude"))
    return home


def _run(exe: Path, args: list[str], env: dict[str, str], tmp_path: Path) -> dict:
    res = subprocess.run([str(exe), *args, "--offline", "--json", "-z", "UTC"], capture_output=True, text=True,
                         timeout=120, env={"PATH": os.environ["PATH"], "HOME": str(tmp_path / "home"), **env})
    assert res.returncode == 0, res.stderr
    return json.loads(res.stdout)


def _readbench(root: Path, by_parent: bool = True) -> dict[str, dict[str, float]]:
    """Per top-level session id (each file's own with `by_parent=False`, as ccusage keys Codex
    rollouts): billed tokens and cost summed over the session's files."""
    out: dict[str, dict[str, float]] = {}
    for s in load_sessions([root]):
        key = (s.parent_session_id or s.session_id) if by_parent else s.session_id
        t = out.setdefault(key, {"input": 0, "write": 0, "read": 0, "output": 0, "cost": 0.0})
        when = session_date(s)
        for c in s.calls:
            u = c.usage
            if u is None:
                continue
            t["input"] += u.uncached_input_tokens
            t["write"] += u.cache_write_tokens
            t["read"] += u.cache_read_tokens
            t["output"] += u.output_tokens
            t["cost"] += billed_usage_cost(u, c.model, None, when)
    return out


def test_claude_code_bills_equal_ccusage_per_session(ccusage, tmp_path):
    home = _claude_home(tmp_path)
    theirs = _run(ccusage, ["claude", "session"], {"CLAUDE_CONFIG_DIR": str(home)}, tmp_path)["sessions"]
    ours = _readbench(home / "projects")
    got = {s["sessionId"]: {"input": s["inputTokens"], "write": s["cacheCreationTokens"], "read": s["cacheReadTokens"],
                            "output": s["outputTokens"], "cost": s["totalCost"]} for s in theirs}
    assert sorted(got) == sorted(ours) == sorted(["5e551011-0000-4000-8000-000000000001",
                                                  "5e551011-0000-4000-8000-000000000002",
                                                  "c4a1e000-0000-4000-8000-000000000003", "s1"])
    for sid in ours:
        assert {k: v for k, v in got[sid].items() if k != "cost"} == {k: v for k, v in ours[sid].items() if k != "cost"}, sid
        assert got[sid]["cost"] == pytest.approx(ours[sid]["cost"], rel=1e-9, abs=1e-12), sid
    # the session with sub-agent copies: each call once (3 main + the compaction + the aside call)
    assert ours["5e551011-0000-4000-8000-000000000001"]["write"] == 9000 + 700 + 40 + 30 + 25


def test_codex_bills_equal_ccusage_per_session(ccusage, tmp_path):
    home = tmp_path / "codex"
    _compact(DATA / "codex" / "rollout-current.jsonl", home / "sessions" / "2025" / "11" / "17" /
             "rollout-2025-11-17T21-30-28-cx-1.jsonl")
    from codex_spawn import spawned_rollout

    spawned_rollout(home / "sessions" / "2026" / "04" / "15" / "rollout-2026-04-15T11-58-35-sub-1.jsonl")
    runs = _run(ccusage, ["codex", "session"], {"CODEX_HOME": str(home)}, tmp_path)["sessions"]
    ours = _readbench(home, by_parent=False)
    assert sorted(ours) == ["cx-1", "sub-1"] and len(runs) == 2
    cx = next(s for s in runs if s["sessionId"].endswith("cx-1"))
    sub = next(s for s in runs if s["sessionId"].endswith("sub-1"))
    assert (cx["inputTokens"], cx["cacheReadTokens"], cx["outputTokens"]) == (
        ours["cx-1"]["input"], ours["cx-1"]["read"], ours["cx-1"]["output"]) == (12340, 21760, 105)
    # gpt-5.1-codex: 12,340 x 1.25 + 21,760 x 0.125 + 105 x 10 per million
    assert cx["costUSD"] == pytest.approx(ours["cx-1"]["cost"], rel=1e-9) == pytest.approx(0.019195, rel=1e-12)
    # the spawned sub-agent: the parent thread's replayed call is not billed again, by either
    assert (sub["inputTokens"], sub["cacheReadTokens"], sub["outputTokens"]) == (
        ours["sub-1"]["input"], ours["sub-1"]["read"], ours["sub-1"]["output"]) == (600, 900, 20)


def test_the_differences_by_design_are_the_stated_ones(ccusage, tmp_path):
    """Two layouts where readbench bills what the provider billed and ccusage does not: (1) the
    main file keeps a response's streaming placeholder (output 1) while a sub-agent file's copy has
    its final count (20): ccusage keeps the larger entry within a file but the first file's across
    files; (2) a Claude Code 2.0 resume re-writes earlier responses without their `requestId`:
    ccusage keys (message.id, requestId) and bills the copies again."""
    from test_bills_dedup import _project, _resumed

    home = tmp_path / "claude"
    _project(home, placeholder_in_main=True)
    _resumed(home)
    got = {s["sessionId"]: s for s in _run(ccusage, ["claude", "session"], {"CLAUDE_CONFIG_DIR": str(home)},
                                            tmp_path)["sessions"]}
    ours = _readbench(home / "projects")
    main = "5e551011-0000-4000-8000-000000000001"
    assert ours[main]["output"] == got[main]["outputTokens"] + (20 - 1)
    resumed = "5e551011-0000-4000-8000-000000000004"
    # the two copied responses: 3 + 4 uncached, 3,000 + 100 written, 0 + 3,000 read, 5 + 6 output
    assert (got[resumed]["inputTokens"] - ours[resumed]["input"], got[resumed]["cacheCreationTokens"] - ours[resumed]["write"],
            got[resumed]["cacheReadTokens"] - ours[resumed]["read"], got[resumed]["outputTokens"] - ours[resumed]["output"]) == (
        3 + 4, 3000 + 100, 3000, 5 + 6)


def test_codex_review_mode_ccusage_bills_the_threads_repeated_count_again(ccusage, tmp_path):
    """(3) Codex `/review` (cli 0.77): after the review Codex writes the thread's last token_count
    again (same totals) before the thread's next call; ccusage bills it as a call, readbench as the
    copy it is (`readbench.sessions.codex`: the review's own counter restarts from zero)."""
    from codex_spawn import review_rollout

    home = tmp_path / "codex"
    review_rollout(home / "sessions" / "2026" / "04" / "15" / "rollout-2026-04-15T17-58-00-rev-1.jsonl")
    (run,) = _run(ccusage, ["codex", "session"], {"CODEX_HOME": str(home)}, tmp_path)["sessions"]
    ours = _readbench(home, by_parent=False)["rev-1"]
    # readbench: the thread's two calls and the review's two: 904 + 300 + 244 + 708 uncached, 4,096 + 256 + 4,992 read
    assert (ours["input"], ours["read"], ours["output"]) == (904 + 300 + 244 + 708, 4096 + 256 + 4992, 40)
    # ccusage: the repeated count once more (904 uncached, 4,096 read, 10 output)
    assert (run["inputTokens"] - ours["input"], run["cacheReadTokens"] - ours["read"], run["outputTokens"] - ours["output"]) == (
        904, 4096, 10)
