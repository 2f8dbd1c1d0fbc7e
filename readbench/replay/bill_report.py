"""The replay report's first section: billed vs simulated per session (readbench.replay.bill's
raw, in-sample and out-of-sample replays), the billed misses by reason, the calibration notes,
the files not imported and the cumulative-cost figure (`cost.png`). One of the report's
`SECTIONS` (readbench.replay.report), like audit_report, dcp_report and gate_report.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from readbench.analysis._document import Bullets, Heading, Image, Paragraph, Table

__all__ = ["bill_section", "panel_title"]


def _fmt(v: Any, spec: str = ".2f") -> str:
    return "–" if v is None or (isinstance(v, float) and math.isnan(v)) else format(v, spec)


def _interval(v: Any) -> str:
    if not isinstance(v, (list, tuple)) or len(v) != 2 or any(x is None or (isinstance(x, float) and math.isnan(x)) for x in v):
        return "–"
    return f"{v[0]:.2f}–{v[1]:.2f}"


def bill_section(w: Any) -> list[Any]:
    """Billed vs simulated per session, the billed misses by reason, calibration notes, files
    not imported and the cumulative-cost figure, from `w` (the replay's
    readbench.replay.report.ReplayWriter: its sessions, failures, curves and temp directory)."""
    blocks: list[Any] = [
        Heading(2, "Billed vs simulated"),
        Paragraph("Each priced call's cache read, write, uncached input and cost as billed and as readbench's cache "
                  "simulator gives them: raw (recorded content, no calibration), in-sample (calibrated on the session's "
                  "own bill: token fit, unrecorded head, TTL tier, cold start, exogenous breaks) and out-of-sample "
                  "(calibrated on the first half of the calls, scored on the second; the expected cost of exogenous "
                  "breaks at rates pooled over the first halves of the sessions of the same harness and model, with a "
                  "90 % interval from the other sessions' out-of-sample errors: next section). Every miss, billed or simulated, has a reason in "
                  "calls.parquet (billed_reason, sim_reason, sim_why)."),
    ]
    rows = []
    for s in w.sessions:
        name = Path(s["file"]).name + (f" ({s['session_id'][:8]})" if s.get("session_id") else "")
        rows.append((name, s["format"], str(s["calls"]), str(s.get("priced_calls", 0)), _fmt(s.get("billed_cost_usd")),
                     _fmt(s.get("simulated_cost_usd_raw")), _fmt(s.get("simulated_cost_usd")),
                     _fmt(s.get("billed_cost_usd_out_of_sample")),
                     _fmt(s.get("simulated_cost_usd_out_of_sample_pooled", s.get("simulated_cost_usd_out_of_sample"))),
                     _interval(s.get("simulated_cost_usd_out_of_sample_pooled_interval",
                                     s.get("simulated_cost_usd_out_of_sample_interval"))),
                     f"{_fmt(s.get('calls_read_within_5pct_raw'), '.0%')} / {_fmt(s.get('calls_read_within_5pct'), '.0%')} / "
                     f"{_fmt(s.get('calls_read_within_5pct_out_of_sample'), '.0%')}",
                     str(s.get("unexplained_misses", "–")), str(s.get("exogenous_breaks", "–"))))
    blocks.append(Table(("session", "format", "calls", "priced", "billed $", "raw $", "in-sample $", "2nd half billed $",
                         "out-of-sample $", "90 % interval $", "read ±5 % raw / in / out", "unexplained misses", "breaks"), tuple(rows)))
    reasons: dict[str, int] = {}
    for s in w.sessions:
        for k, v in (s.get("billed_miss_reasons") or {}).items():
            reasons[k] = reasons.get(k, 0) + v
    if reasons:
        blocks += [Heading(3, "Billed misses by reason (raw replay)"),
                   Table(("reason", "calls"), tuple((k, str(v)) for k, v in sorted(reasons.items(), key=lambda kv: -kv[1]))),
                   Paragraph("unexplained: the bill shows a miss the recorded content does not explain (e.g. a restart that "
                             "re-rendered the system prompt); the calibrated replays turn these into exogenous breaks at the "
                             "billed read's position.")]
    blocks += [Heading(3, "Calibration and notes"),
               Bullets(tuple(f"{Path(s['file']).name}: " + "; ".join(s.get("notes") or ["–"]) for s in w.sessions))]
    if w.failures:
        blocks += [Heading(3, "Files not imported"), Bullets(tuple(f"{p}: {r}" for p, r in w.failures))]
    if w.curves:
        _figure(w.curves, w.tmp / "cost.png")
        blocks.append(Image("cost.png", "cumulative cost per session: billed vs simulated (raw, in-sample, out-of-sample)"))
    return blocks


def _figure(curves: dict[str, list[dict[str, Any]]], path: Path) -> Path:
    """Cumulative billed vs simulated cost per session (USD), one panel per session."""
    import numpy as np
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    n = len(curves)
    cols = min(n, 3)
    rows = math.ceil(n / cols)
    fig = Figure(figsize=(4.2 * cols, 3.0 * rows), layout="constrained")
    FigureCanvasAgg(fig)
    for k, (name, rs) in enumerate(curves.items()):
        ax = fig.add_subplot(rows, cols, k + 1)
        for mode, style in (("billed", "-"), ("raw", ":"), ("in_sample", "--"), ("out_of_sample", "-.")):
            src = [r for r in rs if r["mode"] == ("raw" if mode == "billed" else mode)]
            key = "billed_cost_usd" if mode == "billed" else "sim_cost_usd"
            vals = np.array([r[key] + (r["expected_break_cost_usd"] or 0.0 if mode == "out_of_sample" else 0.0)
                             if r[key] is not None else np.nan for r in src], dtype=float)
            ax.plot([r["call"] for r in src], np.nancumsum(vals), style, label=mode.replace("_", "-"))
        ax.set_title(panel_title(name), fontsize=8)
        ax.set_xlabel("call")
        ax.set_ylabel("cumulative USD")
        if k == 0:
            ax.legend(fontsize=7)
    fig.savefig(path, dpi=110)
    return path


def panel_title(name: str, width: int = 40) -> str:
    """A session's panel title of at most `width` characters, keeping its start and its end (the
    short id): full pi file names (86 characters) ran into the neighbouring panels' (issue 27 trial)."""
    if len(name) <= width:
        return name
    tail = width // 2
    return f"{name[:width - tail - 1]}…{name[-tail:]}"
