"""The read audit and the first-order counterfactual of read variants on hand-built sessions
whose answers are worked out by hand (issue 14 items 1, 2).

The paging session: a 5,000-line file (7 bytes a line, so pi's 2,000-line cap binds, not its
50 KB one) read blind (lines 1-2000, capped), paged with offset=2001 (2001-4000, capped) and
offset=4001 (4001-5000, the end), then read blind again from line 1 (a restart that re-delivers
lines 1-2000), then a final answer. Results are pi's exact text (readbench's stock emulation,
checked against pi itself in tests/read). Every call's bill is the recorded request's token
count plus a 1,000-token unrecorded head, read from cache up to the previous prompt.
"""

from __future__ import annotations

import json

import pytest

from readbench.cache import count_tokens
from readbench.read import get_variant
from readbench.read._dedup import stub_text
from readbench.read._session import ReadSession
from readbench.replay.arms import ArmSimulator
from readbench.replay.audit import audit_session
from readbench.replay.read_counterfactual import FIRST_ORDER_NOTE, read_arms, replay_read_variants
from readbench.sessions import load_file

FAMILY = "anthropic-legacy"  # Claude Sonnet 4.5's tokenizer family
HEAD = 1000
PATH = "/repo/big.txt"
DATA = "".join(f"x{k:05d}\n" for k in range(1, 5001)).encode()
PROMPT = "Read big.txt and tell me what is in it."


def _t(text: str) -> int:
    return count_tokens(text, FAMILY)


def _stock(offset, limit) -> str:
    return get_variant("stock").read(DATA, PATH, offset, limit, call_id=None, session=ReadSession(),
                                     visible_call_ids=None).text


def _args(offset) -> dict:
    return {"path": PATH, **({"offset": offset} if offset else {})}


def _call_tokens(j: int, offset) -> int:
    # the assistant message: its text block and the tool call rendered as name + JSON arguments
    return _t(f"Step {j}.") + _t("read" + json.dumps(_args(offset), ensure_ascii=False, separators=(",", ":")))


OFFSETS = (None, 2001, 4001, None)
RESULTS = [_stock(o, None) for o in OFFSETS]


def _paging_session(pi_session, tmp_path, cached=True):
    """Five calls (module docstring); returns (session, counted tokens of each request). `cached`:
    the bill shows prompt caching (each call reads the previous prompt); else all input uncached."""
    b = pi_session().user(PROMPT)
    counted = [_t(PROMPT)]
    for j, o in enumerate(OFFSETS):
        counted.append(counted[-1] + _call_tokens(j, o) + _t(RESULTS[j]))
    prev = 0
    for j in range(5):
        prompt = counted[j] + HEAD
        calls = ((f"c{j}", "read", _args(OFFSETS[j])),) if j < 4 else ()
        usage = (0, prev, prompt - prev, 10) if cached else (prompt, 0, 0, 10)
        b.assistant(f"Step {j}." if j < 4 else "Done.", 10.0 * j, usage, calls=calls)
        if j < 4:
            b.result(f"c{j}", RESULTS[j])
        prev = prompt
    (s,) = load_file(b.write(tmp_path / ("paging.jsonl" if cached else "paging-uncached.jsonl")))
    return s, counted


def test_results_are_pis_text():
    assert RESULTS[0].endswith("x02000\n\n[Showing lines 1-2000 of 5001. Use offset=2001 to continue.]")
    assert RESULTS[1].endswith("x04000\n\n[Showing lines 2001-4000 of 5001. Use offset=4001 to continue.]")
    assert RESULTS[2].startswith("x04001\n") and RESULTS[2].endswith("x05000\n")
    assert RESULTS[3] == RESULTS[0]


def test_audit_of_a_paged_then_restarted_blind_read(tmp_path, pi_session):
    s, counted = _paging_session(pi_session, tmp_path)
    a = audit_session(s)
    row = a.row
    t = [_t(x) for x in RESULTS]
    assert {k: row[k] for k in ("read_calls", "blind_reads", "shell_reads", "over_cap_reads", "capped_reads",
                                "partial_reads", "paging_reads", "paging_chains", "restarts", "redelivered_reads",
                                "redelivered_lines", "repeat_reads", "exact_repeat_reads")} == {
        "read_calls": 4, "blind_reads": 2, "shell_reads": 0, "over_cap_reads": 4, "capped_reads": 3,
        "partial_reads": 4, "paging_reads": 2, "paging_chains": 1, "restarts": 1, "redelivered_reads": 1,
        "redelivered_lines": 2000, "repeat_reads": 3, "exact_repeat_reads": 1}
    assert row["read_tokens"] == sum(t)
    assert row["capped_read_tokens"] == t[0] + t[1] + t[3]
    assert row["redelivered_tokens"] == t[3]  # every line of the restart had been delivered by the first read
    assert row["carried_tokens"] == t[3]  # only the final call re-sends it
    assert row["head_tokens"] == HEAD
    assert row["input_tokens"] == sum(counted) + 5 * HEAD
    assert row["redelivered_input_share"] == t[3] / (sum(counted) + 5 * HEAD)
    # the last call's input cost (Sonnet 4.5: read $0.30, 5m write $3.75 per MTok) carries t3 of its prompt
    last, prev = counted[4] + HEAD, counted[3] + HEAD
    last_input = (prev * 0.30 + (last - prev) * 3.75) / 1e6
    assert row["redelivered_cost_usd"] == pytest.approx(last_input * t[3] / last, rel=1e-12)
    per_read = [(r["first_line"], r["last_line"], r["paging"], r["restart"], r["redelivered_lines"], r["carried_calls"])
                for r in a.reads]
    assert per_read == [(1, 2000, False, False, 0, 0), (2001, 4000, True, False, 0, 0),
                        (4001, 5000, True, False, 0, 0), (1, 2000, False, True, 2000, 1)]


def test_b_counterfactual_on_the_paging_session(tmp_path, pi_session):
    s, counted = _paging_session(pi_session, tmp_path)
    a = audit_session(s)
    ra = read_arms(s, a.tracked, a.results, lambda m: _t(m.text), ["stock", "B"])
    assert ra.counts["stock"]["reads_same"] == 4  # stock reproduces every recorded result
    b = get_variant("B")
    blocked = [b.read(DATA, PATH, o, None, call_id=None, session=ReadSession(), visible_call_ids=None) for o in OFFSETS]
    assert blocked[0].text == ("File has 5000 lines (34.2KB), over the 2000-line/50.0KB read limit. "
                               "Read it in ranges, e.g. offset=1 limit=1000, or grep for what you need first.")
    assert [r.is_error for r in blocked] == [True, True, False, True]
    replaced = ra.replaced["B"]
    assert [replaced[f"c{j}"].text for j in (0, 1, 3)] == [blocked[0].text, blocked[1].text, blocked[3].text]
    assert "c2" not in replaced  # 1,000 lines from 4001: within the cap, exactly stock
    d = [_t(blocked[j].text) - _t(RESULTS[j]) for j in range(4)]
    assert ra.counts["B"]["result_tokens_delta"] == d[0] + d[1] + d[3]
    assert (ra.counts["B"]["blocked"], ra.counts["B"]["reads_changed"]) == (3, 3)
    rows = {r["cache_model"]: r for r in replay_read_variants(s, ArmSimulator(s, ["none", "anthropic-5m", "openai"]), ra,
                                                              ["none", "anthropic-5m", "openai"], lambda m: _t(m.text))
            if r["preset"] == "B"}
    # a Claude session priced as GPT would be a what-if on a what-if; priced without a cache, a
    # session whose bill shows caching is one too (`none` is as recorded only for an uncached bill)
    assert set(rows) == {"anthropic-5m"}
    s, _ = _paging_session(pi_session, tmp_path, cached=False)
    a = audit_session(s)
    ra = read_arms(s, a.tracked, a.results, lambda m: _t(m.text), ["stock", "B"])
    rows = {r["cache_model"]: r for r in replay_read_variants(s, ArmSimulator(s, ["none", "anthropic-5m", "openai"]), ra,
                                                              ["none", "anthropic-5m", "openai"], lambda m: _t(m.text))
            if r["preset"] == "B"}
    assert set(rows) == {"none", "anthropic-5m"}
    # every later request re-sends each replaced result: c0's in calls 1-4, c1's in 2-4, c3's in 4
    input_delta = 4 * d[0] + 3 * d[1] + 1 * d[3]
    assert rows["none"]["input_tokens_delta"] == rows["anthropic-5m"]["input_tokens_delta"] == input_delta
    # without a cache every input token is billed at the input price ($3 per MTok for Sonnet 4.5)
    assert rows["none"]["cost_delta_usd"] == pytest.approx(input_delta * 3.0 / 1e6, rel=1e-12)
    assert rows["none"]["first_order"] and FIRST_ORDER_NOTE.startswith("first-order")


SMALL = "".join(f"def f{k}():\n    return {k}\n" for k in range(50))  # 100 lines


def test_dedup_stub_only_while_the_earlier_copy_is_in_view(tmp_path, pi_session):
    b = pi_session().user("look at a.py")
    b.assistant("", 0.0, (0, 0, 500, 5), calls=(("c0", "read", {"path": "a.py"}),)).result("c0", SMALL)
    b.assistant("", 5.0, (0, 0, 900, 5), calls=(("c1", "read", {"path": "a.py"}),)).result("c1", SMALL)
    kept = len(b.lines) + 1  # keep from the user line after the compaction: c0 and c1 are summarised away
    b.entry({"type": "compaction", "timestamp": "2025-11-21T00:00:09.000Z", "summary": "read a.py twice",
             "firstKeptEntryIndex": kept, "tokensBefore": 900})
    b.user("and again")
    b.assistant("", 10.0, (0, 0, 400, 5), calls=(("c2", "read", {"path": "a.py"}),)).result("c2", SMALL)
    b.assistant("", 15.0, (0, 0, 800, 5), calls=(("c3", "read", {"path": "a.py"}),)).result("c3", SMALL)
    b.assistant("", 20.0, (0, 0, 900, 5), calls=(("c4", "edit", {"path": "a.py", "oldText": "f0", "newText": "g0"}),))
    b.result("c4", "Successfully replaced text in a.py.", name="edit")
    edited = SMALL.replace("def f0", "def g0")
    b.assistant("", 25.0, (0, 0, 950, 5), calls=(("c5", "read", {"path": "a.py"}),)).result("c5", edited)
    b.assistant("Done.", 30.0, (0, 0, 1000, 5))
    (s,) = load_file(b.write(tmp_path / "dedup.jsonl"))
    a = audit_session(s)
    ra = read_arms(s, a.tracked, a.results, lambda m: _t(m.text), ["B+dedup", "B+dedup-naive"])
    ctx = ra.replaced["B+dedup"]
    # c1: c0's copy is in c1's request -> stub; c2: the compaction dropped c0 -> the real text (as recorded);
    # c3: c2's copy is in view -> stub naming c2; c5: the edit changed the file -> the real text
    assert {k: m.text for k, m in ctx.items()} == {"c1": stub_text(1, 100, "c0"), "c3": stub_text(1, 100, "c2")}
    naive = ra.replaced["B+dedup-naive"]
    # naive serves the stub whenever an earlier read exists, even one compacted away (c2 -> c0)
    assert {k: m.text for k, m in naive.items()} == {"c1": stub_text(1, 100, "c0"), "c2": stub_text(1, 100, "c0"),
                                                      "c3": stub_text(1, 100, "c0")}
    assert ra.counts["B+dedup"]["stubbed"] == 2 and ra.counts["B+dedup-naive"]["stubbed"] == 3
    # the same replacement of one read under two presets is one message object (rendered once)
    assert ctx["c1"] is naive["c1"] and ctx["c3"] is not naive["c3"]
    assert a.row["redelivered_reads"] == 3  # c1, c2, c3 re-deliver; c5 reads a new version


def test_presets_that_need_lines_no_read_delivered_are_not_replayed(tmp_path, pi_session):
    b = pi_session().user(PROMPT)
    b.assistant("", 0.0, (0, 0, 500, 5), calls=(("c0", "read", {"path": PATH}),)).result("c0", RESULTS[0])
    b.assistant("Done.", 5.0, (0, 0, 900, 5))
    (s,) = load_file(b.write(tmp_path / "once.jsonl"))
    a = audit_session(s)
    ra = read_arms(s, a.tracked, a.results, lambda m: _t(m.text), ["nocap", "A", "B", "C"])
    reasons = {r["preset"]: (r["outcome"], r["reason"]) for r in ra.reads}
    assert reasons["nocap"] == ("not_replayable", "lines_not_recorded")  # lines 2001-5000 were never delivered
    assert reasons["C"] == ("changed", "")  # a .txt file gets no map: the 400-line cut is inside the delivered lines
    assert reasons["B"] == ("changed", "")  # the recorded cut proves the file is over the cap
    assert reasons["A"] == ("changed", "")  # A's 1,000-line cut falls inside the delivered lines
    want_a = get_variant("A").read(DATA, PATH, None, None, call_id=None, session=ReadSession(),
                                   visible_call_ids=None).text
    assert ra.replaced["A"]["c0"].text == want_a
    want_c = get_variant("C").read(DATA, PATH, None, None, call_id="c0", session=ReadSession(),
                                   visible_call_ids=None).text
    assert ra.replaced["C"]["c0"].text == want_c  # no grammar for .txt: no map, only the notice
    assert want_c.endswith("   400\tx00400\n\n[Showing lines 1-400 of 5001. Use offset/limit to read other parts.]")
    # B's message states the size of a file whose last 3,000 lines are unknown: estimated at the mean line length
    assert ra.replaced["B"]["c0"].text.startswith("File has 5000 lines (34.2KB), over the 2000-line/50.0KB read limit.")


def _raw_counts(path) -> tuple[int, int]:
    """(read-tool calls, blind ones) straight from a pi or Claude Code JSONL file, without readbench."""
    seen: dict[str, bool] = {}
    for line in path.read_text().splitlines():
        o = json.loads(line)
        blocks = (o.get("message") or {}).get("content") or []
        for b in blocks if isinstance(blocks, list) else []:
            if b.get("type") == "toolCall" and b.get("name") == "read":
                seen[b["id"]] = not ({"offset", "limit"} & set(b["arguments"]))
            elif b.get("type") == "tool_use" and b.get("name") == "Read":
                seen[b["id"]] = not ({"offset", "limit"} & set(b["input"]))
    return len(seen), sum(seen.values())


def test_cli_audit_counts_equal_the_files_and_every_output_says_first_order(tmp_path):
    import pandas as pd
    from click.testing import CliRunner

    from readbench.replay._cli import replay_cmd
    from readbench.sessions.synth import write_claude_session, write_pi_session

    src = tmp_path / "in"
    src.mkdir()
    pi = write_pi_session(src / "pi.jsonl", seed=5, calls=80, prompts=3, files=6)
    cc = write_claude_session(src / "cc.jsonl", seed=6, calls=80, prompts=3, files=6)
    out = tmp_path / "out"
    res = CliRunner().invoke(replay_cmd, [str(src), "--audit", "--presets", "stock,B,B+dedup", "--json", "--out", str(out)])
    assert res.exit_code == 0, res.output
    audit = pd.read_parquet(out / "audit.parquet").set_index("format")
    for fmt, path in (("pi", pi), ("claude-code", cc)):
        assert (audit.at[fmt, "read_calls"] - audit.at[fmt, "shell_reads"], audit.at[fmt, "blind_reads"]) == _raw_counts(path)
    arms = pd.read_parquet(out / "read_arms.parquet")
    assert set(arms["preset"]) == {"stock", "B", "B+dedup"} and arms["first_order"].all()
    stock_pi = arms[(arms.preset == "stock") & (arms.format == "pi")].iloc[0]
    assert stock_pi["reads_same"] == stock_pi["reads"]  # stock rebuilds every recorded pi result exactly
    assert stock_pi["cost_delta_usd"] == 0.0
    report = (out / "report.md").read_text()
    assert "## Read audit" in report and "(first-order counterfactual)" in report
    assert "| stock (own) | pi | 1 (0) |" in report  # pi's own preset: every replayed read the same, no session changed
    assert "the model's reaction to a different result is not replayed" in report
    objs = [json.loads(x) for x in res.stdout.splitlines()]
    assert all(o["read_counterfactual"]["note"].startswith("first-order") for o in objs)
    assert {o["format"]: o["audit"]["read_calls"] for o in objs} == audit["read_calls"].to_dict()
    res = CliRunner().invoke(replay_cmd, [str(src), "--audit", "--presets", "Z", "--out", str(tmp_path / "o2")])
    assert res.exit_code == 2 and "unknown read variant 'Z'; valid: stock, A, B" in res.output


PY = "".join(f"def f{k}(x):\n    y = x + {k}\n    z = y * 2\n    w = z - 1\n    return w\n\n\n" for k in range(800))


def test_a_map_of_a_file_never_read_in_full_is_not_replayed(tmp_path, pi_session):
    data = PY.encode()
    first = get_variant("stock").read(data, "m.py", None, None, call_id=None, session=ReadSession(),
                                      visible_call_ids=None).text
    b = pi_session().user("read m.py")
    b.assistant("", 0.0, (0, 0, 500, 5), calls=(("c0", "read", {"path": "m.py"}),)).result("c0", first)
    b.assistant("Done.", 5.0, (0, 0, 900, 5))
    (s,) = load_file(b.write(tmp_path / "py.jsonl"))
    a = audit_session(s)
    ra = read_arms(s, a.tracked, a.results, lambda m: _t(m.text), ["C", "swe-agent", "stock"])
    got = {r["preset"]: (r["outcome"], r["reason"]) for r in ra.reads}
    assert got == {"C": ("not_replayable", "map_needs_whole_file"), "swe-agent": ("not_replayable", "map_needs_whole_file"),
                   "stock": ("same", "")}
