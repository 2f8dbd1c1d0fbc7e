"""The read-audit and read-variant sections of `readbench replay --audit`'s report (issue 14
items 1, 2, 5).

Reads `audit.parquet` (one row per session, `readbench.replay.audit`) and renders the audit per
session with the folder's total, the comparison with the public numbers of sessions.md §6, and
`audit_waste.png` (cap-hit waste per session). Reads `read_arms.parquet` and
`read_arm_reads.parquet` (`readbench.replay.read_counterfactual`) and renders the first-order
counterfactual per preset x cache model, which presets could not be replayed and why, and
`read_arms_cost.png` (cost change per preset across sessions).
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from readbench.analysis._document import Heading, Image, Paragraph, Table

__all__ = ["audit_section", "read_arms_section"]

#: Sessions listed one by one in the audit table (the rest are in audit.parquet and the total).
MAX_ROWS = 40
#: sessions.md §6: the public audit of 756 pi sessions.
PUBLIC = {"tool_share": 0.84, "read_share": 0.52, "exact_dedup": 0.04}


def _pct(v: float, digits: int = 1) -> str:
    return "–" if v is None or (isinstance(v, float) and math.isnan(v)) else f"{100 * v:.{digits}f} %"


def _ratio(a: float, b: float) -> float:
    return a / b if b else math.nan


def audit_section(w: Any) -> list[Any]:
    """Document blocks for the read audit; none when `--audit` was not given."""
    df = w.table("audit")
    if df.empty:
        return []
    sums = df.select_dtypes("number").sum()
    cost = df["billed_cost_usd"].sum(min_count=1)
    carried_cost = df["redelivered_cost_usd"].sum(min_count=1)
    rows: list[tuple[str, ...]] = []
    shown = df
    if len(df) > MAX_ROWS:  # the sessions with the most waste; every session is in audit.parquet
        shown = df.assign(_w=df["capped_read_tokens"] + df["redelivered_tokens"]).nlargest(MAX_ROWS, "_w")
    for r in shown.itertuples():
        rows.append((f"{Path(r.file).name} ({str(r.session_id)[:8]})", r.harness, str(r.read_calls), str(r.blind_reads),
                     str(r.over_cap_reads), str(r.capped_reads), f"{r.paging_reads} / {r.paging_chains}", str(r.restarts),
                     f"{r.capped_read_tokens:,}", f"{r.redelivered_tokens:,}", _pct(r.redelivered_input_share),
                     _pct(r.redelivered_cost_share)))
    rows.append((f"all {len(df)} sessions", "", *(f"{int(sums[k]):,}" for k in (
        "read_calls", "blind_reads", "over_cap_reads", "capped_reads")), f"{int(sums['paging_reads'])} / {int(sums['paging_chains'])}",
        f"{int(sums['restarts']):,}", f"{int(sums['capped_read_tokens']):,}", f"{int(sums['redelivered_tokens']):,}",
        _pct(_ratio(sums["carried_tokens"], sums["input_tokens"])), _pct(_ratio(carried_cost, cost))))
    blocks: list[Any] = [
        Heading(2, "Read audit"),
        Paragraph("Every read of every harness (the read tool, and cat / sed -n / head / tail / nl -ba through a shell), "
                  "from the harness's own evidence: pi's continuation notices, Claude Code's startLine / numLines / "
                  "totalLines, Codex's 'Total output lines'. Over cap: the file has more than 2,000 lines or 50 KB, or a "
                  "read of it from the start was cut. Paging: a read starting on the line after the previous read of "
                  "the same file ended (reads / chains). Restarts: reads from line 1 of a file read before. Re-delivered: "
                  "lines an earlier read of the same unchanged file had delivered with the same text; the carried share "
                  "counts them once per later request that re-sent them (each call re-sends its history), against every "
                  "request's input (the unrecorded system prompt and tools included) and the billed cost. Tokens are "
                  "readbench's count in the session's tokenizer family."),
        Table(("session", "harness", "reads", "blind", "over cap", "capped", "paging", "restarts", "capped-read tokens",
               "re-delivered tokens", "carried share of input", "carried share of cost"), tuple(rows),
              "" if len(df) <= MAX_ROWS else f"the {MAX_ROWS} sessions with the most capped-read and re-delivered tokens "
                                             f"of {len(df)}; every session is in audit.parquet"),
        Heading(3, "Against the public numbers (sessions.md §6)"),
        Table(("measure", "pi sessions", "all sessions", "public pi audit (756 sessions)"), _public_rows(df)),
        Paragraph("Once: every message sent, each counted once. As sent: summed over every request (a message counts "
                  "once per request that carries it). The public audit does not say which of the two it measured."),
    ]
    _waste_figure(df, w.tmp / "audit_waste.png")
    blocks.append(Image("audit_waste.png", "cap-hit waste per session: tokens of capped reads and re-delivered tokens, "
                                           "and the share of input and cost the re-deliveries carried"))
    return blocks


def _public_rows(df: Any) -> tuple[tuple[str, ...], ...]:
    """The sessions.md §6 measures over the pi sessions and over all sessions, with the public figure."""
    def measures(d: Any) -> list[float]:
        s = d.select_dtypes("number").sum()
        return [_ratio(s["tool_result_tokens"], s["context_tokens"]), _ratio(s["sent_tool_result_tokens"], s["sent_tokens"]),
                _ratio(s["read_tool_tokens"], s["tool_result_tokens"]), _ratio(s["read_result_tokens"], s["tool_result_tokens"]),
                _ratio(s["sent_read_result_tokens"], s["sent_tool_result_tokens"]),
                _ratio(s["shell_result_tokens"], s["tool_result_tokens"]), _ratio(s["exact_repeat_reads"], s["repeat_reads"])]

    names = ("tool results, share of context tokens (once)", "tool results, share of context tokens (as sent)",
             "read-tool results, share of tool-result tokens (once)",
             "reads (read tool and shell reads), share of tool-result tokens (once)",
             "reads (read tool and shell reads), share of tool-result tokens (as sent)",
             "shell-tool results, share of tool-result tokens (once)",
             "repeat reads whose text equals an earlier result (exact dedup)")
    public = (_pct(PUBLIC["tool_share"], 0), _pct(PUBLIC["tool_share"], 0), _pct(PUBLIC["read_share"], 0), "–", "–",
              "25 % (bash)", _pct(PUBLIC["exact_dedup"], 0))
    pi, every = measures(df[df["harness"] == "pi"]), measures(df)
    return tuple((n, _pct(a), _pct(b), p) for n, a, b, p in zip(names, pi, every, public, strict=True))


def _waste_figure(df: Any, path: Path) -> Path:
    """Per session (bars, at most 40 sessions; histograms beyond): capped-read and re-delivered
    tokens, and the carried shares of input and billed cost."""
    import seaborn as sns
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    sns.set_theme(style="whitegrid")
    fig = Figure(figsize=(11, 0.8 + 0.28 * min(len(df), 40)) if len(df) <= 40 else (11, 3.6), layout="constrained")
    FigureCanvasAgg(fig)
    left, right = fig.add_subplot(1, 2, 1), fig.add_subplot(1, 2, 2)
    if len(df) <= 40:
        names = [f"{Path(f).name[:28]} ({str(s)[:6]})" for f, s in zip(df["file"], df["session_id"], strict=True)]
        y = range(len(df))
        left.barh([k - 0.2 for k in y], df["capped_read_tokens"], height=0.4, label="tokens of capped reads")
        left.barh([k + 0.2 for k in y], df["redelivered_tokens"], height=0.4, label="re-delivered tokens")
        left.set_yticks(list(y), names, fontsize=7)
        right.barh([k - 0.2 for k in y], 100 * df["redelivered_input_share"], height=0.4, label="of input tokens")
        right.barh([k + 0.2 for k in y], 100 * df["redelivered_cost_share"].fillna(0), height=0.4, label="of billed cost")
        right.set_yticks(list(y), [""] * len(df))
        left.invert_yaxis()
        right.invert_yaxis()
    else:
        left.hist([df["capped_read_tokens"], df["redelivered_tokens"]], bins=30,
                  label=["tokens of capped reads", "re-delivered tokens"])
        left.set_ylabel("sessions")
        right.hist([100 * df["redelivered_input_share"], 100 * df["redelivered_cost_share"].dropna()], bins=30,
                   label=["of input tokens", "of billed cost"])
    left.set_xlabel("tokens (each result once)")
    right.set_xlabel("share carried by re-deliveries (%)")
    left.legend(fontsize=7)
    right.legend(fontsize=7)
    fig.savefig(path, dpi=110)
    return path


def read_arms_section(w: Any) -> list[Any]:
    """Document blocks for the read-variant counterfactual; none when it did not run. Both savings
    tables sum the same rows (`readbench.replay.read_savings`); sessions left out are named."""
    df = w.table("read_arms")
    if df.empty:
        return []
    from readbench.replay.read_counterfactual import FIRST_ORDER_NOTE
    from readbench.replay.read_savings import read_savings

    sav = read_savings(df, w.table("audit", ["file", "session_id"]))
    rows_df = sav.rows.copy()
    off_cost = rows_df["sim_cost_usd"] - rows_df["cost_delta_usd"]
    rows_df["cost_change_pct"] = (100 * rows_df["cost_delta_usd"] / off_cost).where(off_cost > 0)
    rows = []
    for (preset, harness), g in sav.by_harness().iterrows():
        part = rows_df[(rows_df["preset"] == preset) & (rows_df["harness"] == harness)]
        own_here = bool(part["own"].any()) if "own" in part else False
        touched = part[part["reads_changed"] > 0]
        med = touched["cost_change_pct"].median() if len(touched) else math.nan
        replayed = int(g["reads_same"] + g["reads_changed"])
        rows.append((f"{preset} (own)" if own_here else preset, harness, f"{int(g['sessions'])} ({int(g['sessions_changed'])})",
                     f"{int(g['reads_same']):,} / {replayed:,} / {int(g['reads']):,}",
                     f"{int(g['reads_changed']):,}", f"{int(g['reads_notice_only']):,}",
                     f"{int(g['reads_not_replayable']):,}", f"{int(g['blocked']):,}",
                     f"{int(g['stubbed']):,}", f"{int(g['result_tokens_delta']):+,}",
                     f"{int(g['input_tokens_delta']):+,}", f"{g['cost_delta_usd']:+.2f}",
                     "–" if math.isnan(med) else f"{med:+.1f} %"))
    pivot = sav.by_cache_model()
    caches = [c for c in pivot.columns if c != "total"]
    cost_rows = tuple((p, *(f"{pivot.at[p, c]:+.2f}" if not math.isnan(pivot.at[p, c]) else "–" for c in caches),
                       f"{pivot.at[p, 'total']:+.2f}") for p in pivot.index)
    blocks: list[Any] = [
        Heading(2, "Read variants on these sessions (first-order counterfactual)"),
        Paragraph(f"{FIRST_ORDER_NOTE.capitalize()}. The recorded calls, outputs and times stay; each read-tool result "
                  "is replaced by what the preset returns on the file as the session's own reads show it, and every "
                  "later request re-sends the replacement. A preset that refuses a read (B) saves its tokens here, but "
                  "the model would have read again in ranges, which a first-order replay cannot see: read the savings "
                  "as an upper bound for refusing presets, and the extra tokens of bigger results as a lower bound. "
                  "Requests are simulated with the session's calibration from its bill, the same path as the DCP "
                  "replay. Shell reads stay as recorded. The counterfactual is taken against the session's own "
                  "harness as recorded: its own preset, marked (own), writes each read's recorded line-number style "
                  "and keeps what the harness put around the listing, so it should show every replayed read as "
                  "same; another preset's change is only what that preset changes. Notice only: the preset says the "
                  "same with another notice (e.g. stock, which is pi 0.84.1, against an older pi's wording). Both "
                  "tables sum the same rows: each session once per preset, under the first cache model that prices "
                  "it as recorded; sessions (with a changed read); the median is over the sessions the preset changed."),
        Table(("preset", "harness", "sessions", "reads same / replayed / all", "changed", "notice only",
               "not replayable", "refused", "dedup stubs", "result tokens", "input tokens (all later requests)",
               "cost change $", "median cost change"), tuple(rows)),
        Table(("preset", *caches, "total"), cost_rows,
              "cost change $ per cache model the sessions were priced under (the same sessions and rows as the table "
              "above: a preset's total equals its sum over harnesses there)"),
    ]
    if sav.excluded:
        blocks += [Paragraph(f"Left out of both tables: {len(sav.excluded)} session(s)."),
                   Table(("session", "reason"), tuple(sav.excluded))]
    reads = w.table("read_arm_reads", ["preset", "outcome", "reason"])
    bad = reads[reads["outcome"] == "not_replayable"]
    if not bad.empty:
        counts = bad.assign(reason=bad["reason"].str.split(":").str[0]).groupby(["preset", "reason"]).size()
        blocks += [Heading(3, "What could not be replayed, and why"),
                   Table(("preset", "reason", "reads"), tuple((p, r, f"{n:,}") for (p, r), n in counts.items())),
                   Paragraph("lines_not_recorded: the preset would return lines no read of that file version delivered "
                             "(nocap after a cut); map_needs_whole_file: C's or swe-agent's map of a file never read in "
                             "full; line_count_unknown: no read said how long the file was; no_recorded_lines: the "
                             "recorded result holds no file lines (an error, an image). These reads keep their "
                             "recorded result under that preset.")]
    blocks += _arm_figure(w, rows_df)
    return blocks


def _arm_figure(w: Any, df: Any) -> list[Any]:
    import seaborn as sns
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    data = df[df["primary"] & (df["reads_changed"] > 0)]
    if data.empty:
        return []
    sns.set_theme(style="whitegrid")
    fig = Figure(figsize=(9, 0.8 + 0.35 * data["preset"].nunique() * max(1, data["harness"].nunique()) / 2),
                 layout="constrained")
    FigureCanvasAgg(fig)
    ax = fig.add_subplot(1, 1, 1)
    sns.boxplot(data=data, x="cost_change_pct", y="preset", hue="harness", ax=ax, fliersize=2)
    ax.axvline(0, color="black", lw=0.8)
    ax.set_xlabel("simulated cost change against the recorded reads (%, first-order; sessions the preset changed, "
                  "own provider's cache model)")
    ax.set_ylabel("")
    fig.savefig(w.tmp / "read_arms_cost.png", dpi=110)
    return [Image("read_arms_cost.png", "first-order cost change per read preset and harness, across the sessions it changed")]
