"""inspect tools with pi's semantics: read (per read variant), bash, edit, write, grep.

Pure pi semantics live in readbench.tools.pi; these modules are the sandbox adapters.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # keep `import readbench.tools.pi` free of inspect and of readbench.read
    from inspect_ai.tool import Tool

    from readbench.read import ReadVariant


def make_tools(variant: ReadVariant) -> list[Tool]:
    """The tool set of one arm, in pi's order: read, bash, edit, write, grep.

    Only `read` (and claude-code's paired edit rule) differ between arms (variants.md, "Shared
    by all variants").
    """
    from readbench.tools.bash import bash_tool
    from readbench.tools.edit import edit_tool, write_tool
    from readbench.tools.grep import grep_tool
    from readbench.tools.read import read_tool

    return [read_tool(variant), bash_tool(), edit_tool(variant), write_tool(), grep_tool()]
