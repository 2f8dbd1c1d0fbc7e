"""An arm's prefix: what its fork starts from (GitHub issue 25 item 2), and where it is kept.

Files under the run's fork directory (``results/<run>/fork/``)::

    prefixes/<model>/<sample>/e<epoch>/<arm key>.json    one `Prefix` per arm
    snapshots/<model>/<sample>/e<epoch>/c<call>.json       one workspace `Snapshot` per fork call

A prefix holds the trunk's replies up to the fork point (each with its request's fingerprint,
its times and, where the arm replays them, its tool results with the arm's own read details),
the arm's fork point with the model provider's memory and the arm's read session there, and the
trunk's cwd (replaced by the fork's own wherever it appears, so a local sandbox in another
temporary directory sees its own paths).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from readbench.fork.shadow import ForkPoint

__all__ = ["FORK", "CallRecord", "Prefix", "load_prefix", "prefix_path", "snapshot_path"]

FORK = "readbench:fork"
"""Store key: ``{"role": "trunk", "arms": {label: fork point summary}}`` in a trunk sample,
``{"role": "fork", "arm", "fork_point", "prefix", "replayed_calls", ...}`` in a fork sample."""


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", text)


def _sample_dir(root: Path, kind: str, model: str, sample_id: str, epoch: int) -> Path:
    return Path(root) / kind / _slug(model) / _slug(str(sample_id)) / f"e{int(epoch)}"


def prefix_path(root: Path, model: str, sample_id: str, epoch: int, arm_key: str) -> Path:
    """The prefix file of one arm for one trunk sample."""
    return _sample_dir(root, "prefixes", model, sample_id, epoch) / f"{arm_key}.json"


def snapshot_path(root: Path, model: str, sample_id: str, epoch: int, call: int) -> Path:
    """The workspace snapshot of one trunk sample before model call ``call``'s tools."""
    return _sample_dir(root, "snapshots", model, sample_id, epoch) / f"c{int(call)}.json"


@dataclass
class CallRecord:
    """One trunk model call as a fork replays it.

    Attributes:
        output: the reply (``ModelOutput.model_dump(mode="json")``: message, usage, stop reason, metadata).
        ts: ``[start, first token]`` seconds since the loop started (the CallRecord times of the cache simulator).
        request: `readbench.fork.trunk.request_fingerprint` of the projected request it answered.
        tools: the tool results of the reply (message dumps), None where the fork executes them itself.
        tripped: the call an inspect limit (e.g. a token limit) raised on after it returned: logged,
            its reply never entered the history; a fork reaching it logs it the same way and stops.
    """

    output: dict[str, Any]
    ts: list[float]
    request: str
    tools: list[dict[str, Any]] | None = None
    tripped: bool = False

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict."""
        return {"output": self.output, "ts": self.ts, "request": self.request, "tools": self.tools,
                "tripped": self.tripped}


@dataclass
class Prefix:
    """What a fork of one arm starts from (see the module docstring)."""

    arm: list[Any]
    arm_key: str
    fork: ForkPoint
    calls: list[CallRecord] = field(default_factory=list)
    cwd: str = ""

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict."""
        f = self.fork
        return {"arm": self.arm, "arm_key": self.arm_key, "cwd": self.cwd,
                "fork": {"call": f.call, "kind": f.kind, "reason": f.reason, "snapshot": f.snapshot, "sim": f.sim,
                         "read_session": f.read_session, "elapsed_seconds": f.elapsed_seconds,
                         "stop_reason": f.stop_reason},
                "calls": [c.to_dict() for c in self.calls]}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Prefix:
        """Inverse of `to_dict`.

        Raises:
            KeyError: a key is missing.
        """
        return cls(arm=data["arm"], arm_key=data["arm_key"], fork=ForkPoint(**data["fork"]),
                   calls=[CallRecord(**c) for c in data["calls"]], cwd=data["cwd"])

    @property
    def replayed_calls(self) -> int:
        """Model calls the fork takes from the trunk (not made again)."""
        return len(self.calls)


def load_prefix(path: Path, cwd: str) -> Prefix:
    """Read a prefix, with the trunk's cwd replaced by ``cwd`` everywhere in it.

    Raises:
        FileNotFoundError: no prefix at ``path`` (the trunk sample did not finish).
        ValueError: the file is not a prefix.
    """
    text = Path(path).read_text()
    try:
        trunk_cwd = json.loads(text)["cwd"]
    except (ValueError, KeyError, TypeError) as ex:
        raise ValueError(f"{path} is not a fork prefix: {ex}") from None
    if trunk_cwd and trunk_cwd != cwd:
        old, new = json.dumps(trunk_cwd)[1:-1], json.dumps(cwd)[1:-1]
        text = text.replace(old, new)
    return Prefix.from_dict(json.loads(text))
