"""Seeded bug injection validated against the project's own tests (docs/specs/corpus.md §3.1).

Pipeline for one target file (steps numbered as in §3.1 "Recommended generator"):

2. Baseline: the target's pytest command passes twice on the pristine tree.
3. Coverage: one run with the ``rb_linecov`` plugin maps each test to the functions of the target
   it calls; sites in functions no test calls, or that run at import time, are dropped.
4. Sites are stratified by depth (deepest stratum first, round-robin) and shuffled within each
   stratum with ``random.Random(f"{pkg}:{file}:{seed}")``; at most one site per function.
5. Each mutant runs the tests that reach its function (timeout 3x baseline + 10 s). It is kept iff
   >= 1 test fails, nothing errors at collection/setup, a second run fails the same set, and after
   restoring the file (sha256 checked) those tests pass again.

Outcomes are cached as JSON under ``<cache>/validation`` keyed by file hash, span and command, so
rebuilds are fast and give the same result.
"""

from __future__ import annotations

import hashlib
import json
import queue
import random
import shutil
import threading
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Callable

from readbench.corpus._mutate import MutationSite, apply_site, find_sites, parses
from readbench.corpus._testrun import TestRun, run_tests

__all__ = ["KILLED", "Outcome", "TargetRunner", "order_sites"]

KILLED = "killed"
_PLUGIN_DIR = Path(__file__).resolve().parent / "pytest_plugin"
_PYTEST_FLAGS = "-rfE --tb=no -q"


@dataclass(frozen=True)
class Outcome:
    """Validation result of one mutant.

    Attributes:
        status: ``killed`` (kept), ``survived``, ``setup_error``, ``timeout``, ``flaky``
            (second run failed another set) or ``revert_failed``.
        failed: failing test ids of the first run (the task's fail_to_pass when killed).
        messages: id -> scrubbed failure message.
        seconds: wall time spent on this mutant.
    """

    status: str
    failed: tuple[str, ...]
    messages: dict[str, str]
    seconds: float


def order_sites(
    sites: list[MutationSite], rng: random.Random, bounds: tuple[int, ...]
) -> list[MutationSite]:
    """Stratify by depth and interleave, deepest stratum first.

    Args:
        sites: candidate sites.
        rng: seeded generator; each stratum is shuffled with it in turn (deepest first).
        bounds: ascending line bounds splitting the strata, e.g. ``(1000, 2000)`` gives
            lines < 1000, 1000-1999 and >= 2000.

    Returns:
        One list taking a site from each non-empty stratum in turn.
    """
    strata: list[list[MutationSite]] = [[] for _ in range(len(bounds) + 1)]
    for s in sites:
        strata[sum(s.line >= b for b in bounds)].append(s)
    strata.reverse()
    for st in strata:
        rng.shuffle(st)
    out: list[MutationSite] = []
    while any(strata):
        for st in strata:
            if st:
                out.append(st.pop())
    return out


def _key(*parts: object) -> str:
    return hashlib.sha256(json.dumps(parts, sort_keys=True).encode()).hexdigest()[:24]


class TargetRunner:
    """Runs baseline, coverage and mutants for one target file of one source.

    Args:
        tree: pristine source tree (never written to; work copies are made under ``work``).
        file: tree-relative target path.
        pytest_cmd: runner prefix, e.g. ``python3 -m pytest -p no:cacheprovider``.
        test_args: what the full checker passes to pytest (``tests/test_more.py``).
        env: checker environment with ``{deps}`` already expanded.
        key_env: the same environment before expansion; cache keys use it, so a recorded
            outcome is found again on any machine and under any cache root (the expanded deps
            path differs between them). Defaults to ``env``.
        timeout_seconds: cap for one run.
        cache: dir for cached JSON outcomes.
        work: scratch dir for the per-worker tree copies.
        jobs: parallel workers (each has its own tree copy).
        log: progress callback taking one line.
    """

    def __init__(self, tree: Path, file: str, pytest_cmd: str, test_args: str,
                 env: dict[str, str], timeout_seconds: float, cache: Path, work: Path,
                 jobs: int = 2, log: Callable[[str], None] = print,
                 key_env: dict[str, str] | None = None) -> None:
        self.tree, self.file, self.pytest_cmd, self.test_args = tree, file, pytest_cmd, test_args
        self.env, self.cap, self.cache, self.work, self.jobs, self.log = (
            env, timeout_seconds, cache, work, max(1, jobs), log)
        self.key_env = env if key_env is None else key_env
        self.pristine = (tree / file).read_bytes()
        self.file_sha = hashlib.sha256(self.pristine).hexdigest()
        self.cache.mkdir(parents=True, exist_ok=True)
        self._copies: queue.Queue[Path] = queue.Queue()
        self._made = 0
        self._lock = threading.Lock()
        self.stats: dict[str, int] = {}
        self.baseline_seconds = 0.0

    # -- workspace copies ----------------------------------------------------------------------
    def _copy(self) -> Path:
        try:
            return self._copies.get_nowait()
        except queue.Empty:
            with self._lock:
                self._made += 1
                dest = self.work / f"w{self._made}"
            shutil.rmtree(dest, ignore_errors=True)
            shutil.copytree(self.tree, dest, symlinks=True)
            return dest

    def _run(self, root: Path, args: str, timeout: float, env: dict[str, str] | None = None) -> TestRun:
        return run_tests(f"{self.pytest_cmd} {_PYTEST_FLAGS}", root, {**self.env, **(env or {})},
                         timeout, args)

    @staticmethod
    def _ids_arg(root: Path, ids: list[str], name: str) -> str:
        """Test ids as pytest arguments; past 20,000 characters, as an ``@file`` (pytest >= 8.2)
        because Linux caps one argv string (the whole ``bash -c`` line) at 128 KiB."""
        args = " ".join(_quote(t) for t in ids)
        if len(args) <= 20_000:
            return args
        return _quote("@" + str(_ids_file(root, ids, name)))

    def _cached(self, name: str, compute: Callable[[], dict]) -> dict:
        path = self.cache / f"{name}.json"
        if path.exists():
            return json.loads(path.read_text(encoding="utf-8"))
        value = compute()
        path.write_text(json.dumps(value, sort_keys=True), encoding="utf-8")
        return value

    # -- steps 2 and 3 -------------------------------------------------------------------------
    def baseline(self) -> float:
        """Run the full command on the pristine tree; return its wall time (s).

        The coverage run (:meth:`coverage`) is the second full run that must pass, so a flaky
        suite fails the build here or there (corpus.md §3.1 step 2).

        Raises:
            RuntimeError: a baseline run fails (the message has the failing ids and output tail).
        """
        def compute() -> dict:
            root = self._copy()
            try:
                times = []
                for _ in range(1):
                    r = self._run(root, self.test_args, self.cap)
                    if not r.passed:
                        raise RuntimeError(
                            f"baseline of {self.file} fails: {r.failed + r.errors} "
                            f"(timeout={r.timed_out})\n{r.output_tail[-1500:]}")
                    times.append(r.duration_seconds)
                return {"seconds": max(times)}
            finally:
                self._copies.put(root)

        got = self._cached(f"baseline-{_key(self.file_sha, self.pytest_cmd, self.test_args, self.key_env)}", compute)
        self.baseline_seconds = got["seconds"]
        return self.baseline_seconds

    def coverage(self) -> dict[str, list[int]]:
        """Test id -> sorted first lines of the target's functions it calls (``<collect>`` too)."""
        def compute() -> dict:
            root = self._copy()
            out = self.work / "linecov.json"
            try:
                env = {
                    "PYTHONPATH": f"{self.env.get('PYTHONPATH', '')}:{_PLUGIN_DIR}".lstrip(":"),
                    "RB_LINECOV_FILE": str((root / self.file).resolve()),
                    "RB_LINECOV_OUT": str(out),
                    "RB_LINECOV_MODE": "func",
                }
                r = run_tests(f"{self.pytest_cmd} -p rb_linecov {_PYTEST_FLAGS}", root,
                              {**self.env, **env}, self.cap * 5, self.test_args)
                if not r.passed or not out.exists():
                    raise RuntimeError(f"coverage run of {self.file} failed\n{r.output_tail[-1500:]}")
                return json.loads(out.read_text(encoding="utf-8"))
            finally:
                self._copies.put(root)

        return self._cached(f"cov-{_key(self.file_sha, self.pytest_cmd, self.test_args, self.key_env)}", compute)

    # -- step 4 and 5 --------------------------------------------------------------------------
    def candidate_sites(self, rng: random.Random, bounds: tuple[int, ...]) -> tuple[list[MutationSite], dict[int, list[str]]]:
        """Covered, non-import-time sites in depth-stratified seeded order, and code line -> tests."""
        cov = self.coverage()
        at_import = set(cov.get("<collect>", []))
        callers: dict[int, list[str]] = {}
        for tid, lines in cov.items():
            if tid == "<collect>":
                continue
            for ln in lines:
                callers.setdefault(ln, []).append(tid)
        sites = [s for s in find_sites(self.pristine, check_syntax=False)
                 if s.code_line in callers and s.code_line not in at_import]
        return order_sites(sites, rng, bounds), callers

    def evaluate(self, site: MutationSite, tests: list[str]) -> Outcome:
        """Validate one mutant against ``tests`` (cached)."""
        timeout = min(self.cap, 3 * self.baseline_seconds + 10)
        name = f"mut-{_key(self.file_sha, site.byte_start, site.byte_end, site.new, self.pytest_cmd, sorted(tests), self.key_env)}"
        d = self._cached(name, lambda: asdict(self._evaluate(site, tests, timeout)))
        return Outcome(d["status"], tuple(d["failed"]), dict(d["messages"]), d["seconds"])

    def _evaluate(self, site: MutationSite, tests: list[str], timeout: float) -> Outcome:
        root = self._copy()
        path = root / self.file
        args = self._ids_arg(root, sorted(tests), "ids")
        spent = 0.0
        try:
            path.write_bytes(apply_site(self.pristine, site))
            r1 = self._run(root, args, timeout)
            spent += r1.duration_seconds
            if r1.timed_out:
                return Outcome("timeout", (), {}, spent)
            if r1.errors:
                return Outcome("setup_error", r1.errors, {}, spent)
            if not r1.failed:
                return Outcome("survived", (), {}, spent)
            r2 = self._run(root, args, timeout)
            spent += r2.duration_seconds
            if r2.failed != r1.failed or r2.errors:
                return Outcome("flaky", r1.failed, r1.messages, spent)
            path.write_bytes(self.pristine)
            if hashlib.sha256(path.read_bytes()).hexdigest() != self.file_sha:
                return Outcome("revert_failed", r1.failed, r1.messages, spent)
            r3 = self._run(root, self._ids_arg(root, list(r1.failed), "failed"), timeout)
            spent += r3.duration_seconds
            if not r3.passed:
                return Outcome("revert_failed", r1.failed, r1.messages, spent)
            msgs = {t: r1.messages.get(t, "") for t in r1.failed}
            return Outcome(KILLED, r1.failed, msgs, spent)
        finally:
            path.write_bytes(self.pristine)
            self._copies.put(root)

    def select(self, sites: list[MutationSite], callers: dict[int, list[str]], want: int,
               max_tries_per_func: int = 3) -> list[tuple[MutationSite, Outcome]]:
        """Evaluate sites in order (``jobs`` at a time) until ``want`` are killed.

        At most one kept mutant per function and at most ``max_tries_per_func`` tries each. A
        site whose function is being evaluated is deferred to the end of the queue. The kept list
        depends only on site order and outcomes, never on timing: results are consumed in
        submission order and submission depends only on consumed results.
        """
        todo = list(sites)
        kept: list[tuple[MutationSite, Outcome]] = []
        kept_funcs: set[str] = set()
        tries: dict[str, int] = {}
        stats: dict[str, int] = {}
        with ThreadPoolExecutor(self.jobs) as pool:
            inflight: list[tuple[MutationSite, Future[Outcome]]] = []
            while len(kept) < want and (todo or inflight):
                deferred = []
                while todo and len(inflight) < self.jobs:
                    s = todo.pop(0)
                    if s.func in kept_funcs or tries.get(s.func, 0) >= max_tries_per_func:
                        continue
                    if not parses(self.pristine, s):
                        stats["syntax_error"] = stats.get("syntax_error", 0) + 1
                        continue
                    if any(f.func == s.func for f, _ in inflight):
                        deferred.append(s)
                        continue
                    tries[s.func] = tries.get(s.func, 0) + 1
                    inflight.append((s, pool.submit(self.evaluate, s, callers[s.code_line])))
                todo.extend(deferred)
                if not inflight:
                    break
                site, fut = inflight.pop(0)
                out = fut.result()
                stats[out.status] = stats.get(out.status, 0) + 1
                if out.status == KILLED and site.func not in kept_funcs:
                    kept.append((site, out))
                    kept_funcs.add(site.func)
            for _, fut in inflight:
                fut.result()  # let in-flight runs finish (their outcomes are cached)
        self.stats = stats
        self.log(f"  {self.file}: mutants tried {sum(stats.values())} {stats}")
        return kept


def _ids_file(root: Path, ids: list[str], name: str) -> Path:
    path = root.parent / f"{root.name}-{name}.txt"
    path.write_text("\n".join(ids) + "\n", encoding="utf-8")
    return path


def _quote(s: str) -> str:
    return "'" + s.replace("'", "'\"'\"'") + "'"
