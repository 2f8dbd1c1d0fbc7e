"""`readbench compare RUN_DIR --baseline DIR` (the nightly verdict) and `readbench baseline`
(make an accepted run the committed baseline). Thin wrappers over `baseline` (issue 17).

Exit codes of ``readbench compare`` (and so of ``make nightly``):

- 0: every arm and headline metric is within tolerance of the baseline (or not significantly
  beyond it);
- 1: at least one regression, one line each on stdout;
- 2: no verdict: the run is incomplete (a partial arm, an unreadable log, no run.json, a
  missing headline column), it shares nothing with the baseline, or the input is unusable
  (no baseline, not a run directory: click's usage errors also exit 2), or compare.md and
  compare.json could not be written to ``--out`` when nothing else set the code (the verdict's
  lines are printed all the same);
- 3: underpowered: no regression was found, but a success or cost check cannot detect the
  smallest difference that matters (``smallest_difference`` of the run's matrix, or
  ``--smallest-success-pp`` / ``--smallest-cost-ratio``) at 80 % power and the Holm level, one
  line each on stdout; ``readbench plan`` says what design would (issue 28).
"""

from __future__ import annotations

import sys
import traceback
from pathlib import Path

import click

from .report_cli import DEFAULT_BASELINE, smallest_options

__all__ = ["baseline", "compare"]


@click.command("compare")
@click.argument("run_dir", type=click.Path(exists=True, file_okay=False, path_type=Path), default="results/latest")
@click.option("--baseline", "baseline_dir", type=click.Path(file_okay=False, path_type=Path),
              default=DEFAULT_BASELINE, show_default=True, help="Baseline directory (`readbench baseline --out`).")
@click.option("--tolerance-success", default=0.05, show_default=True, type=float,
              help="Tolerated drop in success, a fraction (0.05 = 5 percentage points).")
@click.option("--tolerance", "tolerance_relative", default=0.10, show_default=True, type=float,
              help="Tolerated relative increase of cost, input tokens, turns and read calls (0.10 = 10 %).")
@click.option("--out", "out_dir", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Where compare.md and compare.json go [default: RUN_DIR/compare].")
@smallest_options
def compare(run_dir: Path, baseline_dir: Path, tolerance_success: float, tolerance_relative: float,
            out_dir: Path | None, smallest_success_pp: float | None, smallest_cost_ratio: float | None) -> None:
    """Compare RUN_DIR with the baseline: every arm x headline metric (success, cost per cache
    model, turns, input tokens, read calls), paired on (task, epoch), CR2 t tests, Holm.

    Exits 1 with one line per regression, 0 when none, 2 when there is no verdict (the run is
    incomplete or shares nothing with the baseline), 3 when none was found but a success or cost
    check could not have detected the smallest difference that matters (underpowered).
    """
    from .baseline import compare_run, write_comparison
    from .regression import Tolerance

    try:
        tolerance = Tolerance(success=tolerance_success, relative=tolerance_relative)
    except ValueError as ex:
        raise click.BadParameter(str(ex), param_hint="--tolerance-success / --tolerance")
    try:
        result = compare_run(run_dir, baseline_dir, tolerance, (smallest_success_pp, smallest_cost_ratio))
    except FileNotFoundError as ex:
        raise click.BadParameter(str(ex), param_hint="RUN_DIR / --baseline")
    except ValueError as ex:
        click.echo(f"no verdict: {ex}", err=True)
        sys.exit(2)
    except Exception:  # noqa: BLE001 - exit 1 means "regression": a crash must not read as one
        traceback.print_exc()
        click.echo("no verdict: readbench compare failed (traceback above)", err=True)
        sys.exit(2)
    label, out = baseline_dir.as_posix(), out_dir or run_dir / "compare"
    try:  # an unwritable --out: the verdict is still printed, and a crash's exit 1 would read as "regression"
        details = str(write_comparison(result, out, label))
    except OSError as ex:
        details, failed = f"not written ({out}: {ex.strerror or ex})", True
    else:
        failed = False
    for reason in result.incomplete:
        click.echo(f"incomplete: {reason}")
    for check in result.regressions:
        click.echo(f"REGRESSION {check.line()}")
    for check in result.underpowered:
        click.echo(f"UNDERPOWERED {check.underpowered_line()}")
    for note in result.notes:
        click.echo(f"note: {note}")
    click.echo(f"{result.summary(label)}; details: {details}")
    if failed:
        click.echo(f"readbench compare: compare.md and compare.json were {details}", err=True)
    sys.exit(result.exit_code or (2 if failed else 0))


@click.command("baseline")
@click.argument("run_dir", type=click.Path(exists=True, file_okay=False, path_type=Path), required=False)
@click.option("--out", "out_dir", type=click.Path(file_okay=False, path_type=Path), default=DEFAULT_BASELINE,
              show_default=True, help="The baseline directory to (re)write.")
@click.option("--matrix", "matrix_name", default=None,
              help="Without RUN_DIR: take the newest complete run of this matrix under results/ "
                   "[default: the --out directory's name].")
@click.option("--decisions", "decisions_dir", type=click.Path(file_okay=False, path_type=Path),
              default="analysis/decisions", show_default=True,
              help="Also write the report's decision section to DIR/<matrix>.md.")
def baseline(run_dir: Path | None, out_dir: Path, matrix_name: str | None, decisions_dir: Path) -> None:
    """Make RUN_DIR (default: the newest complete run of the matrix) the baseline: its table,
    run.json and report, no logs. A run that did not finish is refused (exit 2)."""
    from .baseline import IncompleteRun, latest_run, write_baseline

    try:
        source = run_dir or latest_run(Path("results"), matrix_name or out_dir.name)
        written = write_baseline(source, out_dir, decisions_dir)
    except IncompleteRun as ex:
        click.echo(f"not a baseline: {ex}", err=True)
        sys.exit(2)
    except FileNotFoundError as ex:
        raise click.BadParameter(str(ex), param_hint="RUN_DIR")
    except ValueError as ex:
        raise click.ClickException(str(ex))
    click.echo(f"baseline: {written} (from {source})")


commands = [compare, baseline]
