"""SWE-agent: its file tool `str_replace_editor` (`view`, `create`, `str_replace`, `insert`,
`undo_edit`; anchors.md §1, variants.md "swe-agent") and `bash`. A `view` shows a file (readbench's
`swe-agent` preset) and changes nothing. readbench imports no SWE-agent trajectory format: these
facts classify its tools where they appear in another session."""

from readbench.harness._record import Harness, ShellTool

HARNESS = Harness(
    name="swe-agent",
    title="SWE-agent",
    origin="SWE-agent str_replace_editor (anchors.md §1; variants.md \"swe-agent\")",
    shell_tools=(ShellTool("bash"),),
    edit_tools=("str_replace_editor",),
    view_commands={"str_replace_editor": ("view",)},
    path_keys=("path",),
    read_preset="swe-agent",
    sessions="",
)
