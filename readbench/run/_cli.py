"""`readbench eval`: run a matrix (readbench.run.runner), then write the table and the report
(readbench.analysis); `readbench sim calibrate`: the simulated agent's calibration runs
(readbench.run.calibrate), a command of the `sim` group (readbench.sim._cli) contributed here
because it runs the benchmark task."""

from __future__ import annotations

import json
import math
import sys
from dataclasses import asdict, replace
from pathlib import Path

import click

from readbench.analysis.report_cli import build_report, smallest_options
from readbench.sim._cli import sim_group

RESULTS = Path("results")


def _check_writable(path: Path) -> None:
    """Create the directory `path` and refuse it, in one line naming it, when it cannot be written.

    A read-only or misplaced results/ (a file named `results`, no permission) used to end in a
    `PermissionError` traceback from the run lock; nothing has run yet at this point, so nothing is
    lost (bad input gets a clear error naming the input and what is wrong).

    Raises:
        click.ClickException: `"cannot write the run directory {dir}: {reason}; run from a directory
            where results/ is writable, or fix its permissions"`.
    """
    import os

    try:
        path.mkdir(parents=True, exist_ok=True)
        reason = None if os.access(path, os.W_OK | os.X_OK) else "Permission denied"
    except OSError as ex:
        reason = ex.strerror or str(ex)
    if reason is not None:
        raise click.ClickException(f"cannot write the run directory {path}: {reason}; run from a directory "
                                   "where results/ is writable, or fix its permissions")


@click.command("eval")
@click.option("--matrix", "matrix_path", type=click.Path(exists=True, dir_okay=False), default="evals/smoke.yaml",
              show_default=True, help="Matrix file (arms = variants x dcp x models).")
@click.option("--model", "models", multiple=True, help="Override the matrix's models (repeatable).")
@click.option("--sandbox", "sandbox_kind", type=click.Choice(["auto", "docker", "local", "k8s"]), default="auto",
              show_default=True, help="auto = docker when an engine >= 24.0.6 answers, else local; "
              "k8s needs -T k8s_registry=HOST.")
@click.option("--run-id", default=None, help="results/<run-id>/ (default: the matrix name; re-running resumes). "
              "Letters, digits, '.', '_', '-'.")
@click.option("-T", "task_args", multiple=True, metavar="KEY=VALUE",
              help="Task argument (YAML value), checked like the matrix's task_args.")
@click.option("--time-limit", type=int, default=None, help="Seconds per sample (real models: 1800).")
@click.option("--max-retries", type=int, default=None, help="Retries per model call (real models: 3).")
@click.option("--timeout", type=int, default=None, help="Seconds per model call, retries included (real models: 600).")
@click.option("--attempt-timeout", type=int, default=None, help="Seconds per attempt of a model call (real models: 300).")
@click.option("--max-tokens", type=int, default=None, help="Tokens per reply (real models: 4096).")
@click.option("--max-connections", type=int, default=None, help="Concurrent calls per model (local servers: 1).")
@click.option("--max-tasks", type=int, default=None, help="Arms run at once (default 2; local servers: 1).")
@click.option("--model-base-url", default=None, help="Base URL of the model's API (default: the provider's env var).")
@click.option("-M", "model_args", multiple=True, metavar="KEY=VALUE", help="Model argument (YAML value), inspect's -M.")
@smallest_options
@click.option("--design", type=click.Choice(["independent", "forked"]), default=None,
              help="independent: every arm runs its whole trajectory; forked: one trunk per task x epoch x model "
              "(per group of arms with the same tool schemas; one per pi pin), each arm forked at its first divergence; "
              "claude-code and codex arms run independently beside the forks (default: the matrix's `design`, "
              "else independent).")
@click.option("--budget-usd", type=float, default=None,
              help="Stop starting samples once the run has spent this many USD at the list prices of the matrix's "
              "first cache model (forks pay only their calls after the fork point); running samples finish. "
              "The run then exits 1 saying how far it got; re-run with a larger budget to resume.")
@click.option("--sequential", is_flag=True, default=False,
              help="Stop starting samples once every arm compared with stock × off is decided by an anytime-valid "
              "confidence sequence of its paired success difference (Waudby-Smith & Ramdas 2024, empirical "
              "Bernstein; 0 excluded, or inside ± the smallest success difference), or the budget is spent. "
              "Give --max-tasks >= the number of arms so the arms progress together.")
def eval_cmd(matrix_path: str, models: tuple[str, ...], sandbox_kind: str, run_id: str | None,
             task_args: tuple[str, ...], time_limit: int | None, max_retries: int | None, timeout: int | None,
             attempt_timeout: int | None, max_tokens: int | None, max_connections: int | None,
             max_tasks: int | None, model_base_url: str | None, model_args: tuple[str, ...],
             smallest_success_pp: float | None, smallest_cost_ratio: float | None, design: str | None,
             budget_usd: float | None, sequential: bool) -> None:
    """Run a matrix of arms through inspect's eval_set, then write the table and the report.

    Exits 1 with one line when the run did not finish (Ctrl-C, a killed process, samples that
    errored after retries, an unreadable log): the report flags the partial arms, and running
    the same command again resumes, keeping every finished sample. The bounds (--time-limit,
    --max-retries, --timeout, ...) override the matrix's `time_limit`, `generate:` and `model:`
    (readbench.run.settings; defaults for real models apply to what neither sets).
    """
    from readbench.analysis.completeness import incomplete_line, scan_logs
    from readbench.base.budget import use as use_budget
    from readbench.run.matrix import check_run_id, load_matrix
    from readbench.run.progress import quiet_hook_banner
    from readbench.run.runner import RunLock, RunLocked, plan_run, prepare_log_dir, run_plan
    from readbench.run.spending import start_budget
    from readbench.run.task_args import parse_cli_model_args, parse_cli_task_args

    quiet_hook_banner()

    try:
        matrix = load_matrix(matrix_path)
    except ValueError as ex:
        raise click.BadParameter(str(ex), param_hint="--matrix")
    try:
        matrix = matrix.with_task_args(parse_cli_task_args(task_args))
    except ValueError as ex:
        raise click.BadParameter(str(ex), param_hint="-T")
    matrix = replace(matrix, smallest=matrix.smallest.override(smallest_success_pp, smallest_cost_ratio))
    try:
        matrix = matrix.with_design(design)
    except ValueError as ex:
        raise click.BadParameter(str(ex), param_hint="--design")
    try:
        run_dir = RESULTS / check_run_id(run_id if run_id is not None else matrix.name)
    except ValueError as ex:
        raise click.BadParameter(str(ex), param_hint="--run-id")
    try:
        args = parse_cli_model_args(model_args)
    except ValueError as ex:
        raise click.BadParameter(str(ex), param_hint="-M")
    overrides = {"time_limit": time_limit, "max_tasks": max_tasks,
                 "generate": {"max_retries": max_retries, "timeout": timeout, "attempt_timeout": attempt_timeout,
                              "max_tokens": max_tokens, "max_connections": max_connections},
                 "model": {"base_url": model_base_url, "args": {**(matrix.model.get("args") or {}), **args}}}
    try:
        plan = plan_run(matrix, list(models) or None, sandbox_kind, overrides, fork_root=run_dir / "fork")
    except ValueError as ex:
        raise click.ClickException(str(ex))
    click.echo(f"readbench: settings {plan.settings.record()}", err=True)
    log_dir = run_dir / "logs"
    _check_writable(run_dir)  # logs/ is made under the run lock
    try:
        with RunLock(run_dir):
            # made here, under the lock: a run stopped before inspect wrote a log still has one to
            # scan, and a second eval of the run id refused by the lock creates nothing
            log_dir.mkdir(exist_ok=True)
            for name in prepare_log_dir(log_dir, plan):
                click.echo(f"readbench: {name} could not be read; set aside as {name}.unreadable, its arm runs again",
                           err=True)
            spending = start_budget(plan, run_dir, budget_usd, sequential)
            try:
                ok, interrupted = run_plan(plan, run_dir)
            finally:
                use_budget(None)
    except (RunLocked, ValueError) as ex:
        raise click.ClickException(str(ex))
    if spending is not None:
        click.echo(f"readbench: {spending.describe()}"
                   + (f"; stopped ({spending.stop_reason}), {spending.samples_refused} sample starts refused"
                      if spending.stop_reason else ""), err=True)
    try:
        report_path = build_report(run_dir)
    except ValueError as ex:  # e.g. no finished sample at all: nothing to report yet
        click.echo(f"logs: {log_dir}\nno report: {ex}", err=True)
        click.echo(incomplete_line(scan_logs(log_dir))
                   or "incomplete: no sample finished; re-run the same command to resume", err=True)
        sys.exit(1)  # as documented (--help, README); inspect absorbs some Ctrl-Cs, so 130 came only sometimes
    latest = RESULTS / "latest"
    if latest.is_symlink() or not latest.exists():
        latest.unlink(missing_ok=True)
        latest.symlink_to(run_dir.name)
    click.echo(f"logs:   {log_dir}   (inspect view --log-dir {log_dir})")
    click.echo(f"table:  {run_dir / 'table.parquet'}")
    click.echo(f"report: {report_path}")
    line = incomplete_line(scan_logs(log_dir))
    if spending is not None and (spending.stop_reason or "").startswith("sequential stop"):
        # decided: the samples not started are not needed (a resumed --sequential run starts from these pairs)
        click.echo("readbench: finished early by --sequential; the samples not started are left out", err=True)
        return
    if line is None and not ok:
        line = "incomplete: eval_set did not complete every task; re-run the same command to resume"
    if line is not None or interrupted:
        click.echo(line or "incomplete: interrupted; re-run the same command to resume", err=True)
        sys.exit(1)  # as documented (--help, README); inspect absorbs some Ctrl-Cs, so 130 came only sometimes


@sim_group.command("calibrate")
@click.option("--profile", "profiles", multiple=True, help="Profile to run (repeatable; default: every plain profile).")
@click.option("--against", "against", multiple=True, type=click.Path(exists=True),
              help="Recorded sessions (files or dirs, repeatable): compare the profile's reading shape with theirs.")
@click.option("--variant", default=None, help="Read preset of the runs (default: stock; with --against, the "
              "recorded harness's preset: pi -> stock, claude-code -> claude-code).")
@click.option("--families", default=None, help="Comma-separated corpus families (with --against default: longsession).")
@click.option("--limit", type=click.IntRange(min=1), default=None, help="First N corpus tasks.")
@click.option("--per-family", type=click.IntRange(min=1), default=None, help="First N tasks of each family.")
@click.option("--max-turns", type=click.IntRange(1, 1000), default=600, show_default=True,
              help="Model calls per sample (with --against).")
@click.option("--sandbox", "sandbox_kind", type=click.Choice(["auto", "docker", "local"]), default="auto",
              show_default=True)
@click.option("--log-dir", default="results/calibration", show_default=True, help="inspect log directory.")
@click.option("--json", "as_json", is_flag=True, help="Print the rows as JSON.")
def calibrate_cmd(profiles: tuple[str, ...], against: tuple[str, ...], variant: str | None, families: str | None,
                  limit: int | None, per_family: int | None, max_turns: int, sandbox_kind: str, log_dir: str,
                  as_json: bool) -> None:
    """Run the corpus once per profile under one read variant and print each profile's
    share of blind reads, reads per file, re-read ratio and success rate; with --against,
    run one profile and print its reading shape beside the recorded sessions' (goal: within 10 %)."""
    from readbench.base.strictjson import finite
    from readbench.read import preset_names
    from readbench.run.calibrate import calibrate_against, run_calibration
    from readbench.sim.profiles import mixture_names, profile_names

    names = list(profiles) or profile_names()
    for name in names:
        if name not in profile_names() + mixture_names():
            raise click.BadParameter(f"unknown sim profile {name!r}", param_hint="--profile")
    if variant is not None and variant not in preset_names():
        raise click.BadParameter(f"unknown read variant {variant!r}", param_hint="--variant")
    fams = [f for f in families.split(",") if f] if families else None
    if against:
        if len(profiles) != 1:
            raise click.BadParameter("--against compares exactly one --profile", param_hint="--profile")
        try:
            used, recorded, simulated, rows = calibrate_against(
                profiles[0], list(against), variant=variant, families=fams, limit=limit, per_family=per_family,
                sandbox_kind=sandbox_kind, log_dir=log_dir, max_turns=max_turns,
                skipped=lambda path, reason: click.echo(f"skipped {path}: {reason}", err=True),
                note=lambda text: click.echo(f"note: {text}", err=True))
        except (ValueError, RuntimeError) as ex:  # RuntimeError: the corpus run did not finish (named)
            raise click.ClickException(str(ex))
        if as_json:  # undefined (NaN) and infinite differences are null: bare NaN/Infinity is not JSON
            click.echo(json.dumps(finite({"variant": used, "recorded": asdict(recorded),
                                           "simulated": asdict(simulated), "rows": [asdict(r) for r in rows]}),
                                  indent=2, allow_nan=False))
            return
        click.echo(f"{profiles[0]} under {used}: {simulated.sessions} corpus samples ({simulated.calls} calls, "
                   f"{simulated.prompts} prompts) vs {recorded.sessions} recorded sessions ({recorded.calls} calls, "
                   f"{recorded.prompts} prompts)")
        click.echo(f"{'metric':<18} {'recorded':>9} {'simulated':>9} {'diff':>7}  within 10%")
        def num(x: float, spec: str, width: int) -> str:
            return format(x, spec) if not math.isnan(x) else "n/a".rjust(width)

        for r in rows:
            click.echo(f"{r.metric:<18} {num(r.recorded, '>9.3f', 9)} {num(r.simulated, '>9.3f', 9)} "
                       f"{num(r.relative_difference, '>+7.0%', 7)}  " + ("yes" if r.within else f"no: {r.why}"))
        return
    try:
        calibration = run_calibration(names, variant=variant or "stock", limit=limit, per_family=per_family,
                                      sandbox_kind=sandbox_kind, log_dir=log_dir, families=fams)
    except (ValueError, RuntimeError) as ex:  # a run that did not finish, a sample without metrics: named
        raise click.ClickException(str(ex))
    if as_json:
        click.echo(json.dumps([asdict(r) for r in calibration], indent=2))
        return
    click.echo(f"{'profile':<14} {'samples':>7} {'blind share':>11} {'reads/file':>10} {'re-read':>8} {'success':>8}")
    for c in calibration:
        click.echo(f"{c.profile:<14} {c.samples:>7} {c.blind_read_share:>11.3f} {c.reads_per_file:>10.2f} "
                   f"{c.reread_ratio:>8.3f} {c.success_rate:>8.3f}")
