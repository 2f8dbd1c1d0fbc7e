"""Fixtures of the forked-design tests: the tiny generated corpus of tests/e2e and a local
sandbox whose directory is the same path for every sample (samples run one at a time).

Why a fixed directory: the system prompt and some tool results hold the sandbox's cwd, and the
local sandbox's random temporary name tokenizes to a different number of o200k tokens per
sample, so two INDEPENDENT runs of one arm already differ in their token columns by a few tokens
(measured: 143,940 vs 143,924 input tokens on more-itertools/bugfix/0). With one fixed path the
runs are reproducible and a forked run's table can be compared with an independent one exactly.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent.parent / "e2e"))

from corpus_fixture import write_corpus

from readbench.corpus import task_index


class _FixedDirectory:
    """Stands in for tempfile.TemporaryDirectory in inspect's local sandbox: always ``path``."""

    path: Path

    def __init__(self, *args: object, **kwargs: object) -> None:
        if self.path.exists():
            raise RuntimeError(f"{self.path} exists: two local sandboxes at once (run with max_samples=1)")
        self.path.mkdir(parents=True)
        self.name = str(self.path)

    def cleanup(self) -> None:
        shutil.rmtree(self.path, ignore_errors=True)


@pytest.fixture()
def tiny_corpus(tmp_path, monkeypatch):
    """The tiny corpus (logs/bugfix/0, logs/locate/0) as the corpus of this test."""
    monkeypatch.setenv("READBENCH_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("READBENCH_TASKS", str(write_corpus(tmp_path)))
    task_index.cache_clear()
    yield tmp_path
    task_index.cache_clear()


@pytest.fixture()
def fixed_sandbox_dir(tmp_path, monkeypatch):
    """Every local sandbox of this test lives at one path (samples must run one at a time)."""
    import inspect_ai.util._sandbox.local as local

    fixed = type("FixedDirectory", (_FixedDirectory,), {"path": tmp_path / "sandbox"})
    monkeypatch.setattr(local.tempfile, "TemporaryDirectory", fixed)
    yield fixed.path
