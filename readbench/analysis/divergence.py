"""The divergence table of a forked run (GitHub issue 25 item 3): per arm, how often and how
early it left the trunk, and what the fork did not pay for against an independent run.

Read from the fork logs (``<run>/logs``): each fork sample's store entry ``readbench:fork``
(readbench.base.store: its fork point, the calls it replayed, their reported tokens and their
simulated cost per cache model) and its whole cost (``readbench:cache_metrics``). An
independent run of the arm would have paid the whole cost; the fork paid only for the calls
after its fork point (and the trunk paid the shared ones once).

Statistics: a sample whose arm never left the trunk ("never") has exactly the trunk arm's
trajectory, so its paired difference against the trunk arm is zero by construction (not by
chance); the share of such pairs is the table's ``identical to trunk`` column. A sample whose
trunk stopped on a limit (turn, token, time) before the arm differed ("cut") is counted apart, in
``not diverged before the trunk's limit``: the arm followed the trunk to the limit, and whether it
would have diverged later is unknown; it is neither diverged nor identical. CUPED with the
trunk's metrics as covariate is deliberately not applied, and the section says so: the covariate
is the same for both arms of a pair, so the adjusted estimate equals the paired mean and the
residual interval under-covers (simulated in tests/fork/test_fork_cuped.py: 0.88-0.90 against
0.93-0.95 for the paired CR2 interval).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd

from readbench.base.store import CACHE_METRICS, CALLS, FORK

from . import _format as F
from ._document import Block, Heading, Table
from .arms import LOOP_AGENT, arm_label, spec_name

__all__ = ["ALONE", "NOT_FORKED", "divergence_rows", "divergence_section", "divergence_summary"]

ALONE = ("an arm of readbench's loop alone in its schema group, i.e. no other arm sends its first request, "
         "has no trunk to share: its trunk would be its own trajectory, paid once and then replayed once")
"""Why an arm of readbench's loop alone in its schema group runs independently in a forked run
(readbench.run.forked: its task has no ``fork`` argument)."""

NOT_FORKED = ("the forked design forks readbench's loop and pi only: Claude Code 2.1.332 resumes a session only "
              "with a new prompt, which would change the fork's request, and resuming Codex 0.171.0 without one "
              "(`codex exec resume`) is untried")
"""Why Claude Code's and Codex's arms run independently in a forked run (Claude
Code's `-p --resume` without a prompt exits with "Provide a prompt to continue the conversation"; `codex exec
resume [SESSION_ID] [PROMPT]`). pi's arms are forked (readbench.agents.pi_forked): its CLI has no continue
command either, but an extension restarts its loop on a resumed session (readbench.agents.pi_fork)."""


def divergence_rows(log_dir: Path) -> pd.DataFrame:
    """One row per fork sample (readbench's loop or pi, readbench.agents.pi_forked), and per sample of another
    real harness's arm and per sample of a loop arm alone in its schema group in a forked run (kind
    ``independent``: run whole, nothing replayed or saved; readbench.run.forked): arm, sample_id, epoch, kind, fork_call, calls, replayed_calls,
    input_tokens, output_tokens (the whole trajectory's reported tokens), prefix_input_tokens,
    prefix_output_tokens (the replayed calls'), and per cache model m ``saved_usd_{m}`` (the
    replayed calls' cost) and ``cost_usd_{m}`` (the whole trajectory's). Empty when the logs
    hold no fork sample (an independent run).
    """
    from inspect_ai.log import list_eval_logs, read_eval_log

    rows: list[dict[str, Any]] = []
    for info in list_eval_logs(str(log_dir)):
        log = read_eval_log(info.name)
        args = log.eval.task_args or {}
        agent = args.get("agent") or LOOP_AGENT
        # a loop arm of a forked run whose task has no fork argument: alone in its group, run independently
        alone = (agent == LOOP_AGENT and args.get("fork") is None
                 and (log.eval.metadata or {}).get("readbench_design") == "forked")
        arm = arm_label(spec_name(args.get("variant")), spec_name("off" if args.get("dcp") is False else args.get("dcp")),
                        log.eval.model, agent)
        for sample in log.samples or []:
            fork = (sample.store or {}).get(FORK) or {}
            if (agent != LOOP_AGENT or alone) and fork.get("role") != "fork":  # run independently (readbench.run.forked)
                fork = {"role": "fork", "fork_point": {"kind": "independent"},
                        "prefix_cost_usd": dict.fromkeys(_cache_models(args), 0.0)}
            if fork.get("role") != "fork":
                continue
            point = fork.get("fork_point") or {}
            calls = sample.store.get(CALLS) or []
            row = {"arm": arm, "sample_id": sample.id, "epoch": sample.epoch, "kind": point.get("kind"),
                   "fork_call": point.get("call"), "calls": len(calls),
                   "replayed_calls": fork.get("replayed_calls", 0),
                   "input_tokens": sum(c.get("prompt_tokens") or 0 for c in calls),
                   "output_tokens": sum(c.get("output_tokens") or 0 for c in calls),
                   "prefix_input_tokens": (fork.get("prefix_tokens") or {}).get("input", 0),
                   "prefix_output_tokens": (fork.get("prefix_tokens") or {}).get("output", 0)}
            metrics = sample.store.get(CACHE_METRICS) or {}
            for m, saved in (fork.get("prefix_cost_usd") or {}).items():
                row[f"saved_usd_{m}"] = saved
                row[f"cost_usd_{m}"] = metrics.get(f"cost_usd_{m}")
            rows.append(row)
    return pd.DataFrame(rows)


def _cache_models(task_args: dict[str, Any]) -> list[str]:
    """The cache models named in a log's task arguments (a list or a comma-separated string)."""
    names = task_args.get("cache_models") or []
    return [n.strip() for n in names.split(",")] if isinstance(names, str) else [str(n) for n in names]


def divergence_summary(rows: pd.DataFrame, trunk_arms: list[str] | tuple[str, ...] = ()) -> pd.DataFrame:
    """Per arm: samples, share diverged (fork kind request/result), share identical to the trunk
    (``never``), share not diverged before the trunk's limit (``cut``), share run independently
    (``independent``: a Claude Code or Codex arm, a loop arm alone in its schema group), median fork point (calls,
    over the diverged samples; with a ``fork_fraction`` column also as a fraction of the unit's calls), calls not spent (replayed) and their share of the arm's calls,
    tokens not spent (input + output), and per cache model the cost saved and its share of the
    independent run's cost. An arm named in ``trunk_arms`` (``variant × dcp`` labels, run.json's
    ``trunk_arms``) ran the trunk itself: its fork replays it whole, but the trunk paid every call,
    so it is marked ``trunk`` and nothing is counted as not spent or saved on it. Then one last row
    ``all arms``: the sums (so its shares are the forked run's net saving against an independent
    run of every arm, the trunks paid). Empty input gives an empty frame."""
    if rows.empty:
        return pd.DataFrame()
    out = []
    models = sorted(c[len("saved_usd_"):] for c in rows.columns if c.startswith("saved_usd_"))
    for arm, g in rows.groupby("arm", sort=True):
        trunk = str(arm).rsplit(" @ ", 1)[0] in trunk_arms
        if trunk:  # the trunk paid these calls: none is saved on its own arm
            g = g.assign(replayed_calls=0, prefix_input_tokens=0, prefix_output_tokens=0,
                         **{f"saved_usd_{m}": 0.0 for m in models})
        diverged = g[g["kind"].isin(["request", "result"])]
        r: dict[str, Any] = {
            "arm": arm, "trunk": trunk, "samples": len(g), "share_diverged": len(diverged) / len(g),
            "identical_to_trunk": (g["kind"] == "never").mean(), "cut_with_trunk": (g["kind"] == "cut").mean(),
            "run_independently": (g["kind"] == "independent").mean(),
            "median_fork_call": float(diverged["fork_call"].median()) if len(diverged) else float("nan"),
            "calls_not_spent": int(g["replayed_calls"].sum()), "calls": int(g["calls"].sum()),
            "tokens_not_spent": int(g["prefix_input_tokens"].sum() + g["prefix_output_tokens"].sum()),
        }
        r["share_calls_not_spent"] = r["calls_not_spent"] / r["calls"] if r["calls"] else float("nan")
        if "fork_fraction" in g:
            r["median_fork_fraction"] = float(diverged["fork_fraction"].median()) if len(diverged) else float("nan")
        for m in models:
            saved, total = g[f"saved_usd_{m}"].fillna(0).sum(), g[f"cost_usd_{m}"].sum()
            r[f"saved_usd_{m}"] = saved
            r[f"share_saved_{m}"] = saved / total if total else float("nan")
        out.append(r)
    summary = pd.DataFrame(out)
    sums: dict[str, Any] = {"arm": "all arms", "trunk": False, "samples": int(summary["samples"].sum())}
    for col in ("calls_not_spent", "calls", "tokens_not_spent", *[f"saved_usd_{m}" for m in models]):
        sums[col] = summary[col].sum()
    sums["share_calls_not_spent"] = sums["calls_not_spent"] / sums["calls"] if sums["calls"] else float("nan")
    for m in models:
        cost = rows[f"cost_usd_{m}"].sum()
        sums[f"share_saved_{m}"] = sums[f"saved_usd_{m}"] / cost if cost else float("nan")
    return pd.concat([summary, pd.DataFrame([sums])], ignore_index=True)


def divergence_section(summary: pd.DataFrame) -> list[Block]:
    """The report's "Divergence (forked design)" section; nothing for an independent run."""
    if summary.empty:
        return []
    models = sorted(c[len("saved_usd_"):] for c in summary.columns if c.startswith("saved_usd_"))
    header = ("arm", "samples", "diverged", "identical to trunk", "not diverged before the trunk's limit",
              "run independently", "median fork point, call", "calls not spent",
              "tokens not spent", *[f"cost saved USD ({m})" for m in models])
    def share(r: dict[str, Any], key: str) -> str:
        return "" if r["arm"] == "all arms" else F.pct(r.get(key, 0.0))

    rows = tuple(
        (r["arm"] + (" (trunk, paid in full)" if r.get("trunk") else ""), F.count(int(r["samples"])),
         share(r, "share_diverged"), share(r, "identical_to_trunk"),
         share(r, "cut_with_trunk"), share(r, "run_independently"),
         F.num(r.get("median_fork_call", float("nan")), 1), f"{F.count(int(r['calls_not_spent']))} ({F.pct(r['share_calls_not_spent'])})",
         F.count(int(r["tokens_not_spent"])),
         *[f"{F.usd(r[f'saved_usd_{m}'])} ({F.pct(r[f'share_saved_{m}'])})" for m in models])
        for r in summary.to_dict("records"))
    return [Heading(2, "Divergence (forked design)"),
            Table(header, rows, caption=(
                "Forked design: the arms that send the same first request (system prompt and tool schemas) form "
                "a group; per group of two or more arms one trunk per task × epoch × model runs under the group's first arm (marked "
                "'trunk, paid in full': nothing is saved on it); each arm replays its group's trunk "
                "up to its first differing request or tool result and runs on from there. diverged = share of "
                "samples where the arm left the trunk; identical to trunk = share where it never did (its paired "
                "difference against the trunk arm is zero by construction); not diverged before the trunk's limit = "
                "share where a turn, token or time limit stopped the trunk before the arm differed (the arm's fork "
                "stops there too, with the trunk's stop reason; whether it would have diverged later is unknown); "
                "run independently = share of samples of an arm that ran its whole trajectory, paid in full: a "
                f"Claude Code or Codex arm ({NOT_FORKED}), or {ALONE}; "
                "median fork point over the diverged samples, counted from call 0 (0 = the first request already "
                "differs, e.g. another tool schema; a fork at a differing tool result of call k replays calls 0..k, "
                "the reply that asked for it included, at a differing request 0..k-1); calls and tokens "
                "not spent = the replayed calls (share of the arm's calls); cost saved = their simulated cost "
                "(share of what an independent run of the arm costs); all arms = the sums, i.e. what the forked run "
                "did not pay against an independent run of every arm. The paired intervals are the ordinary ones "
                "(no CUPED): the trunk's metrics are shared by both arms of a pair, so adjusting for them cannot "
                "move the estimate and would narrow the interval only by under-covering (tests/fork/test_fork_cuped.py)."))]
