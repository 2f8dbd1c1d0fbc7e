"""One source for both savings tables of the read-variant counterfactual (issue 29 item 3).

The replay report shows a preset's first-order change twice: per preset x harness, and per
preset x cache model. Both are sums over the same rows, chosen here once: for each session, its
`primary` row per preset (`readbench.replay.read_counterfactual.replay_read_variants`: the first
cache model that prices the session as recorded). A session without such a row, or without a
read-tool call, is left out of both, and named with the reason; so per preset the two tables'
totals are equal by construction (`tests/replay/test_replay_read_savings.py` checks it on a
multi-session fixture). Before, the second table summed every cache model's rows (an Anthropic
session counted under each of its own cache models) and the first kept only primary rows, so a
session with no primary row (pi-large-session) was silently in one table only and totals could
flip sign between them.

Input: `read_arms.parquet` as a DataFrame (columns `READ_ARM_COLUMNS`), and optionally the audit
table (`audit.parquet`: one row per audited session) to name audited sessions the
counterfactual never ran on (no model call to simulate).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["ReadSavings", "read_savings"]

#: Why a session is left out of the savings tables.
NO_PRIMARY = "no replayed cache model prices it as recorded (simulated only under {caches}: a what-if on a what-if)"
NO_READS = "no read-tool calls (it reads through its shell, or not at all): no preset changes it"
NOT_REPLAYED = "no model call to simulate: the counterfactual did not run on it"


@dataclass(frozen=True)
class ReadSavings:
    """The rows both savings tables sum, and the sessions left out.

    Attributes:
        rows: DataFrame, one row per session x preset (its primary cache model's row), with the
            columns of `read_arms.parquet`.
        excluded: [(session label, reason)] in file order; label `file name (session id[:8])`.
    """

    rows: Any
    excluded: list[tuple[str, str]]

    def by_harness(self) -> Any:
        """Sums per (preset, harness), in first-seen order: sessions, sessions the preset changed,
        and every count and delta column (DataFrame indexed by preset, harness)."""
        return self._sum(["preset", "harness"])

    def by_cache_model(self) -> Any:
        """`cost_delta_usd` per preset (rows) x primary cache model (columns), with a `total`
        column; a preset's total equals its sum over harnesses in `by_harness`."""
        import pandas as pd

        if self.rows.empty:
            return pd.DataFrame(columns=["total"])
        pivot = self.rows.pivot_table(index="preset", columns="cache_model", values="cost_delta_usd", aggfunc="sum",
                                      sort=False)
        pivot["total"] = self.rows.groupby("preset", sort=False)["cost_delta_usd"].sum()
        return pivot

    def _sum(self, keys: list[str]) -> Any:
        g = self.rows.groupby(keys, sort=False)
        numeric = [c for c in self.rows.columns if c not in keys and self.rows[c].dtype.kind in "iuf"]
        out = g[numeric].sum()
        out["sessions"] = g.size()
        out["sessions_changed"] = g["reads_changed"].apply(lambda s: int((s > 0).sum()))
        return out


def _label(file: str, session_id: str) -> str:
    return f"{Path(str(file)).name} ({str(session_id)[:8]})"


def read_savings(read_arms: Any, audit: Any | None = None) -> ReadSavings:
    """The savings rows and the sessions left out (module docstring).

    Args:
        read_arms: DataFrame of `read_arms.parquet` (needs `file`, `session_id`, `preset`,
            `cache_model`, `primary`, `reads`, `reads_changed`, `cost_delta_usd`).
        audit: DataFrame of `audit.parquet` (`file`, `session_id`), or None.

    Returns:
        ReadSavings.

    Raises:
        ValueError: a session has two primary rows for one preset (the table is not one replay's).
    """
    import pandas as pd

    df = read_arms
    excluded: list[tuple[str, str]] = []
    keep = []
    for (file, sid), g in df.groupby(["file", "session_id"], sort=False):
        prim = g[g["primary"].astype(bool)]
        if prim.empty:
            caches = ", ".join(dict.fromkeys(g["cache_model"].astype(str)))
            excluded.append((_label(file, sid), NO_PRIMARY.format(caches=caches)))
            continue
        if prim["preset"].duplicated().any():
            raise ValueError(f"read_arms: session {sid!r} of {file} has two primary rows for one preset")
        if not int(prim["reads"].max()):
            excluded.append((_label(file, sid), NO_READS))
            continue
        keep.append(prim)
    if audit is not None and not audit.empty:
        seen = set(zip(df["file"], df["session_id"])) if not df.empty else set()
        for file, sid in zip(audit["file"], audit["session_id"]):
            if (file, sid) not in seen:
                excluded.append((_label(file, sid), NOT_REPLAYED))
    rows = pd.concat(keep, ignore_index=True) if keep else df.iloc[0:0]
    return ReadSavings(rows, excluded)
