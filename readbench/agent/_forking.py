"""The agent loop's two fork roles (GitHub issue 25): a trunk shadows every arm
(readbench.fork.trunk), a fork replays its prefix and then runs live (`Replay`).

The loop's ``fork`` argument: ``{"role": "trunk", "root": <fork dir>, "arms": [[variant, dcp], ...],
"labels": [...]}`` for the trunk; a fork sample's setup (readbench.fork.solver) leaves
``{"role": "fork", "prefix": <path>, ...}`` in the store (``readbench:fork``) and the loop
replays that prefix.
"""

from __future__ import annotations

import json
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

from inspect_ai.model import ChatMessageTool, ModelOutput, get_model
from inspect_ai.util import store

from readbench.agent.prompt import system_prompt
from readbench.fork.prefix import FORK, Prefix, load_prefix
from readbench.fork.shadow import ArmShadow, arm_key
from readbench.fork.trunk import Trunk
from readbench.read import get_variant
from readbench.tools import make_tools

__all__ = ["Replay", "infos_json", "make_trunk", "replay_of", "time_cut"]


def infos_json(infos: list[Any]) -> str:
    """The tool schemas of a request as canonical JSON (part of its fingerprint)."""
    return json.dumps([i.model_dump(mode="json") for i in infos], sort_keys=True)


async def make_trunk(fork: dict[str, Any], read_variant: Any, dcp_config: Any, cwd: str, t0: float,
                     tool_infos: Any) -> Trunk:
    """The `Trunk` of this sample: one `ArmShadow` per arm of the run, started (workspace marked,
    arms with another system prompt or tool schemas forked at call 0).

    Raises:
        ValueError: an arm's variant or DCP configuration is unknown.
    """
    from readbench.dcp import ProjectionCache, get_config
    from readbench.sim.oracle import ORACLE_KEY

    oracle: dict[str, Any] = store().get(ORACLE_KEY, {})
    sample = (str(get_model()), str(oracle.get("task_id")), int(oracle.get("epoch", 1)))
    mine_prompt = system_prompt(read_variant, cwd)
    mine_infos = infos_json(tool_infos(make_tools(read_variant)))
    arms, headers = [], {}
    for (variant_spec, dcp_spec), label in zip(fork["arms"], fork["labels"]):
        variant, config = get_variant(variant_spec), get_config(dcp_spec)
        same_read = {**variant.describe(), "name": ""} == {**read_variant.describe(), "name": ""} and \
            variant.requires_read_before_edit == read_variant.requires_read_before_edit
        same_dcp = {**config.to_dict(), "name": ""} == {**dcp_config.to_dict(), "name": ""}
        arm = ArmShadow(key=arm_key(variant_spec, dcp_spec), label=label, variant=None if same_read else variant,
                        dcp=None if same_dcp else config, spec=[variant_spec, dcp_spec],
                        dcp_cache=ProjectionCache(max_histories=1))
        if system_prompt(variant, cwd) != mine_prompt:
            headers[arm.key] = "call 0: the system prompt differs"
        elif infos_json(tool_infos(make_tools(variant))) != mine_infos:
            headers[arm.key] = "call 0: the tool schemas differ"
        arms.append(arm)
    trunk = Trunk(arms, read_variant, Path(fork["root"]), sample, cwd)
    await trunk.start(t0, headers)
    return trunk


class Replay:
    """A fork sample's prefix, served call by call to the loop."""

    def __init__(self, prefix: Prefix) -> None:
        self.prefix = prefix

    @property
    def elapsed_seconds(self) -> float:
        """The trunk's loop time at the fork point (live calls continue from it)."""
        return self.prefix.fork.elapsed_seconds

    def output(self, index: int, request_fp: str) -> tuple[ModelOutput, tuple[float, float]] | None:
        """The trunk's reply to call ``index`` with its times, or None from the first live call.

        Raises:
            RuntimeError: the fork's request at a replayed call differs from the trunk's (the
                prefix would not be this arm's: coupling broken).
        """
        if index >= len(self.prefix.calls):
            return None
        record = self.prefix.calls[index]
        if record.request != request_fp:
            raise RuntimeError(f"fork: this arm's request at call {index} differs from the trunk's, below its fork "
                               f"point ({self.prefix.fork.kind} at call {self.prefix.fork.call}); the prefix does not "
                               "belong to this arm")
        return ModelOutput.model_validate(record.output), (float(record.ts[0]), float(record.ts[1]))

    @property
    def stop_reason(self) -> str | None:
        """The trunk's stop reason where a limit stopped the trunk before this arm left it, else None."""
        return self.prefix.fork.stop_reason if self.prefix.fork.kind in ("cut", "never") else None

    def tripped(self, index: int) -> bool:
        """True when the trunk's call ``index`` is the one an inspect limit raised on (the fork logs
        it as the trunk did and stops with the trunk's stop reason)."""
        return index < len(self.prefix.calls) and self.prefix.calls[index].tripped and self.stop_reason is not None

    def stops_at(self, index: int) -> bool:
        """True when this fork ends before model call ``index`` (or before executing the tools of
        reply ``index - 1``): its arm followed the trunk until a limit stopped the trunk there
        (``kind="cut"``, or ``never`` for an arm the trunk's own), so it stops where the trunk
        stopped, with the trunk's stop reason."""
        return self.stop_reason is not None and index >= len(self.prefix.calls)

    def not_spent(self, calls: list[Any], records: list[Any], cache_models: list[str]) -> dict[str, Any]:
        """What this fork did not pay for: the replayed calls' reported tokens and their cost per
        cache model (the cache simulation of those calls alone, which is what they cost in an
        independent run: a call's simulated cost depends only on the calls before it).

        Args:
            calls: the sample's CallLogs; records: its priced CallRecords (in call order).
        """
        from readbench.cache import sample_cache_metrics

        n = min(self.prefix.replayed_calls, len(calls))
        replayed = calls[:n]
        priced = sum(1 for c in replayed if c.priced)
        tokens = {"input": sum(c.prompt_tokens or 0 for c in replayed),
                  "output": sum(c.output_tokens or 0 for c in replayed)}
        cost = {}
        if priced:
            metrics = sample_cache_metrics(records[:priced], cache_models)
            cost = {m: metrics.get(f"cost_usd_{m}") for m in cache_models}
        return {"prefix_tokens": tokens, "prefix_cost_usd": cost}

    def tools(self, index: int) -> list[ChatMessageTool] | None:
        """The trunk's tool results of reply ``index`` (with this arm's read details), or None
        where the fork executes the calls itself."""
        if index >= len(self.prefix.calls) or self.prefix.calls[index].tools is None:
            return None
        return [ChatMessageTool.model_validate(m) for m in self.prefix.calls[index].tools or []]

    def prefix_tokens(self) -> int:
        """Tokens of the replayed calls as inspect's token limit counts them (``usage.total_tokens``
        of each reply the trunk received), which this fork's own usage never includes."""
        return sum(int(((c.output.get("usage") or {}).get("total_tokens")) or 0) for c in self.prefix.calls)

    def live_limits(self) -> AbstractContextManager[Any]:
        """inspect limits for the live part of a fork that left the trunk, charged with the prefix.

        A fork replays the trunk's calls without making them, so inspect's sample time and token
        limits would count only its live part and a diverged arm could run longer forked than
        independently. Entered as the fork's replay starts, this adds a scoped ``time_limit`` of
        (the sample's time limit - the time the sample used so far - the trunk's loop time at the
        fork point) and a scoped ``token_limit`` of (the sample's token limit - tokens used so far -
        `prefix_tokens`): the live part then gets what an independent run of the arm had left at
        the same call (its own set-up and the replay, both short, are the difference). Inspect's
        scoped limits raise ``LimitExceededError`` of type ``time`` / ``token`` as the sample's own
        do (scoped limits: inspect-notes.md §1). Nothing for a fork that never leaves the trunk (``never``,
        ``cut``: it replays to where the trunk stopped and makes no call) or outside a sample.
        Working-time limits are not charged (the trunk's waiting time is not recorded)."""
        from contextlib import ExitStack

        from inspect_ai.util import sample_limits, time_limit, token_limit

        stack = ExitStack()
        if self.prefix.fork.kind not in ("request", "result"):
            return stack
        try:
            limits = sample_limits()
        except RuntimeError:  # no running sample
            return stack
        if limits.time.limit is not None:
            left = limits.time.limit - limits.time.usage - self.elapsed_seconds
            stack.enter_context(time_limit(max(0.0, left)))
        if limits.token.limit is not None:
            left_tokens = int(limits.token.limit - limits.token.usage) - self.prefix_tokens()
            stack.enter_context(token_limit(max(0, left_tokens)))
        return stack


def time_cut() -> str | None:
    """``"time_limit"`` when inspect's sample time or working-time limit is what cancelled the
    sample (metrics.md's one stop reason for both, as readbench.analysis.table maps them), else
    None (e.g. the run was interrupted: no prefix is written, and a resumed run repeats the trunk)."""
    from inspect_ai.util import sample_limits

    try:
        limits = sample_limits()
    except RuntimeError:  # no running sample
        return None
    for limit in (limits.time, limits.working):
        if limit.limit is not None and limit.usage >= limit.limit:
            return "time_limit"
    return None


def replay_of(cwd: str) -> Replay | None:
    """The `Replay` of this sample when it is a fork (store ``readbench:fork`` role ``fork``), else None.

    Raises:
        FileNotFoundError: the prefix file is gone.
    """
    info = store().get(FORK) or {}
    if info.get("role") != "fork":
        return None
    return Replay(load_prefix(Path(info["prefix"]), cwd))
