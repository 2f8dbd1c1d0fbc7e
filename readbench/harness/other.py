"""Tool names of other coding agents readbench has no session format for (Cline, Cursor, Gemini CLI,
VS Code agents and the like), as they appear in sessions that reach readbench through another
format. Their exact sources were not recorded when they were added; they are kept so such calls are
classified as before (a read, a file change, a search), and each can move to its own harness
module when its facts are checked."""

from readbench.harness._record import Harness, ReadTool

HARNESS = Harness(
    name="other",
    title="other agents' tool names",
    origin="unverified: tool names seen in other agents' sessions",
    read_tools=(ReadTool("read_file", "path"), ReadTool("view", "path")),
    edit_tools=("create_file", "write_file", "edit_file", "replace"),
    search_tools=("search", "find_in_files", "rg"),
    path_keys=("filePath", "target_file", "file"),
    read_preset=None,
    sessions="",
)
