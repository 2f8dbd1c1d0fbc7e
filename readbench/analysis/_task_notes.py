"""What differs between a run's tasks and its baseline's, for `regression.compare_to_baseline`'s notes."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

__all__ = ["TASK_KEYS", "listing", "task_notes"]

TASK_KEYS = ("family", "source", "file", "file_lines", "target_line")
"""Task metadata that must be equal for a sample id to be the same task in both runs."""


def listing(ids: Sequence[str], limit: int = 5) -> str:
    shown = ", ".join(ids[:limit])
    return shown + (f", … ({len(ids) - limit} more)" if len(ids) > limit else "")


def _value(v: object) -> str:
    """A task field for a note: ``8604`` for 8604.0, ``'a.py'`` for a string."""
    if isinstance(v, (int, float, np.number)) and not isinstance(v, bool):
        return f"{float(v):g}"
    return repr(str(v))


def _by_family(rows: pd.DataFrame, ids: set[str]) -> str:
    fam = rows[rows["sample_id"].isin(ids)].drop_duplicates("sample_id")["family"].value_counts()
    return ", ".join(f"{name}: {n}" for name, n in sorted(fam.items()))


def task_notes(run: pd.DataFrame, base: pd.DataFrame) -> tuple[set[str], list[str]]:
    """The sample ids comparable in both runs, and notes on the others."""
    keys = [k for k in TASK_KEYS if k in run.columns and k in base.columns]
    r = run.drop_duplicates("sample_id").set_index("sample_id")[keys]
    b = base.drop_duplicates("sample_id").set_index("sample_id")[keys]
    notes = []
    new = sorted(set(r.index) - set(b.index))
    gone = sorted(set(b.index) - set(r.index))
    common = sorted(set(r.index) & set(b.index))
    changed = []
    for sid in common:
        diffs = [f"{k} {_value(b.at[sid, k])} -> {_value(r.at[sid, k])}" for k in keys
                 if not (pd.isna(r.at[sid, k]) and pd.isna(b.at[sid, k])) and r.at[sid, k] != b.at[sid, k]]
        if diffs:
            changed.append(f"{sid} ({'; '.join(diffs)})")
    if new:
        notes.append(f"{len(new)} task(s) new since the baseline, not compared ({_by_family(run, set(new))}): "
                     f"{listing(new)}; `make baseline` after an accepted run starts tracking them")
    if gone:
        notes.append(f"{len(gone)} task(s) of the baseline missing from this run, not compared "
                     f"({_by_family(base, set(gone))}): {listing(gone)}")
    if changed:
        notes.append(f"{len(changed)} task(s) changed since the baseline (same id, other task), not compared: "
                     f"{listing(changed, 3)}")
    same = set(common) - {c.split(" (")[0] for c in changed}
    return same, notes
