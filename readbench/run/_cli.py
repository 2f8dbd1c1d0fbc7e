"""`readbench eval`: run a matrix (readbench.run.runner), then write the table and the report
(readbench.analysis)."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from readbench.analysis.report_cli import build_report

RESULTS = Path("results")


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
def eval_cmd(matrix_path: str, models: tuple[str, ...], sandbox_kind: str, run_id: str | None,
             task_args: tuple[str, ...], time_limit: int | None, max_retries: int | None, timeout: int | None,
             attempt_timeout: int | None, max_tokens: int | None, max_connections: int | None,
             max_tasks: int | None, model_base_url: str | None, model_args: tuple[str, ...]) -> None:
    """Run a matrix of arms through inspect's eval_set, then write the table and the report.

    Exits 1 with one line when the run did not finish (Ctrl-C, a killed process, samples that
    errored after retries, an unreadable log): the report flags the partial arms, and running
    the same command again resumes, keeping every finished sample. The bounds (--time-limit,
    --max-retries, --timeout, ...) override the matrix's `time_limit`, `generate:` and `model:`
    (readbench.run.settings; defaults for real models apply to what neither sets).
    """
    from readbench.analysis.completeness import incomplete_line, scan_logs
    from readbench.run.matrix import check_run_id, load_matrix
    from readbench.run.runner import RunLock, RunLocked, plan_run, prepare_log_dir, run_plan
    from readbench.run.task_args import parse_cli_model_args, parse_cli_task_args

    try:
        matrix = load_matrix(matrix_path)
    except ValueError as ex:
        raise click.BadParameter(str(ex), param_hint="--matrix")
    try:
        matrix = matrix.with_task_args(parse_cli_task_args(task_args))
    except ValueError as ex:
        raise click.BadParameter(str(ex), param_hint="-T")
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
        plan = plan_run(matrix, list(models) or None, sandbox_kind, overrides)
    except ValueError as ex:
        raise click.ClickException(str(ex))
    click.echo(f"readbench: settings {plan.settings.record()}", err=True)
    log_dir = run_dir / "logs"
    try:
        with RunLock(run_dir):
            for name in prepare_log_dir(log_dir, plan):
                click.echo(f"readbench: {name} could not be read; set aside as {name}.unreadable, its arm runs again",
                           err=True)
            ok, interrupted = run_plan(plan, run_dir)
    except (RunLocked, ValueError) as ex:
        raise click.ClickException(str(ex))
    try:
        report_path = build_report(run_dir)
    except ValueError as ex:  # e.g. no finished sample at all: nothing to report yet
        click.echo(f"logs: {log_dir}\nno report: {ex}", err=True)
        sys.exit(130 if interrupted else 1)
    latest = RESULTS / "latest"
    if latest.is_symlink() or not latest.exists():
        latest.unlink(missing_ok=True)
        latest.symlink_to(run_dir.name)
    click.echo(f"logs:   {log_dir}   (inspect view --log-dir {log_dir})")
    click.echo(f"table:  {run_dir / 'table.parquet'}")
    click.echo(f"report: {report_path}")
    line = incomplete_line(scan_logs(log_dir))
    if line is None and not ok:
        line = "incomplete: eval_set did not complete every task; re-run the same command to resume"
    if line is not None or interrupted:
        click.echo(line or "incomplete: interrupted; re-run the same command to resume", err=True)
        sys.exit(130 if interrupted else 1)


commands = [eval_cmd]
