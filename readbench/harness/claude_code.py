"""Claude Code (`@anthropic-ai/claude-code`): its tools as its project JSONL records them
(docs/specs/sessions.md §2, variants.md "claude-code", anchors.md §7). `Read {file_path, offset?,
limit?}` returns 2000 numbered lines when no limit is given (readbench's `claude-code` preset);
`Bash {command}`; `Edit`, `MultiEdit`, `Write`, `NotebookEdit {notebook_path}` change files;
`Grep` searches contents."""

import re

from readbench.harness._record import Harness, NpmPin, ReadArm, ReadTool, ShellTool

HOOK_DENIAL = re.compile(r"^PreToolUse:\w+ hook error: ")
"""What Claude Code 2.1.332 puts before a PreToolUse hook's `permissionDecisionReason` in the tool
result the model sees (probed through inspect's sandbox agent bridge, notes/claude.md)."""


def hook_reason(text: str) -> str:
    """The hook's own reason in a denied call's result text (`text` without `HOOK_DENIAL`)."""
    return HOOK_DENIAL.sub("", text, count=1)


HARNESS = Harness(
    name="claude-code",
    title="Claude Code",
    origin="Claude Code tool schemas as recorded in its project JSONL (sessions.md §2; variants.md \"claude-code\")",
    read_tools=(ReadTool("Read", "file_path", default_limit=2000, numbered=True),),
    shell_tools=(ShellTool("Bash", empty_output="(Bash completed with no output)"),),  # real transcripts, 2.1.x
    edit_tools=("Edit", "MultiEdit", "Write", "NotebookEdit"),
    search_tools=("Grep",),
    path_keys=("file_path", "notebook_path", "path"),
    read_preset="claude-code",
    sessions="Claude Code project JSONL (sub-agents linked): readbench.sessions.claude_code",
    npm=(NpmPin("@anthropic-ai/claude-code", "2.1.332",
                "sha512-tvSh6bLvEbd97APD31AnojOrRC3AmcRj5R8sF8QIQitu3x2ucOb1kKmTkGDw41kjva+CGJfpkt+wYouk6yv56Q==",
                "claude", ">=22.0.0"),),
    own_read="Claude Code's own Read (no hook)",
    read_arms=(ReadArm("paged", {"over_cap": "block", "as_error": True, "max_chars": None},
                       "PreToolUse hook on Read (the hooks JSON of <project>/.claude/settings.json, passed with "
                       "--settings) denies a read over the preset's caps with the preset's message; Claude Code shows "
                       "it as 'PreToolUse:Read hook error: <message>' (agents.md §3)"),),
    runs="claude --print --output-format stream-json --tools Read,Grep,Bash,Edit,Write at inspect's sandbox agent "
         "bridge (ANTHROPIC_BASE_URL, model inspect), one process per prompt (--session-id, then --resume); project "
         "JSONL under $HOME/.claude/projects (readbench.agents.claude_run)",
)
