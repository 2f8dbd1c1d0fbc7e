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
    if isinstance(value, tuple) and value and isinstance(value[0], tuple):
        return ",".join(f"{k}:{w:g}" for k, w in value)
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
        click.echo("  ".join(str(c).ljust(w) for c, w in zip(row, widths, strict=True)).rstrip())
    click.echo("")
    for p in profiles:
        click.echo(f"{p.name}: {p.summary}")
    for m in mixtures:
        if m:
            weights = ", ".join(f"{n} {w:g}" for n, w in m.weights)
            click.echo(f"{m.name}: {m.summary} ({weights})")


@sim_group.command("calibrate")
@click.option("--profile", "profiles", multiple=True, help="Profile to run (repeatable; default: every plain profile).")
@click.option("--variant", default="stock", show_default=True, help="Read preset of the runs.")
@click.option("--limit", type=click.IntRange(min=1), default=None, help="First N corpus tasks.")
@click.option("--per-family", type=click.IntRange(min=1), default=None, help="First N tasks of each family.")
@click.option("--sandbox", "sandbox_kind", type=click.Choice(["auto", "docker", "local"]), default="auto",
              show_default=True)
@click.option("--log-dir", default="results/calibration", show_default=True, help="inspect log directory.")
@click.option("--json", "as_json", is_flag=True, help="Print the rows as JSON.")
def calibrate_cmd(profiles: tuple[str, ...], variant: str, limit: int | None, per_family: int | None,
                  sandbox_kind: str, log_dir: str, as_json: bool) -> None:
    """Run the corpus once per profile under one read variant and print each profile's
    share of blind reads, reads per file, re-read ratio and success rate."""
    from readbench.read import preset_names
    from readbench.sim.calibrate import run_calibration

    names = list(profiles) or profile_names()
    for name in names:
        if name not in profile_names() + mixture_names():
            raise click.BadParameter(f"unknown sim profile {name!r}", param_hint="--profile")
    if variant not in preset_names():
        raise click.BadParameter(f"unknown read variant {variant!r}", param_hint="--variant")
    rows = run_calibration(names, variant=variant, limit=limit, per_family=per_family,
                           sandbox_kind=sandbox_kind, log_dir=log_dir)
    if as_json:
        click.echo(json.dumps([asdict(r) for r in rows], indent=2))
        return
    click.echo(f"{'profile':<14} {'samples':>7} {'blind share':>11} {'reads/file':>10} {'re-read':>8} {'success':>8}")
    for r in rows:
        click.echo(f"{r.profile:<14} {r.samples:>7} {r.blind_read_share:>11.3f} {r.reads_per_file:>10.2f} "
                   f"{r.reread_ratio:>8.3f} {r.success_rate:>8.3f}")


commands: list[click.Command] = [sim_group]
