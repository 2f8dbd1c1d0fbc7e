"""Task records: frozen dataclasses, their JSONL form and the `datasets.Features` schema.

One JSON object per line; the same object loads with
``datasets.load_dataset("json", data_files=path, features=FEATURES)``. Two fields with free-form
keys are stored as lists of pairs because Arrow structs need fixed keys:
``files`` as ``[{"path", "content"}]`` and ``check.env`` as ``[{"name", "value"}]``; the
dataclasses expose them as dicts. Keys are written sorted, so the same records give the same
bytes (byte-reproducible builds).
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

__all__ = [
    "FEATURES",  # noqa: F822 - built lazily by the module's __getattr__
    "Check",
    "Mutation",
    "Oracle",
    "Step",
    "TaskRecord",
    "read_jsonl",
    "record_from_json",
    "record_to_json",
    "write_jsonl",
]


@dataclass(frozen=True)
class Step:
    """The intent behind one user prompt (what the simulated agent may know, sim-agent.md).

    Attributes:
        kind: ``fix`` (edit old_text -> new_text), ``answer`` (report ``answer``) or ``locate``
            (an answer that names where the bug is).
        target_file: tree-relative file the step is about.
        search_key: what a capable model would grep for (``def constrained_batches(``, a
            message); None when no grep helps (whole-file counts).
        old_text: fix steps: exact unique text in the current (mutated) file.
        new_text: fix steps: its replacement.
        answer: answer/locate steps: expected value after ``ANSWER:``.
        target_line: 1-based line the step needs (the bug, the definition); None for whole-file.
        whole_file: the step needs every line of the file in view (perception rule).
        test_cmd: fix steps of a long session: the command that checks this one fix (its
            fail-to-pass tests); None = the task's ``check.test_cmd``.
    """

    kind: str
    target_file: str
    search_key: str | None = None
    old_text: str | None = None
    new_text: str | None = None
    answer: str | None = None
    target_line: int | None = None
    whole_file: bool = False
    test_cmd: str | None = None


@dataclass(frozen=True)
class Oracle:
    """The task intent stored with the task; ``steps`` has one entry per prompt.

    The top-level fields repeat the main step (the fix for fix tasks, else the last step).
    """

    target_file: str
    search_key: str | None
    old_text: str | None
    new_text: str | None
    answer: str | None
    target_line: int | None
    whole_file: bool
    steps: tuple[Step, ...]

    @classmethod
    def from_steps(cls, steps: list[Step]) -> "Oracle":
        """Build with the top-level fields copied from the fix step, else the last step."""
        main = next((s for s in steps if s.kind == "fix"), steps[-1])
        return cls(
            target_file=main.target_file,
            search_key=main.search_key,
            old_text=main.old_text,
            new_text=main.new_text,
            answer=main.answer,
            target_line=main.target_line,
            whole_file=main.whole_file,
            steps=tuple(steps),
        )


@dataclass(frozen=True)
class Check:
    """How a run is graded.

    Attributes:
        kind: ``tests`` (``test_cmd`` exits 0 with no failed test), ``answer`` (the final
            ``ANSWER:`` line matches ``answer``) or ``session`` (tests pass and each prompt's
            answer in ``answers`` matches; None entries are fix prompts).
        test_cmd: bash command run in the repo root; None for answer-only tasks.
        env: environment for test_cmd; values may hold the ``{deps}`` placeholder.
        timeout_seconds: limit for one test_cmd run.
        fail_to_pass: test ids that fail before the fix and must pass after it.
        answer: expected answer (answer tasks).
        answers: per-prompt expected answers (session tasks).
    """

    kind: str
    test_cmd: str | None = None
    env: dict[str, str] = field(default_factory=dict)
    timeout_seconds: float | None = None
    fail_to_pass: tuple[str, ...] = ()
    answer: str | None = None
    answers: tuple[str | None, ...] = ()


@dataclass(frozen=True)
class Mutation:
    """Provenance of a seeded bug (corpus.md §3.1 step 6): the byte span in the pristine file."""

    operator: str
    line: int
    byte_start: int
    byte_end: int
    original: str
    mutated: str
    func: str


@dataclass(frozen=True)
class TaskRecord:
    """One task. ``id`` is ``source/family/n`` and stays stable for a given recipe and seed.

    Attributes:
        file_lines: newline count of ``file`` as the agent sees it (after ``files`` overrides).
        target_line: 1-based line of the answer or bug in ``file``; None for whole-file tasks.
        files: tree-relative path -> full text written over the pristine tree.
        source_version: pinned version (``""`` for generated sources such as logs).
        question_kind: generator kind (``def_line``, ``count_param``, ``fatal_request`` ...).
    """

    id: str
    family: str
    source: str
    source_version: str
    prompts: tuple[str, ...]
    file: str
    file_lines: int
    target_line: int | None
    oracle: Oracle
    check: Check
    files: dict[str, str]
    question_kind: str = ""
    mutation: Mutation | None = None


def _features():
    from datasets import Features, Value

    # A Python list [x] is datasets' "list of x"; Sequence(dict) would mean a dict of lists.

    s, i, b, f = Value("string"), Value("int64"), Value("bool"), Value("float64")
    step = {
        "kind": s, "target_file": s, "search_key": s, "old_text": s, "new_text": s,
        "answer": s, "target_line": i, "whole_file": b, "test_cmd": s,
    }
    return Features(
        {
            "id": s, "family": s, "source": s, "source_version": s,
            "prompts": [s], "file": s, "file_lines": i, "target_line": i,
            "oracle": {**{k: v for k, v in step.items() if k not in ("kind", "test_cmd")}, "steps": [step]},
            "check": {
                "kind": s, "test_cmd": s, "env": [{"name": s, "value": s}],
                "timeout_seconds": f, "fail_to_pass": [s], "answer": s,
                "answers": [s],
            },
            "files": [{"path": s, "content": s}],
            "question_kind": s,
            "mutation": {
                "operator": s, "line": i, "byte_start": i, "byte_end": i, "original": s,
                "mutated": s, "func": s,
            },
        }
    )


class _LazyFeatures:
    """`datasets.Features` built on first attribute access (no datasets import at import time)."""

    _value = None

    def get(self):
        if self._value is None:
            self._value = _features()
        return self._value


_FEATURES = _LazyFeatures()


def __getattr__(name: str):  # module attribute FEATURES, built lazily
    if name == "FEATURES":
        return _FEATURES.get()
    raise AttributeError(name)


def record_to_json(rec: TaskRecord) -> dict[str, Any]:
    """The JSONL object of a record (pair lists for ``files`` and ``check.env``)."""
    d = asdict(rec)
    d["files"] = [{"path": p, "content": c} for p, c in sorted(rec.files.items())]
    d["check"]["env"] = [{"name": k, "value": v} for k, v in sorted(rec.check.env.items())]
    return d


def record_from_json(d: dict[str, Any]) -> TaskRecord:
    """Inverse of :func:`record_to_json`; also accepts rows read back through `datasets`.

    Raises:
        KeyError: a required field is missing (the message names it).
    """
    o = d["oracle"]
    steps = tuple(Step(**st) for st in o["steps"])
    oracle = Oracle(**{**{k: v for k, v in o.items() if k != "steps"}, "steps": steps})
    c = d["check"]
    check = Check(
        kind=c["kind"],
        test_cmd=c.get("test_cmd"),
        env={e["name"]: e["value"] for e in c.get("env") or []},
        timeout_seconds=c.get("timeout_seconds"),
        fail_to_pass=tuple(c.get("fail_to_pass") or ()),
        answer=c.get("answer"),
        answers=tuple(c.get("answers") or ()),
    )
    m = d.get("mutation")
    mutation = Mutation(**m) if m and m.get("operator") is not None else None
    return TaskRecord(
        id=d["id"],
        family=d["family"],
        source=d["source"],
        source_version=d["source_version"],
        prompts=tuple(d["prompts"]),
        file=d["file"],
        file_lines=d["file_lines"],
        target_line=d["target_line"],
        oracle=oracle,
        check=check,
        files={f["path"]: f["content"] for f in d.get("files") or []},
        question_kind=d.get("question_kind") or "",
        mutation=mutation,
    )


def write_jsonl(records: list[TaskRecord], path: Path) -> None:
    """Write records one per line (sorted keys, UTF-8, no ASCII escaping)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8", newline="\n") as f:
        for rec in records:
            f.write(json.dumps(record_to_json(rec), sort_keys=True, ensure_ascii=False) + "\n")


def read_jsonl(path: Path) -> list[TaskRecord]:
    """Read records written by :func:`write_jsonl`.

    Raises:
        FileNotFoundError: ``path`` does not exist.
        ValueError: a line is not JSON (the message gives the line number).
    """
    out = []
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                out.append(record_from_json(json.loads(line)))
            except json.JSONDecodeError as exc:
                raise ValueError(f"{path}:{n}: not JSON: {exc}") from None
    return out
