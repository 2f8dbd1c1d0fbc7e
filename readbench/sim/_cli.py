"""``readbench sim ...``: the simulated agent's profile table (and calibration, readbench.sim.calibrate)."""

from __future__ import annotations

import json
from dataclasses import asdict

import click

from readbench.sim.profiles import KNOB_NAMES, get_mixture, get_profile, knob_docs, mixture_names, profile_names


@click.group("sim")
def sim_group() -> None:
    """The embedded simulated agent (model ``readbench/<profile>``)."""


def _cell(value: object) -> str:
    if isinstance(value, tuple):
        return f"{value[0]}-{value[1]}"
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)


@sim_group.command("profiles")
@click.option("--json", "as_json", is_flag=True, help="Print the table as JSON (profiles, mixtures, knob docs).")
def profiles_cmd(as_json: bool) -> None:
    """Print the behaviour profiles: one column per profile, one row per knob, with its evidence."""
    profiles = [get_profile(name) for name in profile_names()]
    mixtures = [get_mixture(name) for name in mixture_names()]
    if as_json:
        click.echo(json.dumps({
            "profiles": {p.name: asdict(p) for p in profiles},
            "mixtures": {m.name: {"summary": m.summary, "weights": dict(m.weights)} for m in mixtures if m},
            "knobs": [asdict(d) for d in knob_docs()],
        }, indent=2))
        return
    header = ["knob", *(p.name for p in profiles), "unit", "evidence"]
    docs = {d.name: d for d in knob_docs()}
    rows = [[k, *(_cell(getattr(p, k)) for p in profiles), docs[k].unit, docs[k].evidence] for k in KNOB_NAMES]
    widths = [max(len(str(r[i])) for r in [header, *rows]) for i in range(len(header))]
    for row in [header, ["-" * w for w in widths], *rows]:
        click.echo("  ".join(str(c).ljust(w) for c, w in zip(row, widths)).rstrip())
    click.echo("")
    for p in profiles:
        click.echo(f"{p.name}: {p.summary}")
    for m in mixtures:
        if m:
            weights = ", ".join(f"{n} {w:g}" for n, w in m.weights)
            click.echo(f"{m.name}: {m.summary} ({weights})")


commands: list[click.Command] = [sim_group]
