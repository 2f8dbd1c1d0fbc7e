"""The inspect `grep` tool: ripgrep in the sandbox, formatted as pi 0.84.1 does
(shared/specs/pi-tools.md §3.2; formatting in readbench.tools.pi.grep)."""

from __future__ import annotations

from inspect_ai.tool import Tool, ToolDef, ToolError
from inspect_ai.util import sandbox

from readbench.agent import context
from readbench.tools._paths import absolute, pi_path
from readbench.tools.pi.grep import format_grep, rg_argv

DESCRIPTION = (
    "Search file contents for a pattern. Returns matching lines with file paths and line numbers. "
    "Respects .gitignore. Output is truncated to 100 matches or 50KB (whichever is hit first). "
    "Long lines are truncated to 500 chars."
)
PARAMS = {
    "pattern": "Search pattern (regex or literal string)",
    "path": "Directory or file to search (default: current directory)",
    "glob": "Filter files by glob pattern, e.g. '*.ts' or '**/*.spec.ts'",
    "ignoreCase": "Case-insensitive search (default: false)",
    "literal": "Treat pattern as literal string instead of regex (default: false)",
    "context": "Number of lines to show before and after each match (default: 0)",
    "limit": "Maximum number of matches to return (default: 100)",
}


def grep_tool() -> Tool:
    """Build pi's `grep` tool (active in readbench's tool set; pi-tools.md §2.2 notes it is
    inactive in pi's default set, so its prompt snippet is listed only because readbench offers it)."""

    async def execute(
        pattern: str, path: str | None = None, glob: str | None = None, ignoreCase: bool | None = None,
        literal: bool | None = None, context: int | None = None, limit: int | None = None,
    ) -> str:
        args = {"pattern": pattern, "path": path, "glob": glob, "ignoreCase": ignoreCase,
                "literal": literal, "context": context, "limit": limit}
        call_id = _ctx.claim_call_id("grep", args)
        ws = _ctx.workspace()
        search = pi_path(path or ".")
        probe = await sandbox().exec(["bash", "-c", 'if [ -d "$1" ]; then echo d; elif [ -e "$1" ]; then echo f; fi', "_", search])
        kind = probe.stdout.strip()
        if not kind:
            raise ToolError(f"Path not found: {absolute(ws['cwd'], search)}")
        argv = rg_argv(pattern, search, glob=glob, ignore_case=bool(ignoreCase), literal=bool(literal),
                       context=context or 0)
        res = await sandbox().exec([ws["rg"], *argv[1:]], env=ws["env"], timeout=120)
        text, is_error = format_grep(res.stdout, search_path=search, is_dir=(kind == "d"),
                                     limit=limit if limit else 100)
        _ctx.set_details(call_id, {"pattern": pattern, "path": search})
        if is_error:
            raise ToolError(text)
        return text

    return ToolDef(execute, name="grep", description=DESCRIPTION, parameters=PARAMS, max_output=0).as_tool()


_ctx = context  # the parameter named `context` (pi's schema) shadows the module inside execute
