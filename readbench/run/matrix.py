"""Matrix files and the `readbench eval` command: arms = read variant x DCP config x model,
run through inspect's ``eval_set`` so an interrupted run resumes (inspect-notes.md §6).

A matrix file (YAML, e.g. evals/smoke.yaml)::

    name: smoke                  # default run id: results/<name>/
    models: [readbench/sim-mixed]
    epochs: 1
    variants: [stock, A, B]      # preset names, names defined under `presets`, or inline {base: B, name: B-x, ...}
    dcp: ["off"]                 # configuration names, or names defined under `dcp_presets`
    agents: [readbench]          # `readbench agents`: readbench's loop (default) or real harnesses
                                 # (pi, pi@1.6.0, claude-code, codex); each arm runs under each agent,
                                 # or `{name: codex, variants: [stock]}`: that agent runs only those variants
                                 # (`all` in variants, dcp or cache_models: every registered one)
    arms:                        # optional extra (variant, dcp) pairs beyond variants x dcp
      - [stock, pi-dcp]
    cache_models: [anthropic-5m, openai, deepseek]
    task_args: {limit: 12}       # any other -T argument of evals/read_strategies.py
    presets:                     # user-defined read presets, no code needed
      B-1500: {base: B, max_lines: 1500}
    dcp_presets:
      pi-dcp-t4: {base: pi-dcp, turns: 4}   # a file preset may not take a built-in name
    design: independent          # or forked: one trunk per task x epoch x model, arms forked at
                                 # their first divergence (readbench.run.forked)
    time_limit: 900              # seconds per sample; max_tasks, retry_attempts: see readbench.run.settings
    generate: {max_retries: 2, timeout: 300, attempt_timeout: 120, max_tokens: 1024, max_connections: 1}
    model: {base_url: "http://127.0.0.1:8080/v1", args: {}, server: llama-cpp-python 0.3.36,
            chat_template: chatml-function-calling}
    smallest_difference: {success_pp: 5, cost_ratio: 0.9}   # below these the run decides nothing
                                 # (readbench.analysis.smallest; recorded in run.json)

Outputs under ``results/<run-id>/``: ``logs/`` (inspect .eval logs, one per arm; open them
with ``inspect view --log-dir results/<run-id>/logs``), ``run.json`` (the resolved matrix),
``table.parquet`` and ``report/`` (readbench.analysis). Running a matrix: readbench.run.runner.

Rules checked here, before anything runs (GitHub issue 13): every name is a preset or defined in
the file, a file's own preset may not take a built-in name (`B`, `pi-dcp`), one name means one
definition, `name` is a valid run id, and `epochs`, `max_samples`, `max_sandboxes` and the
task arguments (readbench.run.task_args) are within their bounds, and every agent can express
every read variant through its own extension point (readbench.harness.agents.check_arm: e.g. B on
Codex, which reads through its shell, is refused by name).
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import yaml

from readbench.analysis.arms import spec_name
from readbench.analysis.smallest import SmallestDifference
from readbench.base.yamltext import load_bounded

__all__ = ["DESIGNS", "MATRIX_KEYS", "MAX_EPOCHS", "MAX_PARALLEL", "RUN_ID_PATTERN", "Matrix", "check_run_id", "load_matrix"]

#: keys a matrix file may contain
MATRIX_KEYS = {"name", "models", "epochs", "variants", "dcp", "agents", "arms", "cache_models", "task_args", "presets",
               "dcp_presets", "max_samples", "max_sandboxes", "time_limit", "max_tasks", "retry_attempts",
               "generate", "model", "smallest_difference", "design"}
#: run designs: every arm runs its whole trajectory, or one trunk per task x epoch x model and each
#: arm forked at its first divergence (readbench.run.forked, GitHub issue 25)
DESIGNS = ("independent", "forked")
#: most epochs per sample: inspect builds every sample x epoch up front (10^9 epochs took 23 GB
#: before the kernel killed it); the nightly matrix uses 2-3
MAX_EPOCHS = 100
#: most samples or sandboxes at once (`max_samples`, `max_sandboxes`)
MAX_PARALLEL = 1_000

Spec = str | dict[str, Any]

RUN_ID_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,99}")
"""A run id: one path component of letters, digits, ``.``, ``_`` and ``-``, not starting with ``.``."""
_RESERVED = {"latest", "bench"}  # results/latest is the symlink to the last run; results/bench is `make bench`'s


def check_run_id(run_id: Any) -> str:
    """Return `run_id` if it names a directory directly under ``results/``.

    Raises:
        ValueError: not a string, empty, a path (``../../x``, ``/abs``, ``a/b``), a name that
            starts with ``.``, has other characters than letters, digits, ``.``, ``_``, ``-``
            or is over 100 characters, or a reserved name (``latest``, ``bench``).
    """
    if not isinstance(run_id, str) or not RUN_ID_PATTERN.fullmatch(run_id) or run_id in _RESERVED:
        raise ValueError(f"run id {run_id!r} must be one name of letters, digits, '.', '_' and '-' (not "
                         f"starting with '.', at most 100 characters, not {' or '.join(sorted(_RESERVED))}): "
                         "it names the directory results/<run id>/")
    return run_id


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
        task_args: further task arguments (validated by readbench.run.task_args).
        extra_arms: (variant, dcp) pairs beyond the product.
        max_samples, max_sandboxes: inspect's parallelism limits (None = inspect's default).
        settings: ``time_limit``, ``max_tasks``, ``retry_attempts`` as the file gives them
            (None = not given; readbench.run.settings fills the defaults for real models).
        generate: the file's ``generate:`` section (inspect GenerateConfig fields).
        model: the file's ``model:`` section (base_url, args, server, chat_template).
        smallest: the smallest differences that matter to the decision and the nightly verdict
            (``smallest_difference``; readbench.analysis.smallest; default 5 pp and 0.9).
        agents: agent names (readbench.harness.agents; default ``["readbench"]``, the loop).
        agent_variants: agent -> the names of the variants it runs, for an agent the file restricts
            (``{name: codex, variants: [stock]}``); an agent not here runs every variant.
        design: ``independent`` (every arm runs its whole trajectory) or ``forked`` (one trunk per
            task x epoch x model and schema group, each arm forked at its first divergence:
            readbench.run.forked).
    """

    name: str
    models: list[str]
    epochs: int
    variants: list[Spec]
    dcp: list[Spec]
    cache_models: list[str]
    task_args: dict[str, Any] = field(default_factory=dict)
    extra_arms: list[tuple[Spec, Spec]] = field(default_factory=list)
    max_samples: int | None = None
    max_sandboxes: int | None = None
    settings: dict[str, Any] = field(default_factory=dict)
    generate: dict[str, Any] = field(default_factory=dict)
    model: dict[str, Any] = field(default_factory=dict)
    smallest: SmallestDifference = field(default_factory=SmallestDifference)
    agents: list[str] = field(default_factory=lambda: ["readbench"])
    design: str = "independent"
    agent_variants: dict[str, list[str]] = field(default_factory=dict)

    def agent_arms(self) -> list[tuple[Spec, Spec, str]]:
        """(variant, dcp, agent) triples: every `arms` pair under every agent (only the variants
        `agent_variants` names, for an agent it restricts), agents outermost."""
        return [(v, d, a) for a in self.agents for v, d in self.arms()
                if a not in self.agent_variants or str(spec_name(v)) in self.agent_variants[a]]

    def arms(self) -> list[tuple[Spec, Spec]]:
        """(variant, dcp) pairs in a stable order: the product, then the extra arms (no duplicates)."""
        arms = list(itertools.product(self.variants, self.dcp))
        for arm in self.extra_arms:
            if arm not in arms:
                arms.append(arm)
        return arms

    def with_task_args(self, overrides: dict[str, Any]) -> Matrix:
        """This matrix with `overrides` (e.g. from ``-T``) over its task arguments.

        Raises:
            ValueError: as readbench.run.task_args.check_task_args (the same rules as the file's
                `task_args`; per-arm keys such as `variant` are refused with where to set them).
        """
        from readbench.run.task_args import check_task_args

        check_task_args(overrides)
        return replace(self, task_args={**self.task_args, **overrides})

    def with_design(self, design: str | None) -> Matrix:
        """This matrix under another run design (None keeps the file's).

        Raises:
            ValueError: ``design`` is not one of `DESIGNS`.
        """
        if design is None:
            return self
        return replace(self, design=check_design(design, "--design", self.agents))


def check_design(design: Any, where: str, agents: list[str] | None = None) -> str:
    """A run design name (``agents`` is accepted for the callers' sake: under design forked pi
    arms are forked too, Claude Code and Codex arms run independently, readbench.run.forked).

    Raises:
        ValueError: not one of `DESIGNS` (the message names ``where``).
    """
    if design not in DESIGNS:
        raise ValueError(f"{where}: design must be one of {', '.join(DESIGNS)}, got {design!r}")
    return str(design)


def _expand_all(items: list[Any], names: list[str]) -> list[Any]:
    """`items` with `all` replaced by every registered name not listed otherwise (readbench.records.ALL)."""
    from readbench.records import ALL

    return [x for item in items for x in ([n for n in names if n not in items] if item == ALL else [item])]


def _positive(value: Any, key: str, high: int, path: Path) -> None:
    if not isinstance(value, int) or isinstance(value, bool) or not 1 <= value <= high:
        raise ValueError(f"{path}: {key} must be an integer from 1 to {high}, got {value!r}")


def _resolve(item: Any, where: str, defined: dict[str, dict[str, Any]], builtin: list[str], what: str,
             getter: Any) -> Spec:
    """One variant/DCP entry: a name (built-in or defined in the file) or an inline mapping."""
    if isinstance(item, str):
        spec: Spec = defined.get(item, item)
    elif isinstance(item, dict):
        spec = dict(item)
        name = spec.get("name")
        if isinstance(name, str) and name in builtin:
            raise ValueError(f"{where}: {name!r} is a built-in {what}; give the inline definition another name")
    else:
        raise ValueError(f"{where}: must be a {what} name or a {{base: ..., name: ...}} mapping, got {item!r}")
    try:
        getter(spec)
    except (KeyError, ValueError, TypeError) as ex:
        raise ValueError(f"{where}: {ex}") from None
    return spec


def _unique(specs: list[Spec], key: str, path: Path) -> None:
    """One name, one definition; and no name listed twice."""
    seen: dict[str, Spec] = {}
    for spec in specs:
        label = str(spec_name(spec))
        if label in seen:
            if seen[label] == spec:
                raise ValueError(f"{path}: {key} must not repeat a name ({label!r})")
            raise ValueError(f"{path}: {key}: the name {label!r} has two definitions: {seen[label]!r} and {spec!r}")
        seen[label] = spec


def load_matrix(path: str | Path) -> Matrix:
    """Read and validate a matrix YAML file.

    Raises:
        FileNotFoundError: the file does not exist.
        ValueError: an empty file, unknown keys, empty lists, a name that is neither a preset nor defined in the
            file, a file preset that takes a built-in name, one name with two definitions, a bad
            `name` (run id), or a number out of bounds (the message names the key and the value).
    """
    from readbench.cache import CACHE_MODELS
    from readbench.dcp import CONFIGS, get_config
    from readbench.read import get_variant
    from readbench.read.registry import preset_names
    from readbench.run.task import check_cache_models
    from readbench.run.task_args import check_task_args

    path = Path(path)
    try:
        raw = load_bounded(path.read_text(), str(path))
    except yaml.YAMLError as ex:
        raise ValueError(f"{path}: not valid YAML: {ex}") from ex
    if raw is None:  # brk13: an empty (or truncated, all-comment) file ran every default: the whole corpus
        raise ValueError(f"{path}: the matrix file is empty; write at least its `variants` and `dcp` "
                         "(`{}` runs every default: stock x off on the whole corpus)")
    if not isinstance(raw, dict):
        raise ValueError(f"{path}: a matrix file must be a mapping, got {type(raw).__name__}")
    unknown = set(raw) - MATRIX_KEYS
    if unknown:
        raise ValueError(f"{path}: unknown matrix keys {sorted(unknown)}; allowed: {sorted(MATRIX_KEYS)}")
    for key in ("presets", "dcp_presets", "task_args", "generate", "model"):
        if not isinstance(raw.get(key) or {}, dict):
            raise ValueError(f"{path}: `{key}` must be a mapping, got {raw[key]!r}")
    for key in ("models", "variants", "dcp", "cache_models", "arms"):
        if key in raw and not isinstance(raw[key], list):
            raise ValueError(f"{path}: `{key}` must be a list, got {raw[key]!r}")
    builtin = {"presets": list(preset_names()), "dcp_presets": CONFIGS.names()}
    what = {"presets": "read variant", "dcp_presets": "DCP configuration"}
    for key in ("presets", "dcp_presets"):
        for name, spec in (raw.get(key) or {}).items():
            if not isinstance(spec, dict):
                raise ValueError(f"{path}: {key}.{name} must be a mapping like {{base: ..., ...}}, got {spec!r}")
            if name in builtin[key]:
                raise ValueError(f"{path}: {key}.{name} would redefine the built-in {what[key]} {name!r}; "
                                 "choose another name")
    presets = {str(name): {**spec, "name": str(name)} for name, spec in (raw.get("presets") or {}).items()}
    dcp_presets = {str(name): {**spec, "name": str(name)} for name, spec in (raw.get("dcp_presets") or {}).items()}

    def variant(item: Any, where: str) -> Spec:
        return _resolve(item, where, presets, builtin["presets"], "read variant", get_variant)

    def dcp(item: Any, where: str) -> Spec:
        spec = "off" if item is False else item  # YAML 1.1 reads an unquoted `off` as False (task.dcp_spec)
        return _resolve(spec, where, dcp_presets, builtin["dcp_presets"], "DCP configuration", get_config)

    for key in ("variants", "dcp", "models"):
        if key in raw and not raw[key]:
            raise ValueError(f"{path}: `{key}` must not be empty")
    variants = [variant(v, f"{path}: variants[{i}]")
                for i, v in enumerate(_expand_all(raw.get("variants", ["stock"]), builtin["presets"]))]
    dcps = [dcp(d, f"{path}: dcp[{i}]") for i, d in enumerate(_expand_all(raw.get("dcp", ["off"]), builtin["dcp_presets"]))]
    extra = []
    for i, item in enumerate(raw.get("arms") or []):
        if not (isinstance(item, list) and len(item) == 2):
            raise ValueError(f"{path}: arms: each arm is [variant, dcp], got {item!r}")
        extra.append((variant(item[0], f"{path}: arms[{i}] variant"), dcp(item[1], f"{path}: arms[{i}] dcp")))
    agents, agent_variants = _agents(raw, path, variants + [v for v, _ in extra])
    _unique(variants + [v for v, _ in extra if v not in variants], "variants", path)
    _unique(dcps + [d for _, d in extra if d not in dcps], "dcp", path)
    epochs = raw.get("epochs", 1)
    _positive(epochs, "epochs", MAX_EPOCHS, path)
    for key in ("max_samples", "max_sandboxes"):
        if raw.get(key) is not None:
            _positive(raw[key], key, MAX_PARALLEL, path)
    models = raw.get("models", ["readbench/sim-mixed"])
    if not all(isinstance(m, str) and "/" in m for m in models):
        raise ValueError(f"{path}: models must be inspect model strings like provider/name, got {models!r}")
    cache_models = _expand_all(raw.get("cache_models", ["anthropic-5m", "openai", "deepseek"]), CACHE_MODELS.names())
    try:
        check_cache_models(cache_models)
    except ValueError as ex:
        raise ValueError(f"{path}: cache_models: {ex}") from ex
    task_args = dict(raw.get("task_args") or {})
    try:
        check_task_args(task_args)
    except ValueError as ex:
        raise ValueError(f"{path}: task_args: {ex}") from ex
    from readbench.run.settings import SETTING_BOUNDS, check_settings

    settings = {key: raw.get(key) for key in SETTING_BOUNDS}
    check_settings(settings, dict(raw.get("generate") or {}), dict(raw.get("model") or {}), f"{path}: ")
    smallest = SmallestDifference.from_mapping(raw.get("smallest_difference"), f"{path}: smallest_difference")
    name = raw.get("name", path.stem)
    try:
        check_run_id(name)
    except ValueError as ex:
        raise ValueError(f"{path}: name: {ex}") from None
    return Matrix(
        name=name,
        models=list(models),
        epochs=epochs,
        variants=variants,
        dcp=dcps,
        cache_models=list(cache_models),
        task_args=task_args,
        extra_arms=extra,
        max_samples=raw.get("max_samples"),
        max_sandboxes=raw.get("max_sandboxes"),
        settings=settings,
        generate=dict(raw.get("generate") or {}),
        model=dict(raw.get("model") or {}),
        smallest=smallest,
        agents=agents,
        design=check_design(raw.get("design", "independent"), str(path), agents),
        agent_variants=agent_variants,
    )


def _agents(raw: dict[str, Any], path: Path, variants: list[Spec]) -> tuple[list[str], dict[str, list[str]]]:
    """The file's `agents:` (default the loop), each known and able to express every variant it
    runs: all of them, or for an entry `{name: AGENT, variants: [...]}` the ones named there.

    Returns:
        (agent names, agent -> the variant names it runs, for each restricted agent).

    Raises:
        ValueError: not a non-empty list of names or entries, an unknown agent, a repeated one, a
            restriction naming a variant the file does not run, or an agent that cannot express
            one of its variants (readbench.harness.agents.check_arm).
    """
    from readbench.harness.agents import LOOP, check_arm, get_agent
    from readbench.read import get_variant

    entries = raw.get("agents", [LOOP])
    if not isinstance(entries, list) or not entries:
        raise ValueError(f"{path}: `agents` must be a non-empty list of agent names, got {entries!r}")
    agents: list[str] = []
    only: dict[str, list[str]] = {}
    names = {str(spec_name(v)): v for v in variants}
    for entry in entries:
        if isinstance(entry, dict) and set(entry) == {"name", "variants"} and isinstance(entry["name"], str) \
                and isinstance(entry["variants"], list) and entry["variants"] \
                and all(isinstance(x, str) for x in entry["variants"]):
            unknown = [x for x in entry["variants"] if x not in names]
            if unknown:
                raise ValueError(f"{path}: agents: {entry['name']!r} names variants the file does not run: {unknown} "
                                 f"(variants: {sorted(names)})")
            agents.append(entry["name"])
            only[entry["name"]] = list(entry["variants"])
        elif isinstance(entry, str):
            agents.append(entry)
        else:
            raise ValueError(f"{path}: `agents` entries are agent names or {{name: AGENT, variants: [VARIANT, ...]}}, "
                             f"got {entry!r}")
    if len(set(agents)) != len(agents):
        raise ValueError(f"{path}: `agents` must not repeat a name, got {agents!r}")
    for agent in agents:
        try:
            get_agent(agent)
            for name, spec in names.items():
                if agent in only and name not in only[agent]:
                    continue
                v = get_variant(spec)
                check_arm(agent, v.name, v.family, v.params)
        except ValueError as ex:
            raise ValueError(f"{path}: agents: {ex}") from None
    return agents, only
