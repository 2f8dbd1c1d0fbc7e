"""pi-dcp's per-message columns of a growing history, shared by configurations (`_fast_pidcp`).

docs/specs/dcp.md §1 (steps), §2.1 (dedup signature), §4 (static and frontier protection).
Everything `PiSeq` needs that is a fact of one message, or of one message and those before it,
depends on only four parameters: `cwd` (path resolution), `protected_tools` and
`protected_file_patterns` (static protection) and `deduplicate` (whether signatures are kept).
`PiColumns` computes those facts once per history for every configuration that agrees on the
four (`PiColumns.key`); the session replay (`readbench.dcp._many`) shares one between the four
pi-dcp presets, and `project`'s cache gives each `PiSeq` its own. The parameter-dependent rest
(supersedeWrites' columns, the per-call evaluation) stays in `PiSeq`.

Append-only logs carry what a `PiSeq` must learn after the fact: `dup_flips` (result ordinals
whose "a later result has the same signature" flag turned true, in order) and `call_log` (every
tool call with its assistant position and static protection, for supersedeWrites).
"""

from __future__ import annotations

import functools
from typing import Any

from inspect_ai.model import ChatMessage, ChatMessageTool
from inspect_ai.tool import ToolCall

from readbench.dcp._fast_steps import StepSeq
from readbench.dcp._glob import glob_to_regex
from readbench.dcp._params import PiDcpParams
from readbench.dcp._pidcp_run import is_dcp_placeholder
from readbench.dcp._protection import _path_info, _plan_like, is_verification_command, verification_outcome
from readbench.dcp._seq import text_only
from readbench.dcp._view import blocks, calls_of
from readbench.dcp.strategies.deduplicate import signature_once

__all__ = ["PiColumns", "path_info"]


@functools.lru_cache(maxsize=4096)
def _path_info_of(path: str | None, file: str | None, cwd: str | None) -> Any:
    return _path_info({"path": path, "file": file}, cwd)


def path_info(args: Any, cwd: str | None) -> Any:
    """`_protection._path_info` memoised on the string values it reads (a pure function of them)."""
    if not isinstance(args, dict):
        return None
    path, file = args.get("path"), args.get("file")
    return _path_info_of(path if isinstance(path, str) else None, file if isinstance(file, str) else None, cwd)


class PiColumns(StepSeq):
    """The parameter-independent pi-dcp columns of one growing history (module docstring).

    Per result ordinal: `r_cid`, `r_name`, `r_args`, `r_static` (tool or file protected),
    `r_err`, `r_ph` (already a DCP placeholder), `r_images` (image blocks), `r_dup_later`.
    `ok` is False once the history is not well formed (`_fast_pidcp` module docstring).
    """

    def __init__(self, params: PiDcpParams) -> None:
        super().__init__()
        self.cwd = params.cwd
        self.protected_tools = params.protected_tools
        self.dedup = params.deduplicate
        self.ok = True
        self.globs = [glob_to_regex(g.strip().replace("\\", "/")) for g in params.protected_file_patterns if g.strip()]
        # calls: id -> (function, arguments, path info)
        self.calls: dict[str, tuple[str, Any, Any]] = {}
        self.answered: set[str] = set()
        self.call_log: list[tuple[int, ToolCall, bool]] = []
        # per result ordinal
        self.r_cid: list[str] = []
        self.r_name: list[str] = []
        self.r_args: list[Any] = []
        self.r_static: list[bool] = []
        self.r_err: list[bool] = []
        self.r_ph: list[bool] = []
        self.r_images: list[int] = []
        self.r_dup_later: list[bool] = []
        self.r_ord: dict[str, int] = {}
        self.last_sig: dict[str, int] = {}
        self.dup_flips: list[int] = []
        # frontier pins (dcp.md §4)
        self.modified: set[str] = set()
        self.read_of_modified: dict[str, str] = {}
        self.plan_reads: dict[str, str] = {}
        self.failing: str | None = None
        self.passing: str | None = None
        self._segmented = -1

    @staticmethod
    def key(params: PiDcpParams) -> tuple[Any, ...]:
        """The parameters the columns depend on: configurations with equal keys can share them."""
        return (params.cwd, params.protected_tools, params.protected_file_patterns, params.deduplicate)

    def segment(self) -> None:
        """`StepSeq.segment`, skipped when nothing was appended since the last segmentation (it
        is a function of the consumed messages, so sharing configurations call it once)."""
        if self._segmented != len(self.roles):
            super().segment()
            self._segmented = len(self.roles)

    def add(self, pos: int, msg: ChatMessage, role: str) -> None:
        """Record the message at view position `pos` (see the module docstring)."""
        self.step_idx.append(-1)
        if role != "assistant":
            self.call_ids.append(None)
            self.text_only.append(False)
        if role == "user":
            self.rcid.append(None)
            return
        if role == "assistant":
            self.rcid.append(None)
            calls = calls_of(msg)
            ids = frozenset(c.id for c in calls)
            self.call_ids.append(ids if calls else None)
            self.text_only.append(text_only(msg))
            if len(ids) != len(calls):
                self.ok = False
            for c in calls:
                if c.id in self.calls:
                    self.ok = False
                info = path_info(c.arguments, self.cwd)
                self.calls[c.id] = (c.function, c.arguments, info)
                self.call_log.append((pos, c, c.function in self.protected_tools or self._file_protected(info)))
                if c.function in ("write", "edit") and info and info.primary:
                    self.modified.add(info.primary)
            return
        assert isinstance(msg, ChatMessageTool)  # role "toolResult"
        cid = msg.tool_call_id
        self.rcid.append(cid)
        if cid is None or cid not in self.calls or cid in self.answered:
            self.ok = False
            cid = cid or ""
        self.answered.add(cid)
        function, args, info = self.calls.get(cid, ("", None, None))
        name = msg.function or function
        err = msg.error is not None
        k = len(self.r_cid)
        self.r_cid.append(cid)
        self.r_name.append(name)
        self.r_args.append(args)
        self.r_static.append(name in self.protected_tools or self._file_protected(info))
        self.r_err.append(err)
        self.r_ph.append(is_dcp_placeholder(msg.content))
        self.r_images.append(sum(1 for kind, _ in blocks(msg.content) if kind == "image"))
        self.r_dup_later.append(False)
        self.r_ord[cid] = k
        if self.dedup and args is not None:
            sig = signature_once(name, args)
            prev = self.last_sig.get(sig)
            if prev is not None:
                self.r_dup_later[prev] = True
                self.dup_flips.append(prev)
            self.last_sig[sig] = k
        if name == "read" and info and info.primary in self.modified:
            self.read_of_modified[info.primary] = cid
        if name == "read" and info and info.primary and _plan_like(info):
            self.plan_reads[info.primary] = cid
        if name == "bash" and isinstance(args, dict) and is_verification_command(args.get("command")):
            if verification_outcome(msg.content, err) == "fail":
                self.failing = cid
            else:
                self.passing = cid

    def _file_protected(self, info: Any) -> bool:
        return info is not None and any(g.fullmatch(c) for g in self.globs for c in info.candidates)
