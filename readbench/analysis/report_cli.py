"""`readbench report RUN_DIR`: logs -> table.parquet -> report/, with the analysis options.

A drop-in for the ``report`` command of `readbench.analysis._cli` (the lead's module lists
the commands): same argument, plus the baseline, exclusions and bootstrap settings. The
command is a thin wrapper; the work is `build_report`.
"""

from __future__ import annotations

import json
from pathlib import Path

import click

__all__ = ["build_report", "report"]


def build_report(
    run_dir: Path,
    *,
    baseline: tuple[str, str] = ("stock", "off"),
    exclude: tuple[str, ...] = (),
    seed: int = 0,
    n_resamples: int = 2000,
) -> Path:
    """Read ``run_dir/logs``, write ``run_dir/table.parquet`` and ``run_dir/report/``.

    ``run_dir/run.json`` (if present) is the run metadata shown in the report header.
    Returns the path of ``report.md``. Raises FileNotFoundError when ``run_dir/logs`` is
    missing and ValueError for logs without readbench samples (see `table.tidy_table`).
    """
    import numpy as np

    from .report import render_report
    from .table import tidy_table, write_table

    table = tidy_table(run_dir / "logs")
    write_table(table, run_dir / "table.parquet")
    meta_path = run_dir / "run.json"
    meta = json.loads(meta_path.read_text()) if meta_path.is_file() else {}
    return render_report(table, run_dir / "report", baseline=baseline, run_meta=meta, exclude=exclude,
                         rng=np.random.default_rng(seed), n_resamples=n_resamples)


def _baseline(ctx: click.Context, param: click.Parameter, value: str) -> tuple[str, str]:
    variant, sep, dcp = value.partition(":")
    if not sep or not variant or not dcp:
        raise click.BadParameter(f"{value!r} is not VARIANT:DCP (e.g. stock:off)")
    return variant, dcp


@click.command("report")
@click.argument("run_dir", type=click.Path(exists=True, file_okay=False, path_type=Path), default="results/latest")
@click.option("--baseline", default="stock:off", show_default=True, callback=_baseline,
              help="Baseline arm VARIANT:DCP for the paired comparisons (within each model).")
@click.option("--exclude", multiple=True, metavar="ID[#EPOCH]",
              help="Sample id (all epochs) or id#epoch to remove from every denominator (repeatable).")
@click.option("--seed", default=0, show_default=True, type=int, help="Seed of the bootstrap generator.")
@click.option("--resamples", default=2000, show_default=True, type=click.IntRange(min=1),
              help="Bootstrap resamples per interval.")
def report(run_dir: Path, baseline: tuple[str, str], exclude: tuple[str, ...], seed: int, resamples: int) -> None:
    """Rebuild RUN_DIR/table.parquet and RUN_DIR/report/ from RUN_DIR/logs alone."""
    try:
        path = build_report(run_dir, baseline=baseline, exclude=exclude, seed=seed, n_resamples=resamples)
    except (FileNotFoundError, ValueError) as ex:
        raise click.BadParameter(str(ex), param_hint="RUN_DIR")
    click.echo(str(path))
