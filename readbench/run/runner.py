"""Running a matrix (`readbench eval`): check everything, lock the run directory, run the arms
through inspect's ``eval_set``, and record the run only once inspect has accepted it.

Stages, each one failing with one clear line before the next starts (GitHub issue 13):

1. `readbench.run.matrix.check_run_id` -- the run id (``--run-id`` or the matrix ``name``) is one safe path
   component under ``results/``;
2. `plan_run` -- every model resolves (an unknown sim profile, a provider package that is not
   installed), the sandbox kind is usable (``--sandbox docker`` without an engine) and every
   arm's task builds (corpus filters, task arguments), all before the run directory exists;
3. `RunLock` -- one ``readbench eval`` per run directory at a time (a second one is refused
   with the other's process id, instead of both running every sample and leaving duplicate
   logs);
4. `prepare_log_dir` -- a log that cannot be read is set aside (``*.eval.unreadable``) so the
   others resume, and logs of arms this matrix does not define (or defines differently) are
   refused before eval_set starts;
5. `run_plan` -- eval_set (re-running resumes: finished samples are kept; a sample error
   fails its log after retries, so the next run retries it), then ``run.json``.
"""

from __future__ import annotations

import json
import re
import signal
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from readbench.analysis.arms import LOOP_AGENT, TASK_NAME, arm_name, spec_name
from readbench.base.lock import Locked, OutputLock
from readbench.run.matrix import Matrix
from readbench.run.settings import RunSettings, base_url_of, probe_server, resolve_settings
from readbench.sim import is_simulated

__all__ = ["RunLock", "RunLocked", "RunPlan", "check_models", "plan_run", "prepare_log_dir", "run_plan"]

RunLocked = Locked
"""Another process holds the run directory's lock (`readbench.base.lock.Locked`)."""


def RunLock(run_dir: Path) -> OutputLock:  # noqa: N802 - was a class; the name stays for callers
    """An exclusive lock on a run directory for one ``readbench eval`` process: ``<run_dir>/.lock``
    (`readbench.base.lock.OutputLock`: dropped by the kernel even on SIGKILL)."""
    return OutputLock(Path(run_dir) / ".lock", str(run_dir), "readbench eval",
                      "wait for it to finish or use another --run-id")


def _plain(message: Any) -> str:
    """inspect's rich-markup error text as one plain line."""
    from rich.text import Text

    text = Text.from_markup(message).plain if isinstance(message, str) else str(message)
    return " ".join(part.strip() for part in text.splitlines() if part.strip()).removeprefix("ERROR: ")


def check_models(models: list[str], base_url: str | None = None, model_args: dict[str, Any] | None = None) -> list[str]:
    """Resolve every model with inspect's `get_model` before anything runs (with the run's
    base URL and model args, as eval_set will).

    Raises:
        ValueError: a model string inspect cannot use (an unknown sim profile, a provider whose
            package or API key is missing); one line naming the model.
    """
    from inspect_ai.model import get_model

    for model in models:
        if not isinstance(model, str) or "/" not in model:
            raise ValueError(f"model {model!r} is not an inspect model string like provider/name")
        try:
            get_model(model, base_url=base_url, memoize=False, **(model_args or {}))
        except Exception as ex:  # noqa: BLE001 - provider packages raise their own types; one line each
            raise ValueError(f"model {model!r} cannot be used: {_plain(getattr(ex, 'message', ex))}") from None
    return models


@dataclass(frozen=True)
class RunPlan:
    """A checked run: what `run_plan` runs and records in ``run.json``."""

    matrix: Matrix
    models: list[str]
    sandbox_kind: str
    """The resolved kind: docker, local or k8s."""
    tasks: list[Any]
    """One inspect Task per arm, in `Matrix.arms` order."""
    settings: RunSettings = field(default_factory=lambda: resolve_settings([], {}, {}, {}))
    """Bounds and connection settings (readbench.run.settings)."""
    provenance: dict[str, dict[str, Any]] = field(default_factory=dict)
    """Per model: how it was reached (base URL, declared server and chat template, what a
    local server said about itself)."""
    trunk_tasks: list[Any] = field(default_factory=list)
    """The forked design's trunk tasks (one per schema group, readbench.run.forked; empty for an
    independent run). Their evals run first, into ``<run>/trunk``; `tasks` are then the arms' fork tasks."""

    def metadata(self) -> dict[str, Any]:
        """The ``run.json`` record: the resolved matrix with every arm's full definition, the
        run settings and each model's provenance (also in every log's ``eval.metadata``)."""
        m = self.matrix
        return {
            "matrix": m.name, "models": self.models, "epochs": m.epochs, "variants": m.variants,
            "dcp": m.dcp, "cache_models": m.cache_models,
            "arms": [arm_name(str(spec_name(v)), str(spec_name(d)), a) for v, d, a in m.agent_arms()],
            "agents": m.agents,
            "task_args": m.task_args, "sandbox": self.sandbox_kind,
            "settings": self.settings.record(), "provenance": self.provenance,
            "smallest_difference": m.smallest.to_dict(),
            "design": m.design,
            "trunk_arms": [arm_name(str(spec_name(t.metadata["variant"])), str(spec_name(t.metadata["dcp"])),
                                    t.metadata.get("agent")) for t in self.trunk_tasks],
        }


def plan_run(matrix: Matrix, models: list[str] | None, sandbox_kind: str,
             overrides: dict[str, Any] | None = None, fork_root: Path | None = None) -> RunPlan:
    """Check the models and the sandbox kind, resolve the run settings and build every arm's
    task; nothing is written.

    Args:
        overrides: flags of `readbench eval` over the matrix: ``time_limit``, ``max_tasks``,
            ``retry_attempts``, ``generate`` (dict), ``model`` (dict); None values are not given.
        fork_root: the forked design's directory for prefixes and snapshots (``<run>/fork``,
            made absolute); required when ``matrix.design == "forked"``.

    Raises:
        ValueError: as `check_models`, `readbench.run.task.resolve_sandbox`,
            `readbench.run.task.read_strategies_task` (task arguments, corpus filters) and
            `readbench.run.settings.resolve_settings`.
    """
    from readbench.run.task import read_strategies, resolve_sandbox

    over = dict(overrides or {})
    gen = {**matrix.generate, **{k: v for k, v in (over.pop("generate", None) or {}).items() if v is not None}}
    model = {**matrix.model, **{k: v for k, v in (over.pop("model", None) or {}).items() if v}}
    settings = {**matrix.settings, **{k: v for k, v in over.items() if v is not None}}
    models = list(models or matrix.models)
    run_settings = resolve_settings(models, settings, gen, model)
    models = check_models(models, base_url=model.get("base_url"), model_args=run_settings.model_args)
    kind = resolve_sandbox(sandbox_kind)
    trunk_tasks: list[Any] = []
    if matrix.design == "forked":
        from readbench.run.forked import forked_tasks

        if fork_root is None:
            raise ValueError("design forked needs the run's fork directory")
        trunk_tasks, tasks = forked_tasks(matrix, kind, Path(fork_root).resolve())
    else:
        tasks = [read_strategies(variant=v, dcp=d, cache_models=matrix.cache_models, sandbox_kind=kind,
                                 **_agent_arg(a), **matrix.task_args)
                 for v, d, a in matrix.agent_arms()]
    provenance = {}
    for m in models:
        if is_simulated(m):
            provenance[m] = {"kind": "simulated agent (readbench/sim-*)"}
            continue
        provenance[m] = {"kind": "real model", "base_url": base_url_of(m, model.get("base_url")) or "",
                         "server": model.get("server", ""), "chat_template": model.get("chat_template", ""),
                         **probe_server(m, model.get("base_url"))}
    return RunPlan(matrix, models, kind, tasks, run_settings, provenance, trunk_tasks)


def prepare_log_dir(log_dir: Path, plan: RunPlan) -> list[str]:
    """Set unreadable logs aside and refuse logs of arms the plan does not define.

    Returns:
        The names of the logs set aside (renamed ``<name>.unreadable``; the report lists them).

    Raises:
        ValueError: a readable log's arm (model, variant and DCP definition) is not one of the
            plan's, e.g. the matrix was edited and re-run under the same run id.
    """
    from inspect_ai.log import list_eval_logs, read_eval_log

    from readbench.analysis.completeness import UNREADABLE_SUFFIX

    if not log_dir.is_dir():
        return []
    wanted = {(model, json.dumps(v, sort_keys=True), json.dumps(d, sort_keys=True), a)
              for model in plan.models for v, d, a in plan.matrix.agent_arms()}
    set_aside = []
    for info in list_eval_logs(str(log_dir)):
        path = Path(info.name.removeprefix("file://"))
        try:
            header = read_eval_log(info.name, header_only=True)
        except Exception:  # noqa: BLE001 - any reader failure: keep the file, let the others resume
            path.rename(path.with_name(path.name + UNREADABLE_SUFFIX))
            set_aside.append(path.name)
            continue
        if header.eval.task.split("/")[-1] != TASK_NAME:
            continue
        args = header.eval.task_args or {}
        variant, dcp = args.get("variant"), "off" if args.get("dcp") is False else args.get("dcp")
        agent = args.get("agent") or LOOP_AGENT
        key = (header.eval.model, json.dumps(variant, sort_keys=True), json.dumps(dcp, sort_keys=True), agent)
        if key not in wanted:
            raise ValueError(
                f"{path} holds arm {arm_name(str(spec_name(variant)), str(spec_name(dcp)), agent)} @ "
                f"{header.eval.model} as defined by "
                f"variant={json.dumps(variant)} dcp={json.dumps(dcp)}, which this matrix does not define (or "
                "defines differently): use another --run-id, or move that log away")
    return set_aside


def run_plan(plan: RunPlan, run_dir: Path) -> tuple[bool, bool]:
    """Run the plan with eval_set into ``run_dir/logs``; write ``run_dir/run.json`` once
    inspect has accepted the log directory (so a refused run never rewrites the header of
    the logs already there).

    Returns:
        (eval_set reported every task successful, the run was interrupted by Ctrl-C or SIGTERM).

    Raises:
        ValueError: ``run_dir`` holds a run of the other design, or inspect refused the run (its
            PrerequisiteError, as one line).
    """
    from inspect_ai import eval_set
    from inspect_ai._util.error import PrerequisiteError

    from readbench.run.progress import arm_row, eval_progress, inspect_display

    m = plan.matrix
    prior = run_dir / "run.json"
    if prior.is_file():  # inspect would refuse the logs naming "other task arguments", not the design
        design = json.loads(prior.read_text()).get("design", "independent")
        if design != m.design:
            raise ValueError(f"{run_dir} is a run with design {design}, and this one has design {m.design}: use "
                             f"another --run-id, or --design {design} to resume or extend it")
    ok, interrupted = False, False
    multi = len(plan.models) > 1
    rows = [(arm_row(v, d, model, multi, a), len(task.dataset) * m.epochs)
            for model in plan.models for (v, d, a), task in zip(m.agent_arms(), plan.tasks)]
    previous = _sigterm_as_sigint()

    def run(tasks: list[Any], log_dir: Path) -> bool:
        # fail_on_error + continue_on_fail: every sample runs, and a sample that errored fails
        # its log, so eval_set retries it and a later run resumes it (a log that tolerated the
        # error would count as finished and never run it again)
        done, _ = eval_set(
            tasks, log_dir=str(log_dir), model=plan.models, epochs=m.epochs,
            retry_wait=1, fail_on_error=True, continue_on_fail=True,
            max_samples=m.max_samples, max_sandboxes=m.max_sandboxes, log_dir_allow_dirty=False,
            metadata={"readbench_settings": plan.settings.record(), "readbench_provenance": plan.provenance,
                      "readbench_design": m.design},
            display=inspect_display(), **plan.settings.eval_set_kwargs(),
        )
        return bool(done)

    from readbench.sandbox.local import RUN_MEMO

    RUN_MEMO.clear()  # test runs are shared between the arms of one run (trunk and forks too), never across runs
    try:
        # the forked design: the trunk first (its own log directory); the forks only once every
        # trunk sample finished (a fork starts from its trunk sample's prefix)
        with eval_progress(rows, multi, run_dir / "logs"):
            trunk_ok = run(plan.trunk_tasks, run_dir / "trunk") if plan.trunk_tasks else True
            ok = run(plan.tasks, run_dir / "logs") if trunk_ok else False
    except KeyboardInterrupt:
        interrupted = True
    except PrerequisiteError as ex:
        message = _plain(ex.message)
        stale = re.search(r"Existing log file '([^']+)' in log_dir is not associated", message)
        if stale:  # inspect's hint names its own --log-dir-allow-dirty, which readbench eval does not offer
            message = (f"{run_dir / 'logs' / stale.group(1)} is from a run of these arms with other task arguments, "
                       "epochs or sandbox, and inspect does not mix them: use another --run-id, or move that log away")
        raise ValueError(message) from None
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)
    (run_dir / "run.json").write_text(json.dumps(plan.metadata(), indent=2, default=str))
    return ok, interrupted


def _agent_arg(agent: str) -> dict[str, Any]:
    """The task argument naming a real harness; none for readbench's loop, so a loop arm's task
    arguments (and so the logs a run resumes from) stay as before the agent dimension."""
    return {} if agent == LOOP_AGENT else {"agent": agent}


def _sigterm_as_sigint() -> Any:
    """While eval_set runs, a SIGTERM (a CI job's timeout, `kill`) is handled as Ctrl-C: inspect
    cancels the samples and closes its logs, and the run ends as an interrupted one (``run.json``
    written, the incomplete line, a non-zero exit) instead of dying with its logs open. Returns
    the previous handler (None off the main thread, where signals cannot be set).

    A process started as a background job of a non-interactive shell (``readbench eval ... &`` in a
    CI script; POSIX has such a shell ignore SIGINT in it) inherits SIGINT ignored, and Python then
    installs no Ctrl-C handler: the SIGTERM is then still handled, by giving SIGINT Python's default
    handler (KeyboardInterrupt) first. Before, such a run ignored SIGTERM altogether."""
    import threading

    if threading.current_thread() is not threading.main_thread():
        return None

    def as_ctrl_c(signum: int, frame: Any) -> None:
        if signal.getsignal(signal.SIGINT) in (signal.SIG_IGN, signal.SIG_DFL, None):
            signal.signal(signal.SIGINT, signal.default_int_handler)
        signal.raise_signal(signal.SIGINT)

    return signal.signal(signal.SIGTERM, as_ctrl_c)
