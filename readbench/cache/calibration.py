"""Token-count calibration from billed usage: billed ~ a x counted + b per block, as dated data.

docs/specs/sessions.md §5 cause 2 ("token counts run low": readbench's offline count differs
from what the provider bills, by a factor and a per-block amount), caching.md §8.3 (Anthropic
publishes no tokenizer: "calibrate them against logged usage when it exists").

The rows come from the user's own recorded sessions (`readbench replay ... --save-calibration`
fits them, pooled over the sessions, per priced model) and are then used by the cache simulator
for that model everywhere, live evals included (`readbench.cache.metrics`). Nothing is fitted to
a file shipped with readbench: the bundled `calibration.csv` holds only the header, so without
the user's fit the counts are the tokenizer families' own (tokenizer.py).

File format (`calibration.csv`, or the file `$READBENCH_CALIBRATION` names):
    key (a priced model of models.csv, or a tokenizer family for every model of it), a, b,
    calls (billed calls the fit used), sessions, harnesses, first_session (date), last_session
    (date), fitted (date of the fit), note.
The newest `fitted` row of a key wins; a model's own row beats its tokenizer family's.
"""

from __future__ import annotations

import csv
import datetime as dt
import functools
import os
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

__all__ = ["CALIBRATION_ENV", "CalibrationRow", "active_path", "append_rows", "load_rows", "token_fit"]

CALIBRATION_ENV = "READBENCH_CALIBRATION"
COLUMNS = ("key", "a", "b", "calls", "sessions", "harnesses", "first_session", "last_session", "fitted", "note")


@dataclass(frozen=True)
class CalibrationRow:
    """One dated token calibration (module docstring for each column)."""

    key: str
    a: float
    b: float
    calls: int
    sessions: int
    harnesses: str
    first_session: dt.date
    last_session: dt.date
    fitted: dt.date
    note: str = ""


def active_path() -> Path:
    """The calibration file in use: `$READBENCH_CALIBRATION`, else the bundled `calibration.csv`."""
    env = os.environ.get(CALIBRATION_ENV)
    if env:
        return Path(env)
    return Path(str(resources.files(__package__).joinpath("calibration.csv")))


@functools.lru_cache(maxsize=8)
def _load(path: str, mtime_ns: int) -> tuple[CalibrationRow, ...]:
    rows = []
    with open(path, encoding="utf-8", newline="") as fh:
        for n, r in enumerate(csv.DictReader(fh), 2):
            try:
                rows.append(CalibrationRow(
                    r["key"], float(r["a"]), float(r["b"]), int(r["calls"]), int(r["sessions"]), r["harnesses"],
                    dt.date.fromisoformat(r["first_session"]), dt.date.fromisoformat(r["last_session"]),
                    dt.date.fromisoformat(r["fitted"]), r.get("note") or "",
                ))
            except (KeyError, TypeError, ValueError) as exc:
                raise ValueError(f"{path}:{n}: bad calibration row ({exc}); columns: {', '.join(COLUMNS)}") from None
    return tuple(rows)


def load_rows(path: str | Path | None = None) -> tuple[CalibrationRow, ...]:
    """Every row of the calibration file (`active_path()` by default); none when it does not exist.

    Raises:
        ValueError: a malformed row (naming the file and line).
    """
    p = Path(path) if path is not None else active_path()
    if not p.exists():
        return ()
    return _load(str(p), p.stat().st_mtime_ns)


def token_fit(model: str, tokenizer: str | None = None) -> CalibrationRow | None:
    """The calibration for a priced model: its newest row, else its tokenizer family's, else None.

    Raises:
        ValueError: a malformed calibration file.
    """
    rows = load_rows()
    for key in (model, tokenizer):
        mine = [r for r in rows if key and r.key == key]
        if mine:
            return max(mine, key=lambda r: r.fitted)
    return None


def append_rows(rows: list[CalibrationRow], path: str | Path | None = None) -> Path:
    """Append `rows` to the calibration file (created with its header if missing); returns it.

    The file is rewritten through a temporary file and renamed, so a failure leaves it whole.
    """
    p = Path(path) if path is not None else active_path()
    old = list(load_rows(p)) if p.exists() else []
    tmp = p.with_name(p.name + f".tmp-{os.getpid()}")
    with open(tmp, "w", encoding="utf-8", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(COLUMNS)
        for r in old + rows:
            w.writerow([r.key, f"{r.a:.6g}", f"{r.b:.6g}", r.calls, r.sessions, r.harnesses, r.first_session.isoformat(),
                        r.last_session.isoformat(), r.fitted.isoformat(), r.note])
    os.replace(tmp, p)
    return p
