"""Per-source task images and the compose file inspect's docker sandbox runs them with.

One image per source (docs/specs/inspect-notes.md §5 "Recommendation": bake the repository
into an image, never copy it per sample -- ``Sample(files=dir)`` costs ~0.26 s per file on docker):

- ``/repo``                 the source's pristine tree (host: ``readbench.corpus.source_tree(name)``)
- ``/opt/readbench/deps``   unzipped pure wheels, e.g. pytest (host: ``readbench.corpus.deps_dir(name)``);
  ``ENV PYTHONPATH=/opt/readbench/deps``
- no pip / setuptools (they vendor benchmark sources: docs/specs/corpus.md §4 "Leaks and pitfalls")

Images are built from ``sandboxes/Dockerfile`` through the Docker SDK (no BuildKit/buildx needed)
and tagged ``readbench-src-<name>:<hash12>``, where the hash covers the Dockerfile, the base
image id and every file of the tree and deps dir (path, mode, bytes). An unchanged source is
therefore never rebuilt, and a changed one never reuses a stale image.

The compose file (:func:`render_compose` / :func:`compose_for`) follows the one verified end to
end in docs/specs/inspect-notes.md §4: service ``default``, ``x-local: true`` (never pull),
``init: true``, ``command: tail -f /dev/null``, ``network_mode: none``, ``working_dir: /repo``,
cpu and memory limits, no host mounts.
"""

from __future__ import annotations

import functools
import hashlib
import io
import os
import re
import stat
import tarfile
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import yaml

__all__ = [
    "DEPS_PATH",
    "IMAGE_PREFIX",
    "OFFLINE_BASE",
    "REGISTRY_BASE",
    "REPO_PATH",
    "build_source_image",
    "compose_dir",
    "compose_for",
    "context_digest",
    "default_base",
    "dockerfile_path",
    "image_for_source",
    "image_repository",
    "render_compose",
]

IMAGE_PREFIX = "readbench-src-"
#: made offline by sandboxes/build-base-image.sh (debootstrap bookworm + python3, git, ripgrep)
OFFLINE_BASE = "readbench-base:bookworm"
#: the Dockerfile's default for machines that reach a registry
REGISTRY_BASE = "python:3.11-slim"
REPO_PATH = "/repo"
DEPS_PATH = "/opt/readbench/deps"
_DIGEST_VERSION = b"readbench-image-v1\0"
_NAME_RE = re.compile(r"[a-z0-9]+(?:[._-][a-z0-9]+)*")


def dockerfile_path() -> Path:
    """``sandboxes/Dockerfile`` of this checkout (readbench is installed editable from the repo).

    Raises:
        FileNotFoundError: the checkout has no ``sandboxes/Dockerfile`` (e.g. a wheel install).
    """
    path = Path(__file__).resolve().parents[2] / "sandboxes" / "Dockerfile"
    if not path.is_file():
        raise FileNotFoundError(f"{path} not found: build images from a readbench checkout")
    return path


def image_repository(name: str) -> str:
    """Docker repository name for source ``name``: ``readbench-src-<name>``.

    Raises:
        ValueError: ``name`` is not a valid lower-case Docker name component
            (``[a-z0-9]`` runs separated by one of ``._-``); the message quotes it.
    """
    if not isinstance(name, str) or not _NAME_RE.fullmatch(name):
        raise ValueError(
            f"source name {name!r} cannot be part of a Docker image name "
            "(use lower-case letters, digits and single '.', '_' or '-' separators)"
        )
    return IMAGE_PREFIX + name


def _entries(root: Path, prefix: str) -> Iterator[tuple[str, Path, os.stat_result]]:
    """Yield ``(arcname, path, lstat)`` for ``root`` and everything below it, sorted by arcname.

    Symlinks are not followed. Sockets, FIFOs and devices raise ValueError (they cannot be baked).
    `__pycache__` directories are left out: Python writes them when a local-sandbox run imports
    the source or its deps, and they are derived, so they must not change the image's tag.
    """
    items: list[tuple[str, Path, os.stat_result]] = []
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        dirnames[:] = sorted(d for d in dirnames if d != "__pycache__")
        base = Path(dirpath)
        rel = base.relative_to(root).as_posix()
        items.append((prefix if rel == "." else f"{prefix}/{rel}", base, base.lstat()))
        for fn in sorted(filenames) + [d for d in dirnames if (base / d).is_symlink()]:
            p = base / fn
            st = p.lstat()
            if not (stat.S_ISREG(st.st_mode) or stat.S_ISLNK(st.st_mode)):
                raise ValueError(f"{p}: not a regular file, directory or symlink; cannot bake it into an image")
            items.append((f"{prefix}/{p.relative_to(root).as_posix()}", p, st))
    items.sort(key=lambda t: t[0])
    return iter(items)


def _check_dir(path: Path, what: str) -> Path:
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"{what} {path} does not exist")
    if not path.is_dir():
        raise NotADirectoryError(f"{what} {path} is not a directory")
    return path


def context_digest(tree: Path, deps: Path, dockerfile: bytes, base_id: str) -> str:
    """Hex sha256 over everything that determines a source image.

    Covers, in order: a format version, the Dockerfile bytes, ``base_id`` (the base image's id,
    or its name when it is not present locally), then for every entry of ``repo/`` (= ``tree``)
    and ``deps/`` (= ``deps``) sorted by path: the path, the permission bits, and the file bytes
    or symlink target. Timestamps and owners are ignored.

    Raises:
        FileNotFoundError / NotADirectoryError: ``tree`` or ``deps`` is missing or not a directory.
        ValueError: a special file (socket, FIFO, device) is inside.
    """
    h = hashlib.sha256(_DIGEST_VERSION)
    h.update(hashlib.sha256(dockerfile).digest())
    h.update(base_id.encode() + b"\0")
    for root, prefix in ((_check_dir(tree, "tree"), "repo"), (_check_dir(deps, "deps dir"), "deps")):
        for arcname, path, st in _entries(root, prefix):
            h.update(arcname.encode("utf-8", "surrogateescape") + b"\0")
            h.update(f"{stat.S_IFMT(st.st_mode):o}:{stat.S_IMODE(st.st_mode):o}\0".encode())
            if stat.S_ISLNK(st.st_mode):
                h.update(os.readlink(path).encode("utf-8", "surrogateescape") + b"\0")
            elif stat.S_ISREG(st.st_mode):
                fh = hashlib.sha256()
                with open(path, "rb") as f:
                    for chunk in iter(lambda: f.read(1 << 20), b""):
                        fh.update(chunk)
                h.update(fh.digest())
    return h.hexdigest()


def _write_context(fileobj: Any, tree: Path, deps: Path, dockerfile: bytes) -> None:
    """Write the build context tar (Dockerfile, repo/, deps/) with root-owned members."""

    def owned_by_root(ti: tarfile.TarInfo) -> tarfile.TarInfo:
        ti.uid = ti.gid = 0
        ti.uname = ti.gname = "root"
        return ti

    with tarfile.open(fileobj=fileobj, mode="w", format=tarfile.PAX_FORMAT) as tf:
        info = owned_by_root(tarfile.TarInfo("Dockerfile"))
        info.size, info.mode = len(dockerfile), 0o644
        tf.addfile(info, io.BytesIO(dockerfile))
        for root, prefix in ((tree, "repo"), (deps, "deps")):
            for arcname, path, _st in _entries(root, prefix):
                tf.add(str(path), arcname=arcname, recursive=False, filter=owned_by_root)


def _client() -> Any:
    try:
        import docker
    except ImportError as exc:  # declared in pyproject dependencies; message says what to do
        raise ImportError("the `docker` Python SDK is needed to build images: pip install docker") from exc
    return docker.from_env(timeout=900)


def _image_id(client: Any, ref: str) -> str | None:
    import docker.errors

    try:
        return client.images.get(ref).id
    except docker.errors.ImageNotFound:
        return None


def default_base(client: Any | None = None) -> str:
    """The base image to build on: :data:`OFFLINE_BASE` when present locally, else :data:`REGISTRY_BASE`."""
    client = client or _client()
    return OFFLINE_BASE if _image_id(client, OFFLINE_BASE) else REGISTRY_BASE


def build_source_image(
    name: str, tree: Path, deps: Path, base: str | None = None, *,
    client: Any | None = None, dockerfile: Path | None = None,
) -> str:
    """Build (or find) the image of source ``name`` and return its tag.

    Args:
        name: source name, e.g. ``more-itertools``; becomes ``readbench-src-<name>``.
        tree: host directory baked at ``/repo`` (all files, including any ``.git``).
        deps: host directory baked at ``/opt/readbench/deps`` (may be empty).
        base: base image; None = :func:`default_base` (the offline base when it exists).
        client: a ``docker.DockerClient``; None = ``docker.from_env()``.
        dockerfile: default :func:`dockerfile_path`.

    Returns:
        ``readbench-src-<name>:<first 12 hex of context_digest>``. When an image with that tag
        already exists nothing is built (the digest covers every input).

    Raises:
        ValueError: bad ``name`` (see :func:`image_repository`) or a special file in the inputs.
        FileNotFoundError / NotADirectoryError: missing ``tree``, ``deps`` or Dockerfile.
        RuntimeError: ``base`` is not present locally and pulling it failed (e.g. no registry).
        docker.errors.BuildError: the build failed (its log is attached by the SDK).
        docker.errors.DockerException: no engine answers.
    """
    repository = image_repository(name)
    tree, deps = _check_dir(tree, "tree"), _check_dir(deps, "deps dir")
    dockerfile_bytes = (dockerfile or dockerfile_path()).read_bytes()
    client = client or _client()
    base = base or default_base(client)
    base_id = _image_id(client, base) or base
    tag = f"{repository}:{context_digest(tree, deps, dockerfile_bytes, base_id)[:12]}"
    if _image_id(client, tag):
        return tag
    import docker.errors

    with tempfile.SpooledTemporaryFile(max_size=64 << 20) as ctx:
        _write_context(ctx, tree, deps, dockerfile_bytes)
        ctx.seek(0)
        try:
            client.images.build(
                fileobj=ctx, custom_context=True, tag=tag, buildargs={"BASE": base},
                rm=True, forcerm=True, pull=False,
                # the offline base already has rg and git, so its RUN step needs no network
                network_mode="none" if base == OFFLINE_BASE else None,
                labels={"org.readbench.source": name, "org.readbench.base": base},
            )
        except (docker.errors.BuildError, docker.errors.APIError) as exc:
            if base_id == base:  # the base was not local: the daemon had to pull it
                raise RuntimeError(
                    f"building {tag} failed: base image {base!r} is not present locally and could not be "
                    f"pulled ({exc}); without a registry run `sudo sandboxes/build-base-image.sh` "
                    f"and use base {OFFLINE_BASE!r}"
                ) from exc
            raise
    return tag


@functools.lru_cache(maxsize=None)
def image_for_source(name: str, base: str | None = None) -> str:
    """Tag of the image for corpus source ``name``, building it on first use (memoised per process).

    Takes the host tree and deps dir from ``readbench.corpus`` (``source_tree``/``deps_dir``,
    which fetch the source if needed), then :func:`build_source_image`.

    Raises:
        KeyError: ``name`` is not a corpus source. Others: see :func:`build_source_image`.
    """
    from readbench.corpus import deps_dir, source_tree

    return build_source_image(name, source_tree(name), deps_dir(name), base)


def render_compose(image: str, *, cpus: float = 1.0, mem_limit: str = "2g") -> str:
    """The compose.yaml text for one sandbox running ``image`` (docs/specs/inspect-notes.md §4).

    Args:
        image: an image present on the engine (``x-local: true``: inspect never pulls it).
        cpus: CPU limit in cores (> 0).
        mem_limit: memory limit in Compose syntax, e.g. ``2g``, ``512m``.

    Raises:
        ValueError: empty ``image``, ``cpus`` <= 0, or a malformed ``mem_limit`` (message quotes it).
    """
    if not image or any(c.isspace() for c in image):
        raise ValueError(f"image must be a non-empty reference without spaces, got {image!r}")
    if not cpus > 0:
        raise ValueError(f"cpus must be > 0, got {cpus!r}")
    if not re.fullmatch(r"[0-9]+[bkmg]?", mem_limit):
        raise ValueError(f"mem_limit must look like 2g, 512m or 1073741824, got {mem_limit!r}")
    service = {
        "image": image,
        "x-local": True,  # never pull: the image is built locally
        "init": True,  # tini reaps processes and makes `compose down` fast
        "command": "tail -f /dev/null",  # keep the container up; inspect execs into it
        "network_mode": "none",  # no network at all, not even DNS
        "working_dir": REPO_PATH,
        "cpus": float(cpus),
        "mem_limit": mem_limit,
    }
    return yaml.safe_dump({"services": {"default": service}}, sort_keys=False)


def compose_dir() -> Path:
    """Where compose files are written: ``$READBENCH_CACHE/compose`` or ``<repo>/.cache/readbench/compose``.

    Same cache root convention as ``readbench.corpus`` (git-ignored ``.cache/readbench``).
    """
    env = os.environ.get("READBENCH_CACHE")
    root = Path(env).expanduser().resolve() if env else Path(__file__).resolve().parents[2] / ".cache" / "readbench"
    return root / "compose"


def compose_for(image: str, out_dir: Path | None = None, *, cpus: float = 1.0, mem_limit: str = "2g") -> Path:
    """Write (once) and return the compose file for ``image``; see :func:`render_compose`.

    The file is ``<out_dir>/<image with ':' and '/' replaced by '_'>-<sha256(text)[:8]>.yaml``
    (default ``out_dir`` = :func:`compose_dir`), so equal inputs give the same path and a sample's
    sandbox spec ``("docker", path)`` is stable across runs. Written atomically.

    Raises:
        ValueError: see :func:`render_compose`.
    """
    text = render_compose(image, cpus=cpus, mem_limit=mem_limit)
    out_dir = Path(out_dir) if out_dir is not None else compose_dir()
    slug = re.sub(r"[^A-Za-z0-9._-]", "_", image)
    path = out_dir / f"{slug}-{hashlib.sha256(text.encode()).hexdigest()[:8]}.yaml"
    if not path.is_file() or path.read_text(encoding="utf-8") != text:
        out_dir.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=out_dir, prefix=".compose-", suffix=".yaml")
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, path)
    return path
