"""How readbench starts Claude Code in the sandbox (readbench.agents.claude_run; issue 24)."""

from __future__ import annotations

import json

import pytest

from readbench.agents.claude_hooks import claude_hook
from readbench.agents.launch import LaunchInput, launch


def _given(variant, prompts=("Fix a.py", "Now run the tests.")):
    return LaunchInput("/tmp/rb", 13131, "/opt/readbench/node/bin/node", "/opt/readbench/agent/node_modules/.bin/claude",
                       variant, list(prompts), "/work", 200_000, {"LANG": "C.UTF-8"})


def test_stock_is_claude_codes_own_read_one_process_per_prompt_one_session():
    run = launch("claude-code", _given("stock"))
    assert run.files == {}  # no hook: Claude Code's own Read
    (sid,) = {argv[argv.index("--session-id") + 1] for argv in run.runs[:1]}
    base = ["/opt/readbench/agent/node_modules/.bin/claude", "--print", "--output-format", "stream-json", "--verbose",
            "--model", "inspect", "--dangerously-skip-permissions", "--tools", "Read,Grep,Bash,Edit,Write"]
    assert run.runs == [base + ["--session-id", sid, "--", "Fix a.py"],
                        base + ["--resume", sid, "--", "Now run the tests."]]
    assert run.env["ANTHROPIC_BASE_URL"] == "http://127.0.0.1:13131" and run.env["HOME"] == "/tmp/rb"
    assert run.env["IS_SANDBOX"] == "1" and run.env["LANG"] == "C.UTF-8"
    assert (run.session_dir, run.importer) == ("/tmp/rb/.claude/projects", "readbench.sessions.claude_code")


def test_b_is_a_pretooluse_hook_passed_by_settings_outside_the_workspace():
    run = launch("claude-code", _given("B", prompts=("Fix a.py",)))
    assert run.files["/tmp/rb/readbench-read-hook.mjs"] == claude_hook("B")
    assert json.loads(run.files["/tmp/rb/readbench-settings.json"]) == {"hooks": {"PreToolUse": [{
        "matcher": "Read", "hooks": [{"type": "command",
                                      "command": "/opt/readbench/node/bin/node /tmp/rb/readbench-read-hook.mjs"}]}]}}
    (argv,) = run.runs
    assert argv[argv.index("--settings") + 1] == "/tmp/rb/readbench-settings.json"
    assert not any(path.startswith("/work") for path in run.files)  # the task's files stay as they are


def test_a_preset_claude_code_cannot_express_is_refused_by_name():
    with pytest.raises(ValueError, match="'A'"):
        launch("claude-code", _given("A"))
    with pytest.raises(ValueError, match="readbench cannot start harness 'swe-agent' in the sandbox yet"):
        launch("swe-agent", _given("stock"))
