"""pi (`@earendil-works/pi-coding-agent`): its tools as its sessions record them (docs/specs/
pi-tools.md §1-3, sessions.md §1). `read {path, offset?, limit?}` caps at 2000 lines / 50 KB and
appends a continuation notice (readbench's `stock` preset); `bash {command}`; `edit`/`write`
change files; `grep` searches contents."""

from readbench.harness._record import Harness, NpmPin, ReadArm, ReadTool, ShellTool

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
    npm=(
        NpmPin("@earendil-works/pi-coding-agent", "0.84.4",
               "sha512-jmOlrqUmvhh/siNWFRXjYLJzhKFIHNsAQaysRwzQPQFnPAaV/vhqHsLH/MBsIISA1Rjj7WTUFR3nJrpXoLx39w==",
               "pi", ">=22.19.0"),
        NpmPin("@earendil-works/pi-coding-agent", "1.6.0",
               "sha512-zX1BVEsshx7A2MRuQ6jfr3RJGWw4Wn+vLq5ZfmlvS1RskhRmByaSZVXH/zcwRrWHO7qPgs98pNCbPOEti/t0fQ==",
               "pi", ">=22.19.0"),
    ),
    own_read="pi's own read tool (no extension)",
    read_arms=(ReadArm("paged", {"over_cap": "block", "as_error": True, "max_chars": None},
                       "pi extension readbench writes from the preset: a tool_call hook refuses a read over the "
                       "preset's caps with the preset's message (pi-tools.md; agents.md §4)"),),
    runs="pi --print --mode json in the sandbox, provider `readbench` in $PI_CODING_AGENT_DIR/models.json at "
         "inspect's sandbox agent bridge (openai-completions); session JSONL from --session-dir",
)
