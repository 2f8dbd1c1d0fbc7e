"""Account for every sample: named id lists per arm (SWE-bench style).

docs/specs/STYLE.md "What readbench should take" item 8: partition samples into named id lists
so every denominator can be audited. Buckets are disjoint and cover every row of the table:

- ``excluded``  — ids the caller excludes (e.g. a task found broken); removed from every
  denominator. Takes precedence over the other buckets.
- ``errored``   — inspect recorded a sample error, the sample has no ``readbench`` score, or
  ``stop_reason == "error"``. They STAY in denominators as failures (success = 0):
  infrastructure trouble is classified, not silently dropped (STYLE item 3).
- ``limit_hit`` — ``stop_reason`` in `table.LIMIT_STOP_REASONS`, or inspect recorded a limit.
- ``completed`` — everything else (``solved``, ``wrong``, ``gave_up``).

``solved`` is the subset of ``completed`` with success = 1 (SWE-bench's resolved ids).
Each id is ``"{sample_id}#{epoch}"``.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import pandas as pd

from .table import LIMIT_STOP_REASONS

__all__ = ["ArmPartition", "SamplePartition", "classify_rows", "partition_samples", "sample_key", "sort_rows"]

BUCKETS = ("completed", "limit_hit", "errored", "excluded")
"""The disjoint buckets, in report order."""


def sample_key(sample_id: str, epoch: int) -> str:
    """The id used in partition lists: ``"repo/family/3#2"`` for sample repo/family/3, epoch 2."""
    return f"{sample_id}#{int(epoch)}"


@dataclass(frozen=True)
class ArmPartition:
    """The samples of one arm, split into disjoint named buckets."""

    arm: str
    """Arm label (`arms.arm_label`)."""
    model: str
    """Model name, e.g. ``readbench/sim-mixed``."""
    variant: str
    """Read variant name."""
    dcp: str
    """DCP configuration name."""
    completed: tuple[str, ...]
    """Samples that ended normally (solved / wrong / gave_up)."""
    limit_hit: tuple[str, ...]
    """Samples ended by a context, turn or token limit (count as failures)."""
    errored: tuple[str, ...]
    """Samples with an error or no score (count as failures, listed for audit)."""
    excluded: tuple[str, ...]
    """Samples removed from every denominator by the caller."""
    solved: tuple[str, ...]
    """Subset of `completed` with success = 1."""
    n_tasks: int
    """Distinct sample ids of the arm (all buckets)."""
    n_epochs: int
    """Distinct epochs of the arm (all buckets)."""
    n_clusters: int
    """Distinct source repositories of the arm (all buckets)."""

    @property
    def n_total(self) -> int:
        """All samples of the arm in the table."""
        return len(self.completed) + len(self.limit_hit) + len(self.errored) + len(self.excluded)

    @property
    def n_denominator(self) -> int:
        """Samples in every rate's denominator: total minus excluded."""
        return self.n_total - len(self.excluded)

    def to_dict(self) -> dict[str, object]:
        """JSON-ready dict: identity, the id lists and their counts."""
        out: dict[str, object] = {"arm": self.arm, "model": self.model, "variant": self.variant, "dcp": self.dcp}
        for name in (*BUCKETS, "solved"):
            ids = getattr(self, name)
            out[f"{name}_ids"] = list(ids)
            out[f"n_{name}"] = len(ids)
        out["n_tasks"], out["n_epochs"], out["n_clusters"] = self.n_tasks, self.n_epochs, self.n_clusters
        out["n_total"] = self.n_total
        out["n_denominator"] = self.n_denominator
        return out


@dataclass(frozen=True)
class SamplePartition:
    """Partitions of every arm in a table, in table order (model, variant, dcp)."""

    arms: tuple[ArmPartition, ...]
    """One partition per arm."""

    def for_arm(self, arm: str) -> ArmPartition:
        """The partition of `arm`; raises KeyError naming the arm and the known arms."""
        for part in self.arms:
            if part.arm == arm:
                return part
        raise KeyError(f"arm {arm!r} not in partition (arms: {[p.arm for p in self.arms]})")

    def to_dict(self) -> dict[str, object]:
        """JSON-ready dict ``{"arms": [...]}``."""
        return {"arms": [p.to_dict() for p in self.arms]}


def sort_rows(table: pd.DataFrame, baseline: tuple[str, str] = ("stock", "off")) -> pd.DataFrame:
    """Rows in report order: by model, the baseline arm first, then variant, dcp, sample_id, epoch."""
    key = ~((table["variant"] == baseline[0]) & (table["dcp"] == baseline[1]))
    return (table.assign(_not_base=key)
            .sort_values(["model", "_not_base", "variant", "dcp", "sample_id", "epoch"], kind="stable")
            .drop(columns="_not_base"))


class NotInRunError(ValueError):
    """An `exclude` id or a baseline arm that the table does not have (`check_exclude`,
    `check_baseline`); `option` names the command-line option that gave it."""

    def __init__(self, message: str, option: str) -> None:
        super().__init__(message)
        self.option = option


def check_exclude(table: pd.DataFrame, exclude: Iterable[str]) -> None:
    """Refuse `exclude` ids (`classify_rows`) that match no sample of `table`: a misspelt id
    would leave the task the user meant to remove in every denominator without a word.

    Raises
    ------
    NotInRunError
        A ValueError naming each id that matches no sample id nor sample key (``id#epoch``),
        with an example of the table's ids.
    """
    ids = set(table["sample_id"].astype(str)) if "sample_id" in table.columns else set()
    keys = ({sample_key(s, e) for s, e in zip(table["sample_id"], table["epoch"])}
            if ids and "epoch" in table.columns else set())
    unknown = [x for x in dict.fromkeys(exclude) if x not in ids and x not in keys]
    if unknown:
        example = f" (ids look like {min(keys or ids)!r})" if keys or ids else " (the table has no samples)"
        raise NotInRunError(f"{', '.join(repr(x) for x in unknown)}: no such sample in the run{example}", "--exclude")


def check_baseline(table: pd.DataFrame, baseline: tuple[str, str]) -> None:
    """Refuse a `baseline` (variant, dcp) that is no arm of `table`: every comparison would be
    left out, and a plan or report of none reads like a finished one.

    Raises
    ------
    NotInRunError
        A ValueError naming the baseline and the table's arms (VARIANT:DCP).
    """
    if "variant" not in table.columns or "dcp" not in table.columns or table.empty:
        return
    arms = sorted({f"{v}:{d}" for v, d in zip(table["variant"].astype(str), table["dcp"].astype(str))})
    if f"{baseline[0]}:{baseline[1]}" not in arms:
        raise NotInRunError(f"{baseline[0]}:{baseline[1]}: no such arm in the run (its arms: {', '.join(arms)})",
                            "--baseline")


def classify_rows(table: pd.DataFrame, exclude: Iterable[str] = ()) -> pd.Series:
    """Bucket name per row of `table` (index aligned), by the rules in the module docstring.

    Parameters
    ----------
    table : pandas.DataFrame
        The tidy table (`table.tidy_table`); needs sample_id, epoch, error, limit,
        stop_reason and success.
    exclude : iterable of str
        Sample ids (``"repo/family/3"``, every epoch) or sample keys (``"repo/family/3#2"``,
        one epoch) to exclude.

    Returns
    -------
    pandas.Series of str
        One of `BUCKETS` per row.

    Raises
    ------
    ValueError
        If a required column is missing.
    """
    required = ("sample_id", "epoch", "error", "limit", "stop_reason", "success")
    missing = [c for c in required if c not in table.columns]
    if missing:
        raise ValueError(f"table lacks column(s) {missing} needed to partition samples")
    excl = set(exclude)
    keys = [sample_key(s, e) for s, e in zip(table["sample_id"], table["epoch"])]
    excluded = pd.Series([k in excl or k.rsplit("#", 1)[0] in excl for k in keys], index=table.index)
    error = table["error"].fillna("").astype(str) != ""
    stop = table["stop_reason"].fillna("").astype(str)
    errored = error | table["success"].isna() | (stop == "error")
    limit = (table["limit"].fillna("").astype(str) != "") | stop.isin(LIMIT_STOP_REASONS)
    bucket = pd.Series("completed", index=table.index, dtype=object)
    bucket[limit] = "limit_hit"
    bucket[errored] = "errored"
    bucket[excluded] = "excluded"
    return bucket


def partition_samples(
    table: pd.DataFrame, exclude: Iterable[str] = (), baseline: tuple[str, str] = ("stock", "off")
) -> SamplePartition:
    """Partition every sample of every arm into named id lists.

    Parameters
    ----------
    table : pandas.DataFrame
        The tidy table; needs arm, model, variant, dcp, source plus the columns of `classify_rows`.
    exclude : iterable of str
        Sample ids or sample keys to exclude (see `classify_rows`).
    baseline : (variant, dcp), default ("stock", "off")
        Listed first within each model (`sort_rows`).

    Returns
    -------
    SamplePartition
        One `ArmPartition` per arm in `sort_rows` order, ids sorted; the buckets of an arm are disjoint and
        their union is every (sample_id, epoch) of that arm.

    Raises
    ------
    ValueError
        If the table is empty or a required column is missing.
    """
    if table.empty:
        raise ValueError("table is empty: no samples to partition")
    for col in ("arm", "model", "variant", "dcp", "source"):
        if col not in table.columns:
            raise ValueError(f"table lacks column {col!r} needed to partition samples")
    table = sort_rows(table, baseline)
    bucket = classify_rows(table, exclude)
    parts = []
    for arm, rows in table.groupby("arm", sort=False):
        keys = pd.Series([sample_key(s, e) for s, e in zip(rows["sample_id"], rows["epoch"])], index=rows.index)
        b = bucket[rows.index]
        lists = {name: tuple(sorted(keys[b == name])) for name in BUCKETS}
        solved = tuple(sorted(keys[(b == "completed") & (rows["success"] == 1.0)]))
        first = rows.iloc[0]
        parts.append(ArmPartition(arm=str(arm), model=str(first["model"]), variant=str(first["variant"]),
                                  dcp=str(first["dcp"]), solved=solved, n_tasks=int(rows["sample_id"].nunique()),
                                  n_epochs=int(rows["epoch"].nunique()), n_clusters=int(rows["source"].nunique()),
                                  **lists))
    return SamplePartition(arms=tuple(parts))
