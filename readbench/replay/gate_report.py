"""The gate-sweep section of `readbench replay`'s report (`--gate-sweep`; issue 14 item 4).

Reads `gate_candidates.parquet` (one row per candidate, `readbench.replay.gate_sweep`), writes
`gate_sweep.parquet` (realized benefit per basis x r x state x T, best T flagged) and
`gate_sweep.png` (the sweep curves), and renders: the candidates per strategy, the remaining
calls after a candidate, and the best T per r and agent state, to the session's end (the
sister's count) and while the request still carries the changed message.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from readbench.analysis._document import Heading, Image, Paragraph, Table

__all__ = ["gate_section"]


def gate_section(w: Any) -> list[Any]:
    """Document blocks for the gate sweep; none when `--gate-sweep` was not given (no session
    result carries `gate_candidates`)."""
    from readbench.replay.gate_sweep import STATES, best_thresholds, sweep

    if not any("gate_candidates" in s for s in w.sessions):
        return []
    blocks: list[Any] = [
        Heading(2, "Cache-aware gate: best break-even threshold T per cached-price ratio r"),
        Paragraph("The sister extension's gate benchmark (docs/specs/dcp.md §7.5): every candidate its pipeline "
                  "proposes (gate off, decisions sticky) is recorded at the first call where it is proposable, with "
                  "realized benefit remaining_calls·r·removed − (1−r)·tail in token-units (full-price input-token "
                  "equivalents); threshold T accepts the candidates whose break-even (1−r)·tail/(r·removed) is at most "
                  "T calls. Agent states are the gate's runtime (turn-start) labels. Cells: best T: realized benefit "
                  "(accepted/candidates). The extension ships T = 22 for both states."),
    ]
    df = w.table("gate_candidates")
    sessions = len(w.sessions)
    if df.empty:
        return blocks + [Paragraph(f"No gate candidates in {sessions} session(s): nothing to sweep. The pipeline "
                                   "proposes only outside the last 4 user turns, so sessions with few user prompts "
                                   "(long autonomous loops) have none.")]
    curves = sweep(df)
    curves.to_parquet(w.tmp / "gate_sweep.parquet", index=False)
    best = best_thresholds(curves)
    q = lambda col, p: int(np.percentile(df[col], p))  # noqa: E731
    blocks += [
        Paragraph(f"{len(df):,} candidate(s) in {df['file'].nunique()} file(s), {df['session_id'].nunique()} session(s) "
                  f"of {sessions} replayed. Remaining calls after a candidate: p50 {q('remaining_calls', 50)}, p90 "
                  f"{q('remaining_calls', 90)} to the session's end; p50 {q('remaining_calls_context', 50)}, p90 "
                  f"{q('remaining_calls_context', 90)} while the request still carries the message. Agent state at the "
                  "candidate's call: " + ", ".join(f"{s} {int((df['agent_state'] == s).sum()):,}" for s in STATES[1:]) + "."),
        Table(("strategy", "candidates", "removed tokens"),
              tuple((str(k), f"{len(g):,}", f"{int(g['removed_tokens'].sum()):,}")
                    for k, g in df.groupby("strategy", sort=True))),
        Table(("r", *STATES), _best_rows(best, "session"), "Remaining calls to the session's end (the sister's count)"),
        Table(("r", *STATES), _best_rows(best, "context"),
              "Remaining calls while the request still carries the message (a compaction ends the saving)"),
    ]
    _figure(curves, w.tmp / "gate_sweep.png")
    return blocks + [Image("gate_sweep.png", "realized benefit of the gate's threshold T per cached-price ratio r")]


def _best_rows(best: Any, basis: str) -> tuple[tuple[str, ...], ...]:
    from readbench.replay.gate_sweep import STATES, T_CAP

    rows = []
    for r, g in best[best["basis"] == basis].groupby("r", sort=True):
        cells = [f"{r:g}"]
        for state in STATES:
            row = g[g["state"] == state].iloc[0]
            capped = " (cap)" if row["T"] == T_CAP else ""
            cells.append(f"T={row['T']}{capped}: {row['realized_benefit']:,.0f} ({row['accepted']}/{row['candidates']})")
        rows.append(tuple(cells))
    return tuple(rows)


def _figure(curves: Any, path: Path) -> Path:
    """Realized benefit (token-units) against T, one panel per r; solid: to the session's end,
    dashed: while the message is still sent; dots: best T; dotted line: the shipped T = 22."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    rs = sorted(curves["r"].unique())
    cols = min(len(rs), 2)
    rows = -(-len(rs) // cols)
    fig = Figure(figsize=(5.0 * cols, 3.4 * rows), layout="constrained")
    FigureCanvasAgg(fig)
    colors = {"overall": "black", "mid_loop": "tab:blue", "idle": "tab:orange"}
    for k, r in enumerate(rs):
        ax = fig.add_subplot(rows, cols, k + 1)
        for (basis, state), g in curves[curves["r"] == r].groupby(["basis", "state"], sort=False):
            style = "-" if basis == "session" else "--"
            ax.plot(g["T"], g["realized_benefit"], style, color=colors[state],
                    label=state if basis == "session" else None, linewidth=1.2)
            b = g[g["best"]]
            ax.plot(b["T"], b["realized_benefit"], "o", color=colors[state], markersize=4)
        ax.axvline(22, color="grey", linestyle=":", linewidth=0.8, label="shipped T = 22")
        ax.axhline(0, color="grey", linewidth=0.5)
        ax.set_title(f"r = {r:g}", fontsize=9)
        ax.set_xlabel("break-even threshold T (calls)")
        ax.set_ylabel("realized benefit (token-units)")
        if k == 0:
            ax.legend(fontsize=7, title="solid: to session end\ndashed: while sent", title_fontsize=6)
    fig.savefig(path, dpi=110)
    return path
