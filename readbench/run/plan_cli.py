"""`readbench plan`: tasks x epochs needed per comparison, from a run's own variances
(readbench.analysis.plan); with ``--design forked``, what a task x epoch (a run's divergence table)
or a recorded session (``--sessions``: a replay's fork points, with ``--matrix``) costs forked and
independent (readbench.analysis.fork_plan, GitHub issue 25 item 5).

It lives in readbench.run because the sessions estimate reads a matrix file and groups its arms
by schema as the forked design does (readbench.run.matrix, readbench.run.forked).
"""

from __future__ import annotations

import json
from pathlib import Path

import click

from readbench.analysis.report_cli import baseline_named, baseline_option, load_table

__all__ = ["plan"]


@click.command("plan")
@click.option("--from", "run_dir", default=None, type=click.Path(exists=True, file_okay=False, path_type=Path),
              help="Run directory (results/<run-id>) whose pairs supply the variances (and, with --design forked "
                   "and no --sessions, whose divergence table supplies the fork points).")
@click.option("--effect", default=0.05, show_default=True, type=float,
              help="Success difference to detect, a fraction (0.05 = 5 percentage points).")
@click.option("--power", default=0.8, show_default=True, type=float, help="Target power.")
@click.option("--alpha", default=0.05, show_default=True, type=float, help="Two-sided significance level.")
@click.option("--cost-ratio", default=None, type=float,
              help="Also plan a cost ratio arm/baseline per cache model (0.9 = 10% cheaper).")
@click.option("--baseline", default="stock:off", show_default=True, callback=baseline_option,
              help="Baseline arm VARIANT:DCP (within each model).")
@click.option("--exclude", multiple=True, metavar="ID[#EPOCH]", help="Sample id or id#epoch to leave out (repeatable).")
@click.option("--design", type=click.Choice(["independent", "forked"]), default="independent", show_default=True,
              help="forked: also the matrix's cost forked vs independent (model calls, tokens, USD per cache model), "
                   "from --from's divergence table (a forked run) or from --sessions.")
@click.option("--sessions", "sessions_dir", default=None, type=click.Path(exists=True, file_okay=False, path_type=Path),
              help="With --design forked: a `readbench replay --audit --dcp all --fork-points --out DIR` directory; "
                   "the estimate is per recorded session, first order (each arm's fork point from the replay).")
@click.option("--matrix", "matrix_path", default=None, type=click.Path(exists=True, dir_okay=False, path_type=Path),
              help="With --sessions (required there): the matrix file whose arms are estimated; pi's arms form "
                   "one group per pi pin, Claude Code's and Codex's count as run independently.")
def plan(run_dir: Path | None, effect: float, power: float, alpha: float, cost_ratio: float | None,
         baseline: tuple[str, str], exclude: tuple[str, ...], design: str, sessions_dir: Path | None,
         matrix_path: Path | None) -> None:
    """Tasks x epochs needed to detect EFFECT (and COST-RATIO), from --from's own variances;
    with --design forked, what the matrix costs forked and independent."""
    if run_dir is None and sessions_dir is None:
        raise click.BadParameter("give a run directory (--from RUN_DIR), or --design forked --sessions REPLAY_DIR "
                                 "--matrix FILE", param_hint="--from")
    if sessions_dir is not None and (design != "forked" or matrix_path is None):
        missing = " and ".join(x for x, gone in (("--design forked", design != "forked"),
                                                 ("--matrix FILE", matrix_path is None)) if gone)
        raise click.BadParameter(f"--sessions estimates the forked design of a matrix: {missing} missing (give "
                                 "--design forked and --matrix FILE)", param_hint="--sessions")
    if matrix_path is not None and sessions_dir is None:
        raise click.BadParameter("--matrix is read only with --sessions REPLAY_DIR (a run's own arms are planned "
                                 "from --from)", param_hint="--matrix")
    for name, v in (("--power", power), ("--alpha", alpha)):
        if not 0 < v < 1:
            raise click.BadParameter(f"{v!r} must be in the open interval (0, 1)", param_hint=name)
    if run_dir is not None:
        _variance_plan(run_dir, effect, power, alpha, cost_ratio, baseline, exclude)
    if design == "forked":
        if sessions_dir is not None:
            _sessions_estimate(sessions_dir, matrix_path)  # type: ignore[arg-type]
        else:
            _run_estimate(run_dir)  # type: ignore[arg-type]


def _variance_plan(run_dir: Path, effect: float, power: float, alpha: float, cost_ratio: float | None,
                   baseline: tuple[str, str], exclude: tuple[str, ...]) -> None:
    from readbench.analysis.compare import paired_comparisons
    from readbench.analysis.partition import NotInRunError, check_baseline, check_exclude
    from readbench.analysis.plan import format_plan, plan_comparisons

    try:
        table = load_table(run_dir)
        check_exclude(table, exclude)
        if baseline_named():
            check_baseline(table, baseline)
        if "arm_status" in table:  # partial arms (completeness) are not compared
            table = table[table["arm_status"] == ""]
        comparisons, notes = paired_comparisons(table, baseline, exclude=exclude)
        rows = plan_comparisons(table, comparisons, effect=effect, cost_ratio=cost_ratio, power=power, alpha=alpha,
                                baseline=baseline, exclude=exclude)
    except NotInRunError as ex:
        raise click.BadParameter(str(ex), param_hint=ex.option)
    except (FileNotFoundError, ValueError) as ex:
        raise click.BadParameter(str(ex), param_hint="--from / --effect / --cost-ratio")
    click.echo(format_plan(rows, power=power, alpha=alpha), nl=False)
    for note in notes:
        click.echo(note)


def _run_estimate(run_dir: Path) -> None:
    """The matrix's cost per task x epoch from a forked run's divergence rows."""
    from readbench.analysis.divergence import divergence_rows
    from readbench.analysis.fork_plan import design_estimate, format_estimate

    meta_path = run_dir / "run.json"
    meta = json.loads(meta_path.read_text()) if meta_path.is_file() else {}
    try:
        est = design_estimate(divergence_rows(run_dir / "logs"), list(meta.get("trunk_arms") or []))
    except ValueError as ex:
        raise click.BadParameter(str(ex), param_hint="--design")
    click.echo(format_estimate(est, f"{run_dir}'s divergence table", "task x epoch"), nl=False)


def _sessions_estimate(replay_dir: Path, matrix_path: Path) -> None:
    """The matrix's cost per recorded session, and each arm's fork points, from a replay's fork points."""
    from readbench.analysis import _format as F
    from readbench.analysis.arms import spec_name
    from readbench.analysis.divergence import NOT_FORKED, divergence_summary
    from readbench.analysis.fork_plan import design_estimate, format_estimate, load_fork_points, session_fork_rows
    from readbench.harness.agents import LOOP
    from readbench.run.forked import pi_groups, schema_groups
    from readbench.run.matrix import load_matrix

    try:
        matrix = load_matrix(matrix_path)
        specs = [[v, d] for v, d, a in matrix.agent_arms() if a == LOOP]
        pis = pi_groups(matrix.agent_arms())  # forked too, one group per pi pin
        independent = [f"{spec_name(v)} × {spec_name(d)} × {a}" for v, d, a in matrix.agent_arms()
                       if a != LOOP and a not in pis]
        arms = [(str(spec_name(v)), str(spec_name(d))) for v, d in specs]
        labels = [f"{v} × {d}" for v, d in arms]
        groups = schema_groups(specs)
        for pin, pi_arms in pis.items():
            groups.append(list(range(len(arms), len(arms) + len(pi_arms))))
            arms += [(str(spec_name(v)), str(spec_name(d))) for v, d in pi_arms]
            labels += [f"{spec_name(v)} × {spec_name(d)} × {pin}" for v, d in pi_arms]
        points, calls = load_fork_points(replay_dir)
        calls = calls[calls["cache_model"].isin(matrix.cache_models)]  # the matrix's cache models only
        if calls.empty:
            raise ValueError(f"the replay priced no call under the matrix's cache models ({', '.join(matrix.cache_models)})")
        rows, notes = session_fork_rows(points, calls, arms, groups, independent, labels)
        trunk_arms = [labels[g[0]] for g in groups]
        est = design_estimate(rows, trunk_arms)
    except (FileNotFoundError, ValueError) as ex:
        raise click.BadParameter(str(ex), param_hint="--sessions / --matrix")
    n = rows["sample_id"].nunique()
    click.echo(format_estimate(est, f"{n} recorded sessions in {replay_dir}", "session"), nl=False)
    click.echo("Per arm (its fork point against its schema group's trunk arm, as a fraction of each session's calls):")
    summary = divergence_summary(rows, trunk_arms)
    for r in summary[summary["arm"] != "all arms"].to_dict("records"):
        name = r["arm"].rsplit(" @ ", 1)[0]
        if r["trunk"]:
            click.echo(f"  {name}: a trunk (paid in full in both designs)")
        elif r["run_independently"]:
            click.echo(f"  {name}: run independently (paid in full: {NOT_FORKED})")
        else:
            click.echo(f"  {name}: diverged in {F.pct(r['share_diverged'])} of {int(r['samples'])} sessions, median "
                       f"fork point {F.pct(r['median_fork_fraction'])} of the calls; calls not spent "
                       f"{F.pct(r['share_calls_not_spent'])}")
    click.echo(f"Trunks (one per schema group, each paid whole): {', '.join(trunk_arms) or 'none'}.")
    for note in notes:
        click.echo(f"Assumption: {note}.")
