"""`project`: the pruned view of a message list for one model call (brief §2, metrics.md)."""

from __future__ import annotations

import dataclasses
import functools
import itertools
import operator
from typing import Any

from inspect_ai.model import ChatMessage

from readbench.dcp._cache import DEFAULT_CACHE, ProjectionCache
from readbench.dcp._fast_obs import ObsSeq
from readbench.dcp._fast_pidcp import PiSeq
from readbench.dcp._fast_sister import SisterFastOutcome, SisterSeq
from readbench.dcp._params import ObsMaskParams, PiDcpParams, SisterParams
from readbench.dcp._pidcp import run_pi_dcp, running_strategies
from readbench.dcp._pressure import compute_band, effective_band, footer_text
from readbench.dcp._sister import GateCandidate, SisterOutcome, run_sister
from readbench.dcp._strategy import DcpStrategy, family_strategies
from readbench.dcp._types import ContextUsage, DcpState, GateInfo, Projection, ProjectionStats
from readbench.dcp._view import PiView, text_chars
from readbench.dcp.configs import DcpConfig, get_config
from readbench.dcp.strategies import obs_mask

__all__ = ["GateStep", "gate_candidates", "project", "project_reference", "prefix_break_index"]

_PI_FAST, _SISTER_FAST, _OBS_FAST = (f"{c.__module__}:{c.__name__}" for c in (PiSeq, SisterSeq, ObsSeq))


def _fast(strategies: list[DcpStrategy], path: str) -> bool:
    """Every running strategy is computed by the family's fast path `path` (its `incremental`
    hook); a strategy without one sends the call to `project_reference`."""
    return all(s.incremental == path for s in strategies)


def _sister_running(params: SisterParams) -> list[DcpStrategy]:
    return [s for s in family_strategies("sister") if s.enabled(params)]


def project(
    messages: list[ChatMessage],
    config: DcpConfig | str | dict[str, Any],
    *,
    state: DcpState | None = None,
    usage: ContextUsage | None = None,
    cwd: str | None = None,
    cache: ProjectionCache | None = None,
) -> Projection:
    """Prune `messages` for one model call; never mutates the input list or its messages.

    Parameters
    ----------
    messages
        The full history the agent would send (system messages are passed through untouched and
        are not counted as turns: pi's hook never sees them, pi-tools.md §5.3).
    config
        A `DcpConfig`, a preset name or a `{"base", "name", ...}` dict (see `get_config`).
    state
        Sticky decisions from the previous call (`Projection.state` of that call); None = empty.
        Only the sister family reads or extends it.
    usage
        Pre-pruning context usage for pi-dcp's pressure band (dcp.md §3); None = unknown.
    cwd
        The agent's working directory (pi: `ctx.cwd`), used to make relative tool paths
        absolute for file protection, frontier pins and file-op supersession. None = the
        configuration's `cwd` parameter (default None: relative paths are only normalised).
    cache
        Incremental state reused across calls on a growing history (`ProjectionCache`, see
        `readbench.dcp._cache` for its contract: messages are not mutated in place). None = a
        bounded module-level cache. It never changes the result: the output equals
        `project_reference` on the same arguments.

    Returns
    -------
    Projection
        `messages`: same length and order; replaced messages are `model_copy` copies keeping
        their ids (possibly the same copies as on an earlier call), untouched ones are the
        input objects. `stats`: see `ProjectionStats`. `state`: the state to pass to the next call.

    Raises
    ------
    ValueError
        Bad `config` (see `get_config`).
    """
    cfg = _resolve(config, cwd)
    state = state if state is not None else DcpState()
    cache = cache if cache is not None else DEFAULT_CACHE
    ratio = usage.ratio if usage is not None else None
    if cfg.params is None:
        return _projection(cfg, list(messages), (), ratio=ratio, state=state)
    if not messages:
        return project_reference(messages, cfg, state=state, usage=usage)
    params = cfg.params
    if isinstance(params, PiDcpParams):
        band, ratio = compute_band(params, usage)
        running = running_strategies(params, band)
        ran = tuple(s.name for s in running)
        seq = cache.sequence("pi-dcp", params, messages, lambda: PiSeq(params)) if _fast(running, _PI_FAST) else None
        if seq is not None and seq.ok and (seq.sw.ok or "supersedeWrites" not in ran):
            out = seq.run(ran)
            skipped = out.skipped
            return _projection(
                cfg, out.messages, out.changed,
                pruned={k: out.pruned[k] for k in ran},
                skipped={k: skipped[k] for k in ran},
                saved=out.tokens_saved, footer=footer_text(out.tokens_saved, band, params.debug),
                band=band, eff=effective_band(band), ratio=ratio, state=state,
            )
    elif isinstance(params, SisterParams) and _fast(_sister_running(params), _SISTER_FAST):
        seq_s = cache.sequence("sister", params, messages, lambda: SisterSeq(params))
        if seq_s.ok:
            so = seq_s.run(state)
            return _projection(
                cfg, so.messages, so.changed, pruned=so.pruned, newly=so.newly_pruned, saved=so.footer_tokens_saved,
                ratio=ratio, gate=so.gate, state=so.state,
            )
    elif isinstance(params, ObsMaskParams) and _fast(family_strategies("obs-mask"), _OBS_FAST):
        seq_o = cache.sequence("obs-mask", params, messages, lambda: ObsSeq(params))
        out_o, changed_o, masked, saved = seq_o.run()
        return _projection(
            cfg, out_o, changed_o, pruned={obs_mask.STRATEGY_ID: masked}, saved=saved, ratio=ratio, state=state,
        )
    return project_reference(messages, cfg, state=state, usage=usage)


@dataclasses.dataclass(frozen=True)
class GateStep:
    """One call of the sister pipeline seen from its gate (`gate_candidates`)."""

    candidates: tuple[GateCandidate, ...]
    """Fresh automatic candidates that reached the gate, each measured on its own."""
    state: DcpState
    """Sticky state after the call (with `gate_mode="off"`: the old decisions plus every candidate)."""
    gate: GateInfo
    """The gate's numbers for the batch (`agent_state` is the runtime, turn-start label)."""


def gate_candidates(
    messages: list[ChatMessage],
    config: DcpConfig | str | dict[str, Any],
    *,
    state: DcpState | None = None,
    cwd: str | None = None,
    cache: ProjectionCache | None = None,
) -> GateStep:
    """The candidates the sister's gate weighs before this call (docs/specs/dcp.md §7.1, §7.4),
    for the sister's gate benchmark (§7.5): run it with `gate_mode="off"`, threading `state`,
    and each candidate is reported once, at the first call where it is proposable.

    Same arguments and the same computation as `project` (incremental through `cache`); only
    the result differs. Raises ValueError for a bad `config` or one outside the sister family.
    """
    cfg = _resolve(config, cwd)
    params = cfg.params
    if not isinstance(params, SisterParams):
        raise ValueError(f"gate candidates need a sister-family DCP configuration, got {cfg.name!r} ({cfg.family})")
    state = state if state is not None else DcpState()
    cache = cache if cache is not None else DEFAULT_CACHE
    out: SisterFastOutcome | SisterOutcome | None = None
    if messages and _fast(_sister_running(params), _SISTER_FAST):
        seq = cache.sequence("sister", params, messages, lambda: SisterSeq(params))
        if seq.ok:
            out = seq.run(state)
    if out is None:
        out = run_sister(PiView(messages), params, state)
    return GateStep(out.candidates, out.state, out.gate)


def _resolve(config: DcpConfig | str | dict[str, Any], cwd: str | None) -> DcpConfig:
    cfg = get_config(config)
    if cwd is not None and cfg.params is not None and hasattr(cfg.params, "cwd"):
        try:
            return _with_cwd(cfg, cwd)
        except TypeError:  # unhashable user parameters
            return dataclasses.replace(cfg, params=dataclasses.replace(cfg.params, cwd=cwd))  # type: ignore[arg-type]  # has cwd
    return cfg


@functools.lru_cache(maxsize=64)
def _with_cwd(cfg: DcpConfig, cwd: str) -> DcpConfig:
    """`cfg` with `params.cwd = cwd` (memoised: both are frozen values; the loop passes the same
    configuration and cwd on every call)."""
    return dataclasses.replace(cfg, params=dataclasses.replace(cfg.params, cwd=cwd))  # type: ignore[type-var]  # the caller checked hasattr(params, 'cwd')


def _projection(
    cfg: DcpConfig,
    out: list[ChatMessage],
    changed: Any,
    *,
    pruned: dict[str, int] | None = None,
    skipped: dict[str, dict[str, int]] | None = None,
    newly: dict[str, int] | None = None,
    saved: int = 0,
    footer: str | None = None,
    band: str | None = None,
    eff: str | None = None,
    ratio: float | None = None,
    gate: GateInfo | None = None,
    state: DcpState,
) -> Projection:
    changed = tuple(changed)
    stats = ProjectionStats(
        config=cfg.name,
        family=cfg.family,
        pruned=pruned if pruned is not None else {},
        skipped=skipped if skipped is not None else {},
        newly_pruned=newly if newly is not None else {},
        footer_tokens_saved=saved,
        footer_text=footer,
        earliest_changed_index=changed[0] if changed else None,
        changed_indices=changed,
        band=band,
        effective_band=eff,
        usage_ratio=ratio,
        gate=gate,
    )
    return Projection(out, stats, state)


def project_reference(
    messages: list[ChatMessage],
    config: DcpConfig | str | dict[str, Any],
    *,
    state: DcpState | None = None,
    usage: ContextUsage | None = None,
    cwd: str | None = None,
) -> Projection:
    """`project` recomputed from scratch on this call alone (no cache): the straightforward
    implementation of the specs, the oracle the cached path is tested against, and the path
    `project` takes for histories the fast path does not cover (see `_fast_pidcp`)."""
    cfg = _resolve(config, cwd)
    state = state if state is not None else DcpState()
    view = PiView(messages)
    pruned: dict[str, int] = {}
    skipped: dict[str, dict[str, int]] = {}
    newly: dict[str, int] = {}
    saved = 0
    footer = None
    band = eff = None
    ratio = usage.ratio if usage is not None else None
    gate = None
    new_state = state
    if isinstance(cfg.params, PiDcpParams):
        out = run_pi_dcp(view, cfg.params, usage)
        pruned = {k: out.run.pruned[k] for k in out.ran}
        skipped = {k: dict(out.run.skipped[k]) for k in out.ran}
        saved = out.run.tokens_saved
        footer = out.footer
        band, eff, ratio = out.band, effective_band(out.band), out.ratio
    elif isinstance(cfg.params, SisterParams):
        so = run_sister(view, cfg.params, state)
        pruned, newly, saved, gate, new_state = so.pruned, so.newly_pruned, so.footer_tokens_saved, so.gate, so.state
    elif isinstance(cfg.params, ObsMaskParams):
        for strategy in family_strategies("obs-mask"):
            masked = strategy.apply(view, cfg.params)
            pruned[strategy.name] = len(masked)
            saved += sum(text_chars(view.original(p).content) // 4 for p in masked)
    changed = tuple(view.index[p] for p in view.changed_positions())
    return _projection(
        cfg, view.output(), changed, pruned=pruned, skipped=skipped, newly=newly, saved=saved, footer=footer,
        band=band, eff=eff, ratio=ratio, gate=gate, state=new_state,
    )


def _same(a: ChatMessage, b: ChatMessage) -> bool:
    """Equal but for ids. A message's `model_dump` keeps a `str` content as it is and a list
    content as a list, so when either content is a string the dumps can only be equal if both
    are the same string: unequal ones are told apart without dumping (a replacement's content
    is a string)."""
    if a is b:
        return True
    if (isinstance(a.content, str) or isinstance(b.content, str)) and a.content != b.content:
        return False
    return a.model_dump(exclude={"id"}) == b.model_dump(exclude={"id"})


def prefix_break_index(previous: list[ChatMessage], current: list[ChatMessage]) -> int | None:
    """First position < len(previous) where `current` differs from `previous`, else None.

    This is a rewrite of history already sent (metrics.md `dcp_prefix_breaks`): pass the
    previous call's projected list and this call's. Messages are compared by content (ids
    ignored). A `current` shorter than `previous` breaks at `len(current)`.
    """
    # identical objects first, at C speed (a projection keeps most messages as they are)
    start = next(itertools.compress(itertools.count(), map(operator.is_not, previous, current)),
                 min(len(previous), len(current)))
    for i in range(start, len(previous)):
        if i >= len(current):
            return i
        if not _same(previous[i], current[i]):
            return i
    return None
