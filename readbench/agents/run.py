"""`harness_agent`: a real harness inside the sample's sandbox, through inspect's sandbox agent
bridge, under one arm (GitHub issue 24; docs/specs/agents.md §1, §4).

Per sample:
1. the arm's read preset becomes the harness's own extension (pi: `readbench.agents.pi_extension`;
   Claude Code: a PreToolUse hook, `readbench.agents.claude_hooks`) and the harness is started in
   the sandbox with the sample's prompts (its `readbench.agents.launch.Launch`), its model
   endpoint the bridge, which relays every request to the sample's inspect model (any provider,
   and readbench's simulated agent `readbench/sim-*`, which speaks each harness's tools through
   `readbench.sim.dialect`);
2. the arm's DCP configuration is the bridge's `filter`: readbench's projection
   (`readbench.dcp.project`) of the relayed request, as pi-dcp's `context` hook does inside pi
   (another harness's tool calls renamed to pi's for the projection, whose strategies key on pi's
   names, and named back after it: `readbench.sim.dialect.pi_named`);
   the bridge's `response_filter` records every request as relayed (projected messages, tools)
   with its output, for the per-call log and the cache simulation;
3. at the end the harness's own session file is pulled out of the sandbox and imported with
   readbench's session importer; its transcript is the sample's history (the scorer's checks and
   the read and fragmentation metrics read it), each read result carrying the read facts the
   importer found (`readbench.sessions.reads.read_calls`).

Cache figures: `cost_usd_*` and the cache metrics are readbench's simulator over the requests as
relayed (readbench.cache.sample_cache_metrics, the same as the loop's: pi's breakpoint placement);
`harness_cost_usd_*` / `bridge_cost_usd_*` price the same requests under the harness's own placement
and under inspect's, which the bridge actually used (readbench.agents.cache_placement); the
`native_*` usage is the provider's answer to the bridge (inspect's placement, agents.md §1).
"""

from __future__ import annotations

import socket
import tempfile
import time
from dataclasses import asdict
from pathlib import Path
from typing import Any

from inspect_ai.agent import Agent, AgentState, agent, sandbox_agent_bridge
from inspect_ai.model import ChatMessageTool, ChatMessageUser, ModelOutput, get_model
from inspect_ai.util import sandbox, store

from readbench.agents.launch import Launch
from readbench.agents.relay import Relay as _Relay
from readbench.base import store as rbstore
from readbench.dcp import DcpState
from readbench.harness.agents import get_agent

__all__ = ["CALL_TIMES_KEY", "WORK_PREFIX", "FIRST_REQUEST_KEY", "NOT_SPENT_KEY", "REPORTED_KEY", "SESSION_TEXT_KEY", "SHADOW_KEY", "SNAPSHOTS_KEY", "SIM_BEFORE_CALL_KEY", "harness_agent", "read_details", "remove_work_dir"]

FIRST_REQUEST_KEY = "readbench:harness_first_request_seconds"
"""Sample store key: seconds from the harness's start (its first command, the bridge already up) to its
first relayed model request — the harness's own start-up inside the sandbox (`readbench bench --only agents`)."""

# Sample store keys a trunk leaves for its forks (harness_agent's `fork`; readbench.agents.pi_fork):
SIM_BEFORE_CALL_KEY = "readbench:harness_sim_before_call"
"""The sim's memory (``readbench:sim``) before each relayed call (None for a real model); with `keep_session`."""
SNAPSHOTS_KEY = "readbench:harness_snapshots"
"""{str(call): Snapshot.to_dict()}: the workspace's changes before each call following a tool that may change
files (`pi_fork.may_change_files`); a fork at k restores the latest at or before k (`pi_fork.snapshot_for`).
A pi trunk of the forked design (readbench.agents.pi_forked) leaves only each one's size in its log
(``{"archive_bytes", "deleted"}``), as it leaves out SESSION_TEXT_KEY, SIM_BEFORE_CALL_KEY and SHADOW_KEY:
its forks read them from their prefix files."""
SHADOW_KEY = "readbench:harness_shadow"
"""{readbench.fork.shadow.arm_key: fork point dict} of every arm of the trunk's group (pi_shadow.PiShadow)."""
REPORTED_KEY = "readbench:harness_reported"
"""Per relayed call ``[messages in its history, tokens reported]`` (or None): pi-dcp's context usage."""
CALL_TIMES_KEY = "readbench:harness_call_times"
"""Per relayed call ``[ts_start, ts_first]`` as the cache simulation got them (None: not priced)."""
NOT_SPENT_KEY = "readbench:harness_not_spent"
"""A fork's `Relay.not_spent` of its prefix calls (the trunk's; readbench.agents.pi_forked)."""
SESSION_TEXT_KEY = "readbench:harness_session"
"""The harness's session file as it wrote it (text), kept with `keep_session`."""

WORK_PREFIX = "readbench-agent-"
"""Name prefix of a local sample's harness directory (`tempfile.mkdtemp` in the host's temporary directory:
the harness's config, extension, HOME and session files); removed when the sample ends (`remove_work_dir`)."""

DOCKER_PREFIX = "/opt/readbench"
"""Where `readbench images --agents` puts Node.js (`node/`) and the harness (`agent/`) in an image."""


def _free_port() -> int:
    """A free TCP port on the host (the local sandbox shares the host's network)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def remove_work_dir(work: str) -> None:
    """Remove a local sample's harness directory (`WORK_PREFIX`) and everything the harness wrote in it.
    Nothing in it is read after the sample: its session file was imported into the sample's messages (and
    its text stored, with `keep_session`) before the run returned. A directory that cannot be removed
    entirely is logged as a warning naming it (the sample's result stands)."""
    import logging
    import shutil

    shutil.rmtree(work, ignore_errors=True)
    if Path(work).exists():
        logging.getLogger(__name__).warning("readbench: could not remove the harness directory %s", work)


def read_details(session: Any, cwd: str | None = None, shell_reads: bool = False) -> dict[str, dict[str, Any]]:
    """Read facts per tool-call id from an imported session (readbench.sessions.reads), in the shape
    the loop's read tool writes (`metadata["readbench"]`: path, first/last line, capped, blocked),
    so `readbench.metrics.reads.read_metrics` reads a harness's session as it reads the loop's.
    A path under `cwd` (Claude Code's absolute `file_path`) is made relative to it, as pi's are.
    `shell_reads`: include reads through the shell (`via_shell`; a harness with no read tool, Codex),
    which read_metrics then counts as reads; without it a shell read is left out, as the loop does
    not count its `bash` reads."""
    from readbench.harness.claude_code import hook_reason
    from readbench.read.registry import blocked
    from readbench.sessions.reads import read_calls, tool_results

    results = tool_results(session)
    out: dict[str, dict[str, Any]] = {}
    for r in read_calls(session, results):
        if r.via_shell and not shell_reads:
            continue
        message = results.get(r.tool_call_id)
        text = message.text if message is not None else ""
        path = r.path[len(cwd) + 1:] if cwd and r.path and r.path.startswith(cwd.rstrip("/") + "/") else r.path
        out[r.tool_call_id] = {
            "path": path, "offset": r.offset, "limit": r.limit, "first_line": r.first_line,
            "last_line": r.last_line, "total_lines": r.total_lines, "capped": bool(r.capped),
            "blocked": blocked(hook_reason(text)) is not None, "content_sha256": "", "via_shell": r.via_shell,
        }
        if r.seen:  # the harness cut the middle out: the lines the model saw (Codex)
            out[r.tool_call_id]["seen"] = [list(span) for span in r.seen]
    return out


@agent
def harness_agent(
    agent: str,
    variant: str | dict[str, Any] = "stock",
    dcp: str | dict[str, Any] = "off",
    cache_models: list[str] | None = None,
    context_window_tokens: int = 200_000,
    max_turns: int | None = None,
    fork: dict[str, Any] | None = None,
    keep_session: bool = False,
    snapshots: bool = False,
    shadow: list[list[Any]] | None = None,
) -> Agent:
    """Run real harness `agent` (readbench.harness.agents) in the sample's sandbox under one arm.

    Args:
        agent: an agent name other than `readbench` (`pi`, `pi@1.6.0`, `claude-code`; Codex is
            listed but not runnable yet: refused here by name). How each starts: readbench.agents.launch.
        variant, dcp, cache_models, context_window_tokens: as readbench.agent.loop.pi_agent.
        max_turns: most relayed model calls per sample: the call past it is answered by the bridge's
            filter with an empty reply and no tool call (no model call, nothing billed), so the
            harness ends its run (`stop_reason = turn_limit`), as the loop stops before that call.
        fork: pi only: continue a trunk pi run at a fork point instead of starting on the prompts
            (readbench.agents.pi_fork): "trunk" (its session text, SESSION_TEXT_KEY), "call" (the fork
            point, 0-based, numbered as the loop's: with "kind" ``"result"`` the trunk's reply to call
            `call` is shared and pi resumes at request `call + 1`, that reply's results the arm's; else pi
            resumes at request `call`, and 0 is no fork; below, "call" means the request pi resumes at),
            "results" ({tool_call_id: [text, is_error]}: the arm's own
            results in that request), "sim" (SIM_BEFORE_CALL_KEY[call]; None for a real model), and
            optionally "snapshot" (`pi_fork.snapshot_for` of SNAPSHOTS_KEY, restored before pi starts;
            None: the setup's workspace), "reported" (REPORTED_KEY) and "dcp_state" (the arm's DcpState
            dict at that call), which start the relay's projection where the trunk's stood; with
            "calls" (the trunk's readbench:calls) and "times" (CALL_TIMES_KEY) the relay is seeded with
            the prefix's calls instead (Relay.seed), so the sample's calls and cache figures cover the
            whole trajectory. The prefix's calls count toward `max_turns`; the imported history holds them.
        keep_session, snapshots, shadow: for forks of this run: keep the session text
            (SESSION_TEXT_KEY); archive the workspace's changes before each call that follows a tool
            which may change files (SNAPSHOTS_KEY, readbench.fork.snapshot); find the fork point of
            each arm ([variant, dcp]) of this trunk's group in shadow (SHADOW_KEY, pi_shadow).

    Raises:
        ValueError: an unknown agent, one readbench cannot run yet, a preset it cannot express, or
            a fork for a harness other than pi (missing keys named).
    """
    from readbench.agents.launch import LAUNCHERS, LaunchInput, launch
    from readbench.harness.agents import RUNNABLE

    spec = get_agent(agent)
    if spec.harness is None or spec.harness.name not in RUNNABLE or spec.harness.name not in LAUNCHERS:
        raise ValueError(f"agent {agent!r}: readbench runs only {', '.join(sorted(RUNNABLE))} inside the sandbox "
                         "so far (the others are installed and listed, not run)")
    harness = spec.harness.name
    launch(harness, LaunchInput("/w", 1, "node", "exe", variant, ["p"], None, context_window_tokens))  # refuse early
    if fork is not None and "call" in fork:  # pi resumes at the request after a shared reply's results
        fork = {**fork, "call": int(fork["call"]) + (1 if fork.get("kind") == "result" else 0)}
    if fork is not None and fork.get("call") == 0:
        fork = None  # forked at its first request: the arm's own run from the prompts
    if fork is not None:
        missing = sorted({"trunk", "call", "results", "sim"} - set(fork))
        if harness != "pi" or missing:
            raise ValueError(f"agent {agent!r}: a fork needs pi and the keys trunk, call, results, sim "
                             f"(missing: {missing})")
    cache_models = list(cache_models or ["anthropic-5m", "openai", "deepseek"])

    async def execute(state: AgentState) -> AgentState:
        ws = rbstore.workspace()
        oracle: dict[str, Any] = store().get(rbstore.ORACLE, {})
        prompts = [str(p) for p in oracle.get("prompts", [])] or [state.messages[-1].text]
        local = ws.get("sandbox") == "local"
        relay = _Relay(dcp, ws.get("cwd"), context_window_tokens, max_turns, int(fork["call"]) if fork else 0)
        if fork is not None and fork.get("calls") is not None:  # the prefix's calls rebuilt at the first request
            relay.seed(list(fork["calls"]), list(fork["times"]), list(fork["reported"]))
        elif fork is not None:
            relay.reported = {int(p[0]): int(p[1]) for p in (fork.get("reported") or [])[:int(fork["call"])] if p}
            relay.state = DcpState.from_dict(fork.get("dcp_state"))
        port = _free_port() if local else 13131
        if not local:  # the container's own directory, gone with the sample's container
            node, prefix = f"{DOCKER_PREFIX}/node/bin/node", Path(f"{DOCKER_PREFIX}/agent")
            return await run_in(state, "/tmp/readbench-agent", node, prefix, relay, prompts, ws, port)
        from readbench.agents.install import ensure_node, ensure_pin

        node, prefix = str(ensure_node() / "node"), ensure_pin(spec)
        work = tempfile.mkdtemp(prefix=WORK_PREFIX)
        try:
            return await run_in(state, work, str(node), prefix, relay, prompts, ws, port)
        finally:  # success, error or cancellation: the session was imported (and kept) by then
            remove_work_dir(work)

    async def run_in(state: AgentState, work: str, node: str, prefix: Path, relay: _Relay, prompts: list[str],
                     ws: dict[str, Any], port: int) -> AgentState:
        """The harness run with its own files under `work` (execute's second half)."""
        assert spec.pin is not None
        env = dict(ws.get("env", {}))
        rg = str(ws.get("rg") or "")
        if rg.startswith("/"):  # pi's grep runs `rg` from PATH: the local sandbox's is the venv's
            env["PATH"] = f"{Path(rg).parent}:{env.get('PATH', '')}"
        resume: str | None = None
        files: dict[str, str] = {}
        if fork is not None:
            from readbench.agents.pi_fork import fork_files

            resume, files = fork_files(fork, work, str(ws.get("cwd")))
            if fork["sim"] is not None:
                store().set(rbstore.SIM, fork["sim"])
        run = launch(harness, LaunchInput(work, port, node, str(prefix / "node_modules" / ".bin" / spec.pin.bin),
                                          variant, prompts, ws.get("cwd"), context_window_tokens, env, resume))
        sb = sandbox()
        for path, text in {**run.files, **files}.items():
            await sb.write_file(path, text)
        if fork is not None and fork.get("snapshot") is not None:
            from readbench.fork.snapshot import Snapshot, restore_snapshot

            await restore_snapshot(sb, str(ws.get("cwd")), Snapshot.from_dict(fork["snapshot"]))
        relay.sim_before = [] if keep_session else None
        if shadow is not None:
            from readbench.agents.pi_shadow import PiShadow

            relay.shadow = PiShadow((variant, dcp), [(v, d) for v, d in shadow], str(ws.get("cwd")))
        if snapshots and ws.get("cwd"):
            from readbench.fork.snapshot import mark_workspace

            relay.mark = await mark_workspace(sb, str(ws.get("cwd")))
        from readbench.agents.bridge_poll import install

        install()  # requests picked up every bridge_poll.poll_seconds of the sandbox, not inspect's 2 s
        t0 = time.monotonic()
        try:
            async with sandbox_agent_bridge(state, filter=relay.filter, response_filter=relay.response, port=port):
                started = time.monotonic()
                for argv in run.runs:
                    result = await sb.exec(argv, cwd=ws.get("cwd"), env=run.env)
                    if not result.success or relay.turn_limited:
                        break
            if relay.turn_limited:
                store().set(rbstore.STOP_REASON, "turn_limit")
            if not result.success:
                store().set(rbstore.STOP_REASON, "error")
                raise RuntimeError(f"{harness} exited with {result.returncode}: {result.stderr[-600:]}"
                                   f"{result.stdout[-600:]}")
            state = await _import_session(state, run, ws.get("cwd"), drop_last_reply=relay.turn_limited,
                                          keep=SESSION_TEXT_KEY if keep_session else None)
        finally:
            if relay.first_request is not None:  # the harness's start-up: its exec to its first model request
                store().set(FIRST_REQUEST_KEY, relay.first_request - started)
            store().set(rbstore.CALLS, [asdict(c) for c in relay.calls])
            if relay.sim_before is not None:
                store().set(SIM_BEFORE_CALL_KEY, relay.sim_before)
            store().set(REPORTED_KEY, relay.reported_calls)
            if fork is not None:
                store().set(NOT_SPENT_KEY, relay.not_spent(int(fork["call"]), cache_models))
            store().set(CALL_TIMES_KEY, relay.times)
            if relay.shadow is not None:
                store().set(SHADOW_KEY, relay.shadow.finish(len(relay.calls)))
            if relay.mark is not None:
                from readbench.fork.snapshot import drop_mark

                store().set(SNAPSHOTS_KEY, relay.snapshots)
                await drop_mark(sb, relay.mark)
            store().set(rbstore.WALL_SECONDS, time.monotonic() - t0)
            from readbench.metrics.native import native_metrics

            store().set(rbstore.NATIVE_METRICS, native_metrics([asdict(c) for c in relay.calls], get_model().name))
            if relay.records:
                from readbench.agents.cache_placement import placement_metrics
                from readbench.cache import sample_cache_metrics

                metrics = sample_cache_metrics(relay.records, cache_models, unpruned_calls=relay.unpruned)
                metrics.update(placement_metrics(relay.records, cache_models, harness))  # the second figure
                store().set(rbstore.CACHE_METRICS, metrics)
        return state

    return execute


async def _import_session(state: AgentState, run: Launch, cwd: str | None = None,
                          drop_last_reply: bool = False, keep: str | None = None) -> AgentState:
    """The harness's session file (the newest `*.jsonl` under `run.session_dir`, a main session, not
    a sub-agent's) pulled out of the sandbox and imported with `run.importer` (a readbench.sessions
    module): its transcript becomes the sample's history, each read result carrying its read facts
    (`read_details`, paths relative to `cwd`; shell reads too when `run.shell_reads`), each user
    message the harness sent as context (`run.context_prefixes`) marked `harness_context` (no prompt
    to the scorer). With `drop_last_reply`, the filter's empty reply at the turn limit (no model
    call) is left out. With `keep`, the file's text is put in the store under that key.

    Raises:
        RuntimeError: the harness wrote no session file.
    """
    import importlib

    session_dir = run.session_dir
    load = importlib.import_module(run.importer).load
    sb = sandbox()
    found = await sb.exec(["find", session_dir, "-name", "*.jsonl", "-type", "f", "-not", "-path", "*/subagents/*"])
    names = sorted(n for n in found.stdout.split("\n") if n.endswith(".jsonl"))
    if not found.success or not names:
        raise RuntimeError(f"the harness wrote no session file under {session_dir}: {found.stderr}")
    text = await sb.read_file(names[-1])
    if keep is not None:
        store().set(keep, text)
    with tempfile.TemporaryDirectory() as tmp:
        host = Path(tmp) / Path(names[-1]).name
        host.write_text(text)
        session = load(host)[0]
    details = read_details(session, cwd, shell_reads=run.shell_reads)
    messages = session.messages
    if drop_last_reply and messages and messages[-1].role == "assistant" and not messages[-1].text \
            and not messages[-1].tool_calls:
        messages = messages[:-1]
    answered = [c for c in session.calls if c.output is not None]
    if not drop_last_reply and answered and messages and messages[-1].role != "assistant":
        # a session's messages are its last context (what a next call would send): the final reply,
        # which no later line extends (Claude Code's), is only the last call's output
        messages = [*messages, answered[-1].output]
    for message in messages:
        if isinstance(message, ChatMessageTool) and message.tool_call_id in details:
            message.metadata = {**(message.metadata or {}), "readbench": details[message.tool_call_id]}
        elif run.context_prefixes and isinstance(message, ChatMessageUser) \
                and message.text.lstrip().startswith(run.context_prefixes):
            message.metadata = {**(message.metadata or {}), "harness_context": True}  # not a prompt (scorer)
    state.messages = messages
    last = [c for c in session.calls if c.output is not None][-2 if drop_last_reply else -1:]
    if last and last[0].output is not None:
        state.output = ModelOutput.from_message(last[0].output)
    return state
