"""Claude Code (`@anthropic-ai/claude-code`): its tools as its project JSONL records them
(docs/specs/sessions.md §2, variants.md "claude-code", anchors.md §7). `Read {file_path, offset?,
limit?}` returns 2000 numbered lines when no limit is given (readbench's `claude-code` preset);
`Bash {command}`; `Edit`, `MultiEdit`, `Write`, `NotebookEdit {notebook_path}` change files;
`Grep` searches contents."""

from readbench.harness._record import Harness, ReadTool, ShellTool

HARNESS = Harness(
    name="claude-code",
    title="Claude Code",
    origin="Claude Code tool schemas as recorded in its project JSONL (sessions.md §2; variants.md \"claude-code\")",
    read_tools=(ReadTool("Read", "file_path", default_limit=2000, numbered=True),),
    shell_tools=(ShellTool("Bash"),),
    edit_tools=("Edit", "MultiEdit", "Write", "NotebookEdit"),
    search_tools=("Grep",),
    path_keys=("file_path", "notebook_path", "path"),
    read_preset="claude-code",
    sessions="Claude Code project JSONL (sub-agents linked): readbench.sessions.claude_code",
)
