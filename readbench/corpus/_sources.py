"""Pinned corpus sources read from `tasks/sources.toml` (docs/specs/corpus.md §4 "Pin").

A source is one PyPI sdist pinned by version and sha256, plus the pure wheels its tests need
(pinned in the `[[lock.wheel]]` table) and the target files tasks are generated from. The file is
plain data; this module only parses and validates it into frozen dataclasses.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

__all__ = [
    "FAMILIES",
    "SourceSpec",
    "SourcesFile",
    "TargetSpec",
    "WheelPin",
    "default_sources_path",
    "load_sources",
]

#: Task families (GitHub issue 6). `bugfix`: one-token mutation in a file over 2,000 lines;
#: `midsize`: the same in a 1,000-2,000-line file; `locate`: answer sits deep in a big file;
#: `wholefile`: a count over the whole file computed with `ast`; `log`: needle in a generated
#: 30-60k-line log; `session`: 3-5 user prompts (locate, fix, follow-up); `longsession`: 15-19
#: prompts over one repository (three bug-fix chains and revisited questions, readbench.corpus._long).
FAMILIES: tuple[str, ...] = ("bugfix", "midsize", "locate", "wholefile", "log", "session", "longsession")

_SHA256 = re.compile(r"^[0-9a-f]{64}$")
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")


@dataclass(frozen=True)
class WheelPin:
    """One pure wheel (``py3-none-any``) unzipped into a source's deps dir.

    Attributes:
        name: distribution name as pip spells it (``pytest``).
        version: exact version.
        filename: the wheel's file name; must end in ``-none-any.whl``.
        sha256: hex digest of the wheel file (64 lowercase hex chars).
    """

    name: str
    version: str
    filename: str
    sha256: str


@dataclass(frozen=True)
class TargetSpec:
    """A file of a source that tasks are generated from.

    Attributes:
        file: path relative to the unpacked tree root (``more_itertools/more.py``).
        test_args: pytest arguments of the checker (``tests/test_more.py``); the checker command
            is ``<source pytest_cmd> -q <test_args>``. None for targets used only for question
            families (no tests run).
        tasks: family name -> number of tasks wanted from this file.
        timeout_seconds: upper bound for one checker run; the build also uses 3x the measured
            baseline + 10 s (corpus.md §3.1 step 5), whichever is smaller.
    """

    file: str
    test_args: str | None
    tasks: dict[str, int]
    timeout_seconds: float = 120.0


@dataclass(frozen=True)
class SourceSpec:
    """One pinned sdist.

    Attributes:
        name: PyPI project name (``more-itertools``); also the task-id prefix.
        version: exact version.
        sdist: the sdist file name PyPI serves.
        sha256: hex digest of the sdist.
        license: license as declared in PKG-INFO (corpus.md §5).
        pythonpath: tree-relative entries appended after the deps dir (``["src"]``).
        wheels: names from the lock table to unzip into the deps dir.
        pytest_cmd: the pytest runner prefix run in the tree root
            (``python3 -m pytest -p no:cacheprovider``).
        dist_info: write a minimal ``<name>-<version>.dist-info`` into the deps dir, for tests
            that read installed metadata (click's test_deprecations, corpus.md §4).
        targets: the files tasks come from.
    """

    name: str
    version: str
    sdist: str
    sha256: str
    license: str
    pythonpath: tuple[str, ...]
    wheels: tuple[str, ...]
    dist_info: bool
    targets: tuple[TargetSpec, ...]
    pytest_cmd: str = "python3 -m pytest -p no:cacheprovider"

    def test_cmd(self, target: TargetSpec) -> str:
        """The checker command of a target: ``<pytest_cmd> -q <test_args>``."""
        if target.test_args is None:
            raise ValueError(f"{self.name}: target {target.file} has no test_args")
        return f"{self.pytest_cmd} -q {target.test_args}"

    @property
    def env(self) -> dict[str, str]:
        """Checker environment: ``PYTHONPATH={deps}[:entry...]`` (placeholder unexpanded)."""
        return {"PYTHONPATH": ":".join(["{deps}", *self.pythonpath])}

    @property
    def slug(self) -> str:
        """``name-version``: the cache directory name of this source."""
        return f"{self.name}-{self.version}"


@dataclass(frozen=True)
class SourcesFile:
    """The parsed `sources.toml`: sources in file order and the wheel lock by name."""

    sources: tuple[SourceSpec, ...]
    wheels: dict[str, WheelPin] = field(default_factory=dict)
    seed: int = 1
    log_tasks: int = 0
    log_min_lines: int = 30000
    log_max_lines: int = 60000

    def get(self, name: str) -> SourceSpec:
        """Return the source called ``name``; KeyError naming the valid names otherwise."""
        for src in self.sources:
            if src.name == name:
                return src
        valid = ", ".join(s.name for s in self.sources)
        raise KeyError(f"unknown source {name!r}; sources.toml has: {valid}")


def default_sources_path() -> Path:
    """The committed recipe: ``<repo root>/tasks/sources.toml``."""
    return Path(__file__).resolve().parents[2] / "tasks" / "sources.toml"


def _req(table: dict, key: str, where: str, kind: type):
    if key not in table:
        raise ValueError(f"{where}: missing key {key!r}")
    value = table[key]
    if not isinstance(value, kind):
        raise ValueError(f"{where}: {key!r} must be {kind.__name__}, got {value!r}")
    return value


def _parse_target(raw: dict, where: str) -> TargetSpec:
    tasks = _req(raw, "tasks", where, dict)
    for fam, n in tasks.items():
        if fam not in FAMILIES:
            raise ValueError(f"{where}: unknown family {fam!r} (valid: {', '.join(FAMILIES)})")
        if not isinstance(n, int) or n < 0:
            raise ValueError(f"{where}: tasks.{fam} must be an int >= 0, got {n!r}")
    test_args = raw.get("test_args")
    if test_args is None and any(f in tasks for f in ("bugfix", "midsize", "session", "longsession")):
        raise ValueError(f"{where}: fix families need test_args")
    return TargetSpec(
        file=_req(raw, "file", where, str),
        test_args=test_args,
        tasks=dict(tasks),
        timeout_seconds=float(raw.get("timeout_seconds", 120.0)),
    )


def load_sources(path: Path | None = None) -> SourcesFile:
    """Parse and validate `sources.toml`.

    Args:
        path: the file; default :func:`default_sources_path`.

    Returns:
        SourcesFile with sources in file order.

    Raises:
        FileNotFoundError: the file does not exist.
        ValueError: a key is missing or malformed; the message names the source and key.
    """
    path = path or default_sources_path()
    data = tomllib.loads(Path(path).read_text(encoding="utf-8"))
    wheels: dict[str, WheelPin] = {}
    for i, raw in enumerate(data.get("lock", {}).get("wheel", [])):
        where = f"{path}: lock.wheel[{i}]"
        pin = WheelPin(
            name=_req(raw, "name", where, str),
            version=_req(raw, "version", where, str),
            filename=_req(raw, "filename", where, str),
            sha256=_req(raw, "sha256", where, str),
        )
        if not _SHA256.match(pin.sha256):
            raise ValueError(f"{where}: sha256 must be 64 lowercase hex chars, got {pin.sha256!r}")
        if not pin.filename.endswith("-none-any.whl"):
            raise ValueError(f"{where}: {pin.filename!r} is not a pure (none-any) wheel")
        wheels[pin.name] = pin
    sources = []
    for i, raw in enumerate(data.get("source", [])):
        where = f"{path}: source[{i}]"
        name = _req(raw, "name", where, str)
        where = f"{path}: source {name!r}"
        if not _NAME.match(name):
            raise ValueError(f"{where}: bad name")
        sha = _req(raw, "sha256", where, str)
        if not _SHA256.match(sha):
            raise ValueError(f"{where}: sha256 must be 64 lowercase hex chars, got {sha!r}")
        wheel_names = tuple(raw.get("wheels", []))
        for w in wheel_names:
            if w not in wheels:
                raise ValueError(f"{where}: wheel {w!r} is not in the lock table")
        targets = tuple(
            _parse_target(t, f"{where} target[{j}]") for j, t in enumerate(raw.get("target", []))
        )
        sources.append(
            SourceSpec(
                name=name,
                version=_req(raw, "version", where, str),
                sdist=_req(raw, "sdist", where, str),
                sha256=sha,
                license=str(raw.get("license", "")),
                pythonpath=tuple(raw.get("pythonpath", [])),
                wheels=wheel_names,
                dist_info=bool(raw.get("dist_info", False)),
                targets=targets,
                pytest_cmd=str(raw.get("pytest_cmd", "python3 -m pytest -p no:cacheprovider")),
            )
        )
    names = [s.name for s in sources]
    dupes = sorted({n for n in names if names.count(n) > 1})
    if dupes:
        raise ValueError(f"{path}: duplicate source names {dupes}")
    settings = data.get("settings", {})
    logs = data.get("logs", {})
    lo, hi = int(logs.get("min_lines", 30000)), int(logs.get("max_lines", 60000))
    if not 30 <= lo <= hi:
        raise ValueError(f"{path}: logs needs 30 <= min_lines <= max_lines, got {lo}, {hi}")
    return SourcesFile(
        sources=tuple(sources), wheels=wheels, seed=int(settings.get("seed", 1)),
        log_tasks=int(logs.get("tasks", 0)), log_min_lines=lo, log_max_lines=hi,
    )
