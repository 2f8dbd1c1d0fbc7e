"""Several DCP configurations projected over one call sequence, in call order, sharing work.

The session replay (docs/specs/dcp.md §7.5: project the prefix at every call boundary, carrying
the sticky state; `readbench.replay.dcp_cache`) runs every configuration over the same recorded
requests. Threading `project` once per configuration computes pi-dcp's per-message facts once per
pi-dcp configuration, although they depend on only four of its parameters (`PiColumns.key`).
`project_calls` walks the calls once and, at each call, projects it under every configuration:
the pi-dcp configurations that agree on `PiColumns.key` share one `PiColumns` per history, synced
once per call, and each runs only its own evaluation (`PiSeq.catch_up`, `PiSeq.run`). The other
families, and every call the fast path does not cover, go through `project` itself, each with its
own `ProjectionCache` and sticky state.

Same results as threading `project(requests[i], config, state=, usage=usages[i], cwd=cwd,
cache=ProjectionCache(max_histories=4))` per configuration: the same fast-path code on the same
histories, and a history is recognised as `ProjectionCache` recognises it (its first two message
objects, and a list that starts with the messages consumed so far); which sequences a cache keeps
never changes a result (`readbench.dcp._cache`). tests/dcp/test_dcp_many.py checks it.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

from inspect_ai.model import ChatMessage

from readbench.dcp._cache import ProjectionCache
from readbench.dcp._fast_obs import ObsSeq
from readbench.dcp._fast_picols import PiColumns
from readbench.dcp._fast_pidcp import PiSeq
from readbench.dcp._fast_sister import SisterSeq
from readbench.dcp._params import ObsMaskParams, PiDcpParams, SisterParams
from readbench.dcp._pidcp import running_strategies
from readbench.dcp._pressure import compute_band
from readbench.dcp._project import (
    _OBS_FAST,
    _PI_FAST,
    _SISTER_FAST,
    _fast,
    _resolve,
    _sister_running,
    project,
    project_reference,
)
from readbench.dcp._seq import SeqBase
from readbench.dcp._strategy import family_strategies
from readbench.dcp._types import ContextUsage, DcpState
from readbench.dcp.configs import DcpConfig

__all__ = ["ProjectedCalls", "project_calls"]

_HISTORIES = 4
"""Histories kept (least recently used dropped), as the replay's per-configuration caches."""


@dataclass
class ProjectedCalls:
    """One configuration over a call sequence: per call, what the replay reads of its `Projection`."""

    messages: list[list[ChatMessage]] = field(default_factory=list)
    """`Projection.messages` of each call."""
    pruned_items: list[int] = field(default_factory=list)
    """`ProjectionStats.pruned_items` of each call."""
    footer_tokens_saved: list[int] = field(default_factory=list)
    """`ProjectionStats.footer_tokens_saved` of each call."""

    def append(self, messages: list[ChatMessage], pruned: int, saved: int) -> None:
        """Record one call."""
        self.messages.append(messages)
        self.pruned_items.append(pruned)
        self.footer_tokens_saved.append(saved)


class _History:
    """One history's sequences: the pi-dcp columns (one per `PiColumns.key`), each pi-dcp
    configuration's `PiSeq` on them, and each sister or obs-mask configuration's sequence."""

    def __init__(self, fast: dict[str, DcpConfig]) -> None:
        self.owners: list[SeqBase] = []  # the sequences that consume messages themselves
        self.stale: set[str] = set()  # pi-dcp configurations that took their twin's output since their last run
        cols: dict[tuple[Any, ...], PiColumns] = {}
        self.seqs: dict[str, Any] = {}
        for name, cfg in fast.items():
            params = cfg.params
            if isinstance(params, PiDcpParams):
                key = PiColumns.key(params)
                try:
                    hash(key)
                except TypeError:  # unhashable user parameters: columns of its own
                    key = (name,)
                if key not in cols:
                    cols[key] = PiColumns(params)
                    self.owners.append(cols[key])
                self.seqs[name] = PiSeq(params, cols[key])
            else:
                own: SeqBase = SisterSeq(params) if isinstance(params, SisterParams) else ObsSeq(params)  # type: ignore[arg-type]
                self.seqs[name] = own
                self.owners.append(own)

    def sync(self, messages: list[ChatMessage]) -> bool:
        """Consume the new tail (False: `messages` does not extend this history; nothing consumed).
        Every owner consumed the same messages, so one checks them for all."""
        first, *rest = self.owners
        if not first.sync(messages):
            return False
        for seq in rest:
            seq.consume(messages)
        return True


def _fast_config(cfg: DcpConfig) -> bool:
    """`project` takes a per-history sequence for `cfg` (pi-dcp: when the strategies its band
    runs have one, decided per call), as opposed to `project_reference` or no pruning."""
    params = cfg.params
    if isinstance(params, PiDcpParams):
        return True
    if isinstance(params, SisterParams):
        return _fast(_sister_running(params), _SISTER_FAST)
    if isinstance(params, ObsMaskParams):
        return _fast(family_strategies("obs-mask"), _OBS_FAST)
    return False


def _twins(pi: dict[str, PiDcpParams]) -> dict[str, str]:
    """pi-dcp configuration -> an earlier one without supersedeWrites that evaluates every result
    alike: their parameters are equal once supersedeWrites is off and no band is forced (so the
    two differ at most in supersedeWrites and in the band, hence in the strategies a call runs)."""
    out: dict[str, str] = {}
    names = list(pi)
    for i, a in enumerate(names):
        own = dataclasses.replace(pi[a], supersede_writes=False, force_band=None)
        for b in names[:i]:
            if not pi[b].supersede_writes and dataclasses.replace(pi[b], force_band=None) == own:
                out[a] = b
                break
    return out


def _pi_call(name: str, params: PiDcpParams, usage: ContextUsage | None, history: _History, seq: PiSeq,
             res: ProjectedCalls, done: dict[str, tuple[tuple[str, ...], list[ChatMessage], int, int]],
             twins: dict[str, str], ran_of: dict[tuple[str, str], tuple[tuple[str, ...], bool]]) -> bool:
    """One pi-dcp configuration's fast projection of this call into `res`; False when `project`
    would take `project_reference` instead.

    A configuration takes its twin's output of the same call (`_twins`, `done`) without
    evaluating, when this call proves them equal: both run the same strategies but for
    supersedeWrites, and supersedeWrites replaces no arguments now and did not in this
    configuration's last own call. Then every result is evaluated alike (the evaluation reads only
    which of deduplicate, purgeErrors and outputBodyReplace run, the shared columns, the equal
    parameters and the replaced arguments, none), so the outputs are equal; the counters add
    supersedeWrites' own. Its evaluation state is then stale: its next own call starts afresh
    (`PiSeq.reset`).
    """
    band, _ = compute_band(params, usage)
    hit = ran_of.get((name, band))
    if hit is None:
        running = running_strategies(params, band)
        hit = ran_of[(name, band)] = (tuple(s.name for s in running), _fast(running, _PI_FAST))
    ran, pi_fast = hit
    seq.catch_up()
    if not (pi_fast and seq.ok and (seq.sw.ok or "supersedeWrites" not in ran)):
        return False
    twin = done.get(twins.get(name, ""))
    if twin is not None and not seq.sw_args and not seq.sw_out and twin[0] == tuple(k for k in ran if k != "supersedeWrites"):
        sw = seq.supersede(ran) if "supersedeWrites" in ran else None
        if sw is None or not sw.args:
            pruned, saved = twin[2], twin[3]
            if sw is not None:
                pruned, saved = pruned + sw.counts["pruned"], saved + sw.saved
            history.stale.add(name)
            res.append(twin[1], pruned, saved)
            done[name] = (ran, twin[1], pruned, saved)
            return True
    if name in history.stale:
        seq.reset()
        history.stale.discard(name)
    out = seq.run(ran)
    pruned = sum(out.pruned[k] for k in ran)
    res.append(out.messages, pruned, out.tokens_saved)
    done[name] = (ran, out.messages, pruned, out.tokens_saved)
    return True


def project_calls(
    requests: list[list[ChatMessage]],
    configs: list[DcpConfig | str | dict[str, Any]],
    usages: list[ContextUsage | None],
    *,
    cwd: str | None = None,
) -> dict[str, ProjectedCalls]:
    """Project `requests` (one message list per call, in call order) under every configuration.

    Args:
        requests: each call's full history (docs/specs/dcp.md §7.5).
        configs: configurations as `project` takes them; the result is keyed by their names.
        usages: pi's context usage before each call (`readbench.dcp.pi_context_usage`), or None.
        cwd: the agent's working directory, as `project`'s `cwd`.

    Returns:
        configuration name -> its projection of each call (module docstring: equal to threading
        `project` per configuration).

    Raises:
        ValueError: a bad configuration (`get_config`).
    """
    cfgs = {}
    for spec in configs:
        cfg = _resolve(spec, cwd)
        cfgs[cfg.name] = cfg
    fast = {name: cfg for name, cfg in cfgs.items() if _fast_config(cfg)}
    out = {name: ProjectedCalls() for name in cfgs}
    states = {name: DcpState() for name in cfgs}
    caches = {name: ProjectionCache(max_histories=_HISTORIES) for name in cfgs}
    ran_of: dict[tuple[str, str], tuple[tuple[str, ...], bool]] = {}
    twins = _twins({name: cfg.params for name, cfg in fast.items() if isinstance(cfg.params, PiDcpParams)})
    histories = ProjectionCache(max_histories=_HISTORIES)  # one _History per history, as `project`'s caches
    for messages, usage in zip(requests, usages):
        done: dict[str, tuple[tuple[str, ...], list[ChatMessage], int, int]] = {}
        history: _History | None = None
        if fast and messages:
            history = histories.sequence("many", None, messages, lambda: _History(fast))
        for name, cfg in cfgs.items():
            params = cfg.params
            res = out[name]
            if params is None:  # off: `project`'s copy of the list, nothing pruned
                res.append(list(messages), 0, 0)
                continue
            if history is None or name not in fast:
                proj = project(messages, cfg, state=states[name], usage=usage, cache=caches[name])
            else:
                seq = history.seqs[name]
                if isinstance(params, PiDcpParams):
                    if _pi_call(name, params, usage, history, seq, res, done, twins, ran_of):
                        continue
                elif isinstance(params, SisterParams):
                    if seq.ok:
                        so = seq.run(states[name])
                        states[name] = so.state
                        res.append(so.messages, sum(so.pruned.values()), so.footer_tokens_saved)
                        continue
                else:
                    masked_out, _, masked, saved = seq.run()
                    res.append(masked_out, masked, saved)
                    continue
                proj = project_reference(messages, cfg, state=states[name], usage=usage)
            states[name] = proj.state
            res.append(proj.messages, proj.stats.pruned_items, proj.stats.footer_tokens_saved)
    return out
