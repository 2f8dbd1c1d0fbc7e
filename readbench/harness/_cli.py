"""`readbench agents`: the agents an arm can run, with their pinned releases (GitHub issue 24)."""

from __future__ import annotations

import json

import click

__all__ = ["agents_cmd"]


@click.command("agents")
@click.option("--json", "as_json", is_flag=True, help="Print a JSON list.")
def agents_cmd(as_json: bool) -> None:
    """List the agents a matrix's `agents:` may name: readbench's loop and each real harness at its
    pinned npm version (integrity from the committed lock file)."""
    from readbench.harness.agents import list_agents

    described = [a.describe() for a in list_agents()]
    if as_json:
        click.echo(json.dumps(described, indent=2))
        return
    width = max(len(d["name"]) for d in described)
    for d in described:
        release = f"{d['package']}@{d['version']}" if d["package"] else "(built in)"
        click.echo(f"{d['name']:<{width}}  {release}{'' if d['runnable'] else '  (installable; not run yet)'}")
        click.echo(" " * (width + 2) + f"stock = {d['stock']}; runs: {d['runs']}")
