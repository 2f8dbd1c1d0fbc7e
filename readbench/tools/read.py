"""The inspect `read` tool: sandbox I/O around a pure read variant (readbench.read).

The variant decides every byte the model sees (docs/specs/variants.md); this adapter only
fetches the file from the sandbox, turns missing files and directories into pi's error texts
(docs/specs/pi-tools.md §1.4), keeps the per-sample ReadSession in the store, and files the
result's structured details for the metrics.
"""

from __future__ import annotations

from inspect_ai.tool import Tool, ToolDef, ToolError
from inspect_ai.util import sandbox, store

from readbench.base import store as rbstore
from readbench.read import ReadSession, ReadVariant
from readbench.tools._paths import absolute, pi_path

#: Parameter descriptions as pi 0.84.1 sends them (pi-tools.md §1.1).
READ_PARAMS = {
    "path": "Path to the file to read (relative or absolute)",
    "offset": "Line number to start reading from (1-indexed)",
    "limit": "Maximum number of lines to read",
}


def enoent_text(abs_path: str) -> str:
    """pi's missing-file error (pi-tools.md §1.4)."""
    return f"ENOENT: no such file or directory, access '{abs_path}'"


EISDIR_TEXT = "EISDIR: illegal operation on a directory, read"


def as_line_number(value: float | int | None) -> int | None:
    """JSON numbers to the integers the variants take; a fraction truncates as JS ``slice`` does
    (pi-tools.md §1.1)."""
    return None if value is None else int(value)


def load_session() -> ReadSession:
    """The sample's ReadSession from the store (a fresh one on first use)."""
    data = store().get(rbstore.READ_SESSION)
    return ReadSession() if data is None else ReadSession.from_dict(data)


def save_session(session: ReadSession) -> None:
    """Persist the sample's ReadSession in the store."""
    store().set(rbstore.READ_SESSION, session.to_dict())


def read_tool(variant: ReadVariant) -> Tool:
    """Build the `read` tool for one read variant.

    Args:
        variant: the preset (its ``tool_description`` is the description the model sees).

    Returns:
        An inspect Tool named ``read`` with pi's schema ``{path, offset?, limit?}`` and inspect's
        own output truncation off (``max_output=0``: the variant's caps are the experiment).
    """

    async def execute(path: str, offset: float | None = None, limit: float | None = None) -> str:
        args = {"path": path, "offset": offset, "limit": limit}
        call_id = rbstore.claim_call_id("read", args)
        ws = rbstore.workspace()
        abs_path = absolute(ws["cwd"], path)
        try:
            data = await sandbox().read_file(pi_path(path), text=False)
        except FileNotFoundError:
            rbstore.set_details(call_id, {"path": path, "offset": offset, "limit": limit, "error": "ENOENT"})
            raise ToolError(enoent_text(abs_path))
        except IsADirectoryError:
            rbstore.set_details(call_id, {"path": path, "offset": offset, "limit": limit, "error": "EISDIR"})
            raise ToolError(EISDIR_TEXT)
        session = load_session()
        result = variant.read(
            data, path, as_line_number(offset), as_line_number(limit), call_id=call_id, session=session,
            visible_call_ids=rbstore.visible_call_ids(), file_key=abs_path,
        )
        save_session(session)
        rbstore.set_details(call_id, result.details.to_dict())
        if result.is_error:
            raise ToolError(result.text)
        return result.text

    return ToolDef(
        execute, name="read", description=variant.tool_description,
        parameters=READ_PARAMS, max_output=0,
    ).as_tool()
