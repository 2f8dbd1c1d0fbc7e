"""build_source_image on a real engine: content-addressed tags, no rebuild, no pip in the image."""

from __future__ import annotations

import subprocess
import time

import pytest

from readbench.sandbox.images import build_source_image


def run_in(tag: str, script: str) -> str:
    return subprocess.run(["docker", "run", "--rm", "--network", "none", tag, "bash", "-c", script],
                          capture_output=True, text=True, check=True).stdout


@pytest.mark.docker
def test_same_inputs_reuse_the_tag_and_changed_bytes_give_a_new_one(offline_base: str, tiny_repo) -> None:
    tree, deps = tiny_repo
    tag = build_source_image("img-tiny", tree, deps, offline_base)
    assert tag.startswith("readbench-src-img-tiny:") and len(tag.split(":")[1]) == 12
    t0 = time.monotonic()
    assert build_source_image("img-tiny", tree, deps, offline_base) == tag
    assert time.monotonic() - t0 < 5.0  # hashing only, no build
    (tree / "pkg" / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    changed = build_source_image("img-tiny", tree, deps, offline_base)
    assert changed != tag
    assert run_in(changed, "cat /repo/pkg/calc.py") == "def add(a, b):\n    return a - b\n"


@pytest.mark.docker
def test_image_layout_owner_and_no_installer(offline_base: str, tiny_repo) -> None:
    tree, deps = tiny_repo
    (deps / "iniconfig").mkdir()
    (deps / "iniconfig" / "__init__.py").write_text("VERSION = '2.1'\n")
    tag = build_source_image("img-layout", tree, deps, offline_base)
    out = run_in(tag, "stat -c '%U %n' /repo/pkg/calc.py /opt/readbench/deps/iniconfig/__init__.py; "
                      "cd /repo && python3 -c 'import iniconfig; print(iniconfig.VERSION)'; "
                      "command -v pip pip3 rg git; ls -d /usr/lib/python3*/ensurepip/_bundled 2>/dev/null | wc -l")
    assert out == ("root /repo/pkg/calc.py\nroot /opt/readbench/deps/iniconfig/__init__.py\n2.1\n"
                   "/usr/bin/rg\n/usr/bin/git\n0\n")


@pytest.mark.docker
def test_missing_base_without_registry_says_what_to_run(docker_engine: str, tiny_repo) -> None:
    tree, deps = tiny_repo
    # a loopback registry on a closed port: the pull fails at once and sends nothing off the machine
    with pytest.raises(RuntimeError, match=r"base image 'localhost:1/readbench-no-such-base:0' is not present locally and "
                                           r"could not be pulled .*run `sudo sandboxes/build-base-image.sh`"):
        build_source_image("img-nobase", tree, deps, "localhost:1/readbench-no-such-base:0")


@pytest.mark.docker
def test_image_for_source_takes_paths_from_the_corpus(offline_base: str, tiny_repo, monkeypatch) -> None:
    import readbench.corpus
    from readbench.sandbox.images import image_for_source

    tree, deps = tiny_repo
    monkeypatch.setattr(readbench.corpus, "source_tree", lambda name: tree, raising=False)
    monkeypatch.setattr(readbench.corpus, "deps_dir", lambda name: deps, raising=False)
    image_for_source.cache_clear()
    try:
        assert image_for_source("img-tiny", offline_base) == build_source_image("img-tiny", tree, deps, offline_base)
    finally:
        image_for_source.cache_clear()
