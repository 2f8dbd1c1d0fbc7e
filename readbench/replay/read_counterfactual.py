"""First-order counterfactual of read variants on a recorded session (issue 14 item 2).

For every read-tool call of the session (pi's `read`, Claude Code's `Read`, ...), what each preset
of the registry (`readbench.read.registry.list_presets`, user presets included) would have
returned, and what that changes in every later request. **First order**: the model's reaction to
a different result (another read, a grep, a different answer) is not replayed; the recorded
calls, outputs and times stay as they are, only the read results inside the requests change.

One path for every preset: the file a read saw is rebuilt from the session itself
(`readbench.sessions.file_ops.track_versions`: every line any read of that file version
delivered, its line count), with each line no read delivered left empty, and the preset's own
`read` is run on it, call by call, with one `ReadSession` per preset carrying dedup and map
state (a new file version counts as a change of the file). The preset's result is **replayable**
when it depends only on what the session recorded:
- every line it returns was delivered by some read of that version (an empty stand-in never
  reaches a result), and
- it carries no structural map (C, swe-agent) unless every line of the file is known (a map
  reads the whole file), and does not point at a map that could not be rebuilt (C's later cuts
  of that file version say "the map was shown in call X").
A cut or a refusal on the rebuilt file is forced on the real one: unknown lines are at least as
long as their empty stand-ins, so a cap hit before them is hit in the real file too, and a read
refused for its size stays refused. The file size in such a message (B's "File has N lines
(212.4KB)", claude-code's token count) is taken from a second rebuild whose unknown lines have
the mean length of the known ones. Reads whose result cannot be replayed keep their recorded
result, and are counted per preset with the reason:
- `lines_not_recorded`: the preset would return lines no read delivered (nocap after a cut);
- `map_needs_whole_file`: C's or swe-agent's map of a file the session never read in full;
- `line_count_unknown`: no read of that file version said how long it is;
- `no_recorded_lines`: the recorded result holds no file lines to rebuild from (an error, an image);
- `preset_error`: the preset refused the arguments (a TypeError/ValueError, named).
B+dedup's stub needs the earlier result "still in view": the read's own request (what the model
saw last) must hold the tool result the stub points at; a compaction that dropped it means no stub.
Shell reads (`sed -n`, `cat`, ...) are not read-tool calls: they stay as recorded under every
preset (their lines still help rebuild files). The tool descriptions and system prompt lines of a
preset are not recorded by the harnesses and are not changed either.

The replaced requests are simulated with the bill's calibration, per cache model, exactly as the
DCP replay is (`readbench.replay.arms.ArmSimulator`); a preset that changes no result costs what
the recorded session costs, without a simulation.
"""

from __future__ import annotations

import re
import statistics
from dataclasses import dataclass, field
from typing import Any

from inspect_ai.model import ChatMessage, ChatMessageTool
from inspect_ai.tool import ToolCallError

from readbench.read._session import ReadSession
from readbench.read.registry import list_presets
from readbench.sessions import Session
from readbench.sessions.file_ops import FileVersion
from readbench.sessions.reads import ReadCall

__all__ = ["FIRST_ORDER_NOTE", "READ_ARM_COLUMNS", "READ_ARM_READ_COLUMNS", "ReadArms", "arm_requests", "read_arms",
           "replay_read_variants"]

#: The label every output of this replay carries.
FIRST_ORDER_NOTE = ("first-order: each read's result is replaced by what the preset would have returned; "
                    "the model's reaction to a different result is not replayed")

#: Columns of read_arms.parquet: one row per session x preset x cache model.
READ_ARM_COLUMNS: dict[str, str] = {
    "file": "string", "session_id": "string", "format": "string", "harness": "string", "preset": "string",
    "cache_model": "string", "priced_as_recorded": "bool", "primary": "bool", "first_order": "bool", "reads": "int64",
    "reads_same": "int64", "reads_changed": "int64", "reads_notice_only": "int64", "reads_not_replayable": "int64",
    "reads_unsent": "int64", "blocked": "int64", "stubbed": "int64", "capped": "int64", "mapped": "int64", "result_tokens_delta": "int64",
    "input_tokens": "int64", "input_tokens_delta": "int64", "sim_cost_usd": "float64", "cost_delta_usd": "float64",
    "billed_cost_usd": "float64",
}
#: Columns of read_arm_reads.parquet: one row per read-tool call x preset.
READ_ARM_READ_COLUMNS: dict[str, str] = {
    "file": "string", "session_id": "string", "preset": "string", "call": "int64", "tool_call_id": "string",
    "path": "string", "outcome": "string", "reason": "string", "blocked": "bool", "stubbed": "bool",
    "capped": "bool", "mapped": "bool", "recorded_tokens": "int64", "counterfactual_tokens": "int64",
}


@dataclass
class ReadArms:
    """What each preset would have returned, per read (module docstring).

    Attributes:
        replaced: preset -> {tool_call_id: the replacement tool message} (only changed results).
        counts: preset -> {reads, reads_same, reads_changed, reads_notice_only (changed only in
            the notice's wording), reads_not_replayable, reads_unsent, blocked, stubbed, capped,
            mapped, result_tokens_delta}.
        reads: one dict per read x preset (the columns of `read_arm_reads.parquet`).
    """

    replaced: dict[str, dict[str, ChatMessageTool]] = field(default_factory=dict)
    counts: dict[str, dict[str, int]] = field(default_factory=dict)
    reads: list[dict[str, Any]] = field(default_factory=list)


_COUNT_KEYS = ("reads", "reads_same", "reads_changed", "reads_notice_only", "reads_not_replayable", "reads_unsent",
               "blocked", "stubbed", "capped", "mapped", "result_tokens_delta")
_NOTICE = re.compile(r"\n\n(?:\[[^\n]*\]|\.\.\. \([^\n]*\))$")


def _notice_only(recorded: str, replayed: str) -> bool:
    """Both texts end in a notice line (pi's `[...]`, or legacy pi's `... (...)`) and agree
    without it: the preset says the same in other words (e.g. another pi version's notice)."""
    a, b = _NOTICE.search(recorded), _NOTICE.search(replayed)
    return a is not None and b is not None and recorded[: a.start()] == replayed[: b.start()]


class _Worlds:
    """Rebuilt file texts per version: unknown lines empty (`min`) or of the known mean length."""

    def __init__(self) -> None:
        self._min: dict[int, bytes] = {}
        self._mean: dict[int, bytes] = {}

    def min(self, v: FileVersion) -> bytes:
        hit = self._min.get(id(v))
        if hit is None:
            hit = self._min[id(v)] = (v.text(0) or "").encode()
        return hit

    def mean(self, v: FileVersion) -> bytes:
        hit = self._mean.get(id(v))
        if hit is None:
            width = round(statistics.fmean(len(t) for t in v.lines.values())) if v.lines else 0
            hit = self._mean[id(v)] = (v.text(width) or "").encode()
        return hit


def _visible(session: Session, call_index: int) -> frozenset[str]:
    """Tool-call ids of the tool results in the request call `call_index` sent."""
    return frozenset(m.tool_call_id for m in session.request(call_index)
                     if isinstance(m, ChatMessageTool) and m.tool_call_id)


def _message(orig: ChatMessageTool, text: str, is_error: bool) -> ChatMessageTool:
    return ChatMessageTool(content=text, tool_call_id=orig.tool_call_id, function=orig.function,
                           error=ToolCallError("unknown", text) if is_error else None)


def read_arms(session: Session, tracked: list[tuple[ReadCall, FileVersion, list[str] | None, bool]],
              results: dict[str, ChatMessageTool], token_count: Any, presets: list[str] | None = None) -> ReadArms:
    """Every preset's result for every read-tool call of `session` (module docstring).

    Args:
        session: the imported session.
        tracked: `readbench.sessions.file_ops.track_versions(...)[0]` for the session.
        results: the session's tool results by tool-call id (`readbench.sessions.reads.tool_results`).
        token_count: `message -> tokens` (the session's RequestBuilder count, e.g.
            `lambda m: builder.message_tokens(m, family)`).
        presets: preset names; None = every registered preset.

    Raises:
        ValueError: an unknown preset name.
    """
    registry = {p.name: p for p in list_presets()}
    names = list(registry) if presets is None else presets
    for n in names:
        if n not in registry:
            raise ValueError(f"unknown read variant {n!r}; valid: {list(registry)}")
    worlds = _Worlds()
    visible: dict[int, frozenset[str]] = {}
    out = ReadArms()
    # read by read, every preset in turn (each preset keeps its own memory): the file version a
    # read saw is rebuilt, parsed (`readbench.read._outline`'s memo) and tokenised once for all
    # presets; the rows are then listed preset by preset, in the order of `names`
    arms = [_PresetArm(registry[name].build()) for name in names]
    for r, v, lines, new_version in tracked:
        if r.via_shell:
            for arm in arms:
                if new_version and v.index > 0:
                    arm.memory.note_file_changed(v.key)
            continue
        orig = results.get(r.tool_call_id)
        if r.call_index not in visible:
            visible[r.call_index] = _visible(session, r.call_index)
        for name, arm in zip(names, arms):
            if new_version and v.index > 0:
                arm.memory.note_file_changed(v.key)
            arm.reads.append(_read_row(session, name, arm, worlds, r, v, lines, visible[r.call_index], orig, token_count))
    for name, arm in zip(names, arms):
        out.reads.extend(arm.reads)
        out.replaced[name] = arm.replaced
        out.counts[name] = arm.counts
    return out


class _PresetArm:
    """One preset's state through `read_arms`: its read variant and memory, counts, replaced
    results, the reads whose map could not be rebuilt, and its rows."""

    def __init__(self, variant: Any) -> None:
        self.variant = variant
        self.memory = ReadSession()
        self.counts = dict.fromkeys(_COUNT_KEYS, 0)
        self.replaced: dict[str, ChatMessageTool] = {}
        self.no_map: set[tuple[int, int | None, int | None]] = set()
        self.lost: set[str] = set()  # calls whose map could not be rebuilt
        self.reads: list[dict[str, Any]] = []


def _read_row(session: Session, name: str, arm: _PresetArm, worlds: _Worlds, r: ReadCall, v: FileVersion,
              lines: list[str] | None, visible: frozenset[str], orig: ChatMessageTool | None,
              token_count: Any) -> dict[str, Any]:
    """One read-tool call under one preset: its row of read_arm_reads.parquet, with the preset's
    counts, replaced results and memory updated."""
    memory, counts = arm.memory, arm.counts
    counts["reads"] += 1
    kept, maps = len(memory.records), dict(memory._maps)
    key = (id(v), r.offset, r.limit)
    if key in arm.no_map:  # the same read of the same file state needed the same unrecorded map
        outcome, reason, res = "not_replayable", "map_needs_whole_file", None
    else:
        outcome, reason, res = _serve(arm.variant, memory, worlds, r, v, lines, visible, arm.lost)
    if res is None:  # the recorded result stays: so does the memory of what was read
        memory.records[kept:] = []
        if reason == "map_needs_whole_file":
            arm.no_map.add(key)
            arm.lost.add(r.tool_call_id)  # the map counts as shown: later cuts point at a map nobody saw
        else:
            memory._maps = maps
    row = {"file": session.source, "session_id": session.session_id, "preset": name, "call": r.call_index,
           "tool_call_id": r.tool_call_id, "path": r.path, "outcome": outcome, "reason": reason,
           "blocked": False, "stubbed": False, "capped": False, "mapped": False,
           "recorded_tokens": token_count(orig) if orig is not None else 0, "counterfactual_tokens": None}
    if res is not None:
        d = res.details
        row.update(blocked=d.blocked, stubbed=d.stubbed, capped=d.capped, mapped=d.mapped)
        for k in ("blocked", "stubbed", "capped", "mapped"):
            counts[k] += bool(getattr(d, k))
    if orig is None:
        row["outcome"] = outcome = "unsent"
    elif res is not None:
        same = res.text == orig.text and res.is_error == (orig.error is not None)
        if same:
            outcome = "same"
            row["counterfactual_tokens"] = row["recorded_tokens"]
        else:
            outcome = "changed"
            counts["reads_notice_only"] += _notice_only(orig.text, res.text)
            msg = _message(orig, res.text, res.is_error)
            arm.replaced[r.tool_call_id] = msg
            row["counterfactual_tokens"] = token_count(msg)
            counts["result_tokens_delta"] += row["counterfactual_tokens"] - row["recorded_tokens"]
        row["outcome"] = outcome
    counts[{"same": "reads_same", "changed": "reads_changed", "unsent": "reads_unsent"}.get(
        outcome, "reads_not_replayable")] += 1
    return row


def _serve(variant: Any, memory: ReadSession, worlds: _Worlds, r: ReadCall, v: FileVersion,
           lines: list[str] | None, visible: frozenset[str], lost: set[str]) -> tuple[str, str, Any]:
    """(outcome, reason, result) of one read under one preset; result None when not replayable."""
    if r.first_line is None or (lines is None and not v.lines):
        return "not_replayable", "no_recorded_lines", None
    if v.line_count is None:
        return "not_replayable", "line_count_unknown", None
    try:
        res = variant.read(worlds.min(v), r.path, r.offset, r.limit, call_id=r.tool_call_id, session=memory,
                           visible_call_ids=visible, file_key=v.key)
    except (TypeError, ValueError) as exc:
        return "not_replayable", f"preset_error: {exc}", None
    d = res.details
    if any(k not in v.lines for a, b in d.line_ranges for k in range(a, b + 1)):
        return "not_replayable", "lines_not_recorded", None
    if (d.mapped and not v.full) or (d.map_call is not None and d.map_call in lost):
        return "not_replayable", "map_needs_whole_file", None
    if d.blocked and not v.full:  # the message states the file's size: take it from the mean rebuild
        alt = variant.read(worlds.mean(v), r.path, r.offset, r.limit, call_id=r.tool_call_id, session=ReadSession(),
                           visible_call_ids=None, file_key=v.key)
        if alt.details.blocked:
            res = type(res)(alt.text, res.is_error, d)
    return "replayable", "", res


def arm_requests(session: Session, replaced: dict[str, ChatMessageTool]) -> list[list[ChatMessage]]:
    """Each call's request with the tool results in `replaced` (by tool-call id) swapped in; the
    other message objects are the recorded ones (so the simulator shares their renderings)."""
    contexts = [[replaced.get(m.tool_call_id, m) if isinstance(m, ChatMessageTool) and m.tool_call_id else m for m in ctx]
                for ctx in session.contexts]
    return [contexts[c.context][: c.n_messages] for c in session.calls]


def replay_read_variants(session: Session, arms: Any, read_arms_: ReadArms, cache_models: list[str],
                         token_count: Any) -> list[dict[str, Any]]:
    """The rows of `read_arms.parquet` for one session: each preset's replaced requests simulated
    by `arms` (the session's `readbench.replay.arms.ArmSimulator`) under those of `cache_models`
    that price the session as recorded (its own provider's; the first of `cache_models` when none
    does: a read variant priced at another provider's model would be a what-if on a what-if), with
    the change against the recorded requests (module docstring). `primary` marks the row of the
    first such cache model, one per preset. `token_count`: as for `read_arms`."""
    rows: list[dict[str, Any]] = []
    own = [c for c in arms.cache_models if c in cache_models and arms.priced_as_recorded(c)]
    caches = own or [c for c in arms.cache_models if c in cache_models][:1]
    done: dict[tuple, list[Any]] = {}
    for name, replaced in read_arms_.replaced.items():
        # two presets whose replacements have the same size at the same places price the same
        # (the cache sees the same prefix structure): simulate one of them
        sig = tuple(sorted((k, token_count(m)) for k, m in replaced.items()))
        if sig not in done:
            done[sig] = arms.run(arm_requests(session, replaced), caches) if replaced else arms.run(None, caches)
        results = done[sig]
        primary = next((r.cache_model for r in results if r.priced_as_recorded), None)
        for r in results:
            off = arms.off(r.cache_model)
            rows.append({
                "file": session.source, "session_id": session.session_id, "format": session.format,
                "harness": session.harness, "preset": name, "cache_model": r.cache_model,
                "priced_as_recorded": r.priced_as_recorded, "primary": r.cache_model == primary, "first_order": True,
                **read_arms_.counts[name], "input_tokens": r.input_tokens,
                "input_tokens_delta": r.input_tokens - off.input_tokens, "sim_cost_usd": r.cost_usd,
                "cost_delta_usd": r.cost_usd - off.cost_usd,
                "billed_cost_usd": arms.billed_cost_usd if r.priced_as_recorded else float("nan"),
            })
    return rows
