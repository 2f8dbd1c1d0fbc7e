"""`readbench replay` outputs: `calls.parquet`, `sessions.parquet` (and a table per further replay:
`dcp.parquet`, `gate_candidates.parquet` + `gate_sweep.parquet`, `audit.parquet` +
`audit_reads.parquet`, `read_arms.parquet` + `read_arm_reads.parquet`, ...), `report.md` + `report.html`
with figures, and one JSON object per session (the interface scripts read).

Files are written into a temporary directory beside the output directory and moved into place
when every session is done, so a failed replay never leaves half-written files; the calls table
streams to parquet one session at a time (bounded memory). An interrupted replay (Ctrl-C,
SIGTERM) keeps what it computed: the sessions finished before the interrupt are written, and
the report opens with `Partial: interrupted after N of M files` (GitHub issue 27); so does a
replay stopped by an error (`Partial: stopped by an error after N of M files (...)`).

The per-session JSON object (`session_json`) is a stable interface: `file`, `format`,
`session_id`, `harness`, `cache_model`, `calls`, `priced_calls`, `billed_cost_usd`,
`simulated_cost_usd` (in-sample calibrated), `simulated_cost_usd_raw`,
`billed_cost_usd_out_of_sample` and `simulated_cost_usd_out_of_sample` (the second half of the
calls, predicted from a calibration fitted on the first half, with the expected cost of the
exogenous breaks at the first half's rate), `simulated_cost_usd_out_of_sample_interval` ([low,
high]: the 90 % interval of that prediction when the second half's breaks are as random as the
first half's, and the simulator's per-call error spread around it as on the first half),
`out_of_sample_inputs` (what `readbench.replay.pooled` pools over sessions: `model`,
`break_counts` (call kind -> [breaks, priced calls]), `break_cost_usd_by_kind` (call kind -> USD a
break at each would add), `break_loss_tokens` ([tokens lost, tokens at risk] at the first half's
breaks), `simulated_cost_usd_no_breaks`) and, filled in once every
session is replayed, `simulated_cost_usd_out_of_sample_pooled`,
`simulated_cost_usd_out_of_sample_pooled_interval` and `out_of_sample_pool` (`readbench.replay.
pooled`), `calls_read_within_5pct` (in-sample) and its `_raw`
and `_out_of_sample` variants, `read_calls`, `blind_reads`, `unexplained_misses`,
`exogenous_breaks`, `calls_with_usage` and `billed_tokens` (the recorded usage summed:
`uncached_input`, `cache_read`, `cache_write`, `output`; reported for unpriced models too),
`notes`; with `--gate-sweep` also `gate_candidates` (how many the session has);
with `--audit` also `audit` (the columns of `audit.parquet` but the session's names) and
`read_counterfactual` (per preset: its read counts and `cost_delta_usd` per cache model, under
the label `note` that it is first-order).
"""

from __future__ import annotations

import contextlib
import functools
import json
import math
import os
import shutil
import signal
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from readbench.analysis._document import Block, Heading, Paragraph
from readbench.replay.bill import SessionReplay, auto_cache_model
from readbench.replay.gate_sweep import CANDIDATE_COLUMNS

__all__ = ["CALL_COLUMNS", "OUTPUT_FILES", "SECTIONS", "SESSION_COLUMNS", "TABLE_COLUMNS", "ReplayWriter", "compared_cache_model", "session_json"]

#: Columns of calls.parquet (one row per call x cache model x mode; see readbench.replay.bill).
CALL_COLUMNS: dict[str, str] = {
    "file": "string", "session_id": "string", "format": "string", "call": "int64", "cache_model": "string",
    "mode": "string", "model": "string", "priced_model": "string", "ts_start": "float64", "gap_seconds": "float64",
    "sim_input_tokens": "int64", "sim_cache_read_tokens": "int64", "sim_cache_write_tokens": "int64",
    "sim_uncached_input_tokens": "int64", "output_tokens": "int64", "sim_cost_usd": "float64",
    "sim_expected_read_tokens": "int64", "sim_miss": "bool", "sim_reason": "string", "sim_why": "string",
    "sim_changed_message": "int64", "exogenous_break": "bool", "call_kind": "string",
    "break_cost_usd": "float64", "expected_break_cost_usd": "float64", "billed_input_tokens": "int64", "billed_cache_read_tokens": "int64",
    "billed_cache_write_tokens": "int64", "billed_uncached_input_tokens": "int64", "billed_output_tokens": "int64",
    "billed_cost_usd": "float64", "recorded_cost_usd": "float64", "billed_miss": "bool", "billed_reason": "string",
    "read_within_5pct": "bool",
}


def _clean(v: Any) -> Any:
    if isinstance(v, float) and (math.isnan(v) or math.isinf(v)):
        return None
    if isinstance(v, dict):
        return {k: _clean(x) for k, x in v.items()}
    if isinstance(v, list):
        return [_clean(x) for x in v]
    return v


def compared_cache_model(rep: SessionReplay) -> str:
    """The cache model a session's bill check is reported under: the session's own provider's,
    at the TTL tier its bill shows (`bill.auto_cache_model`: `anthropic-1h` for a Claude Code
    session billed at 1-hour writes), when it was replayed; else the first that prices the recorded
    models (with `--cache all` the others are what-ifs with no priced call). Needs `rep.summaries`."""
    compared = [m for m in rep.summaries if m["mode"] == "in_sample" and m["priced_calls"]]
    if compared:
        tier = next((m["tier"] for m in compared if m.get("tier")), None)  # the bill's, whichever model found it
        own = auto_cache_model(rep.session, tier)
        if any(m["cache_model"] == own for m in compared):
            return str(own)
    return str((compared or rep.summaries)[0]["cache_model"])


def session_json(rep: SessionReplay, read_calls: int, blind_reads: int) -> dict[str, Any]:
    """The stable per-session object (module docstring) for the first cache model replayed."""
    s = rep.session
    used = [c.usage for c in s.calls if c.usage is not None]
    base: dict[str, Any] = {"file": s.source, "format": s.format, "session_id": s.session_id, "harness": s.harness,
                            "calls": len(s.calls), "read_calls": read_calls, "blind_reads": blind_reads,
                            "calls_with_usage": len(used),
                            "billed_tokens": {"uncached_input": sum(u.uncached_input_tokens for u in used),
                                              "cache_read": sum(u.cache_read_tokens for u in used),
                                              "cache_write": sum(u.cache_write_tokens for u in used),
                                              "output": sum(u.output_tokens for u in used)},
                            "notes": list(rep.notes)}
    if not rep.summaries:
        return _clean({**base, "cache_model": None, "priced_calls": 0, "billed_cost_usd": None, "simulated_cost_usd": None})
    cache = compared_cache_model(rep)
    by = {m["mode"]: m for m in rep.summaries if m["cache_model"] == cache}
    ins, raw, oos = by["in_sample"], by["raw"], by["out_of_sample"]
    out = {
        **base, "cache_model": cache, "priced_calls": ins["priced_calls"],
        "billed_cost_usd": ins["billed_cost_usd"], "simulated_cost_usd": ins["simulated_cost_usd"],
        "simulated_cost_usd_raw": raw["simulated_cost_usd"],
        "billed_cost_usd_out_of_sample": oos["billed_cost_usd"],
        "simulated_cost_usd_out_of_sample": oos["simulated_cost_with_expected_breaks_usd"],
        "simulated_cost_usd_out_of_sample_interval": oos["simulated_cost_interval_usd"],
        "calls_read_within_5pct": ins["calls_read_within_5pct"],
        "calls_read_within_5pct_raw": raw["calls_read_within_5pct"],
        "calls_read_within_5pct_out_of_sample": oos["calls_read_within_5pct"],
        "out_of_sample_inputs": {"model": oos.get("priced_model"), "break_counts": oos.get("break_counts") or {},
                                 "break_cost_usd_by_kind": oos.get("break_cost_usd_by_kind") or {},
                                 "break_loss_tokens": oos.get("break_loss_tokens") or [0, 0],
                                 "simulated_cost_usd_no_breaks": oos["simulated_cost_usd"]},
        "unexplained_misses": raw["unexplained_misses"], "exogenous_breaks": ins["exogenous_breaks"],
        "billed_miss_reasons": raw["billed_miss_reasons"],
        "notes": list(rep.notes) + list(ins["notes"]),
    }
    return _clean(out)


#: Columns of sessions.parquet (one row per session x cache model x mode; dict and list values
#: are stored as JSON text).
SESSION_COLUMNS: dict[str, str] = {
    "file": "string", "session_id": "string", "format": "string", "harness": "string", "cache_model": "string",
    "mode": "string", "calls": "int64", "scored_calls": "int64", "priced_calls": "int64",
    "billed_cost_usd": "float64", "simulated_cost_usd": "float64", "cost_error": "float64",
    "simulated_cost_with_expected_breaks_usd": "float64", "cost_error_with_expected_breaks": "float64",
    "simulated_cost_interval_usd": "string", "billed_cache_read_ratio": "float64", "simulated_cache_read_ratio": "float64",
    "calls_read_within_5pct": "float64", "billed_misses": "int64", "unexplained_misses": "int64",
    "billed_miss_reasons": "string", "exogenous_breaks": "int64", "break_rates": "string", "head_tokens": "string",
    "tier": "string", "token_fit": "string", "notes": "string", "break_counts": "string", "break_cost_usd_by_kind": "string",
    "priced_model": "string", "break_loss_tokens": "string",
}


def _table_columns() -> dict[str, dict[str, str]]:
    from readbench.replay.audit import AUDIT_COLUMNS, AUDIT_READ_COLUMNS
    from readbench.replay.dcp_cache import DCP_CALL_COLUMNS, DCP_COLUMNS
    from readbench.replay.fork_points import FORK_POINT_COLUMNS
    from readbench.replay.read_counterfactual import READ_ARM_COLUMNS, READ_ARM_READ_COLUMNS

    return {"calls": CALL_COLUMNS, "sessions": SESSION_COLUMNS, "dcp": DCP_COLUMNS, "dcp_calls": DCP_CALL_COLUMNS,
            "gate_candidates": CANDIDATE_COLUMNS, "audit": AUDIT_COLUMNS, "audit_reads": AUDIT_READ_COLUMNS,
            "read_arms": READ_ARM_COLUMNS, "read_arm_reads": READ_ARM_READ_COLUMNS, "fork_points": FORK_POINT_COLUMNS}


#: Column types of the tables the writer streams to `<name>.parquet`. A table not listed here is
#: kept in memory and written at the end with the types pandas infers from all its rows.
TABLE_COLUMNS: dict[str, dict[str, str]] = _table_columns()


#: Every file name a replay writes into its output directory: the streamed tables, the gate's
#: sweep, the report and its figures. A replay into an existing `--out` removes those of them it
#: did not write this time (a previous run's), and nothing else (brk11).
OUTPUT_FILES: frozenset[str] = frozenset(
    [f"{name}.parquet" for name in TABLE_COLUMNS]
    + ["gate_sweep.parquet", "report.md", "report.html", "cost.png", "gate_sweep.png", "dcp_cost.png",
       "dcp_footer.png", "audit_waste.png", "read_arms_cost.png"])


@functools.lru_cache(maxsize=None)
def _schema(name: str) -> Any:
    import pyarrow as pa

    return pa.schema([(k, pa.type_for_alias(t)) for k, t in TABLE_COLUMNS[name].items()])


def arrow_tables(tables: dict[str, Any]) -> dict[str, Any]:
    """`tables` (name -> rows) with every non-empty table of `TABLE_COLUMNS` as a pyarrow Table
    of its column types (dict and list values of its string columns as JSON text, NaN and
    infinities inside them as null); other tables stay rows, empty ones are dropped. A replay
    worker converts its tables before they cross the process boundary (a table pickles faster
    than its rows and the writer process has less to do). Already converted tables pass through.

    Raises:
        pyarrow.ArrowInvalid: a value that does not fit its column's type (naming the column).
    """
    import pyarrow as pa

    out: dict[str, Any] = {}
    for name, rows in tables.items():
        if not isinstance(rows, list):
            out[name] = rows
            continue
        if not rows:
            continue
        cols = TABLE_COLUMNS.get(name)
        if cols is None:
            out[name] = rows
            continue
        data = {}
        for k, t in cols.items():
            vals = [r.get(k) for r in rows]
            if t == "string":
                vals = [json.dumps(_clean(v)) if isinstance(v, (dict, list)) else v for v in vals]
            data[k] = vals
        out[name] = pa.Table.from_pydict(data, schema=_schema(name))
    return out


class ReplayWriter:
    """Streams replay results into `out_dir` (module docstring).

    Use as a context manager: on exit the report is built and the files are moved into `out_dir`;
    files of `OUTPUT_FILES` it did not write (a previous replay's) are removed from `out_dir`;
    on an exception (Ctrl-C, SIGTERM, or an error, which then propagates) the report opens with
    `Partial: ...` and holds the sessions added before it (nothing computed is lost). SIGINT and
    SIGTERM are deferred while the files are finalised (main thread); one that arrives after a
    clean exit's report is whole is raised again once the handlers are restored. Each table of a
    `SessionResult` streams to `<name>.parquet`; the report's sections (`SECTIONS`) read the
    tables back at the end.
    """

    def __init__(self, out_dir: Path, total_files: int | None = None) -> None:
        """`total_files`: how many files the replay was given (the partial banner's M).

        Raises ValueError when `out_dir` is the filesystem root (a replay writes its own directory)."""
        self.out_dir = Path(out_dir)
        if not self.out_dir.resolve().name:
            raise ValueError(f"--out {out_dir}: the filesystem root cannot be a replay's output directory; "
                             "name a directory of its own")
        self.tmp = self.out_dir.with_name(f".{self.out_dir.name}.partial-{os.getpid()}")
        self._writers: dict[str, Any] = {}
        self._schemas: dict[str, Any] = {}
        self._buffered: dict[str, list[dict[str, Any]]] = {}
        self.sessions: list[dict[str, Any]] = []
        self.failures: list[tuple[str, str]] = []
        self.curves: dict[str, list[dict[str, Any]]] = {}
        self.total_files = total_files
        self.files_done = 0
        self.partial: str | None = None
        self.pooled: dict[str, Any] | None = None  # readbench.replay.pooled.pool_out_of_sample's figures
        self.written = False  # report.md and the tables are in out_dir

    def __enter__(self) -> ReplayWriter:
        for stale in self.out_dir.parent.glob(f".{self.out_dir.name}.partial-*"):
            if not _alive(stale.name.rsplit("-", 1)[-1]):  # left by a killed replay (SIGKILL)
                shutil.rmtree(stale, ignore_errors=True)
        shutil.rmtree(self.tmp, ignore_errors=True)
        self.tmp.mkdir(parents=True)
        return self

    def add(self, result: Any) -> None:
        """Record one session's `readbench.replay.run.SessionResult` (its tables as rows, or
        already converted by `arrow_tables`)."""
        import pyarrow.parquet as pq

        tables = arrow_tables(result.tables)  # first: a session whose rows do not convert is not counted
        self.sessions.append(result.json)
        for name, table in tables.items():
            if not isinstance(table, list):
                if name not in self._writers:
                    self._writers[name] = pq.ParquetWriter(self.tmp / f"{name}.parquet", table.schema)
                self._writers[name].write_table(table)
            elif table:
                self._buffered.setdefault(name, []).extend(
                    {k: (json.dumps(_clean(v)) if isinstance(v, (dict, list)) else v) for k, v in r.items()} for r in table)
        if result.curve is not None and len(self.curves) < 12:
            self.curves[result.curve[0]] = result.curve[1]

    def fail(self, path: str, reason: str) -> None:
        """Record a file that could not be imported."""
        self.failures.append((path, reason))

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        with _signals_deferred() as deferred:  # brk11: a second Ctrl-C here lost the partial report
            self._finish(exc_type, exc)
        if deferred and exc_type is None:  # the report is whole; the interrupt still stops the caller
            signal.raise_signal(deferred[0])

    def _finish(self, exc_type: Any, exc: Any) -> None:
        for w in self._writers.values():
            w.close()
        if exc_type is not None:
            of = f" of {self.total_files}" if self.total_files is not None else ""
            if issubclass(exc_type, KeyboardInterrupt):
                self.partial = (f"Partial: interrupted after {self.files_done}{of} files; the tables and this report "
                                f"hold the {len(self.sessions)} session(s) replayed before the interrupt.")
            else:  # brk11: an error threw away every session already streamed; it still propagates
                self.partial = (f"Partial: stopped by an error after {self.files_done}{of} files "
                                f"({exc_type.__name__}: {exc}); the tables and this report hold the "
                                f"{len(self.sessions)} session(s) replayed before it.")
        import pandas as pd

        for name, rows in self._buffered.items():
            pd.DataFrame(rows).to_parquet(self.tmp / f"{name}.parquet", index=False)
        from readbench.analysis._document import to_html, to_markdown

        blocks: list[Block] = [Heading(1, "Recorded sessions replayed")]
        if self.partial:
            blocks.append(Paragraph(f"**{self.partial}**"))
        for section in SECTIONS:
            blocks += section(self)
        (self.tmp / "report.md").write_text(to_markdown(blocks), encoding="utf-8")
        (self.tmp / "report.html").write_text(to_html(blocks, self.tmp, "readbench replay"), encoding="utf-8")
        self.out_dir.mkdir(parents=True, exist_ok=True)
        written = {f.name for f in self.tmp.iterdir()}
        for name in sorted(OUTPUT_FILES - written):  # a previous replay's, which this one did not replace
            old = self.out_dir / name
            if old.is_file():
                old.unlink()
        for f in self.tmp.iterdir():
            os.replace(f, self.out_dir / f.name)
        self.tmp.rmdir()
        self.written = True

    def table(self, name: str, columns: list[str] | None = None) -> Any:
        """A streamed table read back as a pandas DataFrame (empty when nothing was written)."""
        import pandas as pd

        path = self.tmp / f"{name}.parquet"
        return pd.read_parquet(path, columns=columns) if path.exists() else pd.DataFrame(columns=columns or [])


@contextlib.contextmanager
def _signals_deferred() -> Iterator[list[int]]:
    """SIGINT and SIGTERM are held while the block runs (the writer finalising its files) and
    their handlers restored after; yields the list of the signals that arrived. Only the main
    thread can set handlers: elsewhere nothing is deferred."""
    got: list[int] = []
    if threading.current_thread() is not threading.main_thread():
        yield got
        return

    def hold(signum: int, frame: Any) -> None:
        got.append(signum)

    previous = {s: signal.signal(s, hold) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield got
    finally:
        for s, h in previous.items():
            signal.signal(s, h if h is not None else signal.SIG_DFL)


def _alive(pid: str) -> bool:
    """Whether process `pid` (a decimal string) exists; False for anything not a pid."""
    if not pid.isdigit():
        return False
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _sections() -> list[Any]:
    from readbench.replay.audit_report import audit_section, read_arms_section
    from readbench.replay.bill_report import bill_section
    from readbench.replay.dcp_report import dcp_section
    from readbench.replay.fork_points import fork_points_section
    from readbench.replay.gate_report import gate_section
    from readbench.replay.pooled import pooled_section

    return [bill_section, pooled_section, audit_section, read_arms_section, dcp_section, gate_section,
            fork_points_section]


#: The report's sections, in order: each takes the writer (its tables, sessions, failures) and
#: returns document blocks (readbench.analysis._document). A new replay adds one function here.
SECTIONS: list[Any] = _sections()
