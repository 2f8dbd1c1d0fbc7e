"""Matrix files and the `readbench eval` command: arms = read variant x DCP config x model,
run through inspect's ``eval_set`` so an interrupted run resumes (inspect-notes.md §6).

A matrix file (YAML, e.g. evals/smoke.yaml)::

    name: smoke                  # default run id: results/<name>/
    models: [readbench/sim-mixed]
    epochs: 1
    variants: [stock, A, B]      # preset names, or names defined under `presets`
    dcp: ["off"]                 # configuration names, or names defined under `dcp_presets`
    arms:                        # optional extra (variant, dcp) pairs beyond variants x dcp
      - [stock, pi-dcp]
    cache_models: [anthropic-5m, openai, deepseek]
    task_args: {limit: 12}       # any other -T argument of evals/read_strategies.py
    presets:                     # user-defined read presets, no code needed
      B-1500: {base: B, max_lines: 1500}
    dcp_presets:
      pi-dcp-t4: {base: pi-dcp, turn_protection_turns: 4}

Outputs under ``results/<run-id>/``: ``logs/`` (inspect .eval logs, one per arm; open them
with ``inspect view --log-dir results/<run-id>/logs``), ``run.json`` (the resolved matrix),
``table.parquet`` and ``report/`` (readbench.analysis).
"""

from __future__ import annotations

import itertools
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

#: keys a matrix file may contain
MATRIX_KEYS = {"name", "models", "epochs", "variants", "dcp", "arms", "cache_models", "task_args", "presets",
               "dcp_presets", "max_samples", "max_sandboxes"}


@dataclass(frozen=True)
class Matrix:
    """A resolved experiment matrix.

    Attributes:
        name: default run id.
        models: inspect model strings (one log per arm and model).
        epochs: epochs per sample (samples are paired across arms by id and epoch).
        variants: read presets as specs accepted by readbench.read.get_variant.
        dcp: DCP configurations as specs accepted by readbench.dcp.get_config.
        cache_models: cache models priced per sample.
        task_args: further task arguments.
    """

    name: str
    models: list[str]
    epochs: int
    variants: list[str | dict[str, Any]]
    dcp: list[str | dict[str, Any]]
    cache_models: list[str]
    task_args: dict[str, Any] = field(default_factory=dict)
    extra_arms: list[tuple[str | dict[str, Any], str | dict[str, Any]]] = field(default_factory=list)
    max_samples: int | None = None
    max_sandboxes: int | None = None

    def arms(self) -> list[tuple[str | dict[str, Any], str | dict[str, Any]]]:
        """(variant, dcp) pairs in a stable order: the product, then the extra arms (no duplicates)."""
        arms = list(itertools.product(self.variants, self.dcp))
        for arm in self.extra_arms:
            if arm not in arms:
                arms.append(arm)
        return arms


def load_matrix(path: str | Path) -> Matrix:
    """Read and validate a matrix YAML file.

    Raises:
        FileNotFoundError: the file does not exist.
        ValueError: unknown keys, empty lists, or a name that is neither a preset nor defined
            in the file (the message names the key and the offending value).
    """
    from readbench.dcp import get_config
    from readbench.read import get_variant
    from readbench.task import check_cache_models, check_task_args, dcp_spec

    path = Path(path)
    try:
        raw = yaml.safe_load(path.read_text()) or {}
    except yaml.YAMLError as ex:
        raise ValueError(f"{path}: not valid YAML: {ex}") from ex
    if not isinstance(raw, dict):
        raise ValueError(f"{path}: a matrix file must be a mapping, got {type(raw).__name__}")
    unknown = set(raw) - MATRIX_KEYS
    if unknown:
        raise ValueError(f"{path}: unknown matrix keys {sorted(unknown)}; allowed: {sorted(MATRIX_KEYS)}")
    for key in ("presets", "dcp_presets", "task_args"):
        if not isinstance(raw.get(key) or {}, dict):
            raise ValueError(f"{path}: `{key}` must be a mapping, got {raw[key]!r}")
    for key in ("models", "variants", "dcp", "cache_models", "arms"):
        if key in raw and not isinstance(raw[key], list):
            raise ValueError(f"{path}: `{key}` must be a list, got {raw[key]!r}")
    for key in ("presets", "dcp_presets"):
        for name, spec in (raw.get(key) or {}).items():
            if not isinstance(spec, dict):
                raise ValueError(f"{path}: {key}.{name} must be a mapping like {{base: ..., ...}}, got {spec!r}")
    presets = {name: {**spec, "name": name} for name, spec in (raw.get("presets") or {}).items()}
    dcp_presets = {name: {**spec, "name": name} for name, spec in (raw.get("dcp_presets") or {}).items()}
    variants = [presets.get(v, v) for v in raw.get("variants", ["stock"])]
    dcps = [dcp_presets.get(str(dcp_spec(d)), dcp_spec(d)) for d in raw.get("dcp", ["off"])]
    for key, values in (("variants", variants), ("dcp", dcps), ("models", raw.get("models", ["x"]))):
        if not values:
            raise ValueError(f"{path}: `{key}` must not be empty")
    for v in variants:
        try:
            get_variant(v)
        except (KeyError, ValueError) as ex:
            raise ValueError(f"{path}: variants: {ex}") from ex
    for d in dcps:
        try:
            get_config(d)
        except (KeyError, ValueError) as ex:
            raise ValueError(f"{path}: dcp: {ex}") from ex
    extra = []
    for item in raw.get("arms") or []:
        if not (isinstance(item, list) and len(item) == 2):
            raise ValueError(f"{path}: arms: each arm is [variant, dcp], got {item!r}")
        extra.append((presets.get(item[0], item[0]), dcp_presets.get(str(dcp_spec(item[1])), dcp_spec(item[1]))))
    for v, d in extra:
        for spec, getter, key in ((v, get_variant, "arms/variant"), (d, get_config, "arms/dcp")):
            try:
                getter(spec)
            except (KeyError, ValueError) as ex:
                raise ValueError(f"{path}: {key}: {ex}") from ex
    epochs = raw.get("epochs", 1)
    if not isinstance(epochs, int) or isinstance(epochs, bool) or epochs < 1:
        raise ValueError(f"{path}: epochs must be an integer >= 1, got {epochs!r}")
    for key in ("max_samples", "max_sandboxes"):
        value = raw.get(key)
        if value is not None and (not isinstance(value, int) or isinstance(value, bool) or value < 1):
            raise ValueError(f"{path}: {key} must be an integer >= 1, got {value!r}")
    models = raw.get("models", ["readbench/sim-mixed"])
    if not all(isinstance(m, str) and "/" in m for m in models):
        raise ValueError(f"{path}: models must be inspect model strings like provider/name, got {models!r}")
    cache_models = raw.get("cache_models", ["anthropic-5m", "openai", "deepseek"])
    try:
        check_cache_models(cache_models)
    except ValueError as ex:
        raise ValueError(f"{path}: cache_models: {ex}") from ex
    task_args = dict(raw.get("task_args") or {})
    try:
        check_task_args(task_args)
    except ValueError as ex:
        raise ValueError(f"{path}: task_args: {ex}") from ex
    if len(set(map(repr, variants))) != len(variants) or len(set(map(repr, dcps))) != len(dcps):
        raise ValueError(f"{path}: variants and dcp must not repeat a name")
    return Matrix(
        name=str(raw.get("name", path.stem)),
        models=list(models),
        epochs=epochs,
        variants=variants,
        dcp=dcps,
        cache_models=list(cache_models),
        task_args=task_args,
        extra_arms=extra,
        max_samples=raw.get("max_samples"),
        max_sandboxes=raw.get("max_sandboxes"),
    )


def _label(spec: str | dict[str, Any]) -> str:
    return spec if isinstance(spec, str) else str(spec.get("name", spec))


def run_matrix(matrix: Matrix, run_dir: Path, *, sandbox_kind: str = "auto", overrides: dict[str, Any] | None = None,
               models: list[str] | None = None) -> tuple[bool, Path]:
    """Run every arm through ``inspect_ai.eval_set`` into ``run_dir/logs``.

    Re-running with the same ``run_dir`` resumes: finished samples are not redone
    (eval_set's retry semantics, inspect-notes.md §6).

    Returns:
        (all arms complete, log directory).
    """
    from inspect_ai import eval_set

    from readbench.task import read_strategies

    task_args = {**matrix.task_args, **(overrides or {})}
    run_dir.mkdir(parents=True, exist_ok=True)
    log_dir = run_dir / "logs"
    tasks = [
        read_strategies(variant=v, dcp=d, cache_models=matrix.cache_models, sandbox_kind=sandbox_kind,
                             **task_args)
        for v, d in matrix.arms()
    ]
    (run_dir / "run.json").write_text(json.dumps({
        "matrix": matrix.name, "models": models or matrix.models, "epochs": matrix.epochs,
        "variants": matrix.variants, "dcp": matrix.dcp, "cache_models": matrix.cache_models,
        "arms": [f"{_label(v)} × {_label(d)}" for v, d in matrix.arms()],
        "task_args": task_args, "sandbox": sandbox_kind,
    }, indent=2, default=str))
    ok, _ = eval_set(
        tasks, log_dir=str(log_dir), model=models or matrix.models, epochs=matrix.epochs,
        retry_attempts=2, retry_wait=1, fail_on_error=False, max_samples=matrix.max_samples,
        max_sandboxes=matrix.max_sandboxes, max_tasks=2, log_dir_allow_dirty=False,
    )
    return ok, log_dir
