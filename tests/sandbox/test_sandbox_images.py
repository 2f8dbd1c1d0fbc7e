"""Image naming, the content digest and the compose file (no Docker needed)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import yaml

from readbench.sandbox.images import (
    compose_for,
    context_digest,
    dockerfile_path,
    image_repository,
    render_compose,
)

COMPOSE_TEXT = """\
services:
  default:
    image: readbench-src-click:0123456789ab
    x-local: true
    init: true
    command: tail -f /dev/null
    network_mode: none
    working_dir: /repo
    cpus: 1.0
    mem_limit: 2g
"""


def test_render_compose_is_the_verified_shape() -> None:
    assert render_compose("readbench-src-click:0123456789ab") == COMPOSE_TEXT


def test_render_compose_has_no_host_mounts_or_networks() -> None:
    svc = yaml.safe_load(render_compose("x:1", cpus=0.5, mem_limit="512m"))["services"]["default"]
    assert sorted(svc) == ["command", "cpus", "image", "init", "mem_limit", "network_mode",
                           "working_dir", "x-local"]
    assert (svc["cpus"], svc["mem_limit"]) == (0.5, "512m")


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [({"image": ""}, "image must be a non-empty reference without spaces, got ''"),
     ({"image": "a b"}, "image must be a non-empty reference without spaces, got 'a b'"),
     ({"image": "x:1", "cpus": 0}, "cpus must be > 0, got 0"),
     ({"image": "x:1", "mem_limit": "2 GB"}, "mem_limit must look like 2g, 512m or 1073741824, got '2 GB'")],
)
def test_render_compose_rejects_bad_input(kwargs: dict, message: str) -> None:
    with pytest.raises(ValueError) as exc:
        render_compose(**kwargs)
    assert str(exc.value) == message


def test_compose_for_writes_once_to_a_stable_path(tmp_path: Path) -> None:
    first = compose_for("readbench-src-click:0123456789ab", tmp_path)
    assert first.parent == tmp_path
    assert first.name.startswith("readbench-src-click_0123456789ab-") and first.suffix == ".yaml"
    assert first.read_text() == COMPOSE_TEXT
    mtime = first.stat().st_mtime_ns
    again = compose_for("readbench-src-click:0123456789ab", tmp_path)
    assert again == first and again.stat().st_mtime_ns == mtime
    assert compose_for("readbench-src-click:0123456789ab", tmp_path, mem_limit="1g") != first


@pytest.mark.parametrize("name", ["more-itertools", "python-dateutil", "sqlalchemy", "stdlib3.11", "a_b"])
def test_image_repository_accepts_source_names(name: str) -> None:
    assert image_repository(name) == f"readbench-src-{name}"


@pytest.mark.parametrize("name", ["Django", "", "-x", "a--b", "a/b", "x:1"])
def test_image_repository_rejects_names_docker_refuses(name: str) -> None:
    with pytest.raises(ValueError, match=f"source name {name!r} cannot be part of a Docker image name"):
        image_repository(name)


def _make(tmp_path: Path) -> tuple[Path, Path]:
    tree, deps = tmp_path / "tree", tmp_path / "deps"
    (tree / "pkg").mkdir(parents=True)
    deps.mkdir()
    (tree / "pkg" / "m.py").write_text("x = 1\n")
    (deps / "pytest.py").write_text("")
    return tree, deps


def test_digest_ignores_timestamps_but_not_bytes_modes_paths_base_or_dockerfile(tmp_path: Path) -> None:
    tree, deps = _make(tmp_path)
    d0 = context_digest(tree, deps, b"FROM x", "sha256:aa")
    os.utime(tree / "pkg" / "m.py", (1, 1))
    assert context_digest(tree, deps, b"FROM x", "sha256:aa") == d0
    # byte code a local-sandbox run writes beside the source and its deps is not part of the image
    for d in (tree / "pkg" / "__pycache__", deps / "__pycache__"):
        d.mkdir()
        (d / "m.cpython-311.pyc").write_bytes(b"\x00pyc")
    assert context_digest(tree, deps, b"FROM x", "sha256:aa") == d0
    assert context_digest(tree, deps, b"FROM y", "sha256:aa") != d0
    assert context_digest(tree, deps, b"FROM x", "sha256:bb") != d0
    (tree / "pkg" / "m.py").write_text("x = 2\n")
    d1 = context_digest(tree, deps, b"FROM x", "sha256:aa")
    assert d1 != d0
    (tree / "pkg" / "m.py").chmod(0o755)
    d2 = context_digest(tree, deps, b"FROM x", "sha256:aa")
    assert d2 != d1
    (tree / "pkg" / "m.py").rename(tree / "pkg" / "n.py")
    assert context_digest(tree, deps, b"FROM x", "sha256:aa") != d2


def test_digest_tells_tree_from_deps(tmp_path: Path) -> None:
    # the same file under repo/ or under deps/ must not collide
    a, b = tmp_path / "a", tmp_path / "b"
    for root in (a, b):
        (root / "t").mkdir(parents=True)
        (root / "d").mkdir()
    (a / "t" / "f.py").write_text("1")
    (b / "d" / "f.py").write_text("1")
    assert context_digest(a / "t", a / "d", b"", "") != context_digest(b / "t", b / "d", b"", "")


def test_digest_names_a_missing_tree(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match=f"tree {tmp_path / 'nope'} does not exist"):
        context_digest(tmp_path / "nope", tmp_path, b"", "")


def test_digest_refuses_special_files(tmp_path: Path) -> None:
    tree, deps = _make(tmp_path)
    os.mkfifo(tree / "pipe")
    with pytest.raises(ValueError, match="pipe: not a regular file, directory or symlink"):
        context_digest(tree, deps, b"", "")


def test_dockerfile_keeps_pip_and_setuptools_out() -> None:
    text = dockerfile_path().read_text()
    assert "ARG BASE=python:3.11-slim" in text
    assert "ENV PYTHONPATH=/opt/readbench/deps" in text
    assert "COPY repo/ /repo/" in text and "COPY deps/ /opt/readbench/deps/" in text
    assert "ensurepip/_bundled" in text and "sys.exit('leak: '" in text
