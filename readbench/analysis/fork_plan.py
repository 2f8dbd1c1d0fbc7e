"""`readbench plan --design forked`: what a matrix costs forked and independent (GitHub issue 25
item 5), from a forked run's divergence rows or from recorded sessions' fork points.

One path for both sources: rows of the shape of `divergence.divergence_rows` (one per arm x
unit, a unit being a task x epoch of a run or one recorded session: the unit's calls, the calls
the arm shares with its trunk, their tokens and their cost per cache model), then
`design_estimate`: an independent run pays every arm's whole trajectory; a forked run pays each
schema group's trunk once (readbench.run.forked) plus each arm's calls after its fork point.

From recorded sessions (`session_fork_rows`, first order, as the replays it reads): the session's
own trajectory stands for every arm's; each arm's fork point against its group's trunk arm is the
first call whose request differs under its read preset (`readbench replay --audit --fork-points`:
the first request holding a result the two presets return differently) or under its DCP
configuration (`--dcp`: the first call whose projection differs from the recorded request); calls
are priced at the session's simulated per-call cost (calls.parquet, calibrated in-sample).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd

from . import _format as F

__all__ = ["SESSIONS_MODEL", "design_estimate", "format_estimate", "load_fork_points", "session_fork_rows"]

#: The ``model`` of rows estimated from recorded sessions (their trajectories are the sessions' own).
SESSIONS_MODEL = "recorded sessions"


def _model_of(arm: str) -> str:
    return arm.rsplit(" @ ", 1)[1] if " @ " in arm else ""


def _name_of(arm: str) -> str:
    return arm.rsplit(" @ ", 1)[0]


def design_estimate(rows: pd.DataFrame, trunk_arms: list[str]) -> pd.DataFrame:
    """Mean per unit of model calls, tokens and USD per cache model, independent and forked.

    Args:
        rows: one row per arm x unit: ``arm`` (``variant × dcp @ model``), ``sample_id``, ``epoch``,
            ``calls``, ``replayed_calls`` (calls shared with the trunk), ``input_tokens``,
            ``output_tokens``, ``prefix_input_tokens``, ``prefix_output_tokens`` and per cache
            model m ``cost_usd_{m}`` and ``saved_usd_{m}`` (the shared calls' cost).
        trunk_arms: the trunk arms' ``variant × dcp`` labels (each pays its whole trajectory once
            per unit besides its own fork, which replays it whole).

    Returns:
        Rows ``model, measure ("model calls", "tokens" or "USD {m}"), units, independent, forked,
        saved_share`` (independent and forked are means per unit).

    Raises:
        ValueError: no rows (not a forked run, or no session with fork points).
    """
    if rows.empty:
        raise ValueError("no divergence table: plan --design forked needs a run made with --design forked")
    df = rows.copy()
    df["model"] = df["arm"].map(_model_of)
    df["trunk"] = df["arm"].map(_name_of).isin(trunk_arms)
    df["tokens"] = df["input_tokens"] + df["output_tokens"]
    df["prefix_tokens"] = df["prefix_input_tokens"] + df["prefix_output_tokens"]
    measures = [("model calls", "calls", "replayed_calls"), ("tokens", "tokens", "prefix_tokens")]
    measures += [(f"USD {c[len('cost_usd_'):]}", c, "saved_usd_" + c[len("cost_usd_"):])
                 for c in sorted(df.columns) if c.startswith("cost_usd_")]
    out = []
    for model, every in df.groupby("model", sort=True):
        for name, total, shared in measures:
            g = every[every[total].notna()]  # a session its cache model does not price is left out of that row
            units = len(g.groupby(["sample_id", "epoch"]))
            if not units:
                continue
            whole = g[total].astype(float)
            independent = whole.sum()
            forked = (whole - g[shared].fillna(0).astype(float)).sum() + whole[g["trunk"]].sum()
            out.append({"model": model, "measure": name, "units": units, "independent": independent / units,
                        "forked": forked / units,
                        "saved_share": 1.0 - forked / independent if independent else float("nan")})
    return pd.DataFrame(out)


def format_estimate(est: pd.DataFrame, source: str, unit: str) -> str:
    """The plan's lines: per model, model calls and tokens, then USD per cache model, per ``unit``."""
    lines = [f"Cost per {unit} of this matrix, independent vs forked (from {source}):"]
    for model, g in est.groupby("model", sort=False):
        counts = g[~g["measure"].str.startswith("USD ")].set_index("measure")
        parts = [f"{m} independent {F.num(r['independent'], 1)}, forked {F.num(r['forked'], 1)} "
                 f"({F.pct(r['saved_share'])} saved)" for m, r in counts.iterrows()]
        units = int(counts["units"].iloc[0])
        lines.append(f"  {model} ({units} {unit}{'' if units == 1 else 's'}): " + "; ".join(parts))
        for r in g[g["measure"].str.startswith("USD ")].to_dict("records"):
            fewer = (f" [mean over the {int(r['units'])} {unit}s this cache model prices, not all {units}]"
                     if int(r["units"]) != units else "")
            lines.append(f"  {model} / {r['measure'][4:]}: independent {F.usd(r['independent'])}, "
                         f"forked {F.usd(r['forked'])} ({F.pct(r['saved_share'])} saved){fewer}")
    return "\n".join(lines) + "\n"


def load_fork_points(replay_dir: Path) -> tuple[pd.DataFrame, pd.DataFrame]:
    """``fork_points.parquet`` and the in-sample rows of ``calls.parquet`` of a replay directory.

    Raises:
        FileNotFoundError: a table is missing (the replay was made without ``--fork-points``).
    """
    fp, calls = Path(replay_dir) / "fork_points.parquet", Path(replay_dir) / "calls.parquet"
    for p in (fp, calls):
        if not p.is_file():
            raise FileNotFoundError(f"{p} not found: make the replay with `readbench replay --audit --dcp all "
                                    "--fork-points ... --out DIR`")
    c = pd.read_parquet(calls, columns=["file", "session_id", "call", "cache_model", "mode", "sim_input_tokens",
                                        "output_tokens", "sim_cost_usd"])
    return pd.read_parquet(fp), c[c["mode"] == "in_sample"]


def _first(points: dict[tuple[str, str, str], Any], kind: str, trunk: str, arm: str, session: str) -> int | None:
    key = (kind, trunk, arm)
    if key not in points:
        what = "read preset" if kind == "read" else "DCP configuration"
        flag = "--audit --presets" if kind == "read" else "--dcp"
        replayed = {name for k, t, a in points if k == kind for name in (t, a)}
        missing = [name for name in dict.fromkeys((arm, trunk)) if name not in replayed and name != "off"] or [arm]
        raise ValueError(f"the replay has no fork points for the {what} {' or '.join(map(repr, missing))} (needed: "
                         f"{arm!r} against {trunk!r}): replay the sessions with {flag} naming it, and --fork-points")
    v = points[key].get(session)
    return None if v is None or pd.isna(v) else int(v)


def _priced(row: dict[str, Any], per_call: pd.DataFrame | None, models: list[str], shared: int) -> dict[str, Any]:
    """``row`` with, per cache model m, ``cost_usd_{m}`` (the session's simulated cost) and
    ``saved_usd_{m}`` (its first ``shared`` calls'; NaN both where m prices no call), and the
    session's tokens and the first ``shared`` calls' (from the first priced cache model)."""
    for m in models:
        c = per_call[per_call["cache_model"] == m] if per_call is not None else None
        if c is None or c.empty:
            row[f"cost_usd_{m}"] = row[f"saved_usd_{m}"] = float("nan")
            continue
        row[f"cost_usd_{m}"] = float(c["sim_cost_usd"].sum())
        row[f"saved_usd_{m}"] = float(c.loc[c["call"] < shared, "sim_cost_usd"].sum())
        if "input_tokens" not in row:
            row["input_tokens"], row["output_tokens"] = int(c["sim_input_tokens"].sum()), int(c["output_tokens"].sum())
            row["prefix_input_tokens"] = int(c.loc[c["call"] < shared, "sim_input_tokens"].sum())
            row["prefix_output_tokens"] = int(c.loc[c["call"] < shared, "output_tokens"].sum())
    for k in ("input_tokens", "output_tokens", "prefix_input_tokens", "prefix_output_tokens"):
        row.setdefault(k, 0)
    return row


def session_fork_rows(fork_points: pd.DataFrame, calls: pd.DataFrame, arms: list[tuple[str, str]],
                      groups: list[list[int]], independent: list[str] | tuple[str, ...] = (),
                      labels: list[str] | None = None) -> tuple[pd.DataFrame, list[str]]:
    """Rows of `design_estimate`'s shape from recorded sessions (module docstring), and the
    assumptions they rest on, in words.

    Args:
        fork_points: fork_points.parquet (readbench.replay.fork_points).
        calls: calls.parquet's in-sample rows (per call and cache model: ``sim_input_tokens``,
            ``output_tokens``, ``sim_cost_usd``).
        arms: the matrix's arms as ``(read preset name, DCP configuration name)``.
        groups: indices of `arms` per schema group (readbench.run.forked.schema_groups); each
            group's first arm is its trunk.
        independent: labels (``variant × dcp × agent``) of a real harness's arms, which a forked
            run runs independently (readbench.run.forked): per session one row of kind
            ``independent``, the whole session paid, nothing shared.
        labels: each arm's label (``variant × dcp``, ``variant × dcp × pi`` for a pi arm, whose group is
            its pi pin's: readbench.run.forked.pi_groups); default ``read × dcp`` of `arms`.

    Returns:
        (rows with ``fork_fraction`` = the fork call / the session's calls, notes).

    Raises:
        ValueError: the replay lacks a preset or configuration of the matrix.
    """
    points: dict[tuple[str, str, str], dict[str, Any]] = {}
    for (kind, trunk, arm), g in fork_points.groupby(["kind", "trunk", "arm"], sort=False):
        points[(str(kind), str(trunk), str(arm))] = dict(zip(g["file"] + "\x1f" + g["session_id"], g["first_call"]))
    sessions = fork_points.drop_duplicates(["file", "session_id"])
    calls = calls.assign(key=calls["file"] + "\x1f" + calls["session_id"],
                         tokens=calls["sim_input_tokens"] + calls["output_tokens"])
    models = sorted(calls["cache_model"].unique())
    by_session = {k: g for k, g in calls.groupby("key", sort=False)}
    notes = []
    rows: list[dict[str, Any]] = []
    for s in sessions.itertuples():
        key = f"{s.file}\x1f{s.session_id}"
        n = int(s.calls)  # type: ignore[arg-type]  # itertuples' field type is the union of all cells
        per_call = by_session.get(key)
        for group in groups:
            t_read, t_dcp = arms[group[0]]
            for i in group:
                read, dcp = arms[i]
                firsts = []
                if read != t_read:
                    firsts.append(_first(points, "read", t_read, read, key))
                if dcp != t_dcp:
                    if t_dcp != "off" and dcp != "off":  # only each against off is recorded: fork at the earlier
                        firsts += [_first(points, "dcp", "off", dcp, key), _first(points, "dcp", "off", t_dcp, key)]
                    else:
                        firsts.append(_first(points, "dcp", "off", dcp if t_dcp == "off" else t_dcp, key))
                found = [f for f in firsts if f is not None]
                fork = min(found) if found else None
                shared = n if fork is None else fork
                label = labels[i] if labels is not None else f"{read} × {dcp}"
                rows.append(_priced({"arm": f"{label} @ {SESSIONS_MODEL}", "sample_id": key, "epoch": 1,
                                     "kind": "never" if fork is None else "request",
                                     "fork_call": n if fork is None else fork,
                                     "fork_fraction": (n if fork is None else fork) / n if n else float("nan"),
                                     "calls": n, "replayed_calls": shared}, per_call, models, shared))
        for label in independent:  # paid whole: nothing shared with a trunk
            rows.append(_priced({"arm": f"{label} @ {SESSIONS_MODEL}", "sample_id": key, "epoch": 1,
                                 "kind": "independent", "fork_call": None, "fork_fraction": float("nan"),
                                 "calls": n, "replayed_calls": 0}, per_call, models, 0))
    if any(arms[g[0]][1] != "off" and arms[i][1] not in ("off", arms[g[0]][1]) for g in groups for i in g):
        notes.append("two DCP configurations other than off in one group: the replay records each against off, "
                     "so such an arm forks at the earlier of the two first changes (forking early is sound; the "
                     "saving is underestimated)")
    notes.append("first order: every arm's trajectory is the recorded session's, its calls priced at the session's "
                 "simulated cost per call (calibrated in-sample); a read preset and a DCP configuration of one arm are "
                 "each compared on the recorded requests, and the arm forks at the earlier first change")
    return pd.DataFrame(rows), notes
