"""End-to-end build on a tiny hand-made sdist (offline): validation, reproducibility, self-check.

The sdist is written to the cache's downloads dir with its sha256, so no download happens. The
checker runs this venv's python (it has pytest), with an empty deps dir.
"""

import hashlib
import io
import json
import sys
import tarfile

import pytest

from readbench.corpus import load_tasks, self_check
from readbench.corpus._build import build
from readbench.corpus._check import run_check

REAL = '''
def clamp(x, lo, hi):
    if x < lo:
        return lo
    if x > hi:
        return hi
    return x


def total(items, start=0):
    acc = start
    for it in items:
        acc = acc + it
    return acc


def scale(x, k=2):
    return x * k
'''
TESTS = '''
from tiny.big import clamp, scale, total

def test_scale():
    assert scale(3) == 6

def test_clamp_low():
    assert clamp(-5, 0, 10) == 0

def test_clamp_high():
    assert clamp(50, 0, 10) == 10

def test_clamp_mid():
    assert clamp(5, 0, 10) == 5

def test_total():
    assert total([1, 2, 3]) == 6
    assert total([1, 2], start=10) == 13
'''


def _sdist() -> bytes:
    filler = "".join(f"def filler_{i}(x):\n    return x + {i % 7}\n\n\n" for i in range(530))
    files = {"tiny-1.0/tiny/__init__.py": "", "tiny-1.0/tiny/big.py": filler + REAL,
             "tiny-1.0/tests/test_big.py": TESTS}
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz", format=tarfile.USTAR_FORMAT) as tf:
        for name, text in sorted(files.items()):
            data = text.encode()
            info = tarfile.TarInfo(name)
            info.size, info.mtime = len(data), 0
            tf.addfile(info, io.BytesIO(data))
    return buf.getvalue()


@pytest.fixture()
def recipe(tmp_path, monkeypatch):
    data = _sdist()
    cache = tmp_path / "cache"
    (cache / "downloads").mkdir(parents=True)
    (cache / "downloads" / "tiny-1.0.tar.gz").write_bytes(data)
    monkeypatch.setenv("READBENCH_CACHE", str(cache))
    monkeypatch.setenv("READBENCH_VALIDATION", str(cache / "validation"))  # never the committed tasks/validation
    toml = tmp_path / "sources.toml"
    toml.write_text(f'''
[settings]
seed = 3
[logs]
tasks = 2
min_lines = 40
max_lines = 60
[[source]]
name = "tiny"
version = "1.0"
sdist = "tiny-1.0.tar.gz"
sha256 = "{hashlib.sha256(data).hexdigest()}"
pytest_cmd = "{sys.executable} -m pytest -p no:cacheprovider"
[[source.target]]
file = "tiny/big.py"
test_args = "tests"
timeout_seconds = 60
tasks = {{ bugfix = 1, session = 1, locate = 2, wholefile = 2 }}
''')
    return toml, tmp_path


# About 20 pytest runs of a 5-test suite: ~40 s idle, minutes on a loaded 2-core machine.
@pytest.mark.slow
def test_build_validates_mutants_and_is_byte_reproducible(recipe):
    toml, tmp = recipe
    a = build(sources_path=toml, out_dir=tmp / "a", jobs=1, log=lambda s: None)
    b = build(sources_path=toml, out_dir=tmp / "b", jobs=1, log=lambda s: None)
    assert (tmp / "a" / "tasks.jsonl").read_bytes() == (tmp / "b" / "tasks.jsonl").read_bytes()
    assert json.loads((tmp / "a" / "manifest.json").read_text())["tasks"] == 7
    ids = [r.id for r in a.records]
    # one whole-file question only: the filler functions make `x` too common to ask about
    assert ids == ["tiny/bugfix/0", "tiny/locate/0", "tiny/locate/1", "tiny/wholefile/0",
                   "tiny/session/0", "logs/log/0", "logs/log/1"]
    bug = a.records[0]
    # only clamp, total and scale are reached by tests; clamp's two compare flips survive them
    assert bug.mutation.func in ("total", "scale") and bug.target_line > 2000
    assert bug.file_lines == 2138 and bug.check.fail_to_pass
    assert bug.oracle.old_text in bug.files["tiny/big.py"]
    sess = a.records[4]
    assert sess.check.answers[0] == sess.mutation.func and sess.check.answers[1] is None
    assert sess.mutation.func != bug.mutation.func  # one mutant per function
    assert load_tasks(tmp / "a" / "tasks.jsonl") == list(a.records) == list(b.records)


@pytest.mark.slow
def test_self_check_fails_without_and_passes_with_the_oracle(recipe):
    toml, tmp = recipe
    res = build(sources_path=toml, out_dir=tmp / "a", families=["bugfix", "log"], jobs=1,
                log=lambda s: None)
    from readbench.corpus import deps_dir, source_tree
    from readbench.corpus._fetch import deps_dir as fdeps
    from readbench.corpus._fetch import source_tree as ftree
    from readbench.corpus._sources import load_sources

    bug, log = res.records[0], res.records[1]
    r = load_sources(toml)
    sc = self_check(bug, ftree("tiny", r), fdeps("tiny", r))
    assert sc.ok and sc.without.tests_passed is False and sc.with_oracle.tests_passed is True
    assert set(sc.without.failed_tests) == set(bug.check.fail_to_pass)
    lg = self_check(log, source_tree("logs"), deps_dir("logs"))
    assert lg.ok and lg.with_oracle.answers_ok == (True,)
    wrong = run_check(log, source_tree("logs"), deps_dir("logs"), ["ANSWER: nope"])
    assert not wrong.passed


def test_question_and_log_build_is_byte_reproducible_and_seed_sensitive(recipe):
    toml, tmp = recipe
    fams = ["locate", "wholefile", "log"]
    quiet = lambda s: None  # noqa: E731
    a = build(sources_path=toml, out_dir=tmp / "a", families=fams, log=quiet)
    b = build(sources_path=toml, out_dir=tmp / "b", families=fams, log=quiet)
    build(sources_path=toml, out_dir=tmp / "c", families=fams, seed=4, log=quiet)
    digest = lambda p: hashlib.sha256((p / "tasks.jsonl").read_bytes()).hexdigest()  # noqa: E731
    assert digest(tmp / "a") == digest(tmp / "b") != digest(tmp / "c")
    assert (tmp / "a" / "manifest.json").read_bytes() == (tmp / "b" / "manifest.json").read_bytes()
    assert [r.id for r in a.records] == ["tiny/locate/0", "tiny/locate/1", "tiny/wholefile/0",
                                         "logs/log/0", "logs/log/1"]
    log = a.records[3]
    assert log.question_kind == "fatal_request" and 40 <= log.file_lines <= 60
    assert log.files["logs/service.log"].count(f"req={log.check.answer}") == 1
    assert a.kill_stats == {} and b.records == a.records


def test_an_unchanged_corpus_is_reused_without_revalidating(recipe, monkeypatch):
    import readbench.corpus._build as build_mod

    toml, tmp = recipe
    fams = ["locate", "wholefile", "log"]
    lines: list[str] = []
    a = build(sources_path=toml, out_dir=tmp / "a", families=fams, log=lines.append)
    first = (tmp / "a" / "tasks.jsonl").read_bytes()
    manifest = (tmp / "a" / "manifest.json").read_bytes()
    allowed = [False]
    real = build_mod.locate_questions

    def guarded(*args, **kwargs):
        if not allowed[0]:
            raise AssertionError("the corpus was regenerated")
        return real(*args, **kwargs)

    monkeypatch.setattr(build_mod, "locate_questions", guarded)
    lines.clear()
    b = build(sources_path=toml, out_dir=tmp / "a", families=fams, log=lines.append)
    assert b.records == a.records and b.kill_stats == {}
    assert lines[-1].startswith("corpus unchanged (inputs sha256 ") and "re-using 5 tasks" in lines[-1]
    assert (tmp / "a" / "tasks.jsonl").read_bytes() == first and (tmp / "a" / "manifest.json").read_bytes() == manifest
    # another seed, another selection, --force, or a tasks.jsonl that is not the one written: built again
    for kwargs in ({"seed": 4}, {"families": ["locate", "log"]}, {"force": True}):
        with pytest.raises(AssertionError, match="regenerated"):
            build(sources_path=toml, out_dir=tmp / "a", **{"families": fams, **kwargs}, log=lambda s: None)
    allowed[0] = True
    build(sources_path=toml, out_dir=tmp / "a", families=fams, log=lambda s: None)
    allowed[0] = False
    build(sources_path=toml, out_dir=tmp / "a", families=fams, log=lambda s: None)  # unchanged again
    (tmp / "a" / "tasks.jsonl").write_bytes(first[:-1])
    with pytest.raises(AssertionError, match="regenerated"):
        build(sources_path=toml, out_dir=tmp / "a", families=fams, log=lambda s: None)
