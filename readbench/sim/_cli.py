"""``readbench sim ...``: the simulated agent's profile table and fit (``sim calibrate`` runs the benchmark
task, so it is contributed to this group by readbench.run._cli)."""

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
    try:
        profiles = [get_profile(name) for name in profile_names()]
        mixtures = [get_mixture(name) for name in mixture_names()]
    except ValueError as ex:  # a malformed user profile file: named, not a traceback (issue 27)
        raise click.ClickException(str(ex)) from None
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
    from readbench.sim.profiles import check_profile_name, profile_names, user_profiles_path

    name = name if name.startswith("sim-") else f"sim-{name}"
    try:
        check_profile_name(name, "--name")
    except ValueError as ex:
        raise click.BadParameter(str(ex).removeprefix("--name: "), param_hint="--name") from None
    try:
        known = profile_names()
    except ValueError as ex:  # a malformed user profile file: named, not a traceback (issue 27)
        raise click.ClickException(str(ex)) from None
    if base not in known:
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
    target = Path(out_path) if out_path is not None else user_profiles_path()
    try:  # the fit is printed whether or not it could be saved (it may have taken minutes)
        path: Path | None = write_profile(result, out_path)
        failure = ""
    except ValueError as ex:
        path, failure = None, str(ex)
    except OSError as ex:  # name the part of the path that failed (`afile` in afile/sub.toml)
        culprit = f"{ex.filename}: " if ex.filename and Path(ex.filename) in target.parents else ""
        path, failure = None, f"cannot write {target}: {culprit}{ex.strerror or ex}; nothing written"
    if as_json:
        click.echo(json.dumps({"profile": name, "path": str(path) if path else None, "evidence": result.evidence,
                               "tool_mix": result.tool_mix,
                               "knobs": [asdict(k) for k in result.knobs]}, indent=2, default=list))
        if failure:
            raise click.ClickException(f"{failure} (the fit above was not saved)")
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
    if failure:
        raise click.ClickException(f"{failure} (the fit above was not saved)")
    where = "" if out_path is None or Path(out_path) == user_profiles_path() else \
        f" (set READBENCH_PROFILES={path} to use it)"
    click.echo(f"wrote {name} to {path}; run it as readbench/{name}{where}")
