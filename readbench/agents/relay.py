"""The bridge's filters for one real-harness sample (readbench.agents.run.harness_agent; agents.md §1):
the arm's DCP projection of each relayed request (readbench.dcp.project, as pi-dcp's `context` hook
does inside pi), the turn limit, a record of each call as relayed (CallLog, CallRecord) for the
per-call log and the cache simulation, and what a pi trunk keeps for its forks (the sim's memory,
reported usage and workspace snapshots before each call; its shadow, readbench.agents.pi_shadow).
A fork's relay starts with the trunk's prefix calls (`Relay.seed`), so its logs and cache figures
cover the whole trajectory, as an independent run's do.
"""

from __future__ import annotations

import copy
import time
from typing import Any

from inspect_ai.model import ChatMessage, GenerateInput, Model, ModelOutput
from inspect_ai.util import sandbox, store

from readbench.agent.loop import _times, native_fields, rejected_request
from readbench.base import store as rbstore
from readbench.base.store import CallLog
from readbench.cache.adapter import CallRecord
from readbench.dcp import DcpState, ProjectionCache, get_config, pi_context_usage, project, reported_tokens

__all__ = ["Relay"]


class Relay:
    """The bridge's request and response filters for one sample: DCP projection before each
    relayed call, a record of each call as relayed after it."""

    def __init__(self, dcp: str | dict[str, Any], cwd: str | None, context_window_tokens: int,
                 max_turns: int | None = None, replayed: int = 0) -> None:
        self.config = get_config(dcp)
        self.cwd = cwd
        self.window = context_window_tokens
        self.state = DcpState()
        self.cache = ProjectionCache(max_histories=1)
        self.reported: dict[int, int] = {}
        self.calls: list[CallLog] = []
        self.records: list[CallRecord] = []
        self.unpruned: list[CallRecord] = []
        self.pending: dict[int, tuple[list[ChatMessage], Any, float]] = {}
        self.t0 = time.monotonic()
        self.max_turns = max_turns
        self.turn_limited = False
        self.first_request: float | None = None  # monotonic time of the first relayed request
        self.replayed = replayed  # calls of a fork's prefix (made by the trunk), counted by max_turns
        self.sim_before: list[Any] | None = None  # with keep_session: the sim's memory before each call
        self.mark: str | None = None  # readbench.fork.snapshot.mark_workspace's mark, with `snapshots`
        self.snapshots: dict[str, Any] = {}  # SNAPSHOTS_KEY
        self.reported_calls: list[list[int] | None] = []  # REPORTED_KEY
        self.shadow: Any = None  # readbench.agents.pi_shadow.PiShadow of a trunk (SHADOW_KEY)
        self.times: list[list[float] | None] = []  # per call [ts_start, ts_first] (None: not priced)
        self.prefix: tuple[list[dict[str, Any]], list[Any], list[Any]] | None = None  # `seed`'s, until used
        self.attempt: tuple[int, DcpState] | None = None  # the call last relayed and the DCP state before it

    def seed(self, calls: list[dict[str, Any]], times: list[Any], reported: list[Any]) -> None:
        """Start a fork's relay with the trunk's first `self.replayed` calls (their CallLog dicts, their
        [ts_start, ts_first] and reported usage, as the trunk stored them): at the fork's first relayed
        request, whose history holds the whole prefix, each prefix call's request (the history up to its
        `n_history`) is projected under this relay's DCP configuration, as an independent run of the
        arm projected it (the arm's requests equal the trunk's there), and logged and recorded with the
        trunk's usage and times. So the fork's `readbench:calls` and cache figures cover its whole
        trajectory.

        Raises:
            ValueError: fewer than `self.replayed` calls or times given.
        """
        k = self.replayed
        if len(calls) < k or len(times) < k:
            raise ValueError(f"a fork at call {k} needs the trunk's first {k} calls and times "
                             f"(got {len(calls)} calls, {len(times)} times)")
        self.prefix = (calls[:k], times[:k], reported[:k])

    def _seed_now(self, messages: list[ChatMessage], tools: Any) -> None:
        """`seed`'s prefix calls, rebuilt from the fork's first request (`messages`)."""
        from readbench.sim.dialect import dialect_for, pi_named

        assert self.prefix is not None
        calls, times, reported = self.prefix
        self.prefix, self.replayed, self.state = None, 0, DcpState()
        for j, c in enumerate(calls):
            history = list(messages[:c["n_history"]])
            usage = pi_context_usage(history, self.window, self.reported)
            named, restore = pi_named(history, dialect_for(list(tools or [])))
            projection = project(named, self.config, state=self.state, cwd=self.cwd, cache=self.cache, usage=usage)
            self.state, stats, sent = projection.state, projection.stats, restore(projection.messages)
            self.calls.append(CallLog(**{**c, "n_input": len(sent), "earliest_changed_index": stats.earliest_changed_index,
                                         "pruned": dict(stats.pruned), "footer_tokens_saved": stats.footer_tokens_saved,
                                         "band": str(stats.effective_band or stats.band)}))
            if reported[j]:
                self.reported[int(reported[j][0])] = int(reported[j][1])
            self.reported_calls.append(reported[j])
            self.times.append(times[j])
            if times[j] is not None:
                out = c.get("output_tokens") or 0
                self.records.append(CallRecord(sent, list(tools or []), out, float(times[j][0]), float(times[j][1])))
                self.unpruned.append(CallRecord(history, list(tools or []), out, float(times[j][0]), float(times[j][1])))

    def not_spent(self, n: int, cache_models: list[str]) -> dict[str, Any]:
        """What a fork did not pay for: its first `n` calls (the trunk's prefix, `seed`), as the loop's
        forks count them (readbench.agent._forking.Replay.not_spent): their reported tokens and their
        simulated cost per cache model (the cache simulation of those calls alone: what they cost in
        an independent run, a call's cost depending only on the calls before it).

        Returns:
            ``{"prefix_tokens": {"input", "output"}, "prefix_cost_usd": {cache model: USD}}`` (no
            cost when none of them is priced).
        """
        from readbench.cache import sample_cache_metrics

        replayed = self.calls[:n]
        priced = sum(1 for c in replayed if c.priced)
        tokens = {"input": sum(c.prompt_tokens or 0 for c in replayed),
                  "output": sum(c.output_tokens or 0 for c in replayed)}
        cost: dict[str, Any] = {}
        if priced:
            metrics = sample_cache_metrics(self.records[:priced], cache_models)
            cost = {m: metrics.get(f"cost_usd_{m}") for m in cache_models}
        return {"prefix_tokens": tokens, "prefix_cost_usd": cost}

    def at_turn_limit(self) -> bool:
        """The next call would pass `max_turns` (the loop's rule: stop before it, no call made)."""
        return self.max_turns is not None and self.replayed + len(self.calls) >= self.max_turns

    async def filter(self, model: Model, messages: list[ChatMessage], tools: Any, tool_choice: Any,
                     config: Any) -> GenerateInput | ModelOutput | None:
        if self.first_request is None:
            self.first_request = time.monotonic()
        if self.prefix is not None:
            self._seed_now(list(messages), tools)
        from readbench.sim.dialect import dialect_for, pi_named

        if self.at_turn_limit():  # answer without the model: no tool call, so the harness stops
            self.turn_limited = True
            if self.shadow is not None:  # the last reply's tool results ran: an arm may differ only there
                named, _ = pi_named(list(messages), dialect_for(list(tools or [])))
                await self.shadow.observe(self.replayed + len(self.calls), named, None, None, sandbox(),
                                          results_only=True)
            return ModelOutput.from_content(model.name, "", stop_reason="stop")
        call = self.replayed + len(self.calls)
        if self.attempt is not None and self.attempt[0] == call:
            # pi retried this call (its earlier request failed: no response, no call recorded): the retried
            # request is the call, so its earlier attempt's projection state and pending record are dropped
            self.state = self.attempt[1]
            self.pending.clear()
        else:
            self.attempt = (call, self.state)
        if self.sim_before is not None:  # one per call: a retried request replaces its failed attempt's
            memory = copy.deepcopy(store().get(rbstore.SIM))
            if len(self.sim_before) > len(self.calls):
                self.sim_before[len(self.calls)] = memory
            else:
                self.sim_before.append(memory)
        from readbench.agents.pi_fork import may_change_files

        if self.mark is not None and self.cwd and may_change_files(list(messages)):
            from readbench.fork.snapshot import take_snapshot

            self.snapshots[str(call)] = (await take_snapshot(sandbox(), self.cwd, self.mark)).to_dict()
        usage = pi_context_usage(list(messages), self.window, self.reported)
        # DCP strategies key on pi's tool names and `path`: another harness's calls are renamed for
        # the projection and named back after it (readbench.sim.dialect.pi_named)
        named, restore = pi_named(list(messages), dialect_for(list(tools or [])))
        projection = project(named, self.config, state=self.state, cwd=self.cwd, cache=self.cache, usage=usage)
        self.state = projection.state
        if self.shadow is not None:
            await self.shadow.observe(call, named, projection.messages, usage, sandbox())
        view = restore(projection.messages)
        self.pending[id(view)] = (list(messages), projection, time.monotonic())
        return GenerateInput(input=view, tools=tools, tool_choice=tool_choice, config=config)

    async def response(self, model: Model, output: ModelOutput, sent: GenerateInput) -> ModelOutput | None:
        if id(sent.input) not in self.pending and self.turn_limited:
            return None  # the filter's own answer at the turn limit: no model call, nothing billed
        history, projection, wall_start = self.pending.pop(id(sent.input), (list(sent.input), None, time.monotonic()))
        native = native_fields(output)
        rejected = rejected_request(output, native["prompt_tokens"])
        stats = projection.stats if projection is not None else None
        self.calls.append(CallLog(
            n_history=len(history), n_input=len(sent.input),
            earliest_changed_index=stats.earliest_changed_index if stats else None, prefix_break=False,
            pruned=dict(stats.pruned) if stats else {}, footer_tokens_saved=stats.footer_tokens_saved if stats else 0,
            band=str((stats.effective_band or stats.band) if stats else ""), stop_reason=str(output.stop_reason),
            priced=not rejected, **native))
        if rejected:
            self.times.append(None)
        tokens = reported_tokens(native["prompt_tokens"], native["output_tokens"])
        self.reported_calls.append(None if tokens is None else [len(history), tokens])
        if tokens is not None:
            self.reported[len(history)] = tokens
        if not rejected:
            ts_start, ts_first = _times(output, wall_start, time.monotonic(), self.t0)
            out_tokens = native["output_tokens"] or 0
            self.times.append([ts_start, ts_first])
            self.records.append(CallRecord(list(sent.input), list(sent.tools), out_tokens, ts_start, ts_first))
            self.unpruned.append(CallRecord(history, list(sent.tools), out_tokens, ts_start, ts_first))
        return None
