"""How readbench runs Claude Code inside a sample's sandbox (GitHub issue 24; agents.md §2-3).

Claude Code reaches the sample's inspect model through the sandbox agent bridge's Anthropic
Messages side (`ANTHROPIC_BASE_URL` at the bridge's port, model `inspect`; the bridge needs the
`anthropic` Python package). One `claude --print --output-format stream-json` per prompt: the
first with `--session-id <uuid>`, each follow-up with `--resume <uuid>`, so the prompts are one
conversation in one project JSONL (`$HOME/.claude/projects/<cwd>/<uuid>.jsonl`, HOME a fresh
directory of readbench's), which readbench imports afterwards (readbench.sessions.claude_code).

Tools: `--tools Read,Grep,Bash,Edit,Write`, the counterparts of readbench's loop's read, grep,
bash, edit, write. Permissions: `--dangerously-skip-permissions` with `IS_SANDBOX=1` (the sample's
sandbox is the sandbox; Claude Code refuses the flag as root otherwise). Offline:
`CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1`, no auto-updater, no telemetry.

The arm's read preset is a PreToolUse hook (readbench.agents.claude_hooks) in a settings file passed
with `--settings`: the same `{"hooks": {"PreToolUse": ...}}` a user puts in
`<project>/.claude/settings.json`, kept out of the workspace so the task's files are unchanged.
"""

from __future__ import annotations

import json
import uuid

from readbench.agents.claude_hooks import claude_hook, claude_settings
from readbench.agents.launch import Launch, LaunchInput

__all__ = ["TOOLS", "claude_commands", "launch"]

TOOLS = "Read,Grep,Bash,Edit,Write"
"""Claude Code's tools an arm enables: the counterparts of readbench's loop's set."""


def claude_commands(exe: str, prompts: list[str], session_id: str, settings: str | None) -> list[list[str]]:
    """One argv per prompt: the first starts session `session_id`, the others resume it.

    Raises:
        ValueError: no prompt.
    """
    if not prompts:
        raise ValueError("a Claude Code run needs at least one prompt")
    base = [exe, "--print", "--output-format", "stream-json", "--verbose", "--model", "inspect",
            "--dangerously-skip-permissions", "--tools", TOOLS]
    if settings is not None:
        base += ["--settings", settings]
    return [base + (["--session-id", session_id] if i == 0 else ["--resume", session_id]) + ["--", prompt]
            for i, prompt in enumerate(prompts)]


def launch(given: LaunchInput) -> Launch:
    """Claude Code's `Launch` (readbench.agents.launch; module docstring).

    Raises:
        ValueError: a read preset Claude Code's hooks cannot express (named).
    """
    hook = claude_hook(given.variant)
    files: dict[str, str] = {}
    settings = None
    if hook is not None:
        hook_path, settings = f"{given.work}/readbench-read-hook.mjs", f"{given.work}/readbench-settings.json"
        files[hook_path] = hook
        files[settings] = json.dumps(claude_settings(given.node, hook_path), indent=2)
    session_id = str(uuid.uuid5(uuid.NAMESPACE_URL, f"readbench:{given.work}"))
    env = {**given.env, "HOME": given.work, "ANTHROPIC_BASE_URL": f"http://127.0.0.1:{given.port}",
           "ANTHROPIC_API_KEY": "inspect", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1", "IS_SANDBOX": "1",
           "DISABLE_AUTOUPDATER": "1", "DISABLE_TELEMETRY": "1", "DISABLE_ERROR_REPORTING": "1"}
    return Launch(files, claude_commands(given.exe, given.prompts, session_id, settings), env,
                  f"{given.work}/.claude/projects", "readbench.sessions.claude_code")
