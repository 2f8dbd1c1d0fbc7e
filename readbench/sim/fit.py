"""Fit a sim profile from recorded sessions (issue 16): ``readbench sim fit SESSIONS... --name NAME``.

Each knob is estimated from the pooled observations of readbench.sim.evidence, with a 95 %
percentile bootstrap interval over sessions (sessions resampled with replacement, the
estimator re-run; ``numpy.random.default_rng(seed)``, so a fit is deterministic per seed):

| knob | estimator |
|---|---|
| ``p_grep_first``, ``p_follow_paging``, ``p_restart_reread``, ``p_verify_reread`` | share of 1s among the observations |
| ``p_comply_block``, ``max_block_retries`` | a repeated blind read is a non-compliance draw, a ranged read or search after a block a compliance draw unless the repeats had reached the largest count seen (then it was forced); the retries are that largest count |
| ``window_lines``, ``think_tokens``, ``calls_per_prompt`` | the uniform [low, high] with the data's 10th and 90th percentiles: w = (q90 - q10)/0.8, low = q10 - 0.1 w, high = q90 + 0.1 w |
| ``range_chunk_lines`` | median limit of chunked reads |
| ``ttft_seconds``, ``ttft_seconds_per_1k_input_tokens``, ``output_tokens_per_second`` | least squares of call seconds on 1, prompt tokens / 1000 and output tokens (the sim's latency model, readbench.sim.latency) |
| ``tool_seconds``, ``test_seconds``, ``user_gap_seconds`` | median gap after a tool call, a test run, a final reply |
| ``explore_before_share`` | mean share of a prompt's calls before it first touched its target |
| ``explore_tools`` | shares of read / grep / bash among calls that touch neither the target nor run tests |

With a single session there is nothing to resample: knobs are fitted without an interval (the
note says so). A knob with fewer than ``min_observations`` observations (or a degenerate regression) keeps
the base profile's value and the result says so; ``p_use_map`` (variant C's map exists in no
harness), ``max_fix_attempts``, ``max_step_actions`` and ``context_window_tokens`` are never
identified by sessions.
"""

from __future__ import annotations

import datetime as dt
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from readbench.sessions import Session
from readbench.sim.evidence import Evidence, session_evidence
from readbench.sim.profiles import KNOB_NAMES, Profile, get_profile, profile_row, user_profiles_path

__all__ = ["FitResult", "KnobFit", "fit_evidence", "fit_profile", "write_profile"]

_NEVER = {
    "p_use_map": "variant C's structural map exists in no recorded harness",
    "max_fix_attempts": "sessions do not say when an agent gave up on a failing fix",
    "max_step_actions": "sessions do not say when an agent gave up on a sub-goal",
    "context_window_tokens": "a property of the model, not of the behaviour",
}
_TOOLS = ("read", "grep", "bash")


@dataclass(frozen=True)
class KnobFit:
    """One knob's fit.

    Attributes:
        knob: the knob name.
        value: the profile's value (fitted, or the base's when not identified).
        interval: 95 % bootstrap interval: ``(low, high)`` for a scalar; for a range or the tool
            weights one ``(low, high)`` per component; None when not identified, or fitted from
            a single session (the bootstrap resamples sessions).
        observations: how many observations the estimate pooled.
        identified: True when fitted from the sessions.
        note: how it was estimated, or why it was not.
    """

    knob: str
    value: Any
    interval: Any
    observations: int
    identified: bool
    note: str


@dataclass(frozen=True)
class FitResult:
    """A fitted profile and its knob-by-knob account."""

    profile: Profile
    knobs: tuple[KnobFit, ...]
    sessions: int
    evidence: str
    tool_mix: dict[str, float]
    seed: int
    bootstrap: int

    def knob(self, name: str) -> KnobFit:
        """The fit of knob ``name``. Raises KeyError."""
        return next(k for k in self.knobs if k.knob == name)


def _share(values: list[int]) -> float | None:
    return float(np.mean(values)) if values else None


def _uniform(values: list[float], floor: int = 0) -> tuple[int, int] | None:
    """The uniform [low, high] whose 10th and 90th percentiles are the data's (robust to the
    long tails of real sessions; for uniform data it is 2-3x tighter than the quartiles)."""
    if not values:
        return None
    q10, q90 = np.percentile(values, [10, 90])
    width = (q90 - q10) / 0.8
    low = max(floor, int(round(q10 - 0.1 * width)))
    return low, max(low, int(round(q90 + 0.1 * width)))


def _comply(obs: list[tuple[int, int]]) -> tuple[float | None, int | None, int]:
    """(p_comply_block, max_block_retries, draws) from (complied, repeats before) pairs."""
    if not obs:
        return None, None, 0
    top = max(r for _, r in obs)
    draws = [c for c, r in obs if c == 0 or r < top or top == 0]
    retries = top if any(c == 0 for c, _ in obs) else None
    return (float(np.mean(draws)) if draws else None), retries, len(draws)


def _latency(rows: list[tuple[float, float, float]]) -> tuple[float, float, float] | None:
    if len(rows) < 3:
        return None
    data = np.asarray(rows, dtype=float)
    design = np.column_stack([np.ones(len(data)), data[:, 1] / 1000.0, data[:, 2]])
    if np.linalg.matrix_rank(design) < 3:
        return None
    (ttft, per_1k, per_token), *_ = np.linalg.lstsq(design, data[:, 0], rcond=None)
    if ttft < 0 or per_1k < 0 or per_token <= 0:
        return None
    return float(ttft), float(per_1k), float(1.0 / per_token)


def _median(values: list[float]) -> float | None:
    return float(np.median(values)) if values else None


def _weights(counts: Counter[str]) -> dict[str, float] | None:
    total = sum(counts[t] for t in _TOOLS)
    return {t: counts[t] / total for t in _TOOLS} if total else None


def _estimates(evs: Sequence[Evidence]) -> dict[str, tuple[Any, int]]:
    """knob -> (estimate or None, observations) on the pooled evidence."""
    def pool(attr: str) -> list:
        return [x for e in evs for x in getattr(e, attr)]

    comply, retries, draws = _comply(pool("comply"))
    lat = _latency(pool("durations"))
    n_lat = len(pool("durations"))
    explore: Counter[str] = Counter()
    for e in evs:
        explore.update(e.explore_tools)
    out: dict[str, tuple[Any, int]] = {
        "p_grep_first": (_share(pool("grep_first")), len(pool("grep_first"))),
        "window_lines": (_uniform(pool("window"), 1), len(pool("window"))),
        "p_follow_paging": (_share(pool("follow")), len(pool("follow"))),
        "p_restart_reread": (_share(pool("restart")), len(pool("restart"))),
        "p_comply_block": (comply, draws),
        "max_block_retries": (retries, len(pool("comply"))),
        "p_verify_reread": (_share(pool("verify")), len(pool("verify"))),
        "range_chunk_lines": ((int(round(_median(pool("chunk")) or 0)) if pool("chunk") else None), len(pool("chunk"))),
        "think_tokens": (_uniform(pool("think")), len(pool("think"))),
        "ttft_seconds": (lat[0] if lat else None, n_lat),
        "ttft_seconds_per_1k_input_tokens": (lat[1] if lat else None, n_lat),
        "output_tokens_per_second": (lat[2] if lat else None, n_lat),
        "tool_seconds": (_median(pool("tool_gaps")), len(pool("tool_gaps"))),
        "test_seconds": (_median(pool("test_gaps")), len(pool("test_gaps"))),
        "user_gap_seconds": (_median(pool("user_gaps")), len(pool("user_gaps"))),
        "calls_per_prompt": (_uniform(pool("calls_per_prompt"), 1), len(pool("calls_per_prompt"))),
        "explore_before_share": (_share(pool("before_share")), len(pool("before_share"))),
        "explore_tools": (_weights(explore), sum(explore[t] for t in _TOOLS)),
    }
    return out


def _interval(samples: list[Any]) -> Any:
    vals = [s for s in samples if s is not None]
    if not vals:
        return None
    if isinstance(vals[0], dict):
        return tuple(_interval([v[t] for v in vals]) for t in _TOOLS)
    if isinstance(vals[0], tuple):
        return tuple(_interval([v[i] for v in vals]) for i in range(len(vals[0])))
    low, high = np.percentile(np.asarray(vals, dtype=float), [2.5, 97.5])
    return float(low), float(high)


def _cast(knob: str, value: Any) -> Any:
    if knob == "explore_tools":
        return tuple((t, round(value[t], 4)) for t in _TOOLS)
    if isinstance(value, float) and knob in ("max_block_retries", "range_chunk_lines"):
        return int(value)
    if isinstance(value, float):
        return round(value, 4) if not knob.startswith("p_") else round(min(1.0, max(0.0, value)), 4)
    return value


def fit_evidence(evs: Sequence[Evidence], name: str, *, base: str = "sim-diligent", seed: int = 0,
                 bootstrap: int = 200, min_observations: int = 5, evidence: str = "") -> FitResult:
    """Fit a profile from per-session evidence (see :func:`fit_profile`)."""
    if not evs:
        raise ValueError("no sessions to fit a profile from")
    if bootstrap < 1:
        raise ValueError(f"bootstrap must be >= 1, got {bootstrap}")
    default = get_profile(base)
    point = _estimates(evs)
    rng = np.random.default_rng(seed)
    draws: dict[str, list[Any]] = {k: [] for k in point}
    # the bootstrap resamples sessions: one session resamples to itself, so its "interval" would
    # be the point estimate twice; no interval is given then (the knob is still fitted)
    for _ in range(bootstrap if len(evs) > 1 else 0):
        sample = [evs[i] for i in rng.integers(0, len(evs), len(evs))]
        for k, (v, _n) in _estimates(sample).items():
            draws[k].append(v)
    fits = []
    values: dict[str, Any] = {}
    for knob in KNOB_NAMES:
        if knob in _NEVER:
            fits.append(KnobFit(knob, getattr(default, knob), None, 0, False, f"not identifiable: {_NEVER[knob]}"))
            continue
        est, n = point[knob]
        if est is None or n < min_observations:
            why = "no observations" if n == 0 else f"{n} observations < {min_observations}" if est is not None \
                else f"{n} observations, estimate undefined"
            fits.append(KnobFit(knob, getattr(default, knob), None, n, False, f"kept {base}'s value: {why}"))
            continue
        value = _cast(knob, est)
        values[knob] = value
        if len(evs) > 1:
            fits.append(KnobFit(knob, value, _interval(draws[knob]), n, True, "fitted"))
        else:
            fits.append(KnobFit(knob, value, None, n, True,
                                "fitted; no interval: the bootstrap resamples sessions and there is 1"))
    resampled = f"seed {seed}, {bootstrap} bootstrap resamples" if len(evs) > 1 else "1 session: no bootstrap"
    summary = f"fitted by readbench sim fit ({resampled}; base {base})"
    profile = replace(default, name=name, summary=summary, evidence=evidence, **values)
    mix = Counter[str]()
    for e in evs:
        mix.update(e.tool_mix)
    total = sum(mix.values()) or 1
    return FitResult(profile, tuple(fits), len(evs), evidence, {k: v / total for k, v in sorted(mix.items())},
                     seed, bootstrap)


def describe_sessions(evs: Sequence[Evidence]) -> str:
    """``fitted from N sessions: harness(es), model(s), date range`` (dates from the first call)."""
    harnesses = ", ".join(sorted({e.harness for e in evs}))
    models = ", ".join(sorted({e.model for e in evs if e.model})) or "model not recorded"
    dates = sorted(dt.datetime.fromtimestamp(e.started, dt.timezone.utc).date() for e in evs if e.started is not None)
    span = f"{dates[0]}..{dates[-1]}" if dates else "dates not recorded"
    return f"fitted from {len(evs)} session{'s' if len(evs) != 1 else ''}: {harnesses}, {models}, {span}"


def fit_profile(sessions: Sequence[Session], name: str, *, base: str = "sim-diligent", seed: int = 0,
                bootstrap: int = 200, min_observations: int = 5,
                progress: Callable[[int], None] | None = None) -> FitResult:
    """Fit profile ``name`` from recorded sessions (module docstring).

    Args:
        sessions: imported sessions (readbench.sessions.load_sessions), any harness.
        name: the new profile's name (``sim-...``).
        base: profile whose values the unidentified knobs keep.
        seed: bootstrap seed (same sessions and seed -> the same profile and intervals).
        bootstrap: resamples (>= 1).
        min_observations: fewer observations than this leave a knob at the base's value.

    Raises:
        ValueError: no sessions, ``bootstrap`` < 1, or an unknown ``base``.
    """
    evs = []
    for i, s in enumerate(sessions):
        evs.append(session_evidence(s))
        if progress is not None:
            progress(i + 1)
    return fit_evidence(evs, name, base=base, seed=seed, bootstrap=bootstrap, min_observations=min_observations,
                        evidence=describe_sessions(evs))


def _toml_value(value: Any) -> Any:
    if isinstance(value, tuple) and value and isinstance(value[0], tuple) and isinstance(value[0][0], str):
        return {k: v for k, v in value}
    if isinstance(value, tuple):
        return [_toml_value(v) for v in value]
    return value


def write_profile(result: FitResult, path: str | Path | None = None) -> Path:
    """Add (or replace) the fitted row in the user profile file; returns the file's path.

    The row has every knob, ``evidence`` and a ``fit`` table (per knob: ``identified``,
    ``observations``, ``note`` and the bootstrap ``interval`` when fitted). Other rows are kept.

    Raises:
        ValueError: the file exists but is not TOML, or the name is a built-in profile's.
        OSError: the file cannot be read or written (a directory, a missing or read-only parent).
    """
    import tomllib

    import tomli_w

    from readbench.sim.profiles import builtin_profile_names, mixture_names

    if result.profile.name in builtin_profile_names() + mixture_names():
        raise ValueError(f"{result.profile.name!r} is a built-in profile name; choose another --name")
    target = Path(path) if path is not None else user_profiles_path()
    table: dict[str, Any] = {}
    if target.exists():
        try:
            table = tomllib.loads(target.read_text(encoding="utf-8"))
        except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
            raise ValueError(f"{target}: not a readable profile file ({exc}); nothing written") from None
        if not isinstance(table.get("profiles", {}), dict):
            raise ValueError(f"{target}: not a readable profile file ('profiles' is not a table); nothing written")
    row = profile_row(result.profile)
    row["fit"] = {k.knob: {"identified": k.identified, "observations": k.observations, "note": k.note,
                           **({"interval": _toml_value(k.interval)} if k.interval is not None else {})}
                  for k in result.knobs}
    table.setdefault("profiles", {})[result.profile.name] = row
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_suffix(target.suffix + ".tmp")
    tmp.write_text("# readbench sim profiles fitted from your recorded sessions (readbench sim fit)\n"
                   + tomli_w.dumps(table), encoding="utf-8")
    tmp.replace(target)
    return target
