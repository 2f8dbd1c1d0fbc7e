"""`readbench report RUN_DIR` (logs -> table.parquet -> report/); `readbench plan` is in
readbench.run.plan_cli (it reads a matrix file for --design forked --sessions).

Thin wrappers: the work is `build_report`.
"""

from __future__ import annotations

import json
from pathlib import Path

import click

__all__ = ["DEFAULT_BASELINE", "baseline_named", "baseline_option", "build_report", "load_table", "report", "smallest_options"]

DEFAULT_BASELINE = "analysis/baselines/nightly"
"""Where `make nightly` finds the baseline and `make baseline` writes it (here, in a module that
imports no pandas, for the defaults of `readbench compare|baseline`, whose help needs no pandas)."""


def _check_pp(ctx: click.Context, param: click.Parameter, value: float | None) -> float | None:
    if value is not None and not 0 < value < 100:
        raise click.BadParameter(f"{value!r} must be percentage points in (0, 100), e.g. 5")
    return value


def _check_ratio(ctx: click.Context, param: click.Parameter, value: float | None) -> float | None:
    if value is not None and (not value > 0 or value == 1):
        raise click.BadParameter(f"{value!r} must be a ratio > 0 and != 1, e.g. 0.9 for 10% cheaper")
    return value


def smallest_options(f):
    """``--smallest-success-pp`` and ``--smallest-cost-ratio`` (over the matrix's
    ``smallest_difference``, `smallest.SmallestDifference`) for eval, report and compare."""
    f = click.option("--smallest-cost-ratio", type=float, default=None, callback=_check_ratio,
                     help="Smallest cost ratio arm/baseline that matters (0.9 = 10% cheaper) [default: the "
                          "matrix's smallest_difference, else 0.9].")(f)
    return click.option("--smallest-success-pp", type=float, default=None, callback=_check_pp,
                        help="Smallest success difference that matters, in percentage points [default: the "
                             "matrix's smallest_difference, else 5].")(f)


def build_report(
    run_dir: Path,
    *,
    baseline: tuple[str, str] = ("stock", "off"),
    exclude: tuple[str, ...] = (),
    smallest: tuple[float | None, float | None] = (None, None),
    require_baseline: bool = False,
) -> Path:
    """Read ``run_dir/logs``, write ``run_dir/table.parquet`` and ``run_dir/report/``.

    ``run_dir/run.json`` is the run metadata shown in the report header (without it, a run that
    did not finish, the header names the run by its directory); its ``smallest_difference`` (the
    matrix's), overridden by `smallest` = (success_pp, cost_ratio), sets the smallest differences
    that matter to the decision (`smallest.run_smallest`); for a forked run (``design: forked``)
    the divergence table goes to ``run_dir/divergence.csv`` and the report
    (readbench.analysis.divergence).
    Every log's status is read first (`completeness.scan_logs`): unreadable logs are named and
    skipped, partial arms are flagged and left out of the comparisons, and the table gets the
    column ``arm_status``. Returns the path of ``report.md``. Raises FileNotFoundError when
    ``run_dir/logs`` is missing and ValueError for logs without readbench samples (see
    `table.tidy_table`), one arm name with two definitions (see `completeness.scan_logs`) or an
    `exclude` id that matches no sample or, with `require_baseline` (a baseline the user named), a
    `baseline` that is no arm of the run (`partition.check_exclude`, `check_baseline`; nothing is
    written then). Without it a run with no such arm is reported without paired comparisons, as
    the report says.
    """
    from .completeness import drop_unfinished, scan_logs
    from .partition import check_baseline, check_exclude
    from .real_models import log_settings
    from .report import render_report
    from .smallest import run_smallest
    from .table import tidy_table, write_table

    scan = scan_logs(run_dir / "logs")
    try:
        table = drop_unfinished(tidy_table(run_dir / "logs", logs=scan.logs), scan)
    except ValueError as ex:
        if scan.unreadable:
            raise ValueError(f"{ex}; unreadable: {', '.join(u.path for u in scan.unreadable)}") from None
        raise
    check_exclude(table, exclude)  # before anything is written
    if require_baseline:
        check_baseline(table, baseline)
    write_table(table, run_dir / "table.parquet")
    meta_path = run_dir / "run.json"
    # an interrupted run has no run.json yet: its directory name is the run id (the title read
    # "readbench report: readbench run"; issue 27 trial)
    meta = json.loads(meta_path.read_text()) if meta_path.is_file() else {"run_id": run_dir.resolve().name}
    small = run_smallest(meta, *smallest)
    divergence = None
    if meta.get("design") == "forked":
        from .divergence import divergence_rows, divergence_summary

        divergence = divergence_summary(divergence_rows(run_dir / "logs"), list(meta.get("trunk_arms") or []))
        divergence.to_csv(run_dir / "divergence.csv", index=False)
    return render_report(table, run_dir / "report", baseline=baseline, run_meta=meta, exclude=exclude,
                         completeness=scan, model_settings=log_settings(scan.logs), effect=small.success,
                         cost_ratio=small.cost_ratio, plan_from=run_dir.as_posix(), divergence=divergence)


def load_table(run_dir: Path):
    """``run_dir/table.parquet``, or the table read from ``run_dir/logs`` when it is missing.

    Raises FileNotFoundError when neither exists, ValueError for logs without readbench samples.
    """
    from .table import read_table, tidy_table

    path = run_dir / "table.parquet"
    if path.is_file():
        return read_table(path)
    if not (run_dir / "logs").is_dir():
        raise FileNotFoundError(f"{str(run_dir)!r} has neither table.parquet nor logs/: not a run directory")
    return tidy_table(run_dir / "logs")


def baseline_named() -> bool:
    """Whether the running command's `--baseline` was given (not its default): a baseline the user
    names must be an arm of the run (`partition.check_baseline`); the default's absence is a note."""
    return click.get_current_context().get_parameter_source("baseline") != click.core.ParameterSource.DEFAULT


def baseline_option(ctx: click.Context, param: click.Parameter, value: str) -> tuple[str, str]:
    variant, sep, dcp = value.partition(":")
    if not sep or not variant or not dcp:
        raise click.BadParameter(f"{value!r} is not VARIANT:DCP (e.g. stock:off)")
    return variant, dcp


@click.command("report")
@click.argument("run_dir", type=click.Path(exists=True, file_okay=False, path_type=Path), default="results/latest")
@click.option("--baseline", default="stock:off", show_default=True, callback=baseline_option,
              help="Baseline arm VARIANT:DCP for the paired comparisons (within each model).")
@click.option("--exclude", multiple=True, metavar="ID[#EPOCH]",
              help="Sample id (all epochs) or id#epoch to remove from every denominator (repeatable).")
@smallest_options
def report(run_dir: Path, baseline: tuple[str, str], exclude: tuple[str, ...], smallest_success_pp: float | None,
           smallest_cost_ratio: float | None) -> None:
    """Rebuild RUN_DIR/table.parquet and RUN_DIR/report/ from RUN_DIR/logs alone."""
    from .partition import NotInRunError

    try:
        path = build_report(run_dir, baseline=baseline, exclude=exclude,
                            smallest=(smallest_success_pp, smallest_cost_ratio), require_baseline=baseline_named())
    except NotInRunError as ex:
        raise click.BadParameter(str(ex), param_hint=ex.option)
    except (FileNotFoundError, ValueError) as ex:
        raise click.BadParameter(str(ex), param_hint="RUN_DIR")
    click.echo(str(path))
    from .completeness import incomplete_line, scan_logs

    line = incomplete_line(scan_logs(run_dir / "logs"), "re-run `readbench eval` with the same run id to resume")
    if line:
        click.echo(line, err=True)
