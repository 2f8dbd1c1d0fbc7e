"""`make bench`: the harness's own overhead (GitHub issue 8).

1. Per model call, on a synthetic 300-call session growing to ~200k tokens: the DCP
   projection (readbench.dcp.project), the loop's prefix fingerprinting, the cache simulation
   of three cache models (readbench.cache.sample_cache_metrics, projected + unpruned
   counterfactual) and the read metrics. Goal: <= 2 ms per call in total.
3. Recorded sessions (readbench.replay.bench): import and replay time per 1,000 calls, the
   peak memory of importing a ~100 MB session, and `readbench replay --dcp all` x 5 cache models
   over synthetic 450-call sessions, with and without `--audit --gate-sweep`, projected to
   issue 14's goal (1,000 sessions in 5 minutes on 2 cores, under 2 GB) from the CPU cost of
   each session beyond the first two, with the CPU seconds of each stage of one session.
2. Per sample, Docker start/stop overhead of inspect's docker sandbox: a trivial sample
   (one bash call) sequentially and 4 in parallel. Goal: <= 1.5 s per sample
   (inspect's default measured 2.7-3.2 s sequential here, inspect-notes.md §4).
4. One whole-file read of a 100 MB generated Python module (dense small functions and
   classes) by `readbench read` under stock, C and swe-agent, each in its own process: wall
   seconds and peak RSS. Goal: C and swe-agent within 1.5x of stock (their maps are bounded
   by file size, GitHub issue 13; before the bound C took 113 s and 7.2 GB, stock 7 s and 1.3 GB).
5. Per sample, each real harness an arm can run (GitHub issue 24): start-up (`--version`) and one
   locate sample's wall time beside readbench's loop (`bench_agents`).

6. The nightly matrix (evals/nightly.yaml) on one task per family, forked and independent
   (readbench.run.forked_bench, GitHub issue 25): model calls made, CPU seconds and wall seconds
   of each design, and whether the two runs' per-arm tables are equal; CPU seconds per simulated
   sample of each design against issue 26's goal (<= 2 CPU s) and its floor.

Results go to ``results/bench/bench.json`` and are printed as a table. Timings are wall
clock on whatever else the machine is doing; run on an idle machine. Every figure is also given
as a ratio to a floor measured in the same run (`readbench.bench_floor`, issue 26 item 3: the
same input hashed, or parsed and hashed, once; for Docker, the same samples in the local
sandbox), which compares across machines.
"""

from __future__ import annotations

import json
import statistics
import subprocess
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from readbench.bench_floor import floor_seconds, hash_floor, ratio
from readbench.bench_table import format_table

N_CALLS = 300
RESULT_CHARS = 2_600  # ~650 tokens per tool result -> ~200k tokens after 300 calls

if TYPE_CHECKING:
    from inspect_ai.model import ChatMessage


def synthetic_session(n_calls: int = N_CALLS, result_chars: int = RESULT_CHARS) -> list[ChatMessage]:
    """A deterministic pi-like history: system, user, then ``n_calls`` read round trips.

    Every 10th call re-reads an earlier range (dedup candidates), every 25th is a failing bash
    test run (purge-error candidates). Returns the full history (2 + 2 * n_calls messages).
    """
    # imported here: `readbench bench --help` needs none of inspect (readbench/cli.py)
    from inspect_ai.model import ChatMessageAssistant, ChatMessageSystem, ChatMessageTool, ChatMessageUser
    from inspect_ai.tool import ToolCall

    line = "    value = compute(alpha, beta) + offset  # synthetic line of python source\n"
    body = (line * (result_chars // len(line) + 1))[:result_chars]
    messages: list[ChatMessage] = [
        ChatMessageSystem(content="You are an expert coding assistant operating inside pi."),
        ChatMessageUser(content="Fix the failing test in big.py."),
    ]
    for i in range(n_calls):
        call_id = f"call_{i}"
        if i % 25 == 24:
            call = ToolCall(id=call_id, function="bash", arguments={"command": "python3 -m pytest tests"})
            result = ChatMessageTool(content=f"FAILED tests/test_x.py::test_{i}\n" + body[:400],
                                     tool_call_id=call_id, function="bash")
        else:
            offset = 1 + (i % 10 if i % 10 == 9 else i) * 60
            call = ToolCall(id=call_id, function="read", arguments={"path": "big.py", "offset": offset, "limit": 60})
            result = ChatMessageTool(content=f"# {i}\n{body}", tool_call_id=call_id, function="read")
        messages.append(ChatMessageAssistant(content="", tool_calls=[call]))
        messages.append(result)
    return messages


def bench_per_call(dcp: str = "pi-dcp", cache_models: tuple[str, ...] = ("anthropic-5m", "openai", "deepseek")) -> dict[str, Any]:
    """Time the per-call harness work over a synthetic session (CPU milliseconds per call: this
    process's CPU time, which other load on a shared machine moves little)."""
    from readbench.agent.loop import FingerprintCache, first_difference
    from readbench.cache import CallRecord, count_tokens, sample_cache_metrics
    from readbench.dcp import ContextUsage, DcpState, get_config, project
    from readbench.metrics.reads import read_metrics

    history = synthetic_session()
    config = get_config(dcp)
    state = DcpState()
    records, unpruned = [], []
    previous: list[str] = []
    fingerprints = FingerprintCache()
    t_project = t_fp = 0.0
    for i in range(N_CALLS):
        prefix = history[: 2 + 2 * i]  # system, user and i finished round trips
        t = time.process_time()
        projection = project(prefix, config, state=state, usage=ContextUsage(tokens=650 * i, context_window=200_000))
        state = projection.state
        t_project += time.process_time() - t
        t = time.process_time()
        fps = fingerprints(projection.messages)
        first_difference(previous, fps)
        previous = fps
        t_fp += time.process_time() - t
        records.append(CallRecord(projection.messages, [], 40, 10.0 * i, 10.0 * i + 1.0))
        unpruned.append(CallRecord(prefix, [], 40, 10.0 * i, 10.0 * i + 1.0))
    t = time.process_time()
    metrics = sample_cache_metrics(records, list(cache_models), unpruned_calls=unpruned)
    t_cache = time.process_time() - t
    t = time.process_time()
    read_metrics(history)
    t_metrics = time.process_time() - t
    total_tokens = sum(count_tokens(m.text) for m in history)
    per = {k: 1000 * v / N_CALLS for k, v in
           {"projection": t_project, "fingerprint": t_fp, "cache_simulation": t_cache, "metrics": t_metrics}.items()}
    per["total"] = sum(per.values())
    # the floor: hashing every message of the same history once (readbench.bench_floor)
    floor_ms = 1000 * hash_floor(m.text.encode("utf-8", "surrogatepass") for m in history) / N_CALLS
    return {"calls": N_CALLS, "session_tokens": total_tokens, "dcp": dcp, "cache_models": list(cache_models),
            "ms_per_call": per, "goal_ms_per_call": 2.0, "floor_ms_per_call": floor_ms,
            "total_x_floor": ratio(per["total"], floor_ms),
            "cache_read_ratio_anthropic-5m": metrics.get("cache_read_ratio_anthropic-5m")}


def bench_docker(samples: int = 8) -> dict[str, Any]:
    """Per-sample Docker start/stop overhead through inspect (mockllm, one bash call each)."""
    from readbench.sandbox.engine import docker_available

    ok, why = docker_available()
    if not ok:
        return {"skipped": why}
    from inspect_ai import Task, eval
    from inspect_ai.agent import react
    from inspect_ai.dataset import Sample
    from inspect_ai.model import ChatMessageTool, ModelOutput, ModelUsage, get_model
    from inspect_ai.tool import bash

    from readbench.sandbox.images import OFFLINE_BASE, compose_for, default_base

    def scripted(input, tools, tool_choice, config):  # noqa: A002 - mockllm signature
        done = any(isinstance(m, ChatMessageTool) for m in input)
        out = (ModelOutput.from_content("mockllm", "done") if done
               else ModelOutput.for_tool_call("mockllm", "bash", {"command": "true"}))
        out.usage = ModelUsage(input_tokens=10, output_tokens=1, total_tokens=11)
        return out

    compose = compose_for(default_base() if default_base() else OFFLINE_BASE)
    results = {}
    # the floor: the same samples in inspect's local sandbox (no container to start or stop)
    for name, sandbox in (("", ("docker", str(compose))), ("local_", "local")):
        for parallel in (1, 4):
            task = Task(dataset=[Sample(id=i, input="run true") for i in range(samples)],
                        solver=react(tools=[bash(timeout=30)], submit=False), sandbox=sandbox)
            start = time.perf_counter()
            eval(task, model=get_model("mockllm/model", custom_outputs=scripted), max_samples=parallel,
                 max_sandboxes=parallel, display="none", log_dir=str(Path("results/bench/logs")))
            wall = time.perf_counter() - start
            results[f"{name}seconds_per_sample_x{parallel}"] = wall / samples
    for parallel in (1, 4):
        results[f"x{parallel}_docker_over_local"] = ratio(results[f"seconds_per_sample_x{parallel}"],
                                                          results[f"local_seconds_per_sample_x{parallel}"])
    results["goal_seconds_per_sample"] = 1.5
    return results


def big_module(path: Path, size_bytes: int) -> Path:
    """Write a generated Python module of at least `size_bytes` bytes (a function and a class
    with a method per 110 bytes: the densest map a real module would need) and return `path`."""
    with open(path, "w") as fh:
        written = i = 0
        while written < size_bytes:
            chunk = (f'def helper_{i}(a, b):\n    """Helper number {i}."""\n    x = a * {i}\n    return x + b\n\n\n'
                     f"class K{i}:\n    def m(self):\n        return {i}\n\n\n")
            written += fh.write(chunk)
            i += 1
    return path


def bench_big_read(size_bytes: int = 100_000_000, variants: tuple[str, ...] = ("stock", "C", "swe-agent")) -> dict[str, Any]:
    """Wall seconds and peak RSS (MB) of one `readbench read` of a `size_bytes` module per variant."""
    import os
    import subprocess
    import sys
    import tempfile

    out: dict[str, Any] = {"file_bytes": size_bytes, "goal_ratio_to_stock": 1.5}
    with tempfile.TemporaryDirectory() as tmp:
        path = big_module(Path(tmp) / "big.py", size_bytes)
        for variant in variants:
            start = time.perf_counter()
            proc = subprocess.Popen([sys.executable, "-m", "readbench.cli", "read", str(path), "--variant", variant],
                                    stdout=subprocess.DEVNULL)
            _, status, usage = os.wait4(proc.pid, 0)
            proc.returncode = os.waitstatus_to_exitcode(status)
            if proc.returncode != 0:
                raise RuntimeError(f"readbench read --variant {variant} exited {proc.returncode}")
            cpu = usage.ru_utime + usage.ru_stime
            out[variant] = {"seconds": time.perf_counter() - start, "cpu_seconds": cpu, "peak_rss_mb": usage.ru_maxrss / 1024}
        # the floor: reading and hashing the same file once, in this process
        floor = floor_seconds(lambda: hash_floor([path.read_bytes()], reps=1), reps=3)
    out["floor_cpu_seconds"] = floor
    for variant in variants:
        out[variant]["cpu_x_floor"] = ratio(out[variant]["cpu_seconds"], floor)
    return out


#: The benchmarks `run_bench` knows, in the order it runs them.
BENCHMARKS = ("per-call", "docker", "docker-exec", "replay", "replay-scale", "big-read", "agents", "forked")

#: the forked-design benchmark: the nightly matrix on one task per family (8 arms x 7 tasks);
#: the whole corpus takes over an hour per design on 2 cores
FORKED_MATRIX, FORKED_TASK_ARGS = "evals/nightly.yaml", ("per_family=1",)


def run_bench(out_dir: Path = Path("results/bench"), only: tuple[str, ...] = (), scale_sessions: int = 8,
              scale_from: Path | None = None) -> dict[str, Any]:
    """Run the benchmarks (`only` those of `BENCHMARKS` when given; `scale_sessions` synthetic
    sessions for `replay-scale`, or the user's recorded sessions under `scale_from`), write
    ``bench.json`` and return the results.

    Raises:
        ValueError: an unknown benchmark name.
    """
    bad = [b for b in only if b not in BENCHMARKS]
    if bad:
        raise ValueError(f"unknown benchmark(s) {bad}; known: {', '.join(BENCHMARKS)}")
    out_dir.mkdir(parents=True, exist_ok=True)
    from readbench.bench_docker import bench_docker_exec
    from readbench.replay.bench import bench_replay, bench_replay_scale
    from readbench.run.forked_bench import bench_forked

    todo = {"per-call": lambda: [bench_per_call(d) for d in ("pi-dcp", "dcp-gated")], "docker": bench_docker,
            "docker-exec": bench_docker_exec,
            "replay": lambda: bench_replay(out_dir), "replay-scale": lambda: bench_replay_scale(out_dir, scale_sessions, source=scale_from),
            "big-read": bench_big_read, "agents": _bench_agents,
            "forked": lambda: bench_forked(FORKED_MATRIX, list(FORKED_TASK_ARGS))}
    keys = {"per-call": "per_call", "docker": "docker", "docker-exec": "docker_exec", "replay": "replay", "replay-scale": "replay_scale",
            "big-read": "big_read", "agents": "agents", "forked": "forked"}
    result = {keys[name]: todo[name]() for name in BENCHMARKS if not only or name in only}
    (out_dir / "bench.json").write_text(json.dumps(result, indent=2))
    return result


BENCH_AGENTS = ("readbench", "pi", "pi@1.6.0", "claude-code", "codex")


def _startup(agent: str) -> float | None:
    from readbench.agents.install import ensure_node, ensure_pin
    from readbench.harness.agents import get_agent

    a = get_agent(agent)
    if a.pin is None:
        return None
    exe = ensure_pin(a) / "node_modules" / ".bin" / a.pin.bin
    argv = [str(exe), "--version"] if a.pin.bin == "claude" else [str(ensure_node() / "node"), str(exe), "--version"]
    times = []
    for _ in range(3):
        t0 = time.monotonic()
        subprocess.run(argv, capture_output=True, check=True, timeout=120)
        times.append(time.monotonic() - t0)
    return statistics.median(times)


def bench_agents(agents: tuple[str, ...] = BENCH_AGENTS, model: str = "readbench/sim-pager") -> dict[str, Any]:
    """Per-sample start-up and run time of each harness beside the loop (GitHub issue 24 item 6):
    {agent: {startup_seconds, first_request_seconds, eval_wall_seconds, sample_wall_seconds, model_calls,
    solved}}. start-up: wall seconds of the harness's own ``--version`` from the cached prefix (median
    of 3; Claude Code's native binary answers it without starting up); first request: seconds from the
    harness's command in the sandbox to its first relayed model request (its real start-up);
    a sample: the first corpus ``locate`` task under ``stock × off`` in the local sandbox with
    ``readbench/sim-pager``.

    Raises:
        RuntimeError: a sample did not finish (its log's error).
    """
    from inspect_ai import eval as inspect_eval

    from readbench.run.task import read_strategies_task

    out: dict[str, Any] = {}
    for agent in agents:
        task = read_strategies_task(variant="stock", dcp="off", agent=agent, sandbox_kind="local", families="locate",
                                    limit=1)
        t0 = time.monotonic()
        [log] = inspect_eval(task, model=model, display="none", log_dir="results/bench/agents-logs")
        wall = time.monotonic() - t0
        if log.status != "success" or not log.samples:
            raise RuntimeError(f"bench agents: {agent}'s sample did not finish: {log.error}")
        meta = log.samples[0].scores["readbench"].metadata
        first = log.samples[0].store.get("readbench:harness_first_request_seconds")  # agents.run.FIRST_REQUEST_KEY
        out[agent] = {"startup_seconds": _startup(agent), "first_request_seconds": first, "eval_wall_seconds": wall,
                      "sample_wall_seconds": meta["wall_seconds"], "model_calls": meta["turns"],
                      "solved": log.samples[0].scores["readbench"].value}
    return out


def _bench_agents() -> dict[str, Any]:
    return bench_agents()


@click.command("bench")
@click.option("--only", "only", multiple=True,
              type=click.Choice(list(BENCHMARKS)),
              help="Run only these benchmarks (repeatable); default all.")
@click.option("--scale-sessions", type=click.IntRange(min=3), default=8, show_default=True,
              help="Synthetic 450-call sessions for replay-scale (more than its 2 jobs: the figures are "
                   "projected to 1,000 from the cost of each session beyond the first 2).")
@click.option("--scale-from", type=click.Path(exists=True, path_type=Path), default=None,
              help="Run replay-scale on your own recorded sessions (a folder or file, at least 2 session "
                   "files) instead of synthetic ones: real sessions are usually dearer per call.")
def bench_cmd(only: tuple[str, ...], scale_sessions: int, scale_from: Path | None) -> None:
    """Measure harness overhead per model call, Docker start/stop per sample, recorded-session
    import and replay (and its scale: replay --dcp all x 5 cache models, with and without
    --audit --gate-sweep), a 100 MB read per variant, and the nightly matrix forked vs independent
    on one task per family (results/bench/)."""
    if scale_from is not None:
        from readbench.replay.run import session_files

        n = len(session_files([str(scale_from)]))
        if n < 2:
            raise click.BadParameter(f"{scale_from}: {n} session file(s); replay-scale needs at least 2",
                                     param_hint="--scale-from")
    click.echo(format_table(run_bench(only=only, scale_sessions=scale_sessions, scale_from=scale_from)))
