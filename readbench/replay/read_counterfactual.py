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
**Against the session's own harness as recorded** (issue 29 item 2): the session's harness names
its own preset (`Harness.read_preset`: `stock` for pi, `claude-code` for Claude Code), which must
give each recorded read's result back byte for byte ("same"), so that another preset's change is
only what that preset changes. Two facts of a recorded result that are not the read tool's
mechanics are therefore taken from the recorded result itself (`readbench.read.notices.
numbered_frame`): the line-number style of a numbered result (Claude Code writes `{n:>6}→` in 2.0
and `{n}<TAB>` in later 2.1 versions; the preset's default is `{n:>6}<TAB>`), which every preset of
the own preset's family uses on that read; and the text the harness put around the listing
(Claude Code's memory-age reminder before it, its malware reminder after it), which every
preset's non-error result of that read keeps. `own` marks the own preset's rows.
Shell reads (`sed -n`, `cat`, ...) are not read-tool calls: they stay as recorded under every
preset (their lines still help rebuild files). The tool descriptions and system prompt lines of a
preset are not recorded by the harnesses and are not changed either.

The replaced requests are simulated with the bill's calibration, per cache model, exactly as the
DCP replay is (`readbench.replay.arms.ArmSimulator`); a preset that changes no result costs what
the recorded session costs, without a simulation.
"""

from __future__ import annotations

import dataclasses
import re
import statistics
from dataclasses import dataclass, field
from typing import Any

from inspect_ai.model import ChatMessage, ChatMessageTool
from inspect_ai.tool import ToolCallError

from readbench.base.js import utf16_len
from readbench.harness import read_preset, read_tool
from readbench.read._session import ReadSession
from readbench.read.notices import NUMBERED_LINE, NumberedFrame, numbered_frame
from readbench.read.registry import Preset, list_presets
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
    "own": "bool", "cache_model": "string", "priced_as_recorded": "bool", "primary": "bool", "first_order": "bool",
    "reads": "int64",
    "reads_same": "int64", "reads_changed": "int64", "reads_notice_only": "int64", "reads_not_replayable": "int64",
    "reads_unsent": "int64", "blocked": "int64", "stubbed": "int64", "capped": "int64", "mapped": "int64", "result_tokens_delta": "int64",
    "input_tokens": "int64", "input_tokens_delta": "int64", "sim_cost_usd": "float64", "cost_delta_usd": "float64",
    "billed_cost_usd": "float64",
}
#: Columns of read_arm_reads.parquet: one row per read-tool call x preset.
READ_ARM_READ_COLUMNS: dict[str, str] = {
    "file": "string", "session_id": "string", "preset": "string", "own": "bool", "call": "int64", "tool_call_id": "string",
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
        own: the session's own preset (its harness's `read_preset`), None when it has none.
    """

    replaced: dict[str, dict[str, ChatMessageTool]] = field(default_factory=dict)
    counts: dict[str, dict[str, int]] = field(default_factory=dict)
    reads: list[dict[str, Any]] = field(default_factory=list)
    own: str | None = None


_COUNT_KEYS = ("reads", "reads_same", "reads_changed", "reads_notice_only", "reads_not_replayable", "reads_unsent",
               "blocked", "stubbed", "capped", "mapped", "result_tokens_delta")
_NOTICE = re.compile(r"\n\n(?:\[[^\n]*\]|\.\.\. \([^\n]*\))$")


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


_BUDGET = re.compile(r"exceeds maximum allowed tokens \((\d+)\)")


def recorded_overrides(results: dict[str, ChatMessageTool], token_family: str | None,
                       numbered: list[NumberedFrame] | None = None) -> dict[str, Any]:
    """Parameters of the own preset's family that the session records rather than the preset:
    `token_family` (the session's tokenizer family: its model's, not the preset's default);
    `max_tokens` when every recorded token-budget error names the same budget (Claude Code 2.1.x
    sessions show `exceeds maximum allowed tokens (10000)` as well as 25000); `max_line_chars`
    = the longest line of the `numbered` results (JS length) when one is over the preset's
    2,000 (Claude Code 2.x delivered such lines whole: its cut is not applied)."""
    out: dict[str, Any] = {}
    if token_family:
        out["token_family"] = token_family
    # a row's text is part of the row and its JS length at most twice its length: rows of at most
    # 1,000 characters cannot hold a line over 2,000, so only a frame with a longer row is read
    # row by row (every frame of a session is otherwise parsed again here)
    longest = max((utf16_len(m.group("text")) for f in numbered or () if 2 * max(map(len, f.body.split("\n"))) > 2000
                   for row in f.body.split("\n") for m in [NUMBERED_LINE.match(row)] if m), default=0)
    if longest > 2000:
        out["max_line_chars"] = longest
    budgets = {int(m.group(1)) for msg in results.values() if msg.error is not None or msg.text.startswith("File content (")
               for m in [_BUDGET.search(msg.text[:300])] if m}
    if len(budgets) == 1:
        out["max_tokens"] = budgets.pop()
    return out


class _Variants:
    """One preset's variants: as registered, or, for a preset of the own preset's family, with the
    parameters the session records (`recorded_overrides`) and per recorded line-number style
    (only the parameters its family has)."""

    def __init__(self, preset: Preset, own_family: bool, overrides: dict[str, Any]) -> None:
        self.preset = preset
        fields = {f.name for f in dataclasses.fields(preset.family_class().Params)} if own_family else set()
        self.params = {**preset.params, **{k: v for k, v in overrides.items() if k in fields}}
        self.restyle = "line_numbers" in fields
        self.base = dataclasses.replace(preset, params=self.params).build()
        self._styled: dict[str, Any] = {}

    def for_frame(self, frame: NumberedFrame | None) -> Any:
        """The variant writing `frame`'s line-number style (the base one without a frame)."""
        if frame is None or not self.restyle:
            return self.base
        if frame.style not in self._styled:
            self._styled[frame.style] = dataclasses.replace(
                self.preset, params={**self.params, "line_numbers": frame.style}).build()
        return self._styled[frame.style]


def _frame(r: ReadCall, orig: ChatMessageTool | None) -> NumberedFrame | None:
    """The recorded result's numbered frame (style, harness prefix and suffix) for a numbered read
    tool's successful result; None otherwise."""
    tool = read_tool(r.tool)
    if orig is None or orig.error is not None or tool is None or not tool.numbered:
        return None
    return numbered_frame(orig.text)


def _visible(session: Session, call_index: int) -> frozenset[str]:
    """Tool-call ids of the tool results in the request call `call_index` sent."""
    return frozenset(m.tool_call_id for m in session.request(call_index)
                     if isinstance(m, ChatMessageTool) and m.tool_call_id)


def _message(orig: ChatMessageTool, text: str, is_error: bool) -> ChatMessageTool:
    return ChatMessageTool(content=text, tool_call_id=orig.tool_call_id, function=orig.function,
                           error=ToolCallError("unknown", text) if is_error else None)


class _Arm:
    """One preset's replay state over the session: its variants, read memory, counts,
    replacements and `read_arm_reads` rows."""

    def __init__(self, name: str, variants: _Variants) -> None:
        self.name = name
        self.variants = variants
        self.memory = ReadSession()
        self.counts = dict.fromkeys(_COUNT_KEYS, 0)
        self.replaced: dict[str, ChatMessageTool] = {}
        self.rows: list[dict[str, Any]] = []
        self.no_map: set[tuple[int, int | None, int | None]] = set()
        self.lost: set[str] = set()  # calls whose map could not be rebuilt


@dataclass
class _Read:
    """One read-tool call and what every preset's replay of it shares: the recorded result, its
    frame and token count, and the replacement messages made so far by text and error flag (two
    presets returning the same text share one message object, rendered and counted once)."""

    call: ReadCall
    version: FileVersion
    lines: list[str] | None
    orig: ChatMessageTool | None
    visible: frozenset[str]
    frame: NumberedFrame | None
    recorded_tokens: int
    messages: dict[tuple[str, bool], ChatMessageTool] = field(default_factory=dict)
    _notice: Any = None

    @property
    def key(self) -> tuple[int, int | None, int | None]:
        """The read of this file state (`_Arm.no_map`)."""
        return (id(self.version), self.call.offset, self.call.limit)

    def message(self, text: str, is_error: bool) -> ChatMessageTool:
        """The replacement of the recorded result by `text` (made once per text and flag)."""
        assert self.orig is not None
        msg = self.messages.get((text, is_error))
        if msg is None:
            msg = self.messages[(text, is_error)] = _message(self.orig, text, is_error)
        return msg

    def notice_only(self, replayed: str) -> bool:
        """Both the recorded text and `replayed` end in a notice line (pi's `[...]`, or legacy
        pi's `... (...)`) and agree without it: the preset says the same in other words (e.g.
        another pi version's notice). The recorded text is searched once for every preset."""
        assert self.orig is not None
        if self._notice is None:
            self._notice = (_NOTICE.search(self.orig.text),)
        a, b = self._notice[0], _NOTICE.search(replayed)
        return a is not None and b is not None and self.orig.text[: a.start()] == replayed[: b.start()]


def read_arms(session: Session, tracked: list[tuple[ReadCall, FileVersion, list[str] | None, bool]],
              results: dict[str, ChatMessageTool], token_count: Any, presets: list[str] | None = None,
              token_family: str | None = None) -> ReadArms:
    """Every preset's result for every read-tool call of `session` (module docstring).

    The reads are the outer loop and the presets the inner one (each preset keeps its own read
    memory, so the order changes no result): the presets serve a read one after the other, on
    the same rebuilt file object, so they share its decoding, line split, selection and cuts
    (`readbench.read._types.decoded`, `readbench.read._pi.select`) and their equal results one
    message (`_Read`).

    Args:
        session: the imported session.
        tracked: `readbench.sessions.file_ops.track_versions(...)[0]` for the session.
        results: the session's tool results by tool-call id (`readbench.sessions.reads.tool_results`).
        token_count: `message -> tokens` (the session's RequestBuilder count, e.g.
            `lambda m: builder.message_tokens(m, family)`).
        presets: preset names; None = every registered preset.
        token_family: the session's tokenizer family (`readbench.replay.audit.session_family`);
            the own preset's family counts its token budget in it (`recorded_overrides`).

    Raises:
        ValueError: an unknown preset name.
    """
    registry = {p.name: p for p in list_presets()}
    names = list(registry) if presets is None else presets
    for n in names:
        if n not in registry:
            raise ValueError(f"unknown read variant {n!r}; valid: {list(registry)}")
    own = read_preset(session.harness)
    own_family = registry[own].family if own in registry else None
    worlds = _Worlds()
    visible: dict[int, frozenset[str]] = {}
    out = ReadArms(own=own)
    frames = {r.tool_call_id: _frame(r, results.get(r.tool_call_id)) for r, _, _, _ in tracked if not r.via_shell}
    overrides = recorded_overrides(results, token_family, [f for f in frames.values() if f is not None])
    arms = [_Arm(name, _Variants(registry[name], registry[name].family == own_family, overrides)) for name in names]
    for r, v, lines, new_version in tracked:
        if new_version and v.index > 0:
            for arm in arms:
                arm.memory.note_file_changed(v.key)
        if r.via_shell:
            continue
        orig = results.get(r.tool_call_id)
        if r.call_index not in visible:
            visible[r.call_index] = _visible(session, r.call_index)
        read = _Read(r, v, lines, orig, visible[r.call_index], frames[r.tool_call_id],
                     token_count(orig) if orig is not None else 0)
        for arm in arms:
            _replay_read(arm, session, worlds, read, token_count, own)
    for arm in arms:
        out.reads.extend(arm.rows)
        out.replaced[arm.name] = arm.replaced
        out.counts[arm.name] = arm.counts
    return out


def _replay_read(arm: _Arm, session: Session, worlds: _Worlds, read: _Read, token_count: Any,
                 own: str | None) -> None:
    """One read under one preset: its row, counts and replacement into `arm` (`read_arms`)."""
    r, orig, frame, key = read.call, read.orig, read.frame, read.key
    memory, counts = arm.memory, arm.counts
    counts["reads"] += 1
    kept, maps = len(memory.records), dict(memory._maps)
    if key in arm.no_map:  # the same read of the same file state needed the same unrecorded map
        outcome, reason, res = "not_replayable", "map_needs_whole_file", None
    else:
        outcome, reason, res = _serve(arm.variants.for_frame(frame), memory, worlds, r, read.version, read.lines,
                                      read.visible, arm.lost)
        if res is not None and frame is not None and not res.is_error:
            res = type(res)(frame.wrap(res.text), res.is_error, res.details)
    if res is None:  # the recorded result stays: so does the memory of what was read
        memory.records[kept:] = []
        if reason == "map_needs_whole_file":
            arm.no_map.add(key)
            arm.lost.add(r.tool_call_id)  # the map counts as shown: later cuts point at a map nobody saw
        else:
            memory._maps = maps
    row = {"file": session.source, "session_id": session.session_id, "preset": arm.name, "own": arm.name == own,
           "call": r.call_index,
           "tool_call_id": r.tool_call_id, "path": r.path, "outcome": outcome, "reason": reason,
           "blocked": False, "stubbed": False, "capped": False, "mapped": False,
           "recorded_tokens": read.recorded_tokens, "counterfactual_tokens": None}
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
            counts["reads_notice_only"] += read.notice_only(res.text)
            msg = read.message(res.text, res.is_error)
            arm.replaced[r.tool_call_id] = msg
            row["counterfactual_tokens"] = token_count(msg)
            counts["result_tokens_delta"] += row["counterfactual_tokens"] - row["recorded_tokens"]
        row["outcome"] = outcome
    counts[{"same": "reads_same", "changed": "reads_changed", "unsent": "reads_unsent"}.get(
        outcome, "reads_not_replayable")] += 1
    arm.rows.append(row)


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
                "harness": session.harness, "preset": name, "own": name == read_arms_.own, "cache_model": r.cache_model,
                "priced_as_recorded": r.priced_as_recorded, "primary": r.cache_model == primary, "first_order": True,
                **read_arms_.counts[name], "input_tokens": r.input_tokens,
                "input_tokens_delta": r.input_tokens - off.input_tokens, "sim_cost_usd": r.cost_usd,
                "cost_delta_usd": r.cost_usd - off.cost_usd,
                "billed_cost_usd": arms.billed_cost_usd if r.priced_as_recorded else float("nan"),
            })
    return rows
