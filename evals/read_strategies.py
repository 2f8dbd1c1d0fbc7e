"""inspect entry point: `inspect eval evals/read_strategies.py --model readbench/sim-mixed -T variant=B -T dcp=pi-dcp`.

Task arguments (-T, values parsed as YAML; types and bounds checked by readbench.run.task_args before
any sample runs, the same checks as a matrix file's task_args):
    variant: read preset name (`readbench variants`) or a spec dict {base, name, ...params}.
    dcp: DCP configuration name (`readbench dcp configs`) or a spec dict.
    cache_models: comma list of cache models priced per sample (`readbench cache models`).
    sandbox_kind: auto | docker | local | k8s (auto = docker when an engine >= 24.0.6 answers;
        k8s = inspect-k8s-sandbox with the per-source images pushed to k8s_registry).
    families, sources: comma lists that filter the corpus; limit: first N tasks (1-100000);
    per_family: first N tasks of each family (applied before limit; 1-100000).
    max_turns: model generations per sample (inspect turn_limit; 1-1000).
    context_window_tokens: window for DCP pressure bands (tokens; 1000-10000000).
    allow_local: true lets a real (non-simulated) model run in the unisolated local sandbox
        (only true or false are accepted).
    k8s_registry: registry prefix the cluster pulls `readbench-src-*` images from (k8s only).
"""

from typing import Any

from inspect_ai import Task, task

from readbench.run.task import read_strategies_task


@task
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
) -> Task:
    """One arm of the benchmark: every corpus task under one read variant and DCP configuration."""
    return read_strategies_task(
        variant=variant, dcp=dcp, cache_models=cache_models, sandbox_kind=sandbox_kind,
        families=families, sources=sources, limit=limit, per_family=per_family, max_turns=max_turns,
        context_window_tokens=context_window_tokens, allow_local=allow_local, k8s_registry=k8s_registry,
    )
