"""The `read_strategies` inspect Task: corpus samples x one arm (read variant x DCP config).

Stages (docs/specs/ARCHITECTURE.md): corpus JSONL -> Samples with stable ids -> per-sample sandbox
(docker image per source when an engine >= 24.0.6 answers, else the local sandbox) -> setup
solver (workspace, store, system prompt) -> pi agent loop -> readbench scorer.
"""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path
from typing import Any

from inspect_ai import Task, task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.model import ChatMessageSystem, ChatMessageUser, get_model
from inspect_ai.solver import Generate, Solver, TaskState, solver
from inspect_ai.util import sandbox, store

from readbench.agent.loop import pi_agent
from readbench.agent.prompt import system_prompt
from readbench.base import store as rbstore
from readbench.corpus import corpus_path, get_task, task_index
from readbench.metrics.scorer import readbench_scorer
from readbench.read import get_variant
from readbench.run.task_args import check_task_args
from readbench.run.task_args import names as names_of
from readbench.tools._env import PROBE, workspace_env

#: where the local sandbox finds the venv's ripgrep (PyPI `ripgrep` ships bin/rg)
LOCAL_RG = str(Path(sys.prefix) / "bin" / "rg")
DOCKER_DEPS = "/opt/readbench/deps"
DEFAULT_CACHE_MODELS = ("anthropic-5m", "openai", "deepseek")


def resolve_sandbox(kind: str) -> str:
    """``auto`` -> ``docker`` when an engine >= 24.0.6 with Compose v2 answers, else ``local``.
    ``k8s`` (inspect-k8s-sandbox; images pulled from ``k8s_registry``) and ``local`` are taken as given.

    Raises:
        ValueError: ``kind`` is not auto/docker/local/k8s, or docker was asked for and is unusable.
    """
    if kind not in ("auto", "docker", "local", "k8s"):
        raise ValueError(f"sandbox_kind must be auto, docker, local or k8s, got {kind!r}")
    if kind in ("local", "k8s"):
        return kind
    from readbench.sandbox.engine import docker_available

    ok, why = docker_available()
    if kind == "docker" and not ok:
        raise ValueError(f"sandbox=docker but Docker is unusable: {why}")
    return "docker" if ok else "local"


def check_cache_models(names: list[str] | str) -> list[str]:
    """Validate cache-model names before any sample runs (they are used after each trajectory).

    Raises:
        ValueError: not a list/comma string, empty, or a name not registered in readbench.cache.CACHE_MODELS.
    """
    from readbench.cache import CACHE_MODELS

    listed = names_of(names)
    if not listed:
        raise ValueError(f"cache models must be a non-empty list or comma string, got {names!r}")
    unknown = [n for n in listed if n not in CACHE_MODELS]
    if unknown:
        raise ValueError(f"unknown cache model(s) {unknown}; known: {sorted(CACHE_MODELS.names())}")
    return listed


def dcp_spec(value: Any) -> str | dict[str, Any]:
    """A DCP spec from CLI/YAML input: YAML 1.1 reads an unquoted ``off`` (as in
    ``-T dcp=off``) as False; the configuration named ``off`` is meant."""
    if value is False:
        return "off"
    return value if isinstance(value, dict) else str(value)


def first_per_family(records: list[Any], n: int) -> list[Any]:
    """The first ``n`` records of each family, in corpus order (a balanced smoke subset)."""
    counts: dict[str, int] = {}
    kept = []
    for record in records:
        if counts.get(record.family, 0) < n:
            counts[record.family] = counts.get(record.family, 0) + 1
            kept.append(record)
    return kept


def _sandbox_spec(source: str, sandbox_kind: str, k8s_registry: str | None, agent: str = "readbench") -> Any:
    """The per-sample sandbox: the source's image in docker (compose file) or k8s (Helm values);
    under a real harness, the source's image with the harness in it (readbench.agents.image)."""
    if sandbox_kind == "local":
        from readbench.sandbox.local import SANDBOX_NAME

        return SANDBOX_NAME  # inspect's local sandbox with a fixed directory per sample and epoch
    from readbench.sandbox.images import compose_dir, compose_for, image_for_source

    image = image_for_source(source)
    if agent != "readbench":
        from readbench.agents.image import agent_image
        from readbench.harness.agents import get_agent

        image = agent_image(image, get_agent(agent))
    if sandbox_kind == "docker":
        from readbench.sandbox.dockerexec import SANDBOX_NAME as DOCKER_NAME

        # inspect's docker sandbox, its commands and reads through the Engine API (GitHub issue 26);
        # under a real harness also the bridge's polls for its model requests (readbench.agents.bridge_poll)
        return (DOCKER_NAME, str(compose_for(image)))
    from readbench.sandbox.k8s import render_k8s_values

    if not k8s_registry:
        raise ValueError("sandbox_kind=k8s needs k8s_registry (the registry the cluster pulls the images from)")
    values = compose_dir() / f"k8s-{source}.yaml"
    values.parent.mkdir(parents=True, exist_ok=True)
    values.write_text(render_k8s_values(f"{k8s_registry.rstrip('/')}/{image}", source=source))
    return ("k8s", str(values))


def _sample(record: Any, sandbox_kind: str, k8s_registry: str | None = None, agent: str = "readbench") -> Sample:
    spec = _sandbox_spec(record.source, sandbox_kind, k8s_registry, agent)
    return Sample(
        id=record.id,
        input=record.prompts[0],
        metadata={
            "family": record.family, "source": record.source, "file": record.file,
            "file_lines": record.file_lines, "target_line": record.target_line,
        },
        sandbox=spec,
    )


@solver
def setup_workspace(
    variant: str | dict[str, Any], sandbox_kind: str, allow_local: bool
) -> Solver:
    """Prepare one sample: repository tree, task files, store entries, pi's system prompt.

    On the local sandbox the sample first claims its fixed directory
    (readbench.sandbox.local.claim_workspace: ``<tmp>/readbench-ws/<sample id>-e<epoch>``), so the
    cwd in the system prompt and in tool output is the same in every run and every arm, and its
    commands get that directory's private ``TMPDIR`` (readbench.sandbox.local.sample_tmpdir).

    Raises:
        RuntimeError: a real (non-simulated) model would run in the unisolated local sandbox
            without ``allow_local=true``.
        readbench.base.budget.BudgetStop: the run's budget is spent or every compared arm is
            decided (the sample does not start).
    """
    read_variant = get_variant(variant)

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        from readbench.base.budget import gate
        from readbench.corpus import deps_dir, source_tree
        from readbench.sim.provider import SimAgentAPI

        gate()  # --budget-usd / --sequential: no sample starts once the run is stopped (readbench.base.budget)

        if sandbox_kind == "local" and not allow_local and not isinstance(get_model().api, SimAgentAPI):
            raise RuntimeError(
                "refusing to run a real model in the local sandbox (no isolation: it can touch the host). "
                "Use a Docker engine (sandbox=docker) or pass -T allow_local=true explicitly."
            )
        record = get_task(str(state.sample_id))
        sb = sandbox()
        tmpdir = None
        if sandbox_kind == "local":
            from readbench.sandbox.local import claim_workspace, sample_tmpdir

            # the same path in every run, and a private TMPDIR beside it (issue 29)
            tmpdir = str(sample_tmpdir(await claim_workspace(sb, state.sample_id, state.epoch)))
            res = await sb.exec(["cp", "-a", f"{source_tree(record.source)}/.", "."])
            if not res.success:
                raise RuntimeError(f"copying {record.source} into the sandbox failed: {res.stderr}")
        for rel, content in record.files.items():
            await sb.write_file(rel, content)
        cwd = (await sb.exec(["pwd"])).stdout.strip()
        deps = str(deps_dir(record.source)) if sandbox_kind == "local" else DOCKER_DEPS  # images bake deps there
        probe = await sb.exec(PROBE)
        if not probe.success:
            raise RuntimeError(f"probing the sandbox's PATH and HOME failed: {probe.stderr}")
        env = workspace_env(probe.stdout, {k: v.replace("{deps}", deps) for k, v in record.check.env.items()}, tmpdir)
        store().set(rbstore.WORKSPACE, {
            "cwd": cwd, "env": env, "sandbox": sandbox_kind,
            "rg": LOCAL_RG if sandbox_kind == "local" else "rg",
        })
        store().set(rbstore.ORACLE, {
            **dataclasses.asdict(record.oracle), "task_id": record.id, "epoch": state.epoch,
            "family": record.family, "prompts": list(record.prompts), "test_cmd": record.check.test_cmd,
        })
        state.messages = [
            ChatMessageSystem(content=system_prompt(read_variant, cwd)),
            ChatMessageUser(content=record.prompts[0]),
        ]
        return state

    return solve


def check_fork(fork: Any) -> dict[str, Any] | None:
    """The forked design's task argument (set by readbench.run.forked, never by hand):
    ``{"role": "trunk", "root", "arms", "labels"}`` or ``{"role": "fork", "root", "arm_key"}``.

    Raises:
        ValueError: not None and not such a dict.
    """
    if fork is None:
        return None
    need = {"trunk": ("root", "arms", "labels"), "fork": ("root", "arm_key")}
    if not isinstance(fork, dict) or fork.get("role") not in need or any(k not in fork for k in need[fork["role"]]):
        raise ValueError(f"fork must be {{role: trunk, root, arms, labels}} or {{role: fork, root, arm_key}}, got {fork!r}")
    return dict(fork)


def _setup(variant: Any, kind: str, allow_local: bool, fork: dict[str, Any] | None,
           agent: str = "readbench") -> Solver | list[Solver]:
    """The setup solver(s): the workspace, then for a fork sample of readbench's loop its prefix
    (readbench.fork.solver; a pi fork loads its own, readbench.agents.pi_forked)."""
    from readbench.harness.agents import LOOP

    if fork is None or fork["role"] != "fork" or agent != LOOP:
        return setup_workspace(variant, kind, allow_local)
    from readbench.fork.solver import fork_setup

    return [setup_workspace(variant, kind, allow_local), fork_setup(fork["root"], fork["arm_key"])]


def read_strategies_task(
    variant: str | dict[str, Any] = "stock",
    dcp: str | dict[str, Any] = "off",
    cache_models: list[str] | str | None = None,
    sandbox_kind: str = "auto",
    families: list[str] | str | None = None,
    sources: list[str] | str | None = None,
    limit: int | None = None,
    per_family: int | None = None,
    max_turns: int = 80,
    context_window_tokens: int = 200_000,
    allow_local: bool = False,
    k8s_registry: str | None = None,
    agent: str = "readbench",
    fork: dict[str, Any] | None = None,
) -> Task:
    """Build the task for one arm. See evals/read_strategies.py for the `-T` arguments.

    `agent` (readbench.harness.agents): `readbench` runs readbench's own loop; a real harness
    (`pi`, `claude-code`, `codex`, ...) runs inside the sample's sandbox through inspect's sandbox
    agent bridge (readbench.agents).

    Raises:
        ValueError: an argument of the wrong type or out of bounds (readbench.run.task_args), an
            unknown variant, DCP configuration, cache model or agent, a variant the agent cannot
            express, a family or source not in the corpus, or an unusable sandbox kind; nothing
            has run yet.
    """
    fork = check_fork(fork)
    check_task_args({"families": families, "sources": sources, "limit": limit, "per_family": per_family,
                     "max_turns": max_turns, "context_window_tokens": context_window_tokens,
                     "allow_local": allow_local, "k8s_registry": k8s_registry})
    try:
        read_variant = get_variant(variant)
    except TypeError as ex:
        raise ValueError(f"variant: {ex}") from None
    from readbench.harness.agents import check_arm

    if not isinstance(agent, str):
        raise ValueError(f"agent must be an agent name (readbench agents), got {agent!r}")
    check_arm(agent, read_variant.name, read_variant.family, read_variant.params)
    dcp = dcp_spec(dcp)
    from readbench.dcp import get_config

    get_config(dcp)
    models = check_cache_models(cache_models if cache_models is not None else list(DEFAULT_CACHE_MODELS))
    fam, src = names_of(families), names_of(sources)
    index = task_index(corpus_path())
    for what, wanted, known in (("families", fam, {r.family for r in index.values()}),
                                ("sources", src, {r.source for r in index.values()})):
        missing = sorted(set(wanted or ()) - known)
        if missing:
            raise ValueError(f"{what}: {missing} not in the corpus; it has {sorted(known)}")
    records = [r for r in index.values() if (not fam or r.family in fam) and (not src or r.source in src)]
    if not records:
        raise ValueError(f"no corpus task is in families={fam!r} and sources={src!r} at once")
    if per_family:
        records = first_per_family(records, per_family)
    records = records[:limit] if limit else records
    kind = resolve_sandbox(sandbox_kind)
    role = f", {fork['role']}" if fork else ""  # a forked run's trunk or fork (readbench.run.forked)
    who = "" if agent == "readbench" else f", agent={agent}"  # readbench.harness.agents.LOOP
    print(f"readbench: sandbox={kind} ({len(records)} samples, variant={variant}, dcp={dcp}{who}{role})",
          file=sys.stderr)
    return Task(
        dataset=MemoryDataset([_sample(r, kind, k8s_registry, agent) for r in records], name="readbench-corpus"),
        setup=_setup(variant, kind, allow_local, fork, agent),
        solver=_solver(agent, variant, dcp, models, context_window_tokens, max_turns, fork),
        scorer=readbench_scorer(),
        turn_limit=max_turns,
        metadata={"sandbox": kind, "variant": variant, "dcp": dcp, "cache_models": models, "agent": agent,
                  **({"fork": {k: v for k, v in fork.items() if k != "arms"}} if fork else {})},
        name="read_strategies",
    )


def _solver(agent: str, variant: str | dict[str, Any], dcp: str | dict[str, Any], cache_models: list[str],
            context_window_tokens: int, max_turns: int, fork: dict[str, Any] | None = None) -> Any:
    """readbench's loop for agent `readbench` (as a trunk when `fork` is a trunk's record; a loop
    fork's setup leaves its prefix in the store), else the real harness through the bridge: a pi
    trunk or fork of the forked design (readbench.agents.pi_forked) when `fork` says so.

    Raises:
        ValueError: a trunk or fork for a real harness other than pi (Claude Code and Codex arms run
            independently: readbench.analysis.divergence.NOT_FORKED).
    """
    from readbench.harness.agents import LOOP, get_agent

    if agent == LOOP:
        return pi_agent(variant=variant, dcp=dcp, cache_models=cache_models,
                        context_window_tokens=context_window_tokens, max_turns=max_turns,
                        fork=fork if fork and fork["role"] == "trunk" else None)
    common: dict[str, Any] = {"cache_models": cache_models, "context_window_tokens": context_window_tokens, "max_turns": max_turns}
    if fork is not None:
        harness = get_agent(agent).harness
        if harness is None or harness.name != "pi":
            raise ValueError(f"agent {agent!r}: the forked design forks readbench's loop and pi only")
        from readbench.agents.pi_forked import pi_fork_agent, pi_trunk_agent

        if fork["role"] == "trunk":
            return pi_trunk_agent(agent, variant, dcp, fork["root"], fork["arms"], fork["labels"], **common)
        return pi_fork_agent(agent, variant, dcp, fork["root"], fork["arm_key"], **common)
    from readbench.agents import harness_agent

    return harness_agent(agent=agent, variant=variant, dcp=dcp, **common)


@task(name="read_strategies")
def read_strategies(
    variant: str | dict[str, Any] = "stock",
    dcp: str | dict[str, Any] = "off",
    cache_models: str | list[str] = "anthropic-5m,openai,deepseek",
    sandbox_kind: str = "auto",
    families: str | list[str] | None = None,
    sources: str | list[str] | None = None,
    limit: int | None = None,
    per_family: int | None = None,
    max_turns: int = 80,
    context_window_tokens: int = 200_000,
    allow_local: bool = False,
    k8s_registry: str | None = None,
    agent: str = "readbench",
    fork: dict[str, Any] | None = None,
) -> Task:
    """One arm of the benchmark: every corpus task under one read variant and DCP configuration.

    Registered with inspect so its arguments are recorded in every log (``log.eval.task_args``,
    which the report uses to name arms). Entry points: ``evals/read_strategies.py`` and
    ``inspect eval readbench/read_strategies``. Arguments: see evals/read_strategies.py.
    """
    return read_strategies_task(
        variant=variant, dcp=dcp, cache_models=cache_models, sandbox_kind=sandbox_kind,
        families=families, sources=sources, limit=limit, per_family=per_family, max_turns=max_turns,
        context_window_tokens=context_window_tokens, allow_local=allow_local, k8s_registry=k8s_registry,
        agent=agent, fork=fork,
    )
