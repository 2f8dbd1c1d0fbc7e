"""``readbench sim ...``: the simulated agent's profile table (and calibration, readbench.sim.calibrate)."""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path

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
        click.echo(f"{p.name}: {p.summary}" + (f" [{p.evidence}]" if p.evidence else ""))
    for m in mixtures:
        if m:
            weights = ", ".join(f"{n} {w:g}" for n, w in m.weights)
            click.echo(f"{m.name}: {m.summary} ({weights})")


@sim_group.command("calibrate")
@click.option("--profile", "profiles", multiple=True, help="Profile to run (repeatable; default: every plain profile).")
@click.option("--against", "against", multiple=True, type=click.Path(exists=True),
              help="Recorded sessions (files or dirs, repeatable): compare the profile's reading shape with theirs.")
@click.option("--variant", default=None, help="Read preset of the runs (default: stock; with --against, the "
              "recorded harness's preset: pi -> stock, claude-code -> claude-code).")
@click.option("--families", default=None, help="Comma-separated corpus families (with --against default: longsession).")
@click.option("--limit", type=click.IntRange(min=1), default=None, help="First N corpus tasks.")
@click.option("--per-family", type=click.IntRange(min=1), default=None, help="First N tasks of each family.")
@click.option("--max-turns", type=click.IntRange(1, 1000), default=600, show_default=True,
              help="Model calls per sample (with --against).")
@click.option("--sandbox", "sandbox_kind", type=click.Choice(["auto", "docker", "local"]), default="auto",
              show_default=True)
@click.option("--log-dir", default="results/calibration", show_default=True, help="inspect log directory.")
@click.option("--json", "as_json", is_flag=True, help="Print the rows as JSON.")
def calibrate_cmd(profiles: tuple[str, ...], against: tuple[str, ...], variant: str | None, families: str | None,
                  limit: int | None, per_family: int | None, max_turns: int, sandbox_kind: str, log_dir: str,
                  as_json: bool) -> None:
    """Run the corpus once per profile under one read variant and print each profile's
    share of blind reads, reads per file, re-read ratio and success rate; with --against,
    run one profile and print its reading shape beside the recorded sessions' (goal: within 10 %)."""
    from readbench.read import preset_names
    from readbench.sim.calibrate import calibrate_against, run_calibration

    names = list(profiles) or profile_names()
    for name in names:
        if name not in profile_names() + mixture_names():
            raise click.BadParameter(f"unknown sim profile {name!r}", param_hint="--profile")
    if variant is not None and variant not in preset_names():
        raise click.BadParameter(f"unknown read variant {variant!r}", param_hint="--variant")
    fams = [f for f in families.split(",") if f] if families else None
    if against:
        if len(profiles) != 1:
            raise click.BadParameter("--against compares exactly one --profile", param_hint="--profile")
        try:
            used, recorded, simulated, rows = calibrate_against(
                profiles[0], list(against), variant=variant, families=fams, limit=limit, per_family=per_family,
                sandbox_kind=sandbox_kind, log_dir=log_dir, max_turns=max_turns)
        except ValueError as ex:
            raise click.ClickException(str(ex))
        if as_json:
            click.echo(json.dumps({"variant": used, "recorded": asdict(recorded), "simulated": asdict(simulated),
                                   "rows": [asdict(r) for r in rows]}, indent=2))
            return
        click.echo(f"{profiles[0]} under {used}: {simulated.sessions} corpus samples ({simulated.calls} calls, "
                   f"{simulated.prompts} prompts) vs {recorded.sessions} recorded sessions ({recorded.calls} calls, "
                   f"{recorded.prompts} prompts)")
        click.echo(f"{'metric':<18} {'recorded':>9} {'simulated':>9} {'diff':>7}  within 10%")
        for r in rows:
            click.echo(f"{r.metric:<18} {r.recorded:>9.3f} {r.simulated:>9.3f} {r.relative_difference:>+7.0%}  "
                       + ("yes" if r.within else f"no: {r.why}"))
        return
    rows = run_calibration(names, variant=variant or "stock", limit=limit, per_family=per_family,
                           sandbox_kind=sandbox_kind, log_dir=log_dir, families=fams)
    if as_json:
        click.echo(json.dumps([asdict(r) for r in rows], indent=2))
        return
    click.echo(f"{'profile':<14} {'samples':>7} {'blind share':>11} {'reads/file':>10} {'re-read':>8} {'success':>8}")
    for r in rows:
        click.echo(f"{r.profile:<14} {r.samples:>7} {r.blind_read_share:>11.3f} {r.reads_per_file:>10.2f} "
                   f"{r.reread_ratio:>8.3f} {r.success_rate:>8.3f}")


def _fmt(value: object) -> str:
    if isinstance(value, tuple) and value and isinstance(value[0], tuple) and isinstance(value[0][0], str):
        return ",".join(f"{k}:{w:.3g}" for k, w in value)
    if isinstance(value, tuple) and value and isinstance(value[0], tuple):
        return " ".join(f"[{a:.3g}, {b:.3g}]" for a, b in value)
    if isinstance(value, tuple) and len(value) == 2 and all(isinstance(v, (int, float)) for v in value):
        return f"[{value[0]:.4g}, {value[1]:.4g}]"
    return f"{value:.4g}" if isinstance(value, float) else str(value)


@sim_group.command("fit")
@click.argument("sessions", nargs=-1, required=True, type=click.Path(exists=True))
@click.option("--name", required=True, help="Profile name; runs as readbench/sim-NAME ('sim-' is added if missing).")
@click.option("--base", default="sim-diligent", show_default=True, help="Profile whose values unidentified knobs keep.")
@click.option("--seed", type=int, default=0, show_default=True, help="Bootstrap seed (a fit is deterministic per seed).")
@click.option("--bootstrap", type=click.IntRange(min=1), default=200, show_default=True, help="Bootstrap resamples.")
@click.option("--min-observations", type=click.IntRange(min=1), default=5, show_default=True,
              help="Fewer observations leave a knob at the base's value.")
@click.option("--out", "out_path", type=click.Path(dir_okay=False), default=None,
              help="Profile file to write (default: $READBENCH_PROFILES, else ~/.config/readbench/profiles.toml).")
@click.option("--json", "as_json", is_flag=True, help="Print the fit as JSON.")
def fit_cmd(sessions: tuple[str, ...], name: str, base: str, seed: int, bootstrap: int, min_observations: int,
            out_path: str | None, as_json: bool) -> None:
    """Fit a profile's knobs from recorded sessions (pi, Claude Code, Codex, inspect logs; files or
    directories) and add it to the user profile file, with a 95 % bootstrap interval per knob."""
    from readbench.sessions import ImportFailure, load_sessions
    from readbench.sim.fit import fit_profile, write_profile
    from readbench.sim.profiles import profile_names, user_profiles_path

    name = name if name.startswith("sim-") else f"sim-{name}"
    if base not in profile_names():
        raise click.BadParameter(f"unknown profile {base!r}", param_hint="--base")
    loaded = []
    for item in load_sessions(sessions):
        if isinstance(item, ImportFailure):
            click.echo(f"skipped {item.path}: {item.reason}", err=True)
        elif item.calls:
            loaded.append(item)
    if not loaded:
        raise click.ClickException("no session with model calls was imported; nothing fitted")
    result = fit_profile(loaded, name, base=base, seed=seed, bootstrap=bootstrap, min_observations=min_observations)
    try:
        path = write_profile(result, out_path)
    except ValueError as ex:
        raise click.ClickException(str(ex))
    if as_json:
        click.echo(json.dumps({"profile": name, "path": str(path), "evidence": result.evidence,
                               "tool_mix": result.tool_mix,
                               "knobs": [asdict(k) for k in result.knobs]}, indent=2, default=list))
        return
    click.echo(f"{name}: {result.evidence}")
    header = ("knob", "value", "95% interval", "obs", "source")
    rows = [(k.knob, _fmt(k.value), _fmt(k.interval) if k.interval is not None else "-", str(k.observations),
             k.note) for k in result.knobs]
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(4)]
    for row in [header, *rows]:
        click.echo("  ".join(c.ljust(w) for c, w in zip(row[:4], widths)) + "  " + row[4])
    mix = ", ".join(f"{k} {v:.2f}" for k, v in result.tool_mix.items())
    click.echo(f"tool mix of all calls: {mix}")
    unidentified = [k.knob for k in result.knobs if not k.identified]
    click.echo(f"kept defaults ({base}): {', '.join(unidentified) or 'none'}")
    where = "" if out_path is None or Path(out_path) == user_profiles_path() else \
        f" (set READBENCH_PROFILES={path} to use it)"
    click.echo(f"wrote {name} to {path}; run it as readbench/{name}{where}")


commands: list[click.Command] = [sim_group]
