"""Download, verify and unpack pinned sources; assemble per-source deps dirs.

docs/specs/corpus.md §1 (fetch the file the index's JSON listing names and check its sha256, so no
build backend runs; else `pip download --no-deps --no-binary NAME NAME==VER`, never `:all:`), §3.1 step 1 (unpack with `tar --no-same-owner`), §2.2 "No pip is needed in the image"
(unzip pure wheels into one dir, run `PYTHONPATH=<deps>[:src] python3 -m pytest`) and §4 "Leaks"
(no pip/setuptools in the deps dir: they vendor more_itertools and pyparsing).

Cache layout under :func:`cache_root` (git-ignored ``.cache/readbench`` by default, or
``$READBENCH_CACHE``)::

    downloads/<sdist or wheel file>      verified by sha256 before every use
    sources/<name-version>/tree/         pristine unpacked sdist (the tarball's single top dir)
    sources/<name-version>/deps/         unzipped pure wheels (+ optional minimal dist-info)
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import ssl
import subprocess
import sys
import tarfile
import tempfile
import urllib.error
import urllib.parse
import urllib.request
import zipfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from readbench.corpus._sources import SourcesFile, SourceSpec, WheelPin, load_sources

__all__ = [
    "Sha256MismatchError",
    "cache_root",
    "deps_dir",
    "ensure_source",
    "fetch_all",
    "fetch_file",
    "sha256_file",
    "source_tree",
    "verify_sha256",
]


class Sha256MismatchError(ValueError):
    """A downloaded or cached file does not have its pinned sha256."""


def cache_root() -> Path:
    """The corpus cache: ``$READBENCH_CACHE`` if set, else ``<repo root>/.cache/readbench``."""
    env = os.environ.get("READBENCH_CACHE")
    if env:
        return Path(env).expanduser().resolve()
    return Path(__file__).resolve().parents[2] / ".cache" / "readbench"


def validation_dir() -> Path:
    """Recorded mutant validations: ``$READBENCH_VALIDATION`` if set, else ``<repo>/tasks/validation``.

    Each file is one measured outcome (baseline, coverage, or a mutant's failing tests and
    messages), keyed by a hash of the exact file bytes, mutation, test command and the
    environment before ``{deps}`` expansion. They are committed so a cold build re-uses what
    was measured (fast, and byte-reproducible: the messages are the recorded ones); a changed
    input misses and is measured again. ``readbench tasks check`` re-runs the checkers.
    """
    env = os.environ.get("READBENCH_VALIDATION")
    if env:
        return Path(env).expanduser().resolve()
    return Path(__file__).resolve().parents[2] / "tasks" / "validation"


def sha256_file(path: Path) -> str:
    """Hex sha256 of a file's bytes, read in 1 MiB chunks."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def verify_sha256(path: Path, expected: str) -> None:
    """Raise :class:`Sha256MismatchError` unless ``path`` hashes to ``expected``.

    The message names the file, both digests and what to do (delete the file to re-fetch).
    """
    actual = sha256_file(path)
    if actual != expected:
        raise Sha256MismatchError(
            f"sha256 mismatch for {path}: expected {expected}, got {actual}; the file is "
            f"corrupt or not the pinned release (delete it to download again)"
        )


PYPI_SIMPLE = "https://pypi.org/simple"
_unreachable: set[str] = set()  # indexes that did not answer: pip alone is tried for the rest of the run


def _index_download(project: str, filename: str, sha256: str, dest: Path) -> bool:
    """Save ``filename`` of ``project`` into ``dest`` from the index's JSON simple API (PEP 691).

    The listing names each file's URL and sha256, so no build backend runs: pip prepares an
    sdist's metadata in an isolated build env before saving it, 3-14 s of CPU per sdist and about
    40 CPU s of a cold corpus build (docs/specs/corpus.md §1). The index is ``$PIP_INDEX_URL`` or
    PyPI's; ``$PIP_CERT`` is honoured as pip honours it.

    Returns:
        True when the file was saved; False when the index cannot be reached, does not answer
        JSON, does not list ``filename``, or lists another sha256 (the caller then runs pip).
    """
    index = os.environ.get("PIP_INDEX_URL", PYPI_SIMPLE).rstrip("/")
    page = f"{index}/{re.sub(r'[-_.]+', '-', project).lower()}/"
    if not page.startswith(("https://", "http://")) or index in _unreachable:  # file:// indexes: pip reads them
        return False
    context = ssl.create_default_context(cafile=os.environ.get("PIP_CERT") or None)
    try:
        request = urllib.request.Request(page, headers={"Accept": "application/vnd.pypi.simple.v1+json"})  # noqa: S310 (http(s) checked above)
        try:
            with urllib.request.urlopen(request, timeout=20, context=context) as reply:  # noqa: S310
                listing = json.load(reply)
        except urllib.error.HTTPError:  # it answered, without this project
            return False
        except OSError:
            _unreachable.add(index)
            return False
        entry = next((f for f in listing["files"] if f["filename"] == filename), None)
        if entry is None or entry.get("hashes", {}).get("sha256") != sha256:
            return False
        url = urllib.parse.urljoin(page, entry["url"])
        if not url.startswith(("https://", "http://")):
            return False
        with urllib.request.urlopen(url,  # noqa: S310 (http(s) checked above)
                                     timeout=600, context=context) as reply, open(dest / filename, "wb") as out:
            shutil.copyfileobj(reply, out)
    except (OSError, ValueError, KeyError, TypeError):  # URLError is an OSError; bad JSON a ValueError
        (dest / filename).unlink(missing_ok=True)
        return False
    return True


def _pip_download(args: list[str], dest: Path) -> None:
    dest.mkdir(parents=True, exist_ok=True)
    cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "-d", str(dest), *args]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    if proc.returncode != 0:
        raise RuntimeError(f"`{' '.join(cmd)}` failed (exit {proc.returncode}):\n{proc.stderr[-2000:]}")


def fetch_file(
    filename: str, sha256: str, pip_args: list[str], *, downloads: Path | None = None,
    project: str | None = None,
) -> Path:
    """Return the verified cached file ``downloads/<filename>``, downloading it if absent: from the
    index's listing of ``project`` when given (:func:`_index_download`), else (or when that fails)
    with ``pip download``.

    Args:
        filename: the exact file pip saves (sdist or wheel name).
        sha256: pinned hex digest.
        pip_args: arguments after ``pip download --no-deps -d DIR`` (requirement and binary flags).
        downloads: cache dir; default ``cache_root()/downloads``.
        project: the file's PyPI project name, for the index's listing.

    Raises:
        Sha256MismatchError: the cached or downloaded file has another digest.
        RuntimeError: pip failed, or saved no file of that name.
    """
    downloads = downloads or cache_root() / "downloads"
    path = downloads / filename
    if not path.exists():
        with tempfile.TemporaryDirectory(dir=downloads.parent if downloads.parent.exists() else None) as tmp:
            if not (project and _index_download(project, filename, sha256, Path(tmp))):
                _pip_download(pip_args, Path(tmp))
            got = Path(tmp) / filename
            if not got.exists():
                names = sorted(p.name for p in Path(tmp).iterdir())
                raise RuntimeError(f"pip saved {names}, expected {filename!r}")
            verify_sha256(got, sha256)
            downloads.mkdir(parents=True, exist_ok=True)
            shutil.move(str(got), path)
    verify_sha256(path, sha256)
    return path


def _source_dir(spec: SourceSpec) -> Path:
    return cache_root() / "sources" / spec.slug


def _unpack_sdist(archive: Path, dest: Path) -> None:
    """Unpack with `tar --no-same-owner` and move the single top dir to ``dest``."""
    with tarfile.open(archive) as tf:
        tops = {m.name.split("/", 1)[0] for m in tf.getmembers()}
    if len(tops) != 1:
        raise RuntimeError(f"{archive.name}: expected one top-level dir, found {sorted(tops)}")
    staging = dest.parent / (dest.name + ".unpacking")
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir(parents=True)
    subprocess.run(
        ["tar", "--no-same-owner", "-xzf", str(archive), "-C", str(staging)], check=True
    )
    (staging / tops.pop()).rename(dest)
    staging.rmdir()


def _write_dist_info(deps: Path, spec: SourceSpec) -> None:
    # Minimal metadata so importlib.metadata.version(name) works without pip (corpus.md §4).
    dist = deps / f"{spec.name.replace('-', '_')}-{spec.version}.dist-info"
    dist.mkdir(parents=True, exist_ok=True)
    (dist / "METADATA").write_text(
        f"Metadata-Version: 2.1\nName: {spec.name}\nVersion: {spec.version}\n", encoding="utf-8"
    )
    (dist / "INSTALLER").write_text("readbench\n", encoding="utf-8")


def _build_deps(spec: SourceSpec, wheels: list[Path], dest: Path) -> None:
    staging = dest.parent / (dest.name + ".building")
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir(parents=True)
    for whl in wheels:
        with zipfile.ZipFile(whl) as zf:
            zf.extractall(staging)
    if spec.dist_info:
        _write_dist_info(staging, spec)
    leaked = [n for n in ("pip", "setuptools") if (staging / n).exists()]
    if leaked:
        raise RuntimeError(f"deps for {spec.name} contain {leaked}: they vendor corpus code")
    staging.rename(dest)


def _files(spec: SourceSpec, lock: dict[str, WheelPin]) -> list[tuple[str, str, list[str], str]]:
    """(filename, sha256, pip args, project) of the sdist and, unless its deps dir is assembled,
    of every wheel ``spec`` needs (corpus.md §1)."""
    name = spec.name
    out = [(spec.sdist, spec.sha256, ["--no-binary", name, f"{name}=={spec.version}"], name)]
    if (_source_dir(spec) / "deps").exists():  # assembled: its wheels are not needed
        return out
    for wname in spec.wheels:
        pin = lock[wname]
        out.append((pin.filename, pin.sha256, ["--only-binary", ":all:", f"{pin.name}=={pin.version}"], pin.name))
    return out


def fetch_all(specs: list[SourceSpec], lock: dict[str, WheelPin], *, jobs: int = 3) -> None:
    """Download every file the ``specs`` need that is not cached yet, ``jobs`` pip runs at a time.

    Files come from the index's listing (:func:`_index_download`), so the time is the network's,
    and a few at a time overlap the round trips. Every file is verified by :func:`fetch_file`.

    Raises:
        Sha256MismatchError, RuntimeError: the first failure, after every other download has
            finished (each good file is kept in the cache).
    """
    downloads = cache_root() / "downloads"
    todo = {f[0]: f for spec in specs for f in _files(spec, lock) if not (downloads / f[0]).exists()}
    if not todo:
        return
    with ThreadPoolExecutor(max_workers=max(1, min(jobs, len(todo)))) as pool:
        futures = [pool.submit(fetch_file, f, sha, args, project=p) for f, sha, args, p in todo.values()]
    errors = [e for e in (fut.exception() for fut in futures) if e is not None]
    if errors:
        raise errors[0]


def ensure_source(spec: SourceSpec, lock: dict[str, WheelPin]) -> tuple[Path, Path]:
    """Download (if needed), verify, unpack and assemble one source; idempotent.

    Returns:
        (tree, deps): the pristine tree and the deps dir.

    Raises:
        Sha256MismatchError, RuntimeError: see :func:`fetch_file`.
    """
    base = _source_dir(spec)
    tree, deps = base / "tree", base / "deps"
    sdist, *wheels = [fetch_file(f, sha, args, project=p) for f, sha, args, p in _files(spec, lock)]
    if not tree.exists():
        _unpack_sdist(sdist, tree)
    if not deps.exists():
        _build_deps(spec, wheels, deps)
    return tree, deps


def _spec(name: str, sources: SourcesFile | None) -> SourceSpec:
    return (sources or load_sources()).get(name)


def source_tree(name: str, sources: SourcesFile | None = None) -> Path:
    """Pristine unpacked tree of source ``name`` on the host, fetched on first use.

    Raises:
        KeyError: ``name`` is not in sources.toml (message lists the valid names).
    """
    sources = sources or load_sources()
    return ensure_source(_spec(name, sources), sources.wheels)[0]


def deps_dir(name: str, sources: SourcesFile | None = None) -> Path:
    """Deps dir (unzipped pure wheels) of source ``name``, assembled on first use."""
    sources = sources or load_sources()
    return ensure_source(_spec(name, sources), sources.wheels)[1]
