"""Fixtures for the sandbox tests: skip Docker tests with the engine check's reason.

With ``READBENCH_REQUIRE_DOCKER=1`` (set by .ci/run after provisioning) a missing engine or base
image is a failure, not a skip, so CI cannot go green by silently skipping the Docker path.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from readbench.sandbox.engine import docker_available
from readbench.sandbox.images import OFFLINE_BASE


def _unavailable(reason: str) -> None:
    if os.environ.get("READBENCH_REQUIRE_DOCKER") == "1":
        pytest.fail(f"READBENCH_REQUIRE_DOCKER=1 but {reason}")
    pytest.skip(reason)


@pytest.fixture(scope="session")
def docker_engine() -> str:
    """The engine check's reason string when Docker is usable; skips (or fails in CI) otherwise."""
    ok, why = docker_available()
    if not ok:
        _unavailable(why)
    return why


@pytest.fixture(scope="session")
def offline_base(docker_engine: str) -> str:
    """:data:`OFFLINE_BASE`, which must exist locally (this machine has no image registry)."""
    res = subprocess.run(["docker", "image", "inspect", OFFLINE_BASE], capture_output=True, text=True)
    if res.returncode != 0:
        _unavailable(f"image {OFFLINE_BASE} is missing (run `sudo sandboxes/build-base-image.sh`)")
    return OFFLINE_BASE


@pytest.fixture()
def tiny_repo(tmp_path: Path) -> tuple[Path, Path]:
    """A 3-file repository tree and an empty deps dir: ``(tree, deps)``."""
    tree, deps = tmp_path / "tree", tmp_path / "deps"
    (tree / "pkg").mkdir(parents=True)
    deps.mkdir()
    (tree / "pkg" / "__init__.py").write_text("")
    (tree / "pkg" / "calc.py").write_text("def add(a, b):\n    return a + b\n")
    (tree / "test_calc.py").write_text("from pkg.calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n")
    return tree, deps
