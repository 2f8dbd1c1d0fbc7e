"""Build the corpus: fetch sources, generate and validate tasks, write JSONL + manifest.

Output (default ``<cache>/corpus/``): ``tasks.jsonl`` (records in recipe order: sources in
`sources.toml` order, targets in order, families in FAMILIES order; logs last) and
``manifest.json`` (pins, per-file sha256, counts, the JSONL sha256). Timings and kill statistics
go to ``build_log.json`` so the manifest stays byte-reproducible.
"""

from __future__ import annotations

import hashlib
import json
import random
import shutil
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from readbench.corpus._assemble import bugfix_record, log_record, question_record, session_record
from readbench.corpus._bugfix import TargetRunner
from readbench.corpus._fetch import cache_root, ensure_source, fetch_all, sha256_file, validation_dir
from readbench.corpus._inputs import build_key, unchanged, write_key
from readbench.corpus._logs import LOG_KINDS, generate_log
from readbench.corpus._long import BUGS_PER_SESSION, chain_bugs, longsession_record, pick_chains, validate_chain
from readbench.corpus._questions import locate_questions, wholefile_questions
from readbench.corpus._records import TaskRecord, read_jsonl, write_jsonl
from readbench.corpus._sources import FAMILIES, SourcesFile, default_sources_path, load_sources
from readbench.corpus._testrun import expand_env

__all__ = ["GENERATOR_VERSION", "BuildResult", "build", "default_corpus_dir"]

#: Bump when a generator changes its output for the same recipe and seed.
GENERATOR_VERSION = "4"
LOG_PATH = "logs/service.log"


@dataclass(frozen=True)
class BuildResult:
    """What :func:`build` wrote.

    Attributes:
        jsonl: path of tasks.jsonl.
        manifest: path of manifest.json.
        records: the records written.
        seconds: wall time of the build.
        kill_stats: ``source:file`` -> mutant status -> count (mutants tried this build).
    """

    jsonl: Path
    manifest: Path
    records: tuple[TaskRecord, ...]
    seconds: float
    kill_stats: dict[str, dict[str, int]]


def default_corpus_dir() -> Path:
    """``<cache>/corpus``: where :func:`build` writes and :func:`load_tasks` reads by default."""
    return cache_root() / "corpus"


def _min_line(lines: int) -> int:
    # "deep in a big file": past line 2000 in files over 2,500 lines, else past the middle.
    return 2000 if lines > 2500 else lines // 2


def _bounds(lines: int) -> tuple[int, ...]:
    return (1000, 2000) if lines > 2000 else (lines // 3, 2 * lines // 3)


def _fix_family_ok(family: str, lines: int) -> bool:
    return (family == "bugfix" and lines > 2000) or (family == "midsize" and 1000 <= lines <= 2000) \
        or family in ("session", "longsession")


def build(
    sources: list[str] | None = None,
    families: list[str] | None = None,
    seed: int | None = None,
    *,
    sources_path: Path | None = None,
    out_dir: Path | None = None,
    jobs: int = 2,
    log: Callable[[str], None] = print,
    force: bool = False,
) -> BuildResult:
    """Build (or rebuild from cache) the task corpus.

    Args:
        sources: source names to include (``logs`` selects the generated logs); None = all.
        families: families to include; None = all of FAMILIES.
        seed: overrides ``[settings] seed`` of sources.toml.
        sources_path: recipe file; default ``tasks/sources.toml``.
        out_dir: output dir; default :func:`default_corpus_dir`.
        jobs: parallel test workers per target.
        log: progress sink, one line per call.
        force: build and validate even when the corpus in `out_dir` was built from the same
            inputs (`readbench.corpus._inputs.build_key`); by default such a corpus is re-used
            as it is (its records loaded, nothing re-validated: `seconds` is the check's time,
            `kill_stats` empty).

    Returns:
        BuildResult; the same recipe, seed and selection give byte-identical tasks.jsonl.

    Raises:
        KeyError: an unknown source name. ValueError: an unknown family, or a fix family on a
        file of the wrong size. RuntimeError: a download or a baseline test run failed.
    """
    t0 = time.monotonic()
    recipe: SourcesFile = load_sources(sources_path)
    seed = recipe.seed if seed is None else seed
    fams = tuple(families or FAMILIES)
    bad = [f for f in fams if f not in FAMILIES]
    if bad:
        raise ValueError(f"unknown families {bad}; valid: {', '.join(FAMILIES)}")
    names = [s.name for s in recipe.sources] + ["logs"]
    for n in sources or []:
        if n not in names:
            raise KeyError(f"unknown source {n!r}; valid: {', '.join(names)}")
    selected = [s for s in recipe.sources if sources is None or s.name in sources]
    out_dir = out_dir or default_corpus_dir()
    key = build_key(sources_path or default_sources_path(), seed, sources, fams, GENERATOR_VERSION, validation_dir())
    fetch_all(selected, recipe.wheels)  # a cold cache's downloads, several at a time
    if not force and unchanged(out_dir, key):
        for spec in selected:  # the source trees the tasks run in are still needed (fetched when gone)
            ensure_source(spec, recipe.wheels)
        cached = tuple(read_jsonl(out_dir / "tasks.jsonl"))
        seconds = time.monotonic() - t0
        log(f"corpus unchanged (inputs sha256 {key[:12]}): re-using {len(cached)} tasks in {out_dir / 'tasks.jsonl'} "
            "without re-validating (--force rebuilds)")
        return BuildResult(out_dir / "tasks.jsonl", out_dir / "manifest.json", cached, seconds, {})
    records: list[TaskRecord] = []
    kill_stats: dict[str, dict[str, int]] = {}
    skipped: dict[str, str] = {}
    manifest_sources = {}
    rotation = {"locate": 0, "wholefile": 0}  # balances question kinds across files
    for spec in selected:
        tree, deps = ensure_source(spec, recipe.wheels)
        log(f"source {spec.slug}: tree {tree}")
        env = spec.env
        counters: dict[str, int] = {}
        files_sha = {}

        def next_id(family: str) -> str:
            n = counters.get(family, 0)
            counters[family] = n + 1
            return f"{spec.name}/{family}/{n}"

        # Work copies live outside the repo: pytest looks for its config upward from the tests,
        # and readbench's own pyproject.toml would otherwise become the rootdir/inifile.
        work = Path(tempfile.mkdtemp(prefix=f"readbench-{spec.slug}-"))
        try:
            for target in spec.targets:
                data = (tree / target.file).read_bytes()
                text = data.decode("utf-8")
                lines = text.count("\n")
                files_sha[target.file] = hashlib.sha256(data).hexdigest()
                rng_of = lambda fam: random.Random(f"{spec.name}:{target.file}:{seed}:{fam}")  # noqa: E731
                want = {f: n for f, n in target.tasks.items() if f in fams and n > 0}
                for fam in want:
                    if fam in ("bugfix", "midsize", "longsession") and not _fix_family_ok(fam, lines):
                        raise ValueError(f"{spec.name}:{target.file} has {lines} lines: not a {fam} target")
                if "locate" in want:
                    qs = locate_questions(text, target.file, want["locate"], rng_of("locate"),
                                          _min_line(lines), start=rotation["locate"])
                    rotation["locate"] += len(qs)
                    for q in qs:
                        records.append(question_record(task_id=next_id("locate"), family="locate", source=spec.name,
                                                       version=spec.version, file=target.file, text=text, q=q))
                if "wholefile" in want:
                    qs = wholefile_questions(text, target.file, want["wholefile"], rng_of("wholefile"),
                                             start=rotation["wholefile"])
                    rotation["wholefile"] += len(qs)
                    for q in qs:
                        records.append(question_record(task_id=next_id("wholefile"), family="wholefile", source=spec.name,
                                                       version=spec.version, file=target.file, text=text, q=q))
                n_fix = sum(want.get(f, 0) for f in ("bugfix", "midsize"))
                n_session = want.get("session", 0)
                n_long = want.get("longsession", 0)
                if not (n_fix or n_session or n_long):
                    continue
                test_cmd = spec.test_cmd(target)
                assert target.test_args is not None  # test_cmd refused None
                runner = TargetRunner(
                    tree, target.file, spec.pytest_cmd, target.test_args, expand_env(env, deps),
                    target.timeout_seconds, validation_dir() / spec.slug,
                    work, jobs=jobs, log=log, key_env=env)
                try:
                    base = runner.baseline()
                    log(f"  {target.file}: {lines} lines, baseline {base:.1f} s")
                    sites, callers = runner.candidate_sites(
                        random.Random(f"{spec.name}:{target.file}:{seed}"), _bounds(lines))
                except RuntimeError as exc:  # a broken checker loses this target's fix tasks only
                    log(f"  SKIP fix tasks of {spec.name}:{target.file}: {exc}")
                    skipped[f"{spec.name}:{target.file}"] = str(exc)[:2000]
                    continue
                # long sessions take mutants after the others' (the kept list only grows at its end)
                n_long_mutants = n_long * (BUGS_PER_SESSION + 1)
                kept = runner.select(sites, callers, n_fix + n_session + n_long_mutants)
                kill_stats[f"{spec.name}:{target.file}"] = dict(runner.stats)
                timeout = round(min(target.timeout_seconds, 3 * base + 10))
                fix_family = "bugfix" if lines > 2000 else "midsize"
                for site, outcome in kept[:n_fix]:
                    records.append(bugfix_record(
                        task_id=next_id(fix_family), family=fix_family, source=spec.name, version=spec.version,
                        file=target.file, pristine=data, site=site, failed=outcome.failed,
                        messages=outcome.messages, test_cmd=test_cmd, env=env, timeout_seconds=timeout))
                srng = rng_of("session")
                for site, outcome in kept[n_fix:n_fix + n_session]:
                    records.append(session_record(
                        task_id=next_id("session"), source=spec.name, version=spec.version, file=target.file,
                        pristine=data, site=site, failed=outcome.failed, messages=outcome.messages,
                        test_cmd=test_cmd, env=env, timeout_seconds=timeout, rng=srng,
                        min_line=_min_line(lines)))
                if len(kept) < n_fix + n_session:
                    log(f"  WARNING {target.file}: only {len(kept)} of {n_fix + n_session} mutants killed")
                if n_long:
                    records.extend(_long_records(spec, target, tree, data, runner, kept[n_fix + n_session:],
                                                 callers, n_long, timeout, rng_of("longsession"), next_id, log))
        finally:
            shutil.rmtree(work, ignore_errors=True)
        manifest_sources[spec.name] = {
            "version": spec.version, "sdist": spec.sdist, "sha256": spec.sha256,
            "wheels": {w: recipe.wheels[w].sha256 for w in spec.wheels}, "files": files_sha,
        }
    if "log" in fams and (sources is None or "logs" in sources) and recipe.log_tasks:
        records.extend(_log_records(recipe, seed))
    records.sort(key=lambda r: (_order(r, recipe), r.id))
    jsonl = out_dir / "tasks.jsonl"
    write_jsonl(records, jsonl)
    manifest = _manifest(records, manifest_sources, seed, jsonl)
    (out_dir / "manifest.json").write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n")
    seconds = time.monotonic() - t0
    (out_dir / "build_log.json").write_text(
        json.dumps({"seconds": round(seconds, 1), "kill_stats": kill_stats, "skipped": skipped}, indent=2, sort_keys=True) + "\n")
    # last (an interrupted build leaves no key, so the next one builds again), and over the
    # validations as this build left them (it records what it measured)
    write_key(out_dir, build_key(sources_path or default_sources_path(), seed, sources, fams, GENERATOR_VERSION,
                                 validation_dir()))
    log(f"wrote {len(records)} tasks to {jsonl} in {seconds:.0f} s")
    return BuildResult(jsonl, out_dir / "manifest.json", tuple(records), seconds, kill_stats)


def _long_records(spec, target, tree: Path, data: bytes, runner: TargetRunner, pool, callers, n_long: int,
                  timeout: float, rng: random.Random, next_id, log) -> list[TaskRecord]:
    """``n_long`` long-session tasks of one target (readbench.corpus._long), fewer when the killed
    mutants do not form enough independent, validated chains (logged)."""
    questions = {}
    for other in spec.targets:
        if other.file != target.file:
            text = (tree / other.file).read_text(encoding="utf-8")
            questions[other.file] = text
    min_lines = {path: _min_line(text.count("\n")) for path, text in questions.items()}
    out: list[TaskRecord] = []
    for group in pick_chains(pool, callers, n_long * 2):  # spare groups stand in for invalid chains
        if len(out) == n_long:
            break
        chains = chain_bugs(group, spec.pytest_cmd)
        if not validate_chain(runner, chains):
            continue
        rec = longsession_record(
            task_id=f"{spec.name}/longsession/{len(out)}", source=spec.name, version=spec.version,
            file=target.file, pristine=data, chains=chains, question_files=questions,
            full_test_cmd=spec.test_cmd(target), env=spec.env, timeout_seconds=timeout, rng=rng,
            min_line_of=min_lines)
        if rec is not None:
            next_id("longsession")
            out.append(rec)
    if len(out) < n_long:
        log(f"  WARNING {target.file}: only {len(out)} of {n_long} long sessions")
    return out


def _order(rec: TaskRecord, recipe: SourcesFile) -> tuple[int, int, int]:
    names = [s.name for s in recipe.sources]
    src = names.index(rec.source) if rec.source in names else len(names)
    fam = FAMILIES.index(rec.family)
    return src, fam, int(rec.id.rsplit("/", 1)[1])


def _log_records(recipe: SourcesFile, seed: int) -> list[TaskRecord]:
    """``recipe.log_tasks`` log tasks: one log per task, kinds round-robin in LOG_KINDS order."""
    out = []
    for n in range(recipe.log_tasks):
        rng = random.Random(f"logs:{seed}:{n}")
        n_lines = rng.randint(recipe.log_min_lines, recipe.log_max_lines)
        text, facts = generate_log(f"logs:{seed}:{n}", n_lines)
        out.append(log_record(task_id=f"logs/log/{n}", path=LOG_PATH, text=text, facts=facts,
                              kind=LOG_KINDS[n % len(LOG_KINDS)], rng=rng))
    return out


def _manifest(records: list[TaskRecord], sources: dict, seed: int, jsonl: Path) -> dict:
    counts: dict[str, dict[str, int]] = {"family": {}, "source": {}}
    for r in records:
        counts["family"][r.family] = counts["family"].get(r.family, 0) + 1
        counts["source"][r.source] = counts["source"].get(r.source, 0) + 1
    return {
        "generator_version": GENERATOR_VERSION, "seed": seed, "sources": sources,
        "tasks": len(records), "counts": counts, "tasks_jsonl_sha256": sha256_file(jsonl),
    }
