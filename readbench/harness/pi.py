"""pi (`@earendil-works/pi-coding-agent`): its tools as its sessions record them (docs/specs/
pi-tools.md §1-3, sessions.md §1). `read {path, offset?, limit?}` caps at 2000 lines / 50 KB and
appends a continuation notice (readbench's `stock` preset); `bash {command}`; `edit`/`write`
change files; `grep` searches contents."""

from readbench.harness._record import Harness, ReadTool, ShellTool

HARNESS = Harness(
    name="pi",
    title="pi coding agent",
    origin="pi 0.84.1 tools (pi-tools.md §1-3); session JSONL legacy and v3 (sessions.md §1)",
    read_tools=(ReadTool("read", "path"),),
    shell_tools=(ShellTool("bash"),),
    edit_tools=("edit", "write"),
    search_tools=("grep",),
    path_keys=("path",),
    read_preset="stock",
    sessions="pi session JSONL (legacy, v3): readbench.sessions.pi",
)
