"""`readbench report RUN_DIR` (logs -> table.parquet -> report/) and `readbench plan --from RUN_DIR`.

Thin wrappers: the work is `build_report` and `analysis.plan`.
"""

from __future__ import annotations

import json
from pathlib import Path

import click

__all__ = ["build_report", "load_table", "plan", "report", "smallest_options"]


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
    `table.tidy_table`) or one arm name with two definitions (see `completeness.scan_logs`).
    """
    from .completeness import drop_unfinished, scan_logs
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
    write_table(table, run_dir / "table.parquet")
    meta_path = run_dir / "run.json"
    # an interrupted run has no run.json yet: its directory name is the run id (the title read
    # "readbench report: readbench run"; issue 27 trial)
    meta = json.loads(meta_path.read_text()) if meta_path.is_file() else {"run_id": run_dir.resolve().name}
    small = run_smallest(meta, *smallest)
    divergence = None
    if meta.get("design") == "forked":
        from .divergence import divergence_rows, divergence_summary

        divergence = divergence_summary(divergence_rows(run_dir / "logs"))
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
@smallest_options
def report(run_dir: Path, baseline: tuple[str, str], exclude: tuple[str, ...], smallest_success_pp: float | None,
           smallest_cost_ratio: float | None) -> None:
    """Rebuild RUN_DIR/table.parquet and RUN_DIR/report/ from RUN_DIR/logs alone."""
    try:
        path = build_report(run_dir, baseline=baseline, exclude=exclude,
                            smallest=(smallest_success_pp, smallest_cost_ratio))
    except (FileNotFoundError, ValueError) as ex:
        raise click.BadParameter(str(ex), param_hint="RUN_DIR")
    click.echo(str(path))
    from .completeness import incomplete_line, scan_logs

    line = incomplete_line(scan_logs(run_dir / "logs"), "re-run `readbench eval` with the same run id to resume")
    if line:
        click.echo(line, err=True)


@click.command("plan")
@click.option("--from", "run_dir", required=True, type=click.Path(exists=True, file_okay=False, path_type=Path),
              help="Run directory (results/<run-id>) whose pairs supply the variances.")
@click.option("--effect", default=0.05, show_default=True, type=float,
              help="Success difference to detect, a fraction (0.05 = 5 percentage points).")
@click.option("--power", default=0.8, show_default=True, type=float, help="Target power.")
@click.option("--alpha", default=0.05, show_default=True, type=float, help="Two-sided significance level.")
@click.option("--cost-ratio", default=None, type=float,
              help="Also plan a cost ratio arm/baseline per cache model (0.9 = 10% cheaper).")
@click.option("--baseline", default="stock:off", show_default=True, callback=_baseline,
              help="Baseline arm VARIANT:DCP (within each model).")
@click.option("--exclude", multiple=True, metavar="ID[#EPOCH]", help="Sample id or id#epoch to leave out (repeatable).")
@click.option("--design", type=click.Choice(["independent", "forked"]), default="independent", show_default=True,
              help="forked: also the matrix's cost per task x epoch forked vs independent, from RUN_DIR's "
              "divergence table (RUN_DIR must be a forked run).")
def plan(run_dir: Path, effect: float, power: float, alpha: float, cost_ratio: float | None,
         baseline: tuple[str, str], exclude: tuple[str, ...], design: str) -> None:
    """Tasks x epochs needed to detect EFFECT (and COST-RATIO), from RUN_DIR's own variances;
    with --design forked, what a task x epoch costs forked and independent."""
    from .compare import paired_comparisons
    from .plan import format_plan, plan_comparisons

    for name, v in (("--power", power), ("--alpha", alpha)):
        if not 0 < v < 1:
            raise click.BadParameter(f"{v!r} must be in the open interval (0, 1)", param_hint=name)
    try:
        table = load_table(run_dir)
        if "arm_status" in table:  # partial arms (completeness) are not compared
            table = table[table["arm_status"] == ""]
        comparisons, notes = paired_comparisons(table, baseline, exclude=exclude)
        rows = plan_comparisons(table, comparisons, effect=effect, cost_ratio=cost_ratio, power=power, alpha=alpha,
                                baseline=baseline, exclude=exclude)
    except (FileNotFoundError, ValueError) as ex:
        raise click.BadParameter(str(ex), param_hint="--from / --effect / --cost-ratio")
    click.echo(format_plan(rows, power=power, alpha=alpha), nl=False)
    for note in notes:
        click.echo(note)
    if design == "forked":
        from .divergence import design_costs, divergence_rows, divergence_summary, format_design_costs

        meta_path = run_dir / "run.json"
        meta = json.loads(meta_path.read_text()) if meta_path.is_file() else {}
        try:
            costs = design_costs(divergence_summary(divergence_rows(run_dir / "logs")), table,
                                 list(meta.get("trunk_arms") or []))
        except ValueError as ex:
            raise click.BadParameter(str(ex), param_hint="--design")
        click.echo(format_design_costs(costs, run_dir), nl=False)
