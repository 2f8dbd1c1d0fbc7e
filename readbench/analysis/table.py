"""The tidy table: one row per sample x epoch x arm, read from inspect `.eval` logs.

Columns come from inspect's own dataframe reader (`inspect_ai.analysis.samples_df`) with
custom `EvalColumn`s (arm identity from ``log.eval.task_args``) and `SampleColumn`s (the
flat ``Score.metadata`` of the ``readbench`` scorer; docs/specs/metrics.md, and
inspect-notes.md §7: summaries keep scalar metadata < 1 KB, so no full sample read is
needed). Identity columns: see `IDENTITY_COLUMNS`; metric columns: `BASE_METRICS` and, for
every cache model m in the run, ``f"{name}_{m}"`` for name in `CACHE_METRICS`.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pandas as pd

from .arms import LOOP_AGENT, TASK_NAME, arm_label, spec_name

__all__ = [
    "BASE_METRICS",
    "CACHE_METRICS",
    "IDENTITY_COLUMNS",
    "LIMIT_STOP_REASONS",
    "SCORER",
    "STOP_REASONS",
    "cache_models_in",
    "read_table",
    "tidy_table",
    "write_table",
]

SCORER = "readbench"
"""The scorer whose ``Score.metadata`` carries the per-sample metrics."""

STOP_REASONS = ("solved", "wrong", "context_overflow", "turn_limit", "token_limit", "time_limit", "gave_up", "error")
"""metrics.md "Outcome": every value ``stop_reason`` may take (``time_limit``: inspect's sample
time or working limit ended the sample, which metrics.md does not list)."""
LIMIT_STOP_REASONS = ("context_overflow", "turn_limit", "token_limit", "time_limit")
"""Stop reasons that mean a limit ended the sample (partition bucket ``limit_hit``)."""

BASE_METRICS = (
    "success", "stop_reason", "turns", "tool_calls", "read_calls", "grep_calls", "bash_calls",
    "edit_calls", "write_calls", "input_tokens", "output_tokens", "peak_context_tokens",
    "wall_seconds", "sim_seconds", "blind_reads", "capped_reads", "blocked_reads", "dedup_stubs",
    "dedup_stub_misses", "files_read", "reads_per_file", "lines_delivered", "unique_lines_delivered",
    "reread_ratio", "read_tokens", "reread_tokens", "mean_lines_per_read", "dcp_pruned_items",
    "dcp_footer_tokens_saved", "dcp_prefix_breaks", "malformed_calls", "truncated_replies",
    "final_reply_truncated", "native_calls", "native_input_tokens", "native_uncached_input_tokens",
    "native_cache_read_tokens", "native_cache_write_tokens", "native_output_tokens", "native_cache_read_ratio",
    "native_cost_usd",
)
"""Per-sample metrics (metrics.md), in the scorer contract's order. All numeric except stop_reason.
``native_*``: the provider-reported usage (readbench.metrics.native.NATIVE_METRICS)."""

CACHE_METRICS = (
    "cache_read_tokens", "cache_write_tokens", "uncached_input_tokens", "cache_read_ratio",
    "cost_usd", "cost_usd_unpruned", "dcp_cost_delta",
)
"""Per-cache-model metrics (metrics.md "Prompt cache and cost"); columns are ``{name}_{model}``."""

IDENTITY_COLUMNS = (
    "run_id", "eval_set_id", "eval_id", "log", "task_name", "model", "variant", "dcp", "agent",
    "cache_models", "arm", "sample_id", "epoch", "family", "source", "file", "file_lines",
    "target_line", "error", "limit", "score_value", "total_time", "working_time",
)
"""Who/what each row is: run, arm (variant x dcp x agent x model), sample (task id, epoch), task metadata,
inspect's sample ``error`` / ``limit`` ("" when none), the score value (NaN when unscored), and
inspect's ``total_time`` / ``working_time`` in seconds."""

_META_PREFIX = "rbmeta__"


def _cache_models(value: Any) -> str:
    """Comma-joined cache models from the task arg (a comma string or a list)."""
    if value is None:
        return ""
    if isinstance(value, str):
        return ",".join(p.strip() for p in value.split(",") if p.strip())
    return ",".join(str(v) for v in value)


def cache_models_in(table: pd.DataFrame) -> list[str]:
    """Sorted cache models that have at least one ``cost_usd_{m}`` column in `table`."""
    return sorted(c[len("cost_usd_"):] for c in table.columns if c.startswith("cost_usd_") and not c.startswith("cost_usd_unpruned_"))


def _columns() -> list[Any]:
    from inspect_ai.analysis import EvalColumn, SampleColumn

    def task_arg(key: str):
        return lambda log: (log.eval.task_args or {}).get(key)

    def score_field(field: str):
        def get(sample: Any) -> Any:
            score = (sample.scores or {}).get(SCORER)
            return None if score is None else getattr(score, field)

        return get

    return [
        EvalColumn("run_id", path="eval.run_id", required=True),
        EvalColumn("eval_set_id", path="eval.eval_set_id"),
        EvalColumn("eval_id", path="eval.eval_id", required=True),
        EvalColumn("log", path=lambda log: log.location),
        EvalColumn("task_name", path="eval.task", required=True),
        EvalColumn("model", path="eval.model", required=True),
        EvalColumn("variant", path=task_arg("variant"), value=spec_name),
        EvalColumn("dcp", path=task_arg("dcp"), value=spec_name),
        EvalColumn("agent", path=lambda log: (log.eval.task_args or {}).get("agent") or LOOP_AGENT),
        EvalColumn("cache_models", path=task_arg("cache_models"), value=_cache_models),
        # inspect names its own per-sample uuid column "sample_id" and de-duplicates on it,
        # so the task id is read as "id" and renamed after the read.
        SampleColumn("id", path="id", required=True, type=str),
        SampleColumn("epoch", path="epoch", required=True, type=int),
        SampleColumn("family", path="metadata.family"),
        SampleColumn("source", path="metadata.source"),
        SampleColumn("file", path="metadata.file"),
        SampleColumn("file_lines", path="metadata.file_lines"),
        SampleColumn("target_line", path="metadata.target_line"),
        SampleColumn("error", path="error", default=""),
        SampleColumn("limit", path="limit"),
        SampleColumn("score_value", path=score_field("value")),
        SampleColumn("total_time", path="total_time"),
        SampleColumn("working_time", path="working_time"),
        SampleColumn(_META_PREFIX + "*", path=score_field("metadata")),
    ]


def _limit_text(value: Any) -> str:
    if value is None or (not isinstance(value, (dict, list, str)) and pd.isna(value)):
        return ""
    if isinstance(value, dict):
        return str(value.get("type", json.dumps(value, sort_keys=True)))
    return str(value)


def tidy_table(log_dir: str | Path, logs: list[str] | None = None) -> pd.DataFrame:
    """Read every ``read_strategies`` log under `log_dir` into the tidy per-sample table.

    Parameters
    ----------
    log_dir : str or Path
        Directory holding inspect ``.eval`` (or ``.json``) logs, one per arm
        (``results/<run-id>/logs/``); searched recursively by inspect.
    logs : list of str, optional
        Read only these log files under `log_dir` (e.g. `completeness.LogScan.logs`: each
        task's newest readable log); None reads every log but those a ``-recovered`` log
        replaces (`completeness.superseded_logs`).

    Returns
    -------
    pandas.DataFrame
        One row per (arm, sample_id, epoch): `IDENTITY_COLUMNS`, then `BASE_METRICS`, then
        ``{metric}_{cache model}`` for every cache model of the run, then any further score
        metadata keys (alphabetical). Metric columns are float (NaN when the sample has no
        ``readbench`` score, e.g. it errored), except ``stop_reason`` (str, "" when missing).
        Rows are sorted by model, variant, dcp, sample_id, epoch.

    Raises
    ------
    FileNotFoundError
        If `log_dir` does not exist.
    ValueError
        If it holds no log of task ``read_strategies``, a log lacks the ``variant``/``dcp``
        task args, the same (arm, sample_id, epoch) appears twice (two logs of one arm, e.g.
        a retried eval left both), or a score metadata key collides with an identity column.
    """
    from inspect_ai.analysis import samples_df

    path = Path(log_dir)
    if not path.is_dir():
        raise FileNotFoundError(f"log_dir {str(path)!r} is not a directory")
    if logs is not None and not logs:
        raise ValueError(f"no readable log of task {TASK_NAME!r} under {str(path)!r}")
    if logs is None:
        from inspect_ai.log import list_eval_logs

        from .completeness import superseded_logs

        infos = list_eval_logs(str(path))
        gone = superseded_logs([i.name for i in infos])
        logs = [i.name for i in infos if i.name not in gone] if gone else None
    raw = samples_df(str(path) if logs is None else logs, columns=_columns(), quiet=True)
    if "task_name" in raw:
        raw = raw[raw["task_name"].astype(str).str.split("/").str[-1] == TASK_NAME]
    if raw.empty:
        raise ValueError(f"no samples of task {TASK_NAME!r} in logs under {str(path)!r}")
    for col in ("variant", "dcp"):
        missing = raw[col].isna() if col in raw else pd.Series(True, index=raw.index)
        if missing.any():
            logs = sorted(set(raw.loc[missing, "log"].astype(str)))
            raise ValueError(f"task arg {col!r} missing in log(s) {logs}")
    raw = raw.rename(columns={"sample_id": "sample_uuid"}).rename(columns={"id": "sample_id"})
    meta_cols = [c for c in raw.columns if c.startswith(_META_PREFIX)]
    renamed = {c: c[len(_META_PREFIX):] for c in meta_cols}
    clash = sorted(set(renamed.values()) & set(IDENTITY_COLUMNS))
    if clash:
        raise ValueError(f"score metadata key(s) {clash} collide with identity columns")
    df = raw.drop(columns=[c for c in raw.columns if c not in IDENTITY_COLUMNS and c not in meta_cols])
    df = df.rename(columns=renamed)
    df["sample_id"] = df["sample_id"].astype(str)
    df["epoch"] = df["epoch"].astype(int)
    df["arm"] = [arm_label(v, d, m, a) for v, d, m, a in zip(df["variant"], df["dcp"], df["model"], df["agent"])]
    df["error"] = df["error"].fillna("").astype(str)
    df["limit"] = [_limit_text(v) for v in df.get("limit", pd.Series(None, index=df.index))]
    models = sorted({m for s in df["cache_models"].fillna("") for m in str(s).split(",") if m})
    models = sorted(set(models) | {c[len("cost_usd_"):] for c in renamed.values()
                                   if c.startswith("cost_usd_") and not c.startswith("cost_usd_unpruned_")})
    cache_cols = [f"{name}_{m}" for m in models for name in CACHE_METRICS]
    known = list(IDENTITY_COLUMNS) + list(BASE_METRICS) + cache_cols
    extra = sorted(c for c in df.columns if c not in known)
    for col in known:
        if col not in df.columns:
            df[col] = pd.NA
    for col in list(BASE_METRICS) + cache_cols + ["score_value", "file_lines", "target_line",
                                                   "total_time", "working_time"]:
        if col != "stop_reason":
            df[col] = pd.to_numeric(df[col], errors="coerce").astype(float)
    df["stop_reason"] = df["stop_reason"].astype(object).where(df["stop_reason"].notna(), "").astype(str)
    for col in ("run_id", "eval_set_id", "eval_id", "log", "task_name", "model", "variant", "dcp", "agent",
                "cache_models", "family", "source", "file"):
        df[col] = df[col].astype(object).where(df[col].notna(), "").astype(str)
    for col in extra:
        if df[col].dtype == object:
            df[col] = df[col].map(lambda v: v if v is None or isinstance(v, str) else json.dumps(v))
    df = df[known + extra]
    df = _fill_errored(df, known)
    timed = df["limit"].isin(["time", "working"]) & ~df["stop_reason"].isin(LIMIT_STOP_REASONS) & (df["error"] == "")
    df.loc[timed, "stop_reason"] = "time_limit"
    dup = df.duplicated(["model", "variant", "dcp", "agent", "sample_id", "epoch"], keep=False)
    if dup.any():
        first = df.loc[dup].iloc[0]
        same = (df["arm"] == first["arm"]) & (df["sample_id"] == first["sample_id"]) & (df["epoch"] == first["epoch"])
        raise ValueError(
            f"sample {first['sample_id']!r} epoch {first['epoch']} of arm {first['arm']!r} appears "
            f"{int(same.sum())} times across logs {sorted(set(df.loc[same, 'log']))}: keep one log per arm"
        )
    return df.sort_values(["model", "agent", "variant", "dcp", "sample_id", "epoch"], ignore_index=True)


def _fill_errored(df: pd.DataFrame, known: list[str]) -> pd.DataFrame:
    """Rows of errored samples (no scorer ran, so no score metadata) get what the sample used
    until the error, read from its own history and store (`metrics.scorer.errored_sample_metrics`),
    and ``stop_reason = error``. Cancelled samples are left as they are (they did not finish:
    completeness.drop_unfinished removes them)."""
    from inspect_ai.log import read_eval_log_sample

    from readbench.metrics.scorer import errored_sample_metrics

    todo = df.index[(df["error"] != "") & ~df["error"].str.startswith("CancelledError") & df["score_value"].isna()]
    for i in todo:
        row = df.loc[i]
        try:
            sample = read_eval_log_sample(str(row["log"]), id=row["sample_id"], epoch=int(row["epoch"]))
        except Exception:  # noqa: BLE001 - an unreadable sample keeps its NaNs, stop_reason still says error
            df.loc[i, "stop_reason"] = "error"
            continue
        for key, value in errored_sample_metrics(sample).items():
            if key in df.columns and key != "stop_reason":
                df.loc[i, key] = float(value)
        df.loc[i, "stop_reason"] = "error"
    return df


def write_table(table: pd.DataFrame, path: str | Path) -> Path:
    """Write `table` as parquet (``table.parquet``) and return the path written. The file is
    written beside and then renamed, so an interrupted write never leaves a truncated table."""
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(f".{out.name}.tmp-{os.getpid()}")
    try:
        table.to_parquet(tmp, index=False)
        os.replace(tmp, out)
    finally:
        tmp.unlink(missing_ok=True)
    return out


def read_table(path: str | Path) -> pd.DataFrame:
    """Read a table written by `write_table`. Raises FileNotFoundError if `path` is missing."""
    p = Path(path)
    if not p.is_file():
        raise FileNotFoundError(f"table {str(p)!r} does not exist")
    return pd.read_parquet(p)
