"""Test runs memoised by workspace content in the local sandbox (readbench.sandbox.runmemo,
GitHub issue 26 item 2): a second run of the same test command on a byte-identical tree in the
same directory gets the first run's result and its effect on the tree, without running."""

from __future__ import annotations

import os

import anyio
import pytest

from readbench.sandbox import local, runmemo
from readbench.sandbox.local import ReadbenchLocalSandbox
from readbench.tools._env import isolated


def _tree(root, files):
    for rel, data in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(data)


def test_an_effect_replayed_on_an_equal_tree_gives_the_same_tree(tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    files = {"f.txt": b"one\n", "pkg/m.py": b"x = 1\n", "pkg/old.txt": b"gone soon", "keep/k": b"k"}
    _tree(a, files)
    _tree(b, files)
    before = runmemo.snapshot(a)
    assert runmemo.tree_digest(before) == runmemo.tree_digest(runmemo.snapshot(b))
    # a run: writes a cache dir, changes a file and its mode, removes a file and a dir, adds a symlink
    (a / "pkg" / "__pycache__").mkdir()
    (a / "pkg" / "__pycache__" / "m.pyc").write_bytes(b"\x00pyc")
    (a / "f.txt").write_bytes(b"two\n")
    (a / "f.txt").chmod(0o755)
    (a / "pkg" / "old.txt").unlink()
    (a / "keep" / "k").unlink()
    (a / "keep").rmdir()
    (a / "link").symlink_to("f.txt")
    after = runmemo.snapshot(a)
    effect = runmemo.tree_effect(a, before, after)
    assert [m[0] for m in effect.made] == ["f.txt", "link", "pkg/__pycache__", "pkg/__pycache__/m.pyc"]
    assert effect.removed == ("keep/k", "pkg/old.txt", "keep")
    assert effect.nbytes == len(b"two\n") + len(b"\x00pyc")
    runmemo.apply_effect(b, effect)
    assert runmemo.snapshot(b) == after
    assert (b / "pkg" / "__pycache__" / "m.pyc").read_bytes() == b"\x00pyc"
    assert os.readlink(b / "link") == "f.txt" and (b / "f.txt").stat().st_mode & 0o777 == 0o755


def test_a_changed_file_changes_the_digest_even_with_the_same_size(tmp_path):
    _tree(tmp_path, {"f.txt": b"aaaa"})
    d1 = runmemo.tree_digest(runmemo.snapshot(tmp_path))
    (tmp_path / "f.txt").write_bytes(b"aaab")
    assert runmemo.tree_digest(runmemo.snapshot(tmp_path)) != d1


def test_which_commands_are_test_commands():
    env = {"PATH": "/usr/bin", "LANG": "C.UTF-8"}
    bash_tool = isolated(["timeout", "-k", "5", "120", "bash", "-c", "exec 2>&1\npython3 -m pytest -q tests/test_x.py"], env)
    checker = isolated(["bash", "-c", "ulimit -S -t 60\nexec 2>&1\npy.test tests"], env)
    assert runmemo.is_test_command(bash_tool) and runmemo.is_test_command(checker)
    for script in ("ls tests", "grep -n pytest_plugin setup.cfg", "cat pytest.ini", "echo mypytest x"):
        assert not runmemo.is_test_command(isolated(["bash", "-c", script], env)), script
    assert not runmemo.is_test_command(["pytest"])  # no shell script argument


def test_storable_exit_statuses():
    assert [c for c in (0, 1, 2, 5, 123, 124, 125, 127, 128, 137, 152, -9) if runmemo.storable(c)] == [0, 1, 2, 5, 123, 125, 127]


def test_the_memo_drops_the_least_recently_used_beyond_its_bound():
    from inspect_ai.util import ExecResult

    memo = runmemo.RunMemo(max_bytes=10)
    empty = runmemo.TreeEffect((), ())
    memo.put(("a",), ExecResult(True, 0, "1234", ""), (empty,))
    memo.put(("b",), ExecResult(True, 0, "1234", ""), (empty,))
    assert memo.get(("a",)) is not None  # a is now the most recent
    memo.put(("c",), ExecResult(True, 0, "1234", ""), (empty,))
    assert memo.get(("b",)) is None and len(memo) == 2
    memo.put(("big",), ExecResult(True, 0, "x" * 11, ""), (empty,))
    assert memo.get(("big",)) is None and (memo.hits, memo.misses) == (1, 2)


#: a "test run": counts its runs outside the tree, writes a cache file, prints the tree's file
SCRIPT = ('pytest() { echo ran >> ../runs; mkdir -p __pycache__; echo "$(cat f.txt)-cached" > __pycache__/c.pyc; '
          'echo "passed $(cat f.txt)"; return $CODE; }; pytest -q')


def _arm(path, content, code=0):
    """One arm of a sample: claim `path`, write f.txt, run the test command twice, clean up.
    Returns the two results' stdout and exit codes and the tree's cache file after them."""

    async def main():
        sb = ReadbenchLocalSandbox()
        await sb.claim(path)
        await sb.write_file("f.txt", content)
        outs = []
        for _ in range(2):
            res = await sb.exec(["env", "-i", f"CODE={code}", "PATH=/usr/bin:/bin", "bash", "-c", SCRIPT])
            outs.append((res.stdout, res.returncode))
        cached = (path / "__pycache__" / "c.pyc").read_text()
        sb.directory.cleanup()
        return outs, cached

    return anyio.run(main)


def _runs(tmp_path):
    runs = tmp_path / "ws" / "runs"
    return len(runs.read_text().splitlines()) if runs.exists() else 0


@pytest.fixture()
def memo(monkeypatch):
    fresh = runmemo.RunMemo()
    monkeypatch.setattr(local, "RUN_MEMO", fresh)
    monkeypatch.delenv(runmemo.ENV_SWITCH, raising=False)
    return fresh


def test_a_second_arm_on_an_identical_tree_gets_the_result_and_the_effect_without_running(tmp_path, memo):
    path = tmp_path / "ws" / "s-e1"
    first = _arm(path, "v1")
    # the second run of the first arm sees __pycache__ (a different tree): it runs
    assert first == ([("passed v1\n", 0), ("passed v1\n", 0)], "v1-cached\n") and _runs(tmp_path) == 2
    second = _arm(path, "v1")  # another arm, the same tree: both runs are memo hits, the cache file replayed
    assert second == first and _runs(tmp_path) == 2 and (memo.hits, len(memo)) == (2, 2)
    third = _arm(path, "v2")  # another edit: runs
    assert third == ([("passed v2\n", 0), ("passed v2\n", 0)], "v2-cached\n") and _runs(tmp_path) == 4


def test_load_dependent_exits_and_the_switch_are_not_memoised(tmp_path, memo, monkeypatch):
    path = tmp_path / "ws" / "s-e1"
    _arm(path, "v1", code=124)  # timeout(1)'s kill status: never stored
    _arm(path, "v1", code=124)
    assert _runs(tmp_path) == 4 and len(memo) == 0
    monkeypatch.setenv(runmemo.ENV_SWITCH, "0")
    _arm(path, "v1")
    _arm(path, "v1")
    assert _runs(tmp_path) == 8 and len(memo) == 0


def test_a_run_starts_with_an_empty_memo(tmp_path, memo, monkeypatch):
    """Two runs in one process (the determinism test runs both in-process) each run their own
    tests: run_plan empties the memo before eval_set; the memo is kept during the run."""
    import inspect_ai
    from inspect_ai.util import ExecResult

    from readbench.run.matrix import load_matrix
    from readbench.run.runner import RunPlan, run_plan

    memo.put(("earlier run",), ExecResult(True, 0, "out", ""), (runmemo.TreeEffect((), ()),))
    seen = []

    def eval_set(tasks, **kwargs):
        seen.append(len(memo))
        memo.put(("this run",), ExecResult(True, 0, "out", ""), (runmemo.TreeEffect((), ()),))
        return True, []

    monkeypatch.setattr(inspect_ai, "eval_set", eval_set)
    plan = RunPlan(load_matrix("evals/smoke.yaml"), ["readbench/sim-mixed"], "local", [])
    assert run_plan(plan, tmp_path) == (True, False)
    assert seen == [0] and memo.get(("earlier run",)) is None and memo.get(("this run",)) is not None
    memo.clear()
    assert len(memo) == 0 and (memo.hits, memo.misses) == (0, 0)


#: a "test run" numbering its temporary directories like pytest's tmp_path (pytest-0, pytest-1, ...)
TMP_SCRIPT = ('pytest() { echo ran >> ../runs; n=$(ls "$TMPDIR" | grep -c "^pytest-"); mkdir "$TMPDIR/pytest-$n"; '
              'echo "passed in pytest-$n"; }; pytest -q')


def _tmp_arm(path, before=None):
    """One arm: claim `path`, optionally run a non-test command `before`, run TMP_SCRIPT twice with
    the sample's temporary directory as TMPDIR. Returns the outputs and the directory's listing."""

    async def main():
        sb = ReadbenchLocalSandbox()
        await sb.claim(path)
        tmp = sb.directory.tmp
        argv = ["env", "-i", f"TMPDIR={tmp}", "PATH=/usr/bin:/bin", "bash", "-c"]
        if before:
            await sb.exec([*argv, before])
        outs = [(await sb.exec([*argv, TMP_SCRIPT])).stdout for _ in range(2)]
        listing = sorted(os.listdir(tmp))
        sb.directory.cleanup()
        assert not tmp.exists()
        return outs, listing

    return anyio.run(main)


def test_the_samples_temporary_directory_is_an_input_and_an_effect_of_a_test_run(tmp_path, memo):
    """A test run's output can depend on what earlier commands left in TMPDIR (pytest numbers its
    tmp_path directories from it): the directory's content is part of the key and the run's effect
    on it is replayed on a hit."""
    path = tmp_path / "ws" / "s-e1"
    first = _tmp_arm(path)
    assert first == (["passed in pytest-0\n", "passed in pytest-1\n"], ["pytest-0", "pytest-1"]) and _runs(tmp_path) == 2
    assert _tmp_arm(path) == first and _runs(tmp_path) == 2 and memo.hits == 2  # replayed, TMPDIR included
    other = _tmp_arm(path, before='touch "$TMPDIR/pytest-x"')  # another TMPDIR: runs, its own numbering
    assert other == (["passed in pytest-1\n", "passed in pytest-2\n"], ["pytest-1", "pytest-2", "pytest-x"])
    assert _runs(tmp_path) == 4



def test_a_file_hashed_in_the_tick_of_its_write_is_hashed_again(tmp_path, monkeypatch):
    """Before kernel 6.13 file times tick per jiffy (1-10 ms): a file rewritten at the same size in
    the tick of a write whose bytes were just hashed keeps (inode, size, mtime, ctime), so a cached
    digest of the first bytes would key the memo by a tree that is not there (git's "racily clean"
    case). Simulated here by handing the second call the first write's stat: a digest taken within
    `RACY_SECONDS` of the file's ctime must not be reused; one taken later is."""
    path = tmp_path / "f.py"
    path.write_bytes(b"x = 1\n")
    st = os.stat(path)
    first = runmemo._file_digest(str(path), st)
    path.write_bytes(b"x = 2\n")  # same size; on a coarse clock the same times
    assert runmemo._file_digest(str(path), st) != first

    settled = tmp_path / "old.py"
    settled.write_bytes(b"y = 1\n")
    st = os.stat(settled)
    monkeypatch.setattr(runmemo, "_now", lambda: st.st_ctime + runmemo.RACY_SECONDS + 1)
    cached = runmemo._file_digest(str(settled), st)  # hashed well after its last change: cached
    settled.write_bytes(b"y = 2\n")
    assert runmemo._file_digest(str(settled), st) == cached  # the cache serves settled files (same stat)
