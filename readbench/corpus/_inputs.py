"""The corpus's content hash: everything a build's output depends on (issue 26 item 2).

`build_key` hashes the recipe (`sources.toml` bytes, which pin every sdist and wheel by sha256),
the seed, the selection of sources and families, `GENERATOR_VERSION`, the generator's own code
(every file of the `readbench.corpus` package), the recorded validations (every file under
`validation_dir()`: a mutant's outcome and messages enter the records) and the Python version.
`readbench.corpus._build.build` writes it to ``build_key.json`` beside ``tasks.jsonl``; a later build
with the same key, whose ``tasks.jsonl`` still has the recorded sha256, re-uses the corpus instead
of validating it again (`make eval` runs ``readbench tasks build`` every time: 68-89 s on 2 cores).
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

__all__ = ["KEY_FILE", "build_key", "unchanged", "write_key"]

#: Beside tasks.jsonl: {"build_key": ..., "tasks_jsonl_sha256": ...} of the last build.
KEY_FILE = "build_key.json"


def _tree_digest(h: "hashlib._Hash", root: Path, pattern: str) -> None:
    if not root.exists():
        h.update(b"<absent>" + str(root).encode())
        return
    for p in sorted(root.rglob(pattern)):
        if p.is_file() and "__pycache__" not in p.parts:
            h.update(str(p.relative_to(root)).encode() + b"\0")
            h.update(hashlib.sha256(p.read_bytes()).digest())


def build_key(recipe_path: Path, seed: int, sources: list[str] | None, families: tuple[str, ...],
              generator_version: str, validation: Path) -> str:
    """The sha256 (hex) of a build's inputs (module docstring).

    Raises:
        FileNotFoundError: no recipe at `recipe_path`.
    """
    h = hashlib.sha256()
    h.update(json.dumps({"generator_version": generator_version, "seed": seed,
                         "sources": sorted(sources) if sources is not None else None, "families": list(families),
                         "python": list(sys.version_info[:2])}, sort_keys=True).encode())
    h.update(hashlib.sha256(recipe_path.read_bytes()).digest())
    _tree_digest(h, Path(__file__).resolve().parent, "*.py")
    _tree_digest(h, validation, "*")
    return h.hexdigest()


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def unchanged(out_dir: Path, key: str) -> bool:
    """True when `out_dir` holds a corpus built from inputs hashing to `key`: its key file names
    `key`, and its tasks.jsonl (and manifest.json) are there, tasks.jsonl with the sha256 recorded."""
    try:
        rec = json.loads((out_dir / KEY_FILE).read_text())
    except (OSError, ValueError):
        return False
    jsonl = out_dir / "tasks.jsonl"
    return (isinstance(rec, dict) and rec.get("build_key") == key and jsonl.exists()
            and (out_dir / "manifest.json").exists() and rec.get("tasks_jsonl_sha256") == _sha256(jsonl))


def write_key(out_dir: Path, key: str) -> None:
    """Record `key` and the sha256 of the tasks.jsonl just written (call after a complete build)."""
    (out_dir / KEY_FILE).write_text(json.dumps({"build_key": key, "tasks_jsonl_sha256": _sha256(out_dir / "tasks.jsonl")},
                                               indent=2, sort_keys=True) + "\n")
