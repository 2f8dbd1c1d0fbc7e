"""The inspect `edit` and `write` tools with pi 0.84.1 semantics (docs/specs/pi-tools.md §3.4, §4).

Matching rules and every message come from readbench.tools.pi.edit; this adapter does the
sandbox I/O, tells the ReadSession that the file changed, and enforces claude-code's
read-before-edit rule when the read variant asks for it (docs/specs/variants.md).
"""

from __future__ import annotations

from typing import Any

from inspect_ai.tool import Tool, ToolDef, ToolError
from inspect_ai.util import sandbox

from readbench.base import store as rbstore
from readbench.read import ReadVariant
from readbench.tools._paths import absolute, pi_path
from readbench.tools.pi._edit_match import PiEditError
from readbench.tools.pi.edit import apply_edits, missing_file_text, normalize_edit_args
from readbench.tools.pi.write import write_success_text
from readbench.tools.read import EISDIR_TEXT, load_session, save_session

EDIT_DESCRIPTION = (
    "Edit a single file using exact text replacement. Every edits[].oldText must match a unique, "
    "non-overlapping region of the original file. If two changes affect the same block or nearby "
    "lines, merge them into one edit instead of emitting overlapping edits. Do not include large "
    "unchanged regions just to connect distant changes."
)
WRITE_DESCRIPTION = (
    "Write content to a file. Creates the file if it doesn't exist, overwrites if it does. "
    "Automatically creates parent directories."
)
#: claude-code's refusal text (variants.md, claude-code).
NOT_READ_TEXT = "File has not been read yet. Read it first before writing to it."


def _file_key(path: str) -> str:
    """The ReadSession key of ``path``: its absolute sandbox path, as readbench.tools.read uses."""
    return absolute(rbstore.workspace()["cwd"], path)


def _note_changed(path: str) -> None:
    session = load_session()
    session.note_file_changed(_file_key(path))
    save_session(session)


def edit_tool(variant: ReadVariant) -> Tool:
    """Build pi's `edit` tool; paired with ``variant`` for claude-code's read-before-edit rule."""

    async def execute(path: str, edits: list[dict[str, Any]]) -> str:
        call_id = rbstore.claim_call_id("edit", {"path": path, "edits": edits})
        if variant.requires_read_before_edit and not load_session().has_read(_file_key(path)):
            raise ToolError(NOT_READ_TEXT)
        try:
            args = normalize_edit_args({"path": path, "edits": edits})
        except PiEditError as ex:
            raise ToolError(str(ex))
        try:
            data = await sandbox().read_file(pi_path(path), text=False)
        except FileNotFoundError:
            raise ToolError(missing_file_text(path))
        except IsADirectoryError:
            raise ToolError(EISDIR_TEXT)
        outcome = apply_edits(data, path, args)
        if outcome.error_text is not None:
            rbstore.set_details(call_id, {"path": path, "applied": False})
            raise ToolError(outcome.error_text)
        assert outcome.new_content is not None and outcome.success_text is not None  # set when no error_text
        await sandbox().write_file(pi_path(path), outcome.new_content)
        _note_changed(path)
        rbstore.set_details(call_id, {"path": path, "applied": True, "blocks": outcome.n_blocks})
        return outcome.success_text

    return ToolDef(
        execute, name="edit", description=EDIT_DESCRIPTION,
        parameters={
            "path": "Path to the file to edit (relative or absolute)",
            "edits": "One or more targeted replacements, each {oldText, newText}, matched against the original file",
        },
        max_output=0,
    ).as_tool()


def write_tool() -> Tool:
    """Build pi's `write` tool (success text of pi 0.84.1)."""

    async def execute(path: str, content: str) -> str:
        call_id = rbstore.claim_call_id("write", {"path": path, "content": content})
        await sandbox().write_file(pi_path(path), content)
        _note_changed(path)
        rbstore.set_details(call_id, {"path": path, "bytes": len(content.encode())})
        return write_success_text(content, path)

    return ToolDef(
        execute, name="write", description=WRITE_DESCRIPTION,
        parameters={"path": "Path to the file to write (relative or absolute)",
                    "content": "Content to write to the file"},
        max_output=0,
    ).as_tool()
