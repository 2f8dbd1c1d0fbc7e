"""pi-dcp (PSU3D0) rules, placeholders, protections and footer (docs/specs/dcp.md Part A)."""

from __future__ import annotations

import hashlib

from dcp_msgs import asst, step, system, tool, user
from inspect_ai.model import ContentImage, ContentText

from readbench.base.js import js_stringify
from readbench.dcp import ContextUsage, get_config, prefix_break_index, project
from readbench.dcp.strategies.deduplicate import normalize_and_sort, signature
from readbench.dcp.strategies.purge_errors import first_line

BIG = "x" * 1300  # >= minChars 1200
DEDUP = "[DCP: Exact duplicate of a later tool call. Pruned to save tokens.]"


def _aged(history: list, turns: int = 8) -> list:
    """`history` followed by `turns` further user turns, ending with a new user prompt."""
    out = list(history)
    for i in range(turns):
        out += [user(f"later {i}"), asst("ok")]
    return out + [user("now")]


# --- deduplicate ---------------------------------------------------------------------------


def test_dedup_key_sorts_keys_and_drops_nulls():
    assert normalize_and_sort({"b": 1, "a": {"d": None, "c": [3, {"z": 1, "y": None}]}}) == {
        "a": {"c": [3, {"z": 1}]},
        "b": 1,
    }
    payload = js_stringify({"name": "read", "args": normalize_and_sort({"path": "a.py", "limit": None})})
    assert payload == '{"name":"read","args":{"path":"a.py"}}'
    assert signature("read", {"path": "a.py", "limit": None}) == hashlib.sha256(payload.encode()).hexdigest()
    assert signature("read", {"offset": 1, "path": "a.py"}) == signature("read", {"path": "a.py", "offset": 1})
    assert signature("grep", {"args": [1, 2]}) != signature("grep", {"args": [2, 1]})


def test_dedup_keeps_newest_and_prunes_older_duplicates_with_verbatim_placeholder():
    hist = [user("go")]
    hist += step("c1", "read", {"path": "a.py", "limit": None}, "old copy")
    hist += step("c2", "read", {"limit": None, "path": "a.py"}, "older copy")
    hist += step("c3", "read", {"path": "a.py"}, "newest copy")
    msgs = _aged(hist)
    p = project(msgs, "pi-dcp-dedup-only")
    assert [p.messages[i].text for i in (2, 4, 6)] == [DEDUP, DEDUP, "newest copy"]
    assert p.stats.pruned == {"deduplicate": 2}
    # footer: floor(len/4) of each original: "old copy" 8 -> 2, "older copy" 10 -> 2
    assert p.stats.footer_tokens_saved == 4
    assert p.stats.changed_indices == (2, 4)


def test_dedup_recent_newest_copy_still_prunes_old_duplicate():
    hist = [user("go")] + step("c1", "read", {"path": "a.py"}, "v1")
    msgs = _aged(hist) + step("c2", "read", {"path": "a.py"}, "v2")  # c2 is in the current turn
    p = project(msgs, "pi-dcp")
    assert p.messages[2].text == DEDUP
    assert p.messages[-1].text == "v2"
    assert p.stats.skipped["deduplicate"]["recent"] == 1


# --- purgeErrors --------------------------------------------------------------------------


def test_purge_errors_first_line_rule():
    assert first_line("E" * 300) == "E" * 150
    assert first_line([ContentText(text="ab"), ContentText(text="cd\nef")]) == "abcd"
    # concatenation stops once > 200 chars: the third block is never read
    assert first_line([ContentText(text="a" * 201), ContentText(text="b\nc")]) == "a" * 150
    assert first_line([ContentText(text="a" * 100), ContentText(text="b" * 101), ContentText(text="c")]) == (
        "a" * 100 + "b" * 50
    )


def test_purge_errors_replaces_old_error_with_exact_text():
    hist = [user("go")] + step("e1", "bash", {"command": "make"}, "make: *** No rule\nmore detail\n", error=True)
    p = project(_aged(hist), "pi-dcp")
    assert p.messages[2].text == "[DCP: Stale error payload minimized.]\nmake: *** No rule..."
    assert p.messages[2].error.message == p.messages[2].text  # what inspect providers send
    assert p.stats.pruned["purgeErrors"] == 1
    assert p.stats.footer_tokens_saved == len("make: *** No rule\nmore detail\n") // 4


def test_purge_errors_min_turn_age_binds_without_turn_protection():
    cfg = {"base": "pi-dcp", "name": "no-turn-window", "turn_protection": False, "output_body_replace": False}
    hist = [user("go")] + step("e1", "bash", {"command": "x"}, "boom", error=True)
    two = _aged(hist, turns=1)  # e1 has turnAge 2
    three = _aged(hist, turns=2)  # turnAge 3
    assert project(two, cfg).stats.pruned["purgeErrors"] == 0
    assert project(three, cfg).stats.pruned["purgeErrors"] == 1


def test_purge_errors_never_fires_in_a_single_prompt_session():
    msgs = [user("only prompt")]
    for k in range(20):
        msgs += step(f"e{k}", "bash", {"command": f"run {k}"}, f"error {k}\n" + "y" * 1300, error=True)
        msgs += step(f"r{k}", "read", {"path": f"f{k}.py"}, BIG)
    p = project(msgs, "pi-dcp")
    assert p.stats.pruned["purgeErrors"] == 0
    assert p.stats.skipped["purgeErrors"]["recent"] == 20
    # 40 steps; the newest two (r19, e19) keep step protection; errors are not for this strategy
    assert p.stats.pruned["outputBodyReplace"] == 19


# --- outputBodyReplace and the (Turn N) counter ---------------------------------------------


def test_output_body_replace_threshold_and_placeholder():
    long_path = "src/" + "d" * 120 + ".py"
    hist = [user("go")]
    hist += step("c1", "read", {"path": "a.py", "limit": 40}, "z" * 1200)  # exactly minChars: replaced
    hist += step("c2", "read", {"path": "b.py"}, "z" * 1199)  # below: kept
    hist += step("c3", "read", {"path": long_path}, "z" * 2000)
    p = project(_aged(hist), "pi-dcp")
    assert p.messages[2].text == (
        '[DCP: Large output from read({"path":"a.py","limit":40}...) pruned due to age (Turn 9). '
        "If you need this data again, re-run the tool.]"
    )
    assert p.messages[4].text == "z" * 1199
    summary = js_stringify({"path": long_path})[:100]
    assert p.messages[6].text == (
        f"[DCP: Large output from read({summary}...) pruned due to age (Turn 9). "
        "If you need this data again, re-run the tool.]"
    )
    assert p.stats.footer_tokens_saved == 1200 // 4 + 2000 // 4


def test_output_body_replace_counts_images_and_drops_them():
    hist = [user("go"), asst("", ("i1", "read", {"path": "pic.png"}))]
    hist.append(tool("i1", "read", "x"))
    hist[-1] = hist[-1].model_copy(update={"content": [ContentText(text="img"), ContentImage(image="data:image/png;base64,AA")]})
    p = project(_aged(hist), "pi-dcp")
    assert p.messages[2].content.startswith("[DCP: Large output from read(")
    assert p.stats.footer_tokens_saved == 0  # images count 0 in pi-dcp's estimate


def _turn_counter_history() -> tuple[list, list, list]:
    base = [user("u1")] + step("c1", "read", {"path": "a.py"}, BIG) + [asst("done")]
    for i in range(8):
        base += [user(f"u{i + 2}"), asst("ok")]
    first = base + [user("u10")]  # first call of a user turn: c1 has turnAge 9
    second = first + step("c2", "read", {"path": "b.py"}, "small")  # second call of the same turn
    third = second + [asst("done"), user("u11")]  # first call of the next user turn: turnAge 10
    return first, second, third


def test_turn_counter_rewrites_placeholders_on_each_new_user_prompt():
    first, second, third = _turn_counter_history()
    p1, p2, p3 = (project(m, "pi-dcp") for m in (first, second, third))
    assert "(Turn 9)" in p1.messages[2].text and "(Turn 10)" in p3.messages[2].text
    assert [p.stats.earliest_changed_index for p in (p1, p2, p3)] == [2, 2, 2]
    assert prefix_break_index(p1.messages, p2.messages) is None  # same turn: append-only
    assert prefix_break_index(p2.messages, p3.messages) == 2  # new turn: history rewritten at 2


def test_stable_placeholders_do_not_break_the_prefix():
    first, second, third = _turn_counter_history()
    p1, p2, p3 = (project(m, "pi-dcp-stable") for m in (first, second, third))
    assert p3.messages[2].text == (
        '[DCP: Large output from read({"path":"a.py"}...) pruned due to age. If you need this data again, re-run the tool.]'
    )
    assert prefix_break_index(p1.messages, p2.messages) is None
    assert prefix_break_index(p2.messages, p3.messages) is None


# --- protections ----------------------------------------------------------------------------


def _single_turn(n_steps: int) -> list:
    msgs = [user("one prompt")]
    for k in range(n_steps):
        msgs += step(f"r{k}", "read", {"path": f"f{k}.py"}, BIG)
    return msgs


def test_step_protection_engages_only_after_more_than_turns_steps():
    assert project(_single_turn(8), "pi-dcp").stats.changed_indices == ()
    p9 = project(_single_turn(9), "pi-dcp")
    # 9 steps: ages 8..0; steps with age >= 2 (results at 2, 4, ..., 14) become prunable
    assert p9.stats.changed_indices == (2, 4, 6, 8, 10, 12, 14)
    # with steps=3 the newest three are kept
    p9b = project(_single_turn(9), {"base": "pi-dcp", "name": "s3", "steps": 3})
    assert p9b.stats.changed_indices == (2, 4, 6, 8, 10, 12)


def test_prior_turns_keep_turn_protection_when_step_window_engages():
    msgs = [user("first")] + step("old", "read", {"path": "old.py"}, BIG) + [asst("done")]
    msgs += _single_turn(9)
    p = project(msgs, "pi-dcp")
    assert 2 not in p.stats.changed_indices  # turnAge 1 < 8
    assert p.stats.changed_indices == (6, 8, 10, 12, 14, 16, 18)


def test_protected_tools_and_file_patterns():
    hist = [user("go")]
    hist += step("t1", "todo", {"items": ["a"]}, BIG)
    hist += step("c1", "read", {"path": "docs/CHANGELOG.md"}, BIG)
    hist += step("c2", "read", {"path": "notes/v2.plan.md"}, BIG)
    hist += step("c3", "read", {"file": "progress.md"}, BIG)
    hist += step("c4", "read", {"path": "src/main.py"}, BIG)
    p = project(_aged(hist), "pi-dcp")
    assert p.stats.changed_indices == (10,)
    assert p.stats.skipped["outputBodyReplace"]["protected"] == 4


def test_frontier_pins():
    msgs = [user("one prompt")]
    msgs += step("w1", "write", {"path": "a.py", "content": "print(1)"}, "ok")  # step 0
    msgs += step("ra", "read", {"path": "a.py"}, BIG)  # read of modified file, not the latest
    msgs += step("rb", "read", {"path": "./a.py", "offset": 1}, BIG)  # latest read of a.py: pinned
    msgs += step("pl", "read", {"path": "docs/plan.md"}, BIG)  # plan artifact: pinned
    msgs += step("t1", "bash", {"command": "python -m pytest -q"}, "FAILED 1\n" + BIG, error=True)
    msgs += step("t2", "bash", {"command": "  PYTEST tests/"}, "FAILED again\n" + BIG)  # fail by first line
    msgs += step("t3", "bash", {"command": "ruff check ."}, "All checks passed!\n" + BIG)  # pass (no error)
    msgs += step("b1", "bash", {"command": "ls -la"}, BIG)  # not a verification command
    for k in range(3):
        msgs += step(f"f{k}", "read", {"path": f"filler{k}.py"}, BIG)
    p = project(msgs, "pi-dcp")
    by_id = {m.tool_call_id: i for i, m in enumerate(msgs) if m.role == "tool"}
    changed = set(p.stats.changed_indices)
    assert by_id["ra"] in changed and by_id["b1"] in changed and by_id["f0"] in changed
    for pinned in ("rb", "pl", "t2", "t3"):
        assert by_id[pinned] not in changed, pinned
    assert by_id["t1"] not in changed  # errored: outputBodyReplace skips, purgeErrors turnAge 0
    off = project(msgs, {"base": "pi-dcp", "name": "no-pins", "frontier_pins": False})
    assert {by_id[x] for x in ("rb", "pl", "t2", "t3")} <= set(off.stats.changed_indices)


# --- pressure bands, supersedeWrites and footer ---------------------------------------------


def test_pressure_bands_and_footer_text():
    hist = [user("go")] + step("c1", "read", {"path": "a.py"}, BIG)
    msgs = _aged(hist)
    cases = [
        (None, "unknown", "✂️ DCP: ~325 tokens saved · low pre-prune pressure (low default policy)"),
        (ContextUsage(69, 100), "low", "✂️ DCP: ~325 tokens saved · low pre-prune pressure (baseline safe wins)"),
        (ContextUsage(70, 100), "medium", "✂️ DCP: ~325 tokens saved · medium pre-prune pressure (baseline safe wins)"),
        (
            ContextUsage(80, 100),
            "high",
            "✂️ DCP: ~325 tokens saved · high pre-prune pressure (broader stale payload pruning active)",
        ),
        (ContextUsage(90, 100), "critical", "✂️ DCP: ~325 tokens saved · critical pre-prune pressure (compaction preferred)"),
        (ContextUsage(None, 100), "unknown", None),
        (ContextUsage(10, 0), "unknown", None),
    ]
    for usage, band, footer in cases:
        s = project(msgs, "pi-dcp", usage=usage).stats
        assert s.band == band
        if footer:
            assert s.footer_text == footer
    quiet = project([user("hi")], "pi-dcp").stats
    assert quiet.footer_text is None
    dbg = project([user("hi")], {"base": "pi-dcp", "name": "dbg", "debug": True}).stats
    assert dbg.footer_text == "DCP: 0 tokens saved · low pre-prune pressure (low default policy)"


def test_supersede_writes_needs_high_band_and_replaces_fields():
    body = "def f():\n    return 1\n" * 20  # 440 chars
    hist = [user("go")]
    hist += [asst("", ("e1", "edit", {"path": "a.py", "oldText": "abcd" * 10, "newText": body}))]
    hist += [tool("e1", "edit", "Successfully replaced text in a.py.")]
    hist += step("r1", "read", {"path": "a.py", "offset": 3, "limit": 2}, "partial")  # partial read still supersedes
    msgs = _aged(hist)
    cfg = {"base": "pi-dcp", "name": "sw", "supersede_writes": True}
    assert project(msgs, cfg, usage=ContextUsage(79, 100)).stats.changed_indices == ()
    p = project(msgs, cfg, usage=ContextUsage(80, 100))
    args = p.messages[1].tool_calls[0].arguments
    assert args == {
        "path": "a.py",
        "oldText": "[DCP: Content superseded by later read]",
        "newText": "[DCP: Content superseded by later read]",
    }
    assert msgs[1].tool_calls[0].arguments["newText"] == body  # input untouched
    assert p.stats.pruned["supersedeWrites"] == 1
    assert p.stats.footer_tokens_saved == 40 // 4 + 440 // 4
    agg = project(msgs, "pi-dcp-aggressive")  # band forced high
    assert agg.messages[1].tool_calls[0].arguments == args


def test_system_messages_are_skipped_and_not_counted():
    hist = [system("you are pi"), user("go")] + step("c1", "read", {"path": "a.py"}, BIG)
    msgs = _aged(hist)
    p = project(msgs, "pi-dcp")
    assert p.messages[0] is msgs[0]
    assert p.stats.changed_indices == (3,)  # input-list index (system included)


def test_configuration_off_returns_input_objects():
    msgs = _aged([user("go")] + step("c1", "read", {"path": "a.py"}, BIG))
    p = project(msgs, "off")
    assert all(a is b for a, b in zip(p.messages, msgs)) and p.stats.earliest_changed_index is None
    assert get_config("pi-dcp-dedup-only").params.output_body_replace is False


def test_verification_command_patterns_and_outcome():
    from readbench.dcp._protection import is_verification_command, verification_outcome

    yes = ["npm run test", "yarn test --watch", "npx jest --ci", "python -m pytest -q", "go test ./...",
           "cargo clippy", "tsc -p . --noEmit", "eslint src", "ruff check .", "bun test"]
    no = ["mypytest", "cargo build", "tsc -p .", "ruff format .", "npm install", "gotest", ""]
    assert [is_verification_command(c) for c in yes] == [True] * len(yes)
    assert [is_verification_command(c) for c in no] == [False] * len(no)
    assert is_verification_command(None) is False
    assert verification_outcome("FAIL: 2 tests", False) == "fail"
    assert verification_outcome("  Failed\nok", False) == "fail"
    assert verification_outcome("passed", True) == "fail"  # isError wins
    assert verification_outcome("PASS", False) == "pass"
    assert verification_outcome("collected 3 items", False) == "pass"
