"""A per-source task image with a real harness in it (GitHub issue 24 item 1).

``readbench-agent-<harness>-<version>:<hash12>`` is built ``FROM`` the source's image
(readbench.sandbox.images) with two more layers: the cached Node.js at ``/opt/readbench/node``
and the pin's ``npm ci`` tree at ``/opt/readbench/agent`` (readbench.agents.install). Nothing is
fetched during the build (``network_mode=none``): the bytes are the ones the lock file's
integrity and the wheel's sha256 were checked on. The tag hashes the source image id, the
Dockerfile, the Node wheel's sha256 and the pin's lock file, so an unchanged input is never
rebuilt.
"""

from __future__ import annotations

import hashlib
import io
import tarfile
import tempfile
from pathlib import Path
from typing import Any

from readbench.harness.agents import Agent

__all__ = ["DOCKERFILE", "agent_image", "agent_repository"]

DOCKERFILE = b"""ARG BASE
FROM ${BASE}
COPY node/ /opt/readbench/node/
COPY agent/ /opt/readbench/agent/
"""


def agent_repository(agent: Agent) -> str:
    """``readbench-agent-<harness>-<version>`` (a valid Docker repository name).

    Raises:
        ValueError: readbench's own loop (it needs no image of its own).
    """
    if agent.harness is None or agent.pin is None:
        raise ValueError(f"agent {agent.name!r} is readbench's own loop: it runs in the source image")
    return f"readbench-agent-{agent.harness.name}-{agent.pin.version}"


def _context(node_dir: Path, pin_dir: Path) -> Any:
    def root(ti: tarfile.TarInfo) -> tarfile.TarInfo:
        ti.uid = ti.gid = 0
        ti.uname = ti.gname = "root"
        return ti

    buf = tempfile.SpooledTemporaryFile(max_size=64 << 20)
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as tf:
        info = root(tarfile.TarInfo("Dockerfile"))
        info.size, info.mode = len(DOCKERFILE), 0o644
        tf.addfile(info, io.BytesIO(DOCKERFILE))
        tf.add(str(node_dir), arcname="node", filter=root)  # symlinks stay symlinks
        tf.add(str(pin_dir), arcname="agent", filter=root)
    buf.seek(0)
    return buf


def agent_image(source_image: str, agent: Agent, *, client: Any | None = None) -> str:
    """Build (or find) the image of `agent` over `source_image`; return its tag.

    Raises:
        ValueError: `agent` is readbench's own loop.
        RuntimeError: installing Node.js or the pin failed (readbench.agents.install).
        docker.errors.BuildError / APIError: the build failed.
    """
    import docker
    import docker.errors

    from readbench.agents.install import NODE_WHEEL, ensure_node, ensure_pin

    def _image_id(ref: str) -> str | None:
        try:
            return client.images.get(ref).id
        except docker.errors.ImageNotFound:
            return None

    repository = agent_repository(agent)
    client = client or docker.from_env(timeout=900)
    node_dir = ensure_node().parent
    pin_dir = ensure_pin(agent)
    h = hashlib.sha256(b"readbench-agent-image-v1\0")
    for part in (_image_id(source_image) or source_image, DOCKERFILE.decode(), NODE_WHEEL[3],
                 (pin_dir / "package-lock.json").read_text()):
        h.update(part.encode() + b"\0")
    tag = f"{repository}:{h.hexdigest()[:12]}"
    if _image_id(tag):
        return tag
    with _context(node_dir, pin_dir) as ctx:
        client.images.build(fileobj=ctx, custom_context=True, tag=tag, buildargs={"BASE": source_image}, rm=True,
                            forcerm=True, pull=False, network_mode="none",
                            labels={"org.readbench.agent": agent.name, "org.readbench.base": source_image})
    return tag
