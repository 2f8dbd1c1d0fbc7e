"""readbench.sandbox: the Docker (and Kubernetes) adapter for per-source task sandboxes.

Modules (imported on demand; importing this package runs nothing and needs no Docker):

- :mod:`readbench.sandbox.engine`  -- is a usable engine there? (Engine >= 24.0.6, Compose >= 2.21;
  docs/specs/inspect-notes.md §4)
- :mod:`readbench.sandbox.images`  -- content-addressed per-source images (repository tree at
  ``/repo``, unzipped pure wheels at ``/opt/readbench/deps``) and the compose file inspect runs.
- :mod:`readbench.sandbox.k8s`     -- Helm values for inspect's Kubernetes sandbox (chart agent-env).
- :mod:`readbench.sandbox.local`   -- ``readbench-local``: inspect's local sandbox in a fixed directory
  per sample and epoch (the same cwd in every run and arm; GitHub issue 29).
- :mod:`readbench.sandbox.dockerexec` -- ``readbench-docker``: inspect's docker sandbox with exec and
  reads, and the container's start and removal, through the Engine API in-process (no compose CLI per
  call or per sample; GitHub issue 26).
- :mod:`readbench.sandbox.dockermemo` -- its test runs memoised by the container's tree content.

The shell scripts that provision an engine and build the offline base image live in
``sandboxes/`` (see sandboxes/README.md).
"""

__all__ = ["dockerexec", "dockermemo", "engine", "images", "k8s", "local"]
