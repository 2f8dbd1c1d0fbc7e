"""``readbench-docker``: inspect's docker sandbox whose commands and file reads go to the Docker
Engine API in-process instead of through one ``docker compose`` CLI process per call.

GitHub issue 26 ("`make eval` from a fresh clone <= 8 minutes on an idle 2-core machine"). Measured
on this machine (2026-12, 20 calls each into one running container, load 8):

============================  ==============  ======================  =====================
one call of ``true``          client CPU (ms)  dockerd + containerd +  wall (ms)
                                                shims CPU (ms)
============================  ==============  ======================  =====================
``docker compose exec``       141             160                     726
``docker exec``               33              108                     234
Engine API (docker SDK)       ~0 (in-process)  73                      158
``docker compose cp`` (read)  130             64                      492
============================  ==============  ======================  =====================

The smoke matrix makes about 4,800 such calls (1,149 reads, 1,258 bash, 304 greps of two execs,
94 edits, ~13 per sample to start and probe it), so the compose CLI alone was ~0.3 CPU s per call.

What this module changes, and only this: `ReadbenchDockerSandbox.exec` (every tool and checker
command, and inspect's own ``write_file``, whose ``mkdir -p`` and ``tee`` come through it with
their input) and `ReadbenchDockerSandbox.read_file` talk to the engine through the ``docker``
SDK (already a dependency: readbench.sandbox.images), and test commands go through the run memo
(readbench.sandbox.dockermemo). For a compose file readbench wrote
(readbench.sandbox.images.render_compose: one service, no build, no network; `api_service`) the
sample's container is also created, started and removed through the Engine API
(`ReadbenchDockerSandbox.sample_init`, ``sample_cleanup``, ``connection``), with compose's
container name and labels and inside the compose project inspect registers for its cleanup: on
the smoke matrix inspect's ``docker compose`` and ``docker`` CLI processes for this (8 a sample)
were ~170 of the command's ~450 CPU s (2026-12-07, load 6-9). Everything else -- the
task's checks, other compose files, interrupted samples (brought down by inspect's ``compose
down`` at the end of the task) -- is inspect's `DockerSandboxEnvironment`, unchanged. The
results are those of inspect's compose path:

- the command runs in the same container with the same ``--workdir`` (inspect's resolution of
  ``cwd``), ``--user`` and ``--env``, no TTY; stdin gets the input and is closed (at end of file
  without input);
- a ``timeout`` wraps it in ``/usr/bin/timeout -k 5s <t>s`` inside the container, as inspect does,
  and exit 124 (or 137/143 after the timeout elapsed) raises `TimeoutError`; the host waits at
  most ``t + 10`` s (inspect's slack) and then raises `TimeoutError` too;
- stdout and stderr are kept separately, each to its last ``MAX_EXEC_OUTPUT_SIZE`` bytes (bounded
  while reading, as inspect's ``CircularByteBuffer``), and decoded as UTF-8 with replacement
  characters (inspect's ``run_subprocess``);
- a failed command is classified as inspect's (``classify_exec_failure``: a runtime refusal to
  execute is `PermissionError`, a missing timeout wrapper `SandboxUnavailableError`), and a
  signal exit with no output from a container that has exited is `SandboxUnavailableError`;
- ``read_file`` fetches the engine's tar archive of the path (what ``docker compose cp -L``
  fetches: a symlink is followed to the target the engine resolves) and takes the one regular
  file out of it with inspect's own checks (directory, size limit, permission, not a regular
  file); a missing path is `FileNotFoundError`.

`tests/sandbox/test_dockerexec.py` (slow, needs an engine) runs the same commands and reads
through both paths and asserts equal results.
"""

from __future__ import annotations

import errno
import functools
import hashlib
import json
import os
import posixpath
import shlex
import time
from pathlib import PurePosixPath
from typing import Any, Literal, Union, overload

import anyio
import anyio.to_thread
from inspect_ai.util import (
    ExecResult,
    SandboxConnection,
    SandboxEnvironment,
    SandboxEnvironmentLimits,
    SandboxUnavailableError,
    sandboxenv,
)
from inspect_ai.util._sandbox.docker.diagnostics import service_dead
from inspect_ai.util._sandbox.docker.docker import _READ_FILE_ARCHIVE_OVERHEAD as _ARCHIVE_OVERHEAD
from inspect_ai.util._sandbox.docker.docker import (
    DockerSandboxEnvironment,
    _archive_starts_with_directory,
    _is_directory_alias,
    _read_archived_file,
    _read_file_size_error,
)
from inspect_ai.util._sandbox.docker.failure import InjectedWrapper, classify_exec_failure

from readbench.sandbox import runmemo

__all__ = ["API_SERVICE_KEYS", "SANDBOX_NAME", "ReadbenchDockerSandbox", "api_service", "engine_client"]

SANDBOX_NAME = "readbench-docker"
"""The sandbox type name a sample's spec uses (readbench.run.task._sandbox_spec)."""
#: inspect's host-side slack over the in-container timeout (DockerSandboxEnvironment.exec)
HOST_SLACK_SECONDS = 10
#: Go's os.ModeSymlink in the engine's path-stat header
_GO_MODE_SYMLINK = 1 << 27
#: the keys of the one ``default`` service in readbench's compose files
#: (readbench.sandbox.images.render_compose); a file of exactly that shape is started and removed
#: through the Engine API (`api_service`), any other through inspect's compose CLI path
API_SERVICE_KEYS = frozenset({"image", "x-local", "init", "command", "network_mode", "working_dir", "cpus", "mem_limit"})


@functools.lru_cache(maxsize=1)
def engine_client() -> Any:
    """This process's low-level Engine API client (``docker.APIClient`` from the environment:
    ``DOCKER_HOST`` or the default socket), made once; safe to share between threads.

    Raises:
        docker.errors.DockerException: no engine answers.
    """
    import docker
    from docker.utils import kwargs_from_env

    # no socket timeout: a command runs as long as it runs (the host-side bound is exec's fail_after)
    return docker.APIClient(**kwargs_from_env(), timeout=None)  # type: ignore[arg-type]


def api_service(config: Any) -> dict[str, Any] | None:
    """The ``default`` service of `config` when it is a compose file written by
    readbench.sandbox.images.render_compose (one service named ``default`` with exactly
    `API_SERVICE_KEYS`, an absolute working directory, no ``${`` interpolation, no
    ``SAMPLE_METADATA_`` reference), else None (inspect's compose path then runs it)."""
    if not isinstance(config, str) or not config.endswith((".yaml", ".yml")):
        return None
    try:
        return _api_service(config, os.stat(config).st_mtime_ns)
    except OSError:
        return None


@functools.lru_cache(maxsize=64)
def _api_service(path: str, mtime_ns: int) -> dict[str, Any] | None:
    import yaml

    text = open(path, encoding="utf-8").read()
    if "${" in text or "SAMPLE_METADATA_" in text:
        return None
    try:
        doc = yaml.safe_load(text)
    except yaml.YAMLError:
        return None
    if not isinstance(doc, dict) or set(doc) != {"services"} or not isinstance(doc["services"], dict):
        return None
    services = doc["services"]
    service = services.get("default")
    if set(services) != {"default"} or not isinstance(service, dict) or set(service) != API_SERVICE_KEYS:
        return None
    if not (isinstance(service["image"], str) and isinstance(service["command"], (str, list))
            and isinstance(service["working_dir"], str) and posixpath.isabs(service["working_dir"])
            and service["init"] is True and isinstance(service["network_mode"], str)
            and isinstance(service["cpus"], (int, float)) and isinstance(service["mem_limit"], (str, int))):
        return None
    return dict(service)


def _api_up(project: str, config: str, service: dict[str, Any]) -> str:
    """Create and start the service's container as ``docker compose up`` does for this file (same
    name, compose's labels, so ``docker compose -p <project> ps|down`` and inspect's cleanup find
    it); returns its id.

    Raises:
        docker.errors.DockerException: the engine refused (the container, if made, is removed).
    """
    client = engine_client()
    command = service["command"]
    host = client.create_host_config(init=True, network_mode=service["network_mode"],
                                     nano_cpus=int(round(float(service["cpus"]) * 1e9)),
                                     mem_limit=service["mem_limit"])
    labels = {"com.docker.compose.project": project, "com.docker.compose.service": "default",
              "com.docker.compose.oneoff": "False", "com.docker.compose.container-number": "1",
              "com.docker.compose.depends_on": "", "com.docker.compose.project.config_files": config,
              "com.docker.compose.project.working_dir": os.path.dirname(config),
              # compose's ps/exec/down skip a container without this label; compose's own value is a
              # digest of its service model, here one of the file's service (only `up` compares it)
              "com.docker.compose.config-hash": hashlib.sha256(json.dumps(service, sort_keys=True).encode()).hexdigest()}
    created = client.create_container(service["image"], command=shlex.split(command) if isinstance(command, str)
                                      else list(command), working_dir=service["working_dir"], labels=labels,
                                      host_config=host, name=f"{project}-default-1")
    try:
        client.start(created["Id"])
    except BaseException:
        client.remove_container(created["Id"], v=True, force=True)
        raise
    return str(created["Id"])


def _tail(data: bytes | None, limit: int) -> bytes:
    data = data or b""
    return data[-limit:] if len(data) > limit else data


@sandboxenv(name=SANDBOX_NAME)
class ReadbenchDockerSandbox(DockerSandboxEnvironment):
    """inspect's docker sandbox with exec (no input) and read_file through the Engine API (see
    the module docstring)."""

    _container: str | None = None
    #: started by `sample_init` through the Engine API (removed the same way by `sample_cleanup`)
    _api_started: bool = False
    #: seconds between inspect's agent-bridge polls for a real harness's model requests here
    #: (readbench.agents.bridge_poll; inspect's own: 2): a poll (one exec) costs ~6-8 ms CPU here and
    #: ~50-70 ms in dockerd/containerd/runc
    BRIDGE_POLL_SECONDS = 0.5

    @classmethod
    async def sample_init(cls, task_name: str, config: Any, metadata: dict[str, str]) -> dict[str, SandboxEnvironment]:
        """The sample's container. For a readbench compose file (`api_service`) it is created and
        started through the Engine API in-process, under the compose project inspect would have
        made (registered with inspect's cleanup, compose's container name and labels), and its
        working directory is the file's ``working_dir``. inspect's path ran 8 docker CLI processes
        per sample for this (``compose config``, ``up --wait``, ``ps`` twice, ``exec pwd``, and at
        the end ``down`` and ``config --images``, plus ``ps`` and ``docker inspect`` for the
        sample's connection record): ~1.5 CPU s of client processes per sample on the smoke matrix
        (170 of the command's ~450 CPU s, 2026-12-07), and ~8 s of wall. Any other
        file: inspect's compose up, its environments re-made as this class."""
        service = api_service(config)
        if service is not None:
            return await cls._api_sample_init(task_name, str(config), metadata, service)
        envs = await super().sample_init(task_name, config, metadata)
        out: dict[str, SandboxEnvironment] = {}
        for name, env in envs.items():
            docker_env = env.as_type(DockerSandboxEnvironment)
            out[name] = cls(docker_env._service, docker_env._project, docker_env._working_dir)
        return out

    @classmethod
    async def _api_sample_init(cls, task_name: str, config: str, metadata: dict[str, str],
                               service: dict[str, Any]) -> dict[str, SandboxEnvironment]:
        from inspect_ai.log._samples import sample_active
        from inspect_ai.util._sandbox.docker.cleanup import project_cleanup, project_startup
        from inspect_ai.util._sandbox.docker.docker import resolve_config_environment
        from inspect_ai.util._sandbox.docker.util import ComposeProject, task_project_name

        resolved = resolve_config_environment(config, metadata)
        sample = sample_active()
        project = await ComposeProject.create(
            name=task_project_name(task_name), config=config,
            sample_id=sample.sample.id if sample is not None else None,
            epoch=sample.epoch if sample is not None else None, env=resolved.env if resolved is not None else {})
        project_startup(project)  # inspect's registry: task_cleanup brings down what a sample left
        try:
            container = await anyio.to_thread.run_sync(_api_up, project.name, project.config or config, service)
        except BaseException:
            await project_cleanup(project, True)
            raise
        env = cls("default", project, str(PurePosixPath(service["working_dir"])))
        env._container, env._api_started = container, True
        return {"default": env}

    @classmethod
    async def sample_cleanup(cls, task_name: str, config: Any, environments: dict[str, SandboxEnvironment],
                             interrupted: bool) -> None:
        """A container `sample_init` started through the Engine API is removed the same way
        (``docker rm -f -v``: nothing in it outlives the sample); inspect's cleanup otherwise, and
        when interrupted (inspect then brings every project down at the end of the task)."""
        env = next(iter(environments.values()), None)
        if interrupted or not isinstance(env, ReadbenchDockerSandbox) or not env._api_started:
            await super().sample_cleanup(task_name, config, environments, interrupted)
            return
        from inspect_ai.util._sandbox.docker.cleanup import cleanup_state, project_cleanup

        container = env._container
        try:
            await anyio.to_thread.run_sync(lambda: engine_client().remove_container(container, v=True, force=True))
        except Exception:  # noqa: BLE001 - any engine error: inspect's compose down finds it by its labels
            await project_cleanup(env._project, True)
            return
        running = cleanup_state().running_projects
        if env._project in running:
            running.remove(env._project)

    async def connection(self, *, user: str | None = None) -> SandboxConnection:
        """inspect's connection record (``docker exec -it <container> bash -l``, ports) for a
        container started through the Engine API, read through it; inspect's otherwise."""
        if not self._api_started or self._container is None:
            return await super().connection(user=user)
        from inspect_ai.util._sandbox.docker.docker import parse_docker_inspect_ports

        container_id = self._container
        info = await anyio.to_thread.run_sync(lambda: engine_client().inspect_container(container_id))
        name = str(info["Name"]).lstrip("/")
        ports = parse_docker_inspect_ports(json.dumps((info.get("NetworkSettings") or {}).get("Ports") or {}))
        return SandboxConnection(
            type="docker",
            command=shlex.join(["docker", "exec", "-it", *(["--user", user] if user else []), name, "bash", "-l"]),
            vscode_command=["remote-containers.attachToRunningContainer", name] if user is None else None,
            ports=ports, container=name)

    async def _container_id(self) -> str:
        """The id of this service's container in this compose project (looked up once, by the
        labels compose sets).

        Raises:
            inspect_ai.util.SandboxUnavailableError: no running container has those labels.
        """
        if self._container is None:
            labels = [f"com.docker.compose.project={self._project.name}", f"com.docker.compose.service={self._service}"]
            found = await anyio.to_thread.run_sync(
                lambda: engine_client().containers(filters={"label": labels, "status": "running"}, quiet=True))
            if not found:
                raise SandboxUnavailableError(
                    f'no running container for service "{self._service}" of compose project {self._project.name}')
            self._container = found[0]["Id"]
        return self._container

    async def exec(self, cmd: list[str], input: str | bytes | None = None, cwd: str | None = None,  # noqa: A002
                   env: dict[str, str] | None = None, user: str | None = None, timeout: int | None = None,
                   timeout_retry: bool = True, concurrency: bool = True) -> ExecResult[str]:
        """Run `cmd` in the container through the Engine API (`input`, if any, written to its
        stdin, which is then closed); results and errors as inspect's `DockerSandboxEnvironment.exec`
        (module docstring). A test command (no input, env or user) goes through the run memo
        (readbench.sandbox.dockermemo).

        Raises:
            TimeoutError: the in-container timeout fired, or the host waited `timeout` + 10 s.
            inspect_ai.util.SandboxUnavailableError: the container is gone or not running, or
                died during the command (inspect's check: exit > 128, no output, service exited).
            PermissionError: the runtime could not execute ``cmd[0]`` (inspect's classification).
        """
        if input is None and not env and user is None and runmemo.enabled() and runmemo.is_test_command(cmd):
            from readbench.sandbox import dockermemo
            from readbench.sandbox.local import RUN_MEMO

            container = await self._container_id()

            async def raw(argv: list[str], data: bytes | None) -> tuple[int, bytes, bytes]:
                return await anyio.to_thread.run_sync(_run_exec, container, argv, data, self._working_dir, None, None)

            async def put_archive(tar: bytes) -> None:
                await anyio.to_thread.run_sync(lambda: engine_client().put_archive(container, "/", tar))

            key = (self._project.config, tuple(cmd), cwd, timeout)
            return await dockermemo.memo_exec(RUN_MEMO, key, (self._working_dir, "/tmp"), raw,
                                              lambda: self._exec_api(cmd, None, cwd, env, user, timeout), put_archive)
        return await self._exec_api(cmd, input, cwd, env, user, timeout)

    async def _exec_api(self, cmd: list[str], input: str | bytes | None, cwd: str | None,  # noqa: A002
                        env: dict[str, str] | None, user: str | None, timeout: int | None) -> ExecResult[str]:
        data = input.encode() if isinstance(input, str) else input
        final_cwd = PurePosixPath(self._working_dir if cwd is None else cwd)
        if not final_cwd.is_absolute():
            final_cwd = self._working_dir / final_cwd
        argv = cmd if timeout is None else ["/usr/bin/timeout", "-k", "5s", f"{timeout}s", *cmd]
        container = await self._container_id()
        limit = SandboxEnvironmentLimits.MAX_EXEC_OUTPUT_SIZE
        start = time.monotonic()
        handle = _Exec()
        try:
            with anyio.fail_after(None if timeout is None else timeout + HOST_SLACK_SECONDS):
                code, out, err = await anyio.to_thread.run_sync(
                    _run_exec, container, argv, data, str(final_cwd), env, user, limit, handle, abandon_on_cancel=True)
        except TimeoutError as exc:
            handle.abandon()
            raise TimeoutError(f"Command timed out after {timeout} seconds") from exc
        except BaseException:  # cancelled: the worker thread stops reading (the command runs on, as inspect's)
            handle.abandon()
            raise
        result = ExecResult(code == 0, code, _tail(out, limit).decode(errors="replace"),
                            _tail(err, limit).decode(errors="replace"))
        if timeout is not None and code in (124, 137, 143) and (code == 124 or time.monotonic() - start >= timeout):
            error = TimeoutError(f"Command timed out after {timeout} seconds")
            if result.stdout or result.stderr:
                setattr(error, "truncated_output", result.stdout + result.stderr)
            raise error
        # inspect's classification of a failed exec: the runtime refusing to start the command
        # (PermissionError), the timeout wrapper gone (SandboxUnavailableError), and a signal exit
        # with no output from a container that has exited (#264)
        failure = classify_exec_failure(
            result, wrapper=InjectedWrapper(binary=argv[0], target=cmd[0]) if argv is not cmd and cmd else None)
        if (failure is None and not result.success and code > 128 and not result.stdout.strip()
                and not result.stderr.strip() and await service_dead(self._service, self._project)):
            failure = SandboxUnavailableError(
                f"The sandbox is not running and cannot execute: command exited with code {code} and no output, "
                f'and the container for service "{self._service}" has exited (container diagnostics logged as a warning)')
        if failure is not None:
            if isinstance(failure, SandboxUnavailableError):
                await self._log_unavailable_diagnostics()
            raise failure
        return result

    @overload
    async def read_file(self, file: str, text: Literal[True] = True) -> str: ...

    @overload
    async def read_file(self, file: str, text: Literal[False]) -> bytes: ...

    async def read_file(self, file: str, text: bool = True) -> Union[str, bytes]:
        """The bytes (or UTF-8 text) of `file` (relative paths from the working directory),
        fetched as the engine's archive of it, following a symlink (``docker compose cp -L``).

        Raises:
            FileNotFoundError: no such path. IsADirectoryError: a directory.
            PermissionError: not readable. OSError: not a regular file.
            inspect_ai.util.OutputLimitExceededError: larger than MAX_READ_FILE_SIZE.
        """
        if _is_directory_alias(file):
            raise IsADirectoryError(errno.EISDIR, "Is a directory.", file)
        path = self.container_file(file)
        container = await self._container_id()
        limit = SandboxEnvironmentLimits.MAX_READ_FILE_SIZE + _ARCHIVE_OVERHEAD

        def fetch() -> bytes:
            import docker.errors

            client = engine_client()
            try:
                stream, stat = client.get_archive(container, path)
                if stat["mode"] & _GO_MODE_SYMLINK:  # -L: copy the target the engine resolved instead
                    for _ in stream:  # the link's own one-entry archive: read it to free the connection
                        pass
                    target = stat.get("linkTarget") or ""
                    src = target if posixpath.isabs(target) else posixpath.join(posixpath.dirname(path), target)
                    stream, _ = client.get_archive(container, src)
                archive = bytearray()
                for chunk in stream:
                    archive += chunk
                    if len(archive) > limit:
                        break
                return bytes(archive)
            except docker.errors.NotFound as exc:
                raise FileNotFoundError(errno.ENOENT, "No such file or directory.", file) from exc
            except docker.errors.APIError as exc:
                if "permission denied" in str(exc).lower():
                    raise PermissionError(errno.EACCES, "Permission denied.", file) from exc
                raise RuntimeError(f"reading {file} from the sandbox failed: {exc}") from exc

        archive = await anyio.to_thread.run_sync(fetch)
        if len(archive) > limit:
            if _archive_starts_with_directory(archive[:_ARCHIVE_OVERHEAD]):
                raise IsADirectoryError(errno.EISDIR, "Is a directory.", file)
            raise _read_file_size_error()
        contents = _read_archived_file(archive, file)
        return contents.decode("utf-8") if text else contents


class _Exec:
    """What the event loop can do to an exec its worker thread runs: `abandon` it (the caller was
    cancelled or gave up): the thread's stream is shut, so its read ends, and it stops waiting for
    the command's exit. Without it a cancelled exec's thread read on until the command ended in the
    container, and the process could not exit before (anyio's worker threads are joined at exit;
    measured: ``sleep 30`` cancelled after 1 s, exit at 35.6 s)."""

    def __init__(self) -> None:
        self.sock: Any = None
        self.abandoned = False

    def abandon(self) -> None:
        """Shut the exec's stream (from any thread); idempotent."""
        import socket

        self.abandoned = True
        sock = self.sock
        if sock is not None:
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:  # already closed
                pass


def _start_attached(client: Any, exec_id: str, data: bytes | None, limit: int | None = None,
                    handle: _Exec | None = None) -> tuple[bytes, bytes]:
    """Start exec `exec_id` attached (the upgraded connection ``docker exec`` uses), write `data`
    (if any) to its stdin from a second thread (so a command that writes before it has read
    everything cannot block us), close stdin, and return its (stdout, stderr) once it closes them:
    whole, or with `limit` each one's last `limit` bytes, never holding more than twice that while
    reading (inspect's ``CircularByteBuffer`` bound: a command printing 1 GB took this process to
    2 GB peak RSS when the output was cut only at the end).

    The multiplexed frames (8-byte header: stream 1 or 2, 3 zero bytes, big-endian length) are
    read through the response's buffered reader, not the bare socket as docker-py's
    ``exec_start`` does: output the engine sent right behind the ``101 UPGRADED`` headers can sit
    in that buffer, and reading the socket loses it (docker/docker-py#2042; seen here once in a
    loaded smoke run: a fast ``rg`` returned exit 0 with no output).

    Raises:
        docker.errors.APIError: the engine refused to start it.
    """
    import socket
    import threading

    res = client._post_json(client._url("/exec/{0}/start", exec_id), headers={"Connection": "Upgrade", "Upgrade": "tcp"},
                            data={"Tty": False, "Detach": False}, stream=True)
    client._raise_for_status(res)
    reader = res.raw._fp.fp  # the BufferedReader http.client parsed the headers with
    raw: Any = getattr(reader.raw, "_sock", None)  # the connection's socket (a test's reader has none)
    if handle is not None:
        handle.sock = raw
        if handle.abandoned:  # cancelled while the exec was being started
            handle.abandon()
    writer = None
    if data is not None:

        def feed() -> None:
            try:
                raw.sendall(data)
                raw.shutdown(socket.SHUT_WR)
            except OSError:  # the command exited without reading all of it (as a pipe's reader may)
                pass

        writer = threading.Thread(target=feed, daemon=True)
        writer.start()
    streams = {1: bytearray(), 2: bytearray()}
    try:
        while True:
            header = reader.read(8)
            if len(header) < 8:
                break
            payload = reader.read(int.from_bytes(header[4:8], "big"))
            if header[0] in streams:
                buf = streams[header[0]]
                buf += payload
                if limit is not None and len(buf) > 2 * limit:
                    del buf[:-limit]
    finally:
        if writer is not None:
            writer.join()
        res.close()
    if limit is not None:
        return _tail(bytes(streams[1]), limit), _tail(bytes(streams[2]), limit)
    return bytes(streams[1]), bytes(streams[2])


def _run_exec(container: str, argv: list[str], data: bytes | None, workdir: str, env: dict[str, str] | None,
              user: str | None, limit: int | None = None, handle: _Exec | None = None) -> tuple[int, bytes, bytes]:
    """One exec through the Engine API (blocking): (exit status, stdout, stderr), whole, or each
    stream's last `limit` bytes (`_start_attached`); once `handle` is abandoned, (-1, b"", b"")
    without waiting for the command (its result is no one's).

    Raises:
        inspect_ai.util.SandboxUnavailableError: no such container, or it is not running.
        RuntimeError: another engine error.
    """
    import docker.errors

    client = engine_client()
    try:
        exec_id = client.exec_create(container, argv, stdout=True, stderr=True, stdin=data is not None, tty=False,
                                     user=user or "", workdir=workdir,
                                     environment=[f"{k}={v}" for k, v in (env or {}).items()] or None)["Id"]
        out, err = _start_attached(client, exec_id, data, limit, handle)
        info = client.exec_inspect(exec_id)
        delay = 0.01
        # the stream closed a moment before the engine recorded the exit, or the command closed its
        # stdout and stderr and runs on: polled at 10 ms, backing off to 0.5 s (not 100 calls a second)
        while info.get("Running"):
            if handle is not None and handle.abandoned:
                return -1, b"", b""
            time.sleep(delay)
            delay = min(delay * 2, 0.5)
            info = client.exec_inspect(exec_id)
    except docker.errors.APIError as exc:
        if exc.status_code in (404, 409):  # no such container / container not running
            raise SandboxUnavailableError(f"The sandbox is not running and cannot execute: {exc}") from exc
        raise RuntimeError(f"docker exec of {argv[:1]} failed: {exc}") from exc
    return int(info["ExitCode"]), out or b"", err or b""
