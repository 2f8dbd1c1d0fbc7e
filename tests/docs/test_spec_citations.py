"""Every spec the code cites is in the repository (docs/specs/README.md, issue 23 item 3).

A citation is ``docs/specs/<name>.md`` or, in short, a bare ``<name>.md`` where ``<name>.md`` is a
file of docs/specs/; ``§N`` after it (``caching.md §2.1``, ``docs/specs/dcp.md`` §7.5) names the
heading numbered N in that file. Scanned: the tracked text files under readbench/, tests/, docs/,
sandboxes/, tasks/, evals/ and README.md. Each citation must name an existing file, each § an
existing heading, and nothing may still cite the pre-repository location ``shared/specs/``.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SPECS = REPO / "docs" / "specs"
SCANNED = ("readbench/", "tests/", "docs/", "sandboxes/", "tasks/", "evals/", "README.md")

#: ``docs/specs/<name>.md`` (also when a line break, or a line break and ``#``, splits it after the
#: slash) or a bare ``<name>.md`` not preceded by a path; then an optional ``§N`` within a quote
#: or backtick of it
CITATION = re.compile(
    r"(?:(?P<path>docs/specs/(?:\s|#)*)|(?<![\w./-]))(?P<name>[A-Za-z0-9_][\w.-]*?\.md)\b"
    r"(?:[`\"']?\s*§\s*(?P<section>\d+(?:\.\d+)*))?"
)
#: the old location, a file a clone does not have
OLD = re.compile(r"shared/(?:specs/|ARCHITECTURE\.md|STYLE\.md)")


def tracked_files() -> list[Path]:
    """The tracked files under `SCANNED` that read as UTF-8 text (git ls-files; [] outside git)."""
    out = subprocess.run(["git", "ls-files", "-z", "--", *SCANNED], cwd=REPO, capture_output=True)
    files = []
    for rel in out.stdout.decode().split("\0"):
        path = REPO / rel
        if not rel or not path.is_file():
            continue
        try:
            files.append((path, path.read_text(encoding="utf-8")))
        except UnicodeDecodeError:
            continue
    return files


def heading_numbers(text: str) -> set[str]:
    """The section numbers of a Markdown file's headings: ``### 3.1 (a) Bug`` -> ``3.1``,
    ``## 4. Starter`` -> ``4``, ``## §5 x`` -> ``5``."""
    found = re.findall(r"^#+\s*§?\s*(\d+(?:\.\d+)*)\.?(?:\s|$)", text, flags=re.MULTILINE)
    return set(found)


def citations(text: str, spec_names: set[str]) -> list[tuple[int, str, str | None, bool]]:
    """(line, spec file name, section or None, explicit path?) of each spec citation in `text`.

    A bare name counts when it is a spec's name, or when a § follows it (a misspelt spec); an
    explicit ``docs/specs/`` path always counts.
    """
    out = []
    for m in CITATION.finditer(text):
        name, section, explicit = m["name"], m["section"], m["path"] is not None
        if explicit or name in spec_names or section is not None:
            out.append((text.count("\n", 0, m.start("name")) + 1, name, section, explicit))
    return out


def test_the_specs_are_in_the_repository_with_their_provenance():
    names = sorted(p.name for p in SPECS.glob("*.md"))
    assert {"caching.md", "corpus.md", "dcp.md", "metrics.md", "pi-tools.md", "sessions.md",
            "sim-agent.md", "variants.md", "inspect-notes.md", "anchors.md", "agents.md"} <= set(names)
    for name in names:
        if name != "README.md":
            line = (SPECS / name).read_text(encoding="utf-8").splitlines()[2]
            assert line.startswith("> Provenance: ") and "`shared/" in line, name


def test_every_spec_citation_resolves_to_a_file_and_heading():
    specs = {p.name: heading_numbers(p.read_text(encoding="utf-8")) for p in SPECS.glob("*.md")}
    files = tracked_files()
    assert len(files) > 300  # the scan saw the tree (not an empty git ls-files)
    bad, count = [], 0
    for path, text in files:
        rel = path.relative_to(REPO)
        if path.parent == SPECS or path == Path(__file__).resolve():
            continue  # the specs cite their own sources (other projects' files); this file has examples
        for m in OLD.finditer(text):
            bad.append(f"{rel}:{text.count(chr(10), 0, m.start()) + 1}: cites {m[0]} (now docs/specs/)")
        for line, name, section, _ in citations(text, set(specs)):
            count += 1
            if name not in specs:
                bad.append(f"{rel}:{line}: cites {name}, which is not in docs/specs/")
            elif section is not None and section not in specs[name]:
                bad.append(f"{rel}:{line}: cites {name} §{section}; it has no heading {section}")
    assert not bad, "\n".join(bad)
    assert count > 300  # the pattern found the code's citations (~580 today)


@pytest.mark.parametrize("text, expected", [
    ("(caching.md §2.1)", [(1, "caching.md", "2.1", False)]),
    ("see `docs/specs/dcp.md` §7.5.", [(1, "dcp.md", "7.5", True)]),
    ("statistics: docs/specs/\n    metrics.md", [(2, "metrics.md", None, True)]),
    ("# x, docs/specs/\n# sessions.md §5", [(2, "sessions.md", "5", True)]),
    ("cachng.md §3 and report.md and analysis/README.md", [(1, "cachng.md", "3", False)]),
    ("docs/specs/nope.md", [(1, "nope.md", None, True)]),
])
def test_what_counts_as_a_citation(text, expected):
    assert citations(text, {"caching.md", "dcp.md", "metrics.md", "sessions.md"}) == expected


def test_heading_numbers():
    text = "# T\n## 0. Bottom line\n### 3.1 (a) Bug\n#### 2.1 dedup\n## Part A\n## §5 x\n## 10\n"
    assert heading_numbers(text) == {"0", "3.1", "2.1", "5", "10"}
