"""inspect eval logs: the tools of readbench's own agent loop (`readbench.tools`: pi's names and
argument shapes, pi-tools.md §1-3) and inspect's built-in `text_editor` (`view`, `create`,
`str_replace`, `insert`, `undo_edit`), which inspect sends to Claude models as Anthropic's native
`str_replace_based_edit_tool` (inspect-ai's anthropic provider). The read preset is the run's own
(the log's task arguments), so the record names none."""

from readbench.harness._record import Harness, ReadTool, ShellTool

_EDITORS = ("text_editor", "str_replace_based_edit_tool")

HARNESS = Harness(
    name="inspect",
    title="inspect-ai eval log",
    origin="readbench.tools (pi's tool names) and inspect-ai's text_editor tool",
    read_tools=(ReadTool("read", "path"),),
    shell_tools=(ShellTool("bash"),),
    edit_tools=("edit", "write", *_EDITORS),
    view_commands={e: ("view",) for e in _EDITORS},
    search_tools=("grep",),
    path_keys=("path",),
    read_preset=None,
    sessions="inspect .eval/.json logs, one session per sample and epoch: readbench.sessions.inspect_log",
)
