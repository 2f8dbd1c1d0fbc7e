"""readbench-docker (readbench.sandbox.dockerexec) gives what inspect's compose path gives.

In one sample of a real engine, every command and read runs twice: through
`ReadbenchDockerSandbox` (Engine API) and through inspect's `DockerSandboxEnvironment` methods
on the same object (``docker compose exec`` / ``docker compose cp -L``); the results, or the
exception types, must be equal, and equal to the values written here by hand.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from inspect_ai import Task, eval
from inspect_ai.dataset import Sample
from inspect_ai.solver import Generate, TaskState, solver
from inspect_ai.util import sandbox
from inspect_ai.util._sandbox.docker.docker import DockerSandboxEnvironment

from readbench.sandbox.dockerexec import SANDBOX_NAME, ReadbenchDockerSandbox
from readbench.sandbox.images import build_source_image, compose_for

EXECS: list[tuple[str, list[str], dict[str, Any], Any]] = [
    ("streams and status", ["sh", "-c", "printf 'a\\nb'; printf err >&2; exit 3"], {}, (3, "a\nb", "err")),
    ("cwd and env", ["sh", "-c", "echo $X; pwd"], {"cwd": "pkg", "env": {"X": "1"}}, (0, "1\n/repo/pkg\n", "")),
    ("absolute cwd", ["pwd"], {"cwd": "/tmp"}, (0, "/tmp\n", "")),
    ("invalid utf-8", ["printf", "\\377ok"], {}, (0, "\ufffdok", "")),
    ("stdin at end of file", ["sh", "-c", "cat; echo done"], {}, (0, "done\n", "")),
    ("user", ["id", "-u"], {"user": "nobody"}, (0, "65534\n", "")),
    ("timeout not reached", ["sh", "-c", "echo fast"], {"timeout": 30}, (0, "fast\n", "")),
    ("timeout fires", ["sleep", "20"], {"timeout": 1}, "TimeoutError"),
    ("text input", ["sh", "-c", "wc -c; cat"], {"input": "h\u00e9\n"}, (0, "4\n", "")),
    ("text input echoed", ["cat"], {"input": "h\u00e9\n"}, (0, "h\u00e9\n", "")),
    ("bytes input, 3 MB echoed", ["sh", "-c", "cat | wc -c"], {"input": b"x" * 3_000_000}, (0, "3000000\n", "")),
    ("input echoed before it is all read", ["cat"], {"input": "y" * 200_000}, (0, "y" * 200_000, "")),
    ("not executable (runtime refuses: inspect's classify_exec_failure)", ["/etc/passwd"], {}, "PermissionError"),
]
READS: list[tuple[str, str, bool, Any]] = [
    ("file bytes", "pkg/calc.py", False, ["bytes", "def add(a, b):\n    return a + b\n"]),
    ("file text", "/repo/pkg/calc.py", True, "def add(a, b):\n    return a + b\n"),
    ("relative symlink followed", "link.py", True, "def add(a, b):\n    return a + b\n"),
    ("absolute symlink followed", "abslink.py", True, "def add(a, b):\n    return a + b\n"),
    ("missing", "nope.txt", True, "FileNotFoundError"),
    ("directory", "pkg", True, "IsADirectoryError"),
    ("directory alias", "pkg/..", True, "IsADirectoryError"),
]


async def _outcome(call: Any) -> Any:
    try:
        res = await call
    except Exception as exc:  # noqa: BLE001 - the exception type is the outcome compared
        return type(exc).__name__
    if isinstance(res, bytes):  # kept apart from text through the log's JSON
        return ["bytes", res.decode()]
    return [res.returncode, res.stdout, res.stderr] if hasattr(res, "returncode") else res


def _run_in_container(solver_: Any, ids: list[str], offline_base: str, tiny_repo: Any, tmp_path: Path) -> list[Any]:
    """Run `solver_` on one sample per id (one after the other, each in its own container of the tiny
    repo's image) in the readbench-docker sandbox with an empty test-run memo; the samples, by id,
    after checking that the eval succeeded."""
    from readbench.sandbox.local import RUN_MEMO

    tree, deps = tiny_repo
    tag = build_source_image("dockerexec-tiny", tree, deps, offline_base)
    compose = compose_for(tag, tmp_path / "compose")
    RUN_MEMO.clear()
    task = Task(dataset=[Sample(id=i, input="x") for i in ids], solver=solver_, sandbox=(SANDBOX_NAME, str(compose)))
    [log] = eval(task, model="mockllm/model", log_dir=str(tmp_path / "logs"), display="none", max_samples=1)
    assert log.status == "success", log.error
    return sorted(log.samples or [], key=lambda s: str(s.id))


@solver
def both_paths() -> Any:
    async def solve(state: TaskState, generate: Generate) -> TaskState:
        sb = sandbox()
        api = sb.as_type(ReadbenchDockerSandbox)
        await DockerSandboxEnvironment.exec(api, ["sh", "-c", "ln -s pkg/calc.py link.py; ln -s /repo/pkg/calc.py abslink.py"])
        got: dict[str, Any] = {"type": type(api).__name__}
        for name, cmd, kw, _ in EXECS:
            got[name] = [await _outcome(api.exec(cmd, **kw)), await _outcome(DockerSandboxEnvironment.exec(api, cmd, **kw))]
        for name, path, text, _ in READS:
            reader: Any = DockerSandboxEnvironment.read_file  # text is a bool here, not a Literal
            got[name] = [await _outcome(api.read_file(path, text=text) if text else api.read_file(path, text=False)),
                         await _outcome(reader(api, path, text=text))]
        # inspect's write_file (mkdir -p, then tee with input) through this exec: a new directory,
        # bytes, and an existing executable keeping its mode
        await api.write_file("new/dir/f.txt", "t\u00e9xt\n")
        await api.write_file("b.bin", b"\x00\xff")
        await api.exec(["sh", "-c", "printf old > run.sh; chmod 755 run.sh"])
        await api.write_file("run.sh", "new\n")
        got["written"] = [await api.read_file("new/dir/f.txt"), list(await api.read_file("b.bin", text=False)),
                          (await api.exec(["stat", "-c", "%a %s", "run.sh"])).stdout]
        state.metadata["got"] = got
        return state

    return solve


@pytest.mark.docker
@pytest.mark.slow
def test_engine_api_path_equals_compose_path(offline_base: str, tiny_repo, tmp_path: Path) -> None:
    [sample] = _run_in_container(both_paths(), ["s1"], offline_base, tiny_repo, tmp_path)
    assert sample.error is None, sample.error
    got = sample.metadata["got"]
    assert got["type"] == "ReadbenchDockerSandbox"
    for name, _, _, want in EXECS:
        want = list(want) if isinstance(want, tuple) else want
        assert got[name] == [want, want], name
    for name, _, _, want in READS:
        assert got[name] == [want, want], name
    assert got["written"] == ["t\u00e9xt\n", [0, 255], "755 4\n"]


#: a "test command" (it names pytest) whose output counts its runs in /tmp, that makes a file,
#: removes one, and leaves a mark outside the memo's trees (/var/tmp) each time it really runs
COUNTING = ["bash", "-c", "echo run >> /tmp/count; echo ran >> /var/tmp/ran; mkdir -p c/__pycache__; "
                          "printf x > c/__pycache__/m.pyc; rm -f gone.txt; cat /tmp/count  # pytest"]
LIST = ["sh", "-c", "cd /repo && find . /tmp -path /tmp/pytest-of-root -prune -o -print | sort; cat /tmp/count"]


@solver
def counting_twice() -> Any:
    async def solve(state: TaskState, generate: Generate) -> TaskState:
        sb = sandbox()
        await sb.exec(["touch", "gone.txt"])
        first = await sb.exec(COUNTING)
        tree = (await sb.exec(LIST)).stdout
        second = await sb.exec(COUNTING)  # the tree changed (/tmp/count): not the first run's key
        marks = await sb.exec(["cat", "/var/tmp/ran"])
        state.metadata["got"] = [first.stdout, tree, second.stdout, marks.stdout]
        return state

    return solve


@pytest.mark.docker
@pytest.mark.slow
def test_test_runs_memoised_across_containers(offline_base: str, tiny_repo, tmp_path: Path) -> None:
    from readbench.sandbox.local import RUN_MEMO

    a, b = _run_in_container(counting_twice(), ["a", "b"], offline_base, tiny_repo, tmp_path)
    tree_after = "\n".join(sorted([".", "./c", "./c/__pycache__", "./c/__pycache__/m.pyc", "./pkg", "./pkg/__init__.py",
                                   "./pkg/calc.py", "./test_calc.py", "/tmp", "/tmp/count"])) + "\nrun\n"
    # sample a ran both; sample b got both from the memo: the same outputs and trees (the first
    # replay left a's tree after its first run, the key of a's second run), and it never ran
    assert a.metadata["got"] == ["run\n", tree_after, "run\nrun\n", "ran\nran\n"]
    assert b.metadata["got"] == ["run\n", tree_after, "run\nrun\n", ""]
    assert (RUN_MEMO.hits, RUN_MEMO.misses) == (2, 2)


def test_attached_output_buffered_behind_the_upgrade_headers_is_kept():
    """Frames the engine sent in the same read as the ``101 UPGRADED`` headers sit in http.client's
    buffered reader; they must be read from it (docker/docker-py#2042: read from the bare
    socket, a fast command's whole output was lost and it looked like exit 0 with no output)."""
    import io
    from types import SimpleNamespace

    from readbench.sandbox.dockerexec import _start_attached

    frames = b"\x01\x00\x00\x00\x00\x00\x00\x06hello\n" + b"\x02\x00\x00\x00\x00\x00\x00\x04err\n" + b"\x01\x00\x00\x00\x00\x00\x00\x02!\n"
    reader = io.BufferedReader(io.BytesIO(frames))
    reader.peek(1)  # everything is in the buffer now, as after http.client read the headers
    closed = []
    res = SimpleNamespace(raw=SimpleNamespace(_fp=SimpleNamespace(fp=reader)), close=lambda: closed.append(True))
    posted = []
    client = SimpleNamespace(_url=lambda path, exec_id: path.format(exec_id), _raise_for_status=lambda r: None,
                             _post_json=lambda url, **kw: posted.append((url, kw)) or res)
    assert _start_attached(client, "abc", None) == (b"hello\n!\n", b"err\n")
    assert posted == [("/exec/abc/start", {"headers": {"Connection": "Upgrade", "Upgrade": "tcp"},
                                           "data": {"Tty": False, "Detach": False}, "stream": True})]
    assert closed == [True]


def test_attached_output_is_bounded_while_it_is_read():
    """inspect keeps only the last MAX_EXEC_OUTPUT_SIZE bytes of each stream *while* reading
    (``CircularByteBuffer``); the Engine API path kept everything and cut afterwards, so a
    command printing 1 GB took the eval process to 2 GB peak RSS (measured, review6). 200 frames of
    64 KiB (12.8 MB) with a 64 KiB limit must not hold more than 16 limits at once, and give
    exactly the last 64 KiB of each stream."""
    import io
    import tracemalloc
    from types import SimpleNamespace

    from readbench.sandbox.dockerexec import _start_attached

    size, count = 64 * 1024, 200

    class Frames(io.RawIOBase):  # the frames made as they are read (the input itself holds ~nothing)
        def __init__(self) -> None:
            self.queue = [bytes([1 + i % 2, 0, 0, 0]) + size.to_bytes(4, "big") + bytes([i % 251]) * size
                          for i in range(2)]
            self.made = 2
            self.pos = 0

        def readable(self) -> bool:
            return True

        def readinto(self, buf: Any) -> int:
            if not self.queue:
                if self.made == 2 * count:
                    return 0
                i = self.made
                self.queue.append(bytes([1 + i % 2, 0, 0, 0]) + size.to_bytes(4, "big") + bytes([i % 251]) * size)
                self.made += 1
            head = self.queue[0]
            n = min(len(buf), len(head) - self.pos)
            buf[:n] = head[self.pos:self.pos + n]
            self.pos += n
            if self.pos == len(head):
                self.queue.pop(0)
                self.pos = 0
            return n

    reader = io.BufferedReader(Frames())
    res = SimpleNamespace(raw=SimpleNamespace(_fp=SimpleNamespace(fp=reader)), close=lambda: None)
    client = SimpleNamespace(_url=lambda path, exec_id: path, _raise_for_status=lambda r: None,
                             _post_json=lambda url, **kw: res)
    tracemalloc.start()
    try:
        out, err = _start_attached(client, "abc", None, size)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert (out, err) == (bytes([(2 * count - 2) % 251]) * size, bytes([(2 * count - 1) % 251]) * size)
    assert peak < 16 * size, peak  # ~9 limits measured (two streams of up to 2 limits, the copies); before: 55 MB


def test_signal_exit_without_output_from_a_dead_container_is_unavailable(monkeypatch):
    """inspect's check (#264): exit > 128, no output and the service's container exited means the
    sandbox died under the command; the Engine API path returned ExecResult(137) instead (seen
    with ``docker kill`` during ``sleep 10``: compose path SandboxUnavailableError, API path 137).
    The same exit from a live container stays an ordinary result."""
    import asyncio
    from types import SimpleNamespace

    from inspect_ai.util import SandboxUnavailableError

    from readbench.sandbox import dockerexec

    dead = [True]

    async def service_dead(service: str, project: Any) -> bool:
        return dead[0]

    async def diagnostics(self: Any) -> None:
        return None

    monkeypatch.setattr(dockerexec, "_run_exec", lambda *a, **kw: (137, b"", b""))
    monkeypatch.setattr(dockerexec, "service_dead", service_dead)
    monkeypatch.setattr(ReadbenchDockerSandbox, "_log_unavailable_diagnostics", diagnostics)
    sb = ReadbenchDockerSandbox("default", SimpleNamespace(name="p", config="c.yaml"), "/repo")
    sb._container = "cid"
    with pytest.raises(SandboxUnavailableError, match='exited with code 137 and no output, and the container for service "default" has exited'):
        asyncio.run(sb.exec(["sleep", "10"]))
    dead[0] = False
    res = asyncio.run(sb.exec(["sleep", "10"]))
    assert (res.success, res.returncode, res.stdout, res.stderr) == (False, 137, "", "")


#: a test command (it names pytest) that changes nothing
QUIET_TEST = ["bash", "-c", "echo ok  # pytest"]


@solver
def marked_then_unmarked() -> Any:
    async def solve(state: TaskState, generate: Generate) -> TaskState:
        from readbench.fork.snapshot import drop_mark, mark_workspace

        sb = sandbox()
        mark = await mark_workspace(sb, "/repo")  # what a trunk does; a fork's container has no mark
        first = await sb.exec(QUIET_TEST)
        await drop_mark(sb, mark)
        second = await sb.exec(QUIET_TEST)
        state.metadata["got"] = [first.stdout, second.stdout]
        return state

    return solve


@pytest.mark.docker
@pytest.mark.slow
def test_fork_mark_is_not_part_of_the_memo_key(offline_base: str, tiny_repo, tmp_path: Path) -> None:
    """A trunk's fork mark (/tmp/readbench-fork-<uuid>) is in the container's /tmp, which the memo
    lists; a fork's container has no mark, so keyed with it a fork's test run never hit the
    trunk's (review6: exp5, trunk run then fork run of the same command on the same tree, 3 misses
    0 hits). The same tree with and without the mark must be one key."""
    from readbench.sandbox.local import RUN_MEMO

    [sample] = _run_in_container(marked_then_unmarked(), ["a"], offline_base, tiny_repo, tmp_path)
    assert sample.metadata["got"] == ["ok\n", "ok\n"]
    assert (RUN_MEMO.hits, RUN_MEMO.misses) == (1, 1)


#: 600 files of ~3,990-character paths (15 nested 250-character directories): more than the 2 MB an
#: argv may hold (ARG_MAX), in few entries, so the test's listings stay cheap
MANY_FILES = ["python3", "-c", "import os\nd = 'junk/' + '/'.join(['d' * 250] * 15)\nos.makedirs(d)\n"
                               "for i in range(600): open(d + '/' + 'f' * 200 + '%03d' % i, 'w').close()"]
REMOVE_THEM = ["bash", "-c", "rm -rf junk; echo ok  # pytest"]


@solver
def remove_many() -> Any:
    async def solve(state: TaskState, generate: Generate) -> TaskState:
        sb = sandbox()
        await sb.exec(MANY_FILES)
        res = await sb.exec(REMOVE_THEM)
        left = await sb.exec(["sh", "-c", "find /repo/junk 2>/dev/null | wc -l"])
        state.metadata["got"] = [res.stdout, left.stdout]
        return state

    return solve


@pytest.mark.docker
@pytest.mark.slow
def test_memo_hit_removes_more_paths_than_an_argv_holds(offline_base: str, tiny_repo, tmp_path: Path) -> None:
    """A memo hit replays the removals of the run it stores: 600 files of ~4,000-character paths here
    (and their 15 directories), whose paths passed as
    ``rm -rf -- <paths>`` exceed ARG_MAX; that exec failed unchecked and the hit left all the
    entries in place while returning the run's result (review6 exp10: 40,000 files, all 40,002
    entries left). Sample b is a hit and its tree must be a's."""
    from readbench.sandbox.local import RUN_MEMO

    a, b = _run_in_container(remove_many(), ["a", "b"], offline_base, tiny_repo, tmp_path)
    assert a.metadata["got"] == b.metadata["got"] == ["ok\n", "0\n"]  # before: b had 616 entries left
    assert (RUN_MEMO.hits, RUN_MEMO.misses) == (1, 1)


def test_top_removed_keeps_the_paths_outside_other_removed_ones():
    from readbench.sandbox.dockermemo import top_removed

    removed = ("/repo/junk/d/f1", "/repo/junk/d/f2", "/repo/junk/d", "/repo/junk", "/repo/a.txt", "/tmp/x/y")
    assert top_removed(removed) == ["/repo/a.txt", "/repo/junk", "/tmp/x/y"]


def test_a_cancelled_exec_lets_its_worker_thread_go(monkeypatch):
    """Cancelling an exec (a sample's time limit, Ctrl-C) returned at once but left its worker thread
    reading the exec's stream until the command ended in the container: review6 exp11, ``sleep 30``
    cancelled after 1 s with the container left up, the process exited at 35.6 s (anyio's worker
    threads are joined at exit). inspect's compose path kills its CLI process instead. Here the
    engine never ends the stream and always says the command runs; the thread must end soon after
    the cancellation."""
    import socket
    import threading
    from types import SimpleNamespace

    import anyio

    from readbench.sandbox import dockerexec

    ours, engine = socket.socketpair()
    released = threading.Event()  # the test's end: the fake engine lets a leftover thread finish
    res = SimpleNamespace(raw=SimpleNamespace(_fp=SimpleNamespace(fp=ours.makefile("rb"))), close=lambda: None)
    client = SimpleNamespace(
        _url=lambda path, exec_id: path, _raise_for_status=lambda r: None, _post_json=lambda url, **kw: res,
        exec_create=lambda *a, **kw: {"Id": "e1"},
        exec_inspect=lambda exec_id: {"Running": not released.is_set(), "ExitCode": 0})
    monkeypatch.setattr(dockerexec, "engine_client", lambda: client)
    done = threading.Event()
    real = dockerexec._run_exec

    def run_exec(*args: Any) -> Any:
        try:
            return real(*args)
        finally:
            done.set()

    monkeypatch.setattr(dockerexec, "_run_exec", run_exec)
    sb = ReadbenchDockerSandbox("default", SimpleNamespace(name="p", config="c.yaml"), "/repo")
    sb._container = "cid"

    async def cancelled() -> None:
        with anyio.move_on_after(0.3):
            await sb.exec(["sleep", "60"])

    try:
        anyio.run(cancelled)
        assert done.wait(5), "the worker thread still reads the cancelled exec's stream"
    finally:
        released.set()
        engine.close()
        done.wait(5)
        ours.close()


def test_a_command_that_closed_its_streams_is_waited_for_without_busy_polling(monkeypatch):
    """A command that closes stdout and stderr and runs on (``exec >&- 2>&-; sleep 30``) ends the
    stream long before its exit; the exit status was then polled every 10 ms (~100 engine calls a
    second for as long as it ran). The wait backs off to a poll every 0.5 s: here the command runs 1.2 s
    after its stream ended, so a few tens of polls at most (about 120 before)."""
    import io
    import time as _time
    from types import SimpleNamespace

    from readbench.sandbox import dockerexec

    reader = io.BufferedReader(io.BytesIO(b""))  # the stream: closed at once
    res = SimpleNamespace(raw=SimpleNamespace(_fp=SimpleNamespace(fp=reader)), close=lambda: None)
    polls = []
    ends = _time.monotonic() + 1.2

    def exec_inspect(exec_id: str) -> dict[str, Any]:
        polls.append(1)
        return {"Running": _time.monotonic() < ends, "ExitCode": 0}

    client = SimpleNamespace(_url=lambda path, exec_id: path, _raise_for_status=lambda r: None,
                             _post_json=lambda url, **kw: res, exec_create=lambda *a, **kw: {"Id": "e1"},
                             exec_inspect=exec_inspect)
    monkeypatch.setattr(dockerexec, "engine_client", lambda: client)
    assert dockerexec._run_exec("cid", ["sh"], None, "/repo", None, None) == (0, b"", b"")
    assert len(polls) < 20, len(polls)


def test_api_service_takes_only_readbench_compose_files(tmp_path: Path) -> None:
    """A file render_compose wrote is started through the Engine API; any other shape (another key,
    a second service, interpolation, a relative working directory) keeps inspect's compose path."""
    import yaml

    from readbench.sandbox.dockerexec import api_service
    from readbench.sandbox.images import render_compose

    ours = tmp_path / "ours.yaml"
    ours.write_text(render_compose("img:1"))
    assert api_service(str(ours)) == {"image": "img:1", "x-local": True, "init": True, "command": "tail -f /dev/null",
                                      "network_mode": "none", "working_dir": "/repo", "cpus": 1.0, "mem_limit": "2g"}
    base = yaml.safe_load(render_compose("img:1"))
    variants = {
        "extra key": {"services": {"default": {**base["services"]["default"], "volumes": ["/:/host"]}}},
        "second service": {"services": {**base["services"], "db": {"image": "x"}}},
        "interpolation": {"services": {"default": {**base["services"]["default"], "image": "${IMG}"}}},
        "relative workdir": {"services": {"default": {**base["services"]["default"], "working_dir": "repo"}}},
        "no init": {"services": {"default": {**base["services"]["default"], "init": False}}},
    }
    for name, doc in variants.items():
        path = tmp_path / f"{name.replace(' ', '-')}.yaml"
        path.write_text(yaml.safe_dump(doc))
        assert api_service(str(path)) is None, name
    assert api_service(str(tmp_path / "missing.yaml")) is None
    assert api_service(str(tmp_path)) is None
    assert api_service(None) is None


@solver
def record_container() -> Any:
    async def solve(state: TaskState, generate: Generate) -> TaskState:
        from readbench.sandbox.dockerexec import engine_client

        api = sandbox().as_type(ReadbenchDockerSandbox)
        info = engine_client().inspect_container(await api._container_id())
        host = info["HostConfig"]
        state.metadata["got"] = {
            "api": api._api_started, "cwd": (await api.exec(["pwd"])).stdout, "working_dir": api._working_dir,
            "name": info["Name"], "config": {k: info["Config"][k] for k in ("Cmd", "WorkingDir", "Env", "User")},
            "host": {k: host[k] for k in ("Init", "NetworkMode", "NanoCpus", "Memory", "MemorySwap")},
            "labels": {k: v for k, v in info["Config"]["Labels"].items()
                       if k in ("com.docker.compose.project", "com.docker.compose.service", "com.docker.compose.oneoff")},
            "project": api._project.name, "connection": (await api.connection()).command,
        }
        return state

    return solve


@pytest.mark.docker
@pytest.mark.slow
def test_readbench_compose_file_runs_through_the_engine_api_as_compose_would(offline_base: str, tiny_repo,
                                                                             tmp_path: Path) -> None:
    """The container sample_init makes through the Engine API has what ``docker compose up`` gave it
    (command, working directory, init, no network, CPU and memory limits, compose's name and labels,
    so ``docker compose ps|down`` find it), and sample_cleanup removes it."""
    from readbench.sandbox.dockerexec import engine_client

    [sample] = _run_in_container(record_container(), ["a"], offline_base, tiny_repo, tmp_path)
    got = sample.metadata["got"]
    project = got["project"]
    assert got["api"] is True and got["cwd"] == "/repo\n" and got["working_dir"] == "/repo"
    assert got["name"] == f"/{project}-default-1"
    assert got["config"]["Cmd"] == ["tail", "-f", "/dev/null"] and got["config"]["WorkingDir"] == "/repo"
    assert got["host"] == {"Init": True, "NetworkMode": "none", "NanoCpus": 1_000_000_000, "Memory": 2 * 1024**3,
                           "MemorySwap": 4 * 1024**3}  # what compose's mem_limit: 2g left (the engine's default swap)
    assert got["labels"] == {"com.docker.compose.project": project, "com.docker.compose.service": "default",
                             "com.docker.compose.oneoff": "False"}
    assert got["connection"] == f"docker exec -it {project}-default-1 bash -l"
    assert engine_client().containers(all=True, filters={"label": f"com.docker.compose.project={project}"}) == []
