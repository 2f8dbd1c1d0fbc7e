"""The inspect `grep` tool: ripgrep in the sandbox, formatted as pi 0.84.1 does
(docs/specs/pi-tools.md §3.2; formatting in readbench.tools.pi.grep)."""

from __future__ import annotations

import json

from inspect_ai.tool import Tool, ToolDef, ToolError
from inspect_ai.util import sandbox

from readbench.base import store as rbstore
from readbench.tools._env import isolated
from readbench.tools._paths import absolute
from readbench.tools.pi.grep import format_grep, path_not_found_text, rg_argv

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
        literal: bool | None = None, context: float | None = None, limit: float | None = None,
    ) -> str:
        args = {"pattern": pattern, "path": path, "glob": glob, "ignoreCase": ignoreCase,
                "literal": literal, "context": context, "limit": limit}
        call_id = rbstore.claim_call_id("grep", args)
        ws = rbstore.workspace()
        search = absolute(ws["cwd"], path or ".")
        probe = await sandbox().exec(isolated(
            ["bash", "-c", 'if [ -d "$1" ]; then echo d; elif [ -e "$1" ]; then echo f; fi', "_", search], ws["env"]
        ))
        kind = probe.stdout.strip()
        if not kind:
            raise ToolError(path_not_found_text(search))
        argv = rg_argv(pattern, search, glob=glob, ignore_case=bool(ignoreCase), literal=bool(literal), rg=ws["rg"])
        res = await sandbox().exec(isolated(argv, ws["env"]), timeout=120)
        files = await _files_for_context(res.stdout) if (context or 0) > 0 or '"bytes"' in res.stdout else {}
        out = format_grep(res.stdout, search_path=search, is_dir=(kind == "d"), limit=limit, context=context,
                          rg_exit_code=res.returncode, rg_stderr=res.stderr, read_file=files.get)
        rbstore.set_details(call_id, {"pattern": pattern, "path": search})
        if out.is_error:
            raise ToolError(out.text)
        return out.text

    return ToolDef(execute, name="grep", description=DESCRIPTION, parameters=PARAMS, max_output=0).as_tool()


async def _files_for_context(rg_stdout: str) -> dict[str, bytes | None]:
    """Bytes of every file with a match: pi re-reads them for context lines (pi-tools.md §3.2)."""
    paths = set()
    for line in rg_stdout.splitlines():
        try:
            event = json.loads(line)
        except ValueError:
            continue
        if event.get("type") == "match":
            text = (event.get("data", {}).get("path") or {}).get("text")
            if text:
                paths.add(text)
    files: dict[str, bytes | None] = {}
    for file_path in sorted(paths):
        try:
            files[file_path] = await sandbox().read_file(file_path, text=False)
        except (FileNotFoundError, IsADirectoryError, PermissionError):
            files[file_path] = None
    return files

