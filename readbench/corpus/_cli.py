"""`readbench tasks build|list|check|stats`: thin click wrappers over readbench.corpus."""

from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path

import click

from readbench.corpus._sources import FAMILIES
from readbench.corpus.sizes import size_bucket

__all__ = ["tasks_group"]


def _csv(value: str | None) -> list[str] | None:
    return [v.strip() for v in value.split(",") if v.strip()] if value else None


def _load(path: str | None):
    from readbench.corpus import load_tasks

    try:
        return load_tasks(path)
    except FileNotFoundError as exc:
        raise click.UsageError(str(exc)) from None


@click.group("tasks")
def tasks_group() -> None:
    """Build, list, self-check and count the task corpus (tasks/sources.toml)."""


@tasks_group.command("build")
@click.option("--sources", help="Comma-separated source names (default: all; `logs` = generated logs).")
@click.option("--families", help=f"Comma-separated families (default: all of {', '.join(FAMILIES)}).")
@click.option("--seed", type=int, default=None, help="Override [settings] seed.")
@click.option("--jobs", type=int, default=2, show_default=True, help="Parallel test workers.")
@click.option("--out", type=click.Path(file_okay=False), default=None,
              help="Output dir (default <cache>/corpus).")
@click.option("--force", is_flag=True,
              help="Rebuild and re-validate even when the corpus there was built from the same inputs.")
def build_cmd(sources, families, seed, jobs, out, force) -> None:
    """Download, unpack, generate, validate; write tasks.jsonl + manifest.json (idempotent). A corpus
    built from the same inputs (recipe, seed, selection, generator code, recorded validations) is
    re-used without re-validating it."""
    from readbench.corpus import build

    fams = _csv(families)
    bad = [f for f in fams or [] if f not in FAMILIES]
    if bad:
        raise click.BadParameter(f"unknown families {bad}; valid: {', '.join(FAMILIES)}",
                                 param_hint="--families")
    try:
        res = build(_csv(sources), fams, seed, out_dir=Path(out) if out else None, jobs=jobs,
                    log=lambda line: click.echo(line, err=True), force=force)
    except KeyError as exc:
        raise click.BadParameter(str(exc.args[0]), param_hint="--sources") from None
    counts = Counter(r.family for r in res.records)
    click.echo(f"{len(res.records)} tasks -> {res.jsonl} ({res.seconds:.0f} s); "
               + ", ".join(f"{f} {counts.get(f, 0)}" for f in FAMILIES))


@tasks_group.command("list")
@click.option("--json", "as_json", is_flag=True, help="One JSON object per task.")
@click.option("--path", type=click.Path(dir_okay=False), default=None, help="tasks.jsonl to read.")
def list_cmd(as_json, path) -> None:
    """List tasks, tab-separated under a header row: id, family, source, file, file_lines, target_line.

    ``target_line`` is the 1-based line of the answer or bug in ``file`` (``-``: a whole-file task).
    With ``--json``: one object per task, no header.
    """
    records = _load(path)
    if not as_json:
        click.echo("id\tfamily\tsource\tfile\tfile_lines\ttarget_line")
    for r in records:
        row = {"id": r.id, "family": r.family, "source": r.source, "file": r.file,
               "file_lines": r.file_lines, "target_line": r.target_line}
        if as_json:
            click.echo(json.dumps(row))
        else:
            tl = "-" if r.target_line is None else r.target_line
            click.echo(f"{r.id}\t{r.family}\t{r.source}\t{r.file}\t{r.file_lines}\t{tl}")


@tasks_group.command("check")
@click.argument("ids", nargs=-1, required=True)
@click.option("--path", type=click.Path(dir_okay=False), default=None, help="tasks.jsonl to read.")
def check_cmd(ids, path) -> None:
    """Apply each task's oracle in a temp copy: the checker must pass with it, fail without."""
    from readbench.corpus import deps_dir, self_check, source_tree

    tasks = {t.id: t for t in _load(path)}
    missing = [i for i in ids if i not in tasks]
    if missing:
        raise click.BadParameter(f"unknown task ids {missing}", param_hint="IDS")
    bad = 0
    for tid in ids:
        t = tasks[tid]
        res = self_check(t, source_tree(t.source), deps_dir(t.source))
        bad += not res.ok
        click.echo(f"{'ok  ' if res.ok else 'FAIL'} {tid}: without oracle {res.without.detail or 'no answer'}"
                   f" -> {'pass' if res.without.passed else 'fail'}; with oracle "
                   f"{res.with_oracle.detail} -> {'pass' if res.with_oracle.passed else 'fail'}"
                   + (f"; oracle problems: {'; '.join(res.problems)}" if res.problems else ""))
    if bad:
        sys.exit(1)


@tasks_group.command("stats")
@click.option("--path", type=click.Path(dir_okay=False), default=None, help="tasks.jsonl to read.")
def stats_cmd(path) -> None:
    """Task counts per family, per source and per file-size bucket."""
    recs = _load(path)
    for title, key in (("family", lambda r: r.family), ("source", lambda r: r.source),
                       ("file lines", lambda r: size_bucket(r.file_lines))):
        click.echo(f"{title}:")
        for name, n in sorted(Counter(map(key, recs)).items()):
            click.echo(f"  {name}\t{n}")
    click.echo(f"total\t{len(recs)}")
