"""readbench.corpus: the task corpus built from pinned upstream sources (docs/specs/corpus.md).

Public API (GitHub issue 2 item 3, issue 6):

- :func:`build` fetches the sources of ``tasks/sources.toml``, generates and validates tasks of
  the seven FAMILIES and writes ``tasks.jsonl`` + ``manifest.json`` (default ``<cache>/corpus``).
- :func:`load_tasks` reads the records back; :data:`FEATURES` is the `datasets` schema of a line;
  :func:`get_task` finds one record by sample id in the corpus the benchmark task reads
  (:func:`corpus_path`).
- :func:`source_tree` / :func:`deps_dir`: the pristine unpacked tree of a source and its dir of
  unzipped pure wheels, so ``PYTHONPATH=<deps>[:src] python3 -m pytest ...`` runs offline.
- :func:`self_check`, :func:`run_check`, :func:`answer_matches`: the checker; :func:`grade`: the one
  grading rule the checker and the benchmark's scorer share.

Importing this package touches neither the network nor the disk.
"""

from __future__ import annotations

import functools
import os
from pathlib import Path

from readbench.corpus._build import BuildResult, build, default_corpus_dir
from readbench.corpus._check import (
    CheckResult,
    SelfCheck,
    answer_matches,
    answers_ok,
    apply_oracle,
    extract_answer,
    grade,
    materialize,
    normalize_answer,
    run_check,
    self_check,
)
from readbench.corpus._fetch import Sha256MismatchError, cache_root
from readbench.corpus._fetch import deps_dir as _deps_dir
from readbench.corpus._fetch import source_tree as _source_tree
from readbench.corpus._records import Check, Mutation, Oracle, Step, TaskRecord, read_jsonl
from readbench.corpus._sources import FAMILIES, load_sources

__all__ = [
    "FAMILIES",
    "FEATURES",
    "GENERATED_SOURCES",
    "BuildResult",
    "Check",
    "CheckResult",
    "Mutation",
    "Oracle",
    "SelfCheck",
    "Sha256MismatchError",
    "Step",
    "TaskRecord",
    "answer_matches",
    "answers_ok",
    "apply_oracle",
    "build",
    "cache_root",
    "corpus_path",
    "default_corpus_dir",
    "deps_dir",
    "extract_answer",
    "get_task",
    "grade",
    "load_sources",
    "load_tasks",
    "materialize",
    "normalize_answer",
    "run_check",
    "self_check",
    "source_tree",
    "task_index",
]

#: Sources made by a generator rather than downloaded: their tree and deps dir are empty dirs
#: and every file the task needs comes from the record's ``files``.
GENERATED_SOURCES = ("logs",)


def _generated_dir(name: str, kind: str) -> Path:
    path = cache_root() / "sources" / name / kind
    path.mkdir(parents=True, exist_ok=True)
    return path


def source_tree(name: str) -> Path:
    """Pristine unpacked tree of source ``name`` (fetched and unpacked on first use).

    ``logs`` (a generated source) gives an empty directory.

    Raises:
        KeyError: unknown source (the message lists the valid names).
        Sha256MismatchError: the cached or downloaded sdist is not the pinned file.
    """
    if name in GENERATED_SOURCES:
        return _generated_dir(name, "tree")
    return _source_tree(name)


def deps_dir(name: str) -> Path:
    """Dir of unzipped pure wheels for source ``name`` (empty for generated sources)."""
    if name in GENERATED_SOURCES:
        return _generated_dir(name, "deps")
    return _deps_dir(name)


def load_tasks(path: Path | str | None = None) -> list[TaskRecord]:
    """Read task records from a ``tasks.jsonl`` (default ``<cache>/corpus/tasks.jsonl``).

    Raises:
        FileNotFoundError: no corpus there; the message says to run ``readbench tasks build``.
    """
    path = Path(path) if path else default_corpus_dir() / "tasks.jsonl"
    if not path.exists():
        raise FileNotFoundError(f"no task corpus at {path}; run `readbench tasks build` first")
    return read_jsonl(path)


def corpus_path() -> str | None:
    """The task JSONL the benchmark task reads: ``$READBENCH_TASKS`` if set, else None (the
    corpus default, ``<cache>/corpus/tasks.jsonl``)."""
    return os.environ.get("READBENCH_TASKS")


@functools.lru_cache(maxsize=4)
def task_index(path: str | None) -> dict[str, TaskRecord]:
    """The records of the corpus at `path` (None: the default) by sample id, read once per path.

    Raises:
        FileNotFoundError: as `load_tasks`.
    """
    return {r.id: r for r in load_tasks(path)}


def get_task(task_id: str) -> TaskRecord:
    """The corpus record of a sample id (``source/family/n``) in the corpus at `corpus_path`.

    Raises:
        KeyError: no such task in the corpus.
        FileNotFoundError: as `load_tasks`.
    """
    index = task_index(corpus_path())
    if task_id not in index:
        raise KeyError(f"task {task_id!r} is not in the corpus ({len(index)} tasks)")
    return index[task_id]


def __getattr__(name: str):
    if name == "FEATURES":  # built lazily: importing datasets costs about a second
        from readbench.corpus import _records

        return _records.FEATURES
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
