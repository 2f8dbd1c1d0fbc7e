"""`readbench dcp project|configs`: run a DCP configuration over a recorded history.

Thin wrapper over `readbench.dcp.project` and `readbench.sessions.load_messages` (any recorded
session format, or a JSON list of inspect messages).
Bad arguments exit 2 with a message naming the input (click's usage-error convention).
"""

from __future__ import annotations

import json
from typing import Any

import click

from readbench.dcp.configs import get_config

__all__ = ["dcp_group"]


def _resolve_config(raw: str) -> Any:
    spec: Any = raw
    if raw.lstrip().startswith("{"):
        try:
            spec = json.loads(raw)
        except json.JSONDecodeError as exc:
            raise click.BadParameter(f"not valid JSON: {exc.msg}", param_hint="--config") from None
    try:
        return get_config(spec)
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="--config") from None


def _one_line(text: str, width: int = 100) -> str:
    flat = text.replace("\n", "\\n")
    return flat if len(flat) <= width else flat[: width - 1] + "…"


@click.group("dcp")
def dcp_group() -> None:
    """Context pruning (DCP): project a history through a configuration."""


@dcp_group.command("project")
@click.argument("file", type=click.Path(dir_okay=False))
@click.option("--config", "config_name", required=True, help="Preset name or JSON {\"base\":..,\"name\":..,...}.")
@click.option("--context-window", type=click.IntRange(min=1), default=None, help="Context window in tokens.")
@click.option("--usage-tokens", type=click.IntRange(min=0), default=None, help="Pre-prune prompt tokens.")
@click.option("--cwd", default=None, help="Agent working directory for resolving relative tool paths.")
@click.option("--json", "as_json", is_flag=True, help="Print {messages, stats} as JSON.")
def project_cmd(
    file: str, config_name: str, context_window: int | None, usage_tokens: int | None, cwd: str | None, as_json: bool
) -> None:
    """Project FILE (a recorded session of any format `readbench replay` reads, or a JSON list of
    inspect messages) and print the result.

    Prints the projected messages (`*` marks a replaced one) and the statistics: items pruned
    per strategy, pi-dcp's footer "tokens saved" estimate and the earliest changed position.
    """
    from readbench.dcp._project import project
    from readbench.dcp._types import ContextUsage
    from readbench.sessions import load_messages

    cfg = _resolve_config(config_name)
    try:
        messages = load_messages(file, warn=lambda w: click.echo(f"warning: {w}", err=True))
    except FileNotFoundError:
        raise click.BadParameter(f"file {file!r} does not exist", param_hint="FILE") from None
    except (ValueError, UnicodeDecodeError) as exc:
        raise click.BadParameter(str(exc), param_hint="FILE") from None
    usage = ContextUsage(usage_tokens, context_window) if (usage_tokens is not None or context_window) else None
    result = project(messages, cfg, usage=usage, cwd=cwd)
    stats = result.stats
    if as_json:
        out = {
            "config": cfg.to_dict(),
            "messages": [m.model_dump(mode="json", exclude_none=True) for m in result.messages],
            "stats": stats.to_dict(),
        }
        click.echo(json.dumps(out, ensure_ascii=False, indent=2))
        return
    changed = set(stats.changed_indices)
    for i, m in enumerate(result.messages):
        mark = "*" if i in changed else " "
        calls = getattr(m, "tool_calls", None) or []
        call_txt = "".join(f" {c.function}({json.dumps(c.arguments, ensure_ascii=False)})" for c in calls)
        click.echo(f"{mark}[{i}] {m.role}: {_one_line(m.text + call_txt)}")
    click.echo("")
    click.echo(f"config: {cfg.name} ({cfg.family})")
    pruned = ", ".join(f"{k}={v}" for k, v in stats.pruned.items()) or "-"
    click.echo(f"pruned items: {stats.pruned_items} ({pruned})")
    click.echo(f"footer tokens saved: {stats.footer_tokens_saved}")
    if stats.footer_text:
        click.echo(f"footer: {stats.footer_text}")
    click.echo(f"earliest changed position: {stats.earliest_changed_index}")
    if stats.band is not None:
        click.echo(f"band: {stats.band} (effective {stats.effective_band}), usage ratio: {stats.usage_ratio}")
    if stats.gate is not None:
        g = stats.gate
        click.echo(
            f"gate: mode={g.mode} state={g.agent_state} T={g.threshold_calls} candidates={g.candidates} "
            f"tail={g.tail_tokens} removed={g.removed_tokens} break_even={g.break_even_calls} accepted={g.accepted}"
        )


@dcp_group.command("replay")
@click.argument("file", type=click.Path(dir_okay=False))
@click.option("--config", "config_name", required=True, help="Preset name or JSON {\"base\":..,\"name\":..,...}.")
@click.option("--context-window", type=click.IntRange(min=1), default=None, help="Context window in tokens.")
@click.option("--cwd", default=None, help="Agent working directory for resolving relative tool paths.")
@click.option("--json", "as_json", is_flag=True, help="Print per-call statistics as JSON.")
def replay_cmd(file: str, config_name: str, context_window: int | None, cwd: str | None, as_json: bool) -> None:
    """Project FILE before every assistant message and report per-call pruning and prefix breaks."""
    from readbench.dcp import replay_projections
    from readbench.sessions import load_messages

    cfg = _resolve_config(config_name)
    try:
        messages = load_messages(file, warn=lambda w: click.echo(f"warning: {w}", err=True))
    except FileNotFoundError:
        raise click.BadParameter(f"file {file!r} does not exist", param_hint="FILE") from None
    except (ValueError, UnicodeDecodeError) as exc:
        raise click.BadParameter(str(exc), param_hint="FILE") from None
    calls = replay_projections(messages, cfg, context_window=context_window, cwd=cwd)
    rows = [
        {"boundary": c.boundary, "prefix_break": c.prefix_break, **c.projection.stats.to_dict()} for c in calls
    ]
    totals = {
        "calls": len(calls),
        "dcp_pruned_items": sum(c.projection.stats.pruned_items for c in calls),
        "dcp_footer_tokens_saved": sum(c.projection.stats.footer_tokens_saved for c in calls),
        "dcp_prefix_breaks": sum(1 for c in calls if c.prefix_break is not None),
    }
    if as_json:
        click.echo(json.dumps({"config": cfg.to_dict(), "calls": rows, "totals": totals}, ensure_ascii=False, indent=2))
        return
    for r in rows:
        click.echo(
            f"call before [{r['boundary']}]: pruned={r['pruned_items']} footer_saved={r['footer_tokens_saved']} "
            f"earliest_changed={r['earliest_changed_index']} prefix_break={r['prefix_break']}"
        )
    click.echo(" ".join(f"{k}={v}" for k, v in totals.items()))


@dcp_group.command("configs")
@click.option("--json", "as_json", is_flag=True, help="Print the configurations as JSON.")
def configs_cmd(as_json: bool) -> None:
    """List the named DCP configurations, the strategies each runs, and their parameters."""
    from readbench.dcp.configs import CONFIGS

    described = CONFIGS.describe()
    if as_json:
        click.echo(json.dumps(described, ensure_ascii=False, indent=2))
        return
    for c in described:
        click.echo(f"{c['name']}  [{c['family']}]  {c['origin']}")
        click.echo(f"    strategies: {', '.join(c['strategies']) or 'none'}")
        for k, v in c["params"].items():
            click.echo(f"    {k} = {json.dumps(v)}")


@dcp_group.command("strategies")
@click.option("--json", "as_json", is_flag=True, help="Print the strategies as JSON.")
def strategies_cmd(as_json: bool) -> None:
    """List the pruning strategies of every family: flag, pressure band, placeholder, fast path."""
    from readbench.dcp._strategy import STRATEGIES

    described = STRATEGIES.describe()
    if as_json:
        click.echo(json.dumps(described, ensure_ascii=False, indent=2))
        return
    for d in described:
        click.echo(f"{d['name']}  [{d['family']}]  {d['origin']}")
        click.echo(f"    flag={d['flag'] or '(extra_strategies)'} min_band={d['min_band']} "
                   f"fast path={d['incremental'] or 'none (reference path)'} placeholder={json.dumps(d['placeholder'])}")
