"""CLI: ``readbench images``, ``readbench k8s-values``, ``readbench doctor``.

Thin wrappers over readbench.sandbox.images / k8s / engine. Results go to stdout, errors to
stderr; bad arguments exit 2 naming the input (click.BadParameter / click.UsageError).
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import click

__all__ = ["doctor_cmd", "images_cmd", "k8s_values_cmd"]


def _source_names() -> list[str]:
    try:
        from readbench.corpus import load_sources
    except ImportError as exc:
        raise click.UsageError(
            f"cannot list corpus sources ({exc}); name them with --source, or build one image from "
            "explicit paths with --name/--tree/--deps") from exc
    return [s.name for s in load_sources().sources]


def _corpus_paths(name: str) -> tuple[Path, Path]:
    try:
        from readbench.corpus import deps_dir, source_tree
    except ImportError as exc:
        raise click.UsageError(
            f"readbench.corpus cannot provide source trees yet ({exc}); use --name/--tree/--deps") from exc
    try:
        return source_tree(name), deps_dir(name)
    except KeyError as exc:
        raise click.BadParameter(str(exc.args[0] if exc.args else exc), param_hint="--source") from exc


@click.command("images")
@click.option("--source", "--sources", "sources", multiple=True, metavar="NAME",
              help="Corpus source to build (repeatable, or comma-separated). Default: every source.")
@click.option("--base", default=None, metavar="IMAGE",
              help="Base image. Default: readbench-base:bookworm when present, else python:3.11-slim.")
@click.option("--name", default=None, help="Image name for an explicit --tree/--deps build.")
@click.option("--tree", type=click.Path(exists=True, file_okay=False, path_type=Path), default=None,
              help="Repository tree baked at /repo (with --name and --deps).")
@click.option("--deps", type=click.Path(exists=True, file_okay=False, path_type=Path), default=None,
              help="Deps dir baked at /opt/readbench/deps (with --name and --tree).")
@click.option("--agents", "agents", default=None, metavar="NAMES",
              help="Also build each source's image with these real harnesses in it (comma-separated "
                   "`readbench agents` names; Node.js and the pinned npm packages from the cached prefix).")
def images_cmd(sources: tuple[str, ...], base: str | None, name: str | None, tree: Path | None,
               deps: Path | None, agents: str | None) -> None:
    """Build the per-source task images (content-addressed; unchanged sources are not rebuilt).

    Prints one line per image: NAME<TAB>TAG<TAB>SECONDS (with --agents, NAME is SOURCE+AGENT).
    """
    wanted = []
    if agents:
        from readbench.harness.agents import LOOP, get_agent

        try:
            wanted = [get_agent(a.strip()) for a in agents.split(",") if a.strip() and a.strip() != LOOP]
        except ValueError as exc:
            raise click.BadParameter(str(exc), param_hint="--agents") from exc
    from readbench.sandbox.engine import docker_available
    from readbench.sandbox.images import build_source_image

    explicit = [v is not None for v in (name, tree, deps)]
    if any(explicit) and not all(explicit):
        raise click.UsageError("--name, --tree and --deps go together")
    if all(explicit) and sources:
        raise click.UsageError("use either --source or --name/--tree/--deps, not both")
    ok, why = docker_available()
    if not ok:
        click.echo(f"readbench images: {why}", err=True)
        sys.exit(1)
    if name is not None and tree is not None and deps is not None:  # all(explicit)
        jobs = [(name, tree, deps)]
    else:
        names = [n for s in sources for n in s.split(",") if n] or _source_names()
        jobs = [(n, *_corpus_paths(n)) for n in names]
    for job_name, job_tree, job_deps in jobs:
        t0 = time.monotonic()
        try:
            tag = build_source_image(job_name, job_tree, job_deps, base)
        except ValueError as exc:
            raise click.BadParameter(str(exc), param_hint="--name/--source") from exc
        click.echo(f"{job_name}\t{tag}\t{time.monotonic() - t0:.1f}")
        for agent in wanted:
            from readbench.agents.image import agent_image

            t0 = time.monotonic()
            click.echo(f"{job_name}+{agent.name}\t{agent_image(tag, agent)}\t{time.monotonic() - t0:.1f}")


@click.command("k8s-values")
@click.option("--source", required=True, metavar="NAME", help="Corpus source the values are for.")
@click.option("--image", default=None, metavar="REF",
              help="Image reference the cluster pulls. Default: the source's local tag, built if needed.")
@click.option("--registry", default=None, metavar="HOST[/PATH]",
              help="Registry prefix for the local tag (ignored with --image).")
@click.option("--cpu", default="1", show_default=True, help="CPU request = limit (Kubernetes quantity).")
@click.option("--memory", default="2Gi", show_default=True, help="Memory request = limit (Kubernetes quantity).")
@click.option("--runtime-class", default="gvisor", show_default=True,
              help="Pod runtimeClassName; CLUSTER_DEFAULT leaves it unset.")
@click.option("--no-network-policy", is_flag=True,
              help="Do not render Cilium policies (cluster without Cilium; isolate egress there).")
@click.option("-o", "--output", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Write to this file instead of stdout.")
def k8s_values_cmd(source: str, image: str | None, registry: str | None, cpu: str, memory: str,
                   runtime_class: str, no_network_policy: bool, output: Path | None) -> None:
    """Helm values (inspect-k8s-sandbox chart agent-env) for one source: sandbox=("k8s", FILE)."""
    from readbench.sandbox.k8s import render_k8s_values

    if image is None:
        from readbench.sandbox.engine import docker_available
        from readbench.sandbox.images import build_source_image

        ok, why = docker_available()
        if not ok:
            raise click.UsageError(f"--image not given and the local tag cannot be computed: {why}")
        tag = build_source_image(source, *_corpus_paths(source))
        image = f"{registry.rstrip('/')}/{tag}" if registry else tag
    try:
        text = render_k8s_values(image, source=source, cpu=cpu, memory=memory, runtime_class=runtime_class,
                                 network_policy=not no_network_policy)
    except ValueError as exc:
        raise click.BadParameter(str(exc)) from exc
    if output is None:
        click.echo(text, nl=False)
    else:
        output.write_text(text, encoding="utf-8")
        click.echo(str(output))


@click.command("doctor")
def doctor_cmd() -> None:
    """Can the docker sandbox run here? Engine and Compose versions, and the offline base image.

    Exit status 0 when the engine is usable, 1 otherwise.
    """
    import subprocess

    from readbench.sandbox.engine import engine_status
    from readbench.sandbox.images import OFFLINE_BASE

    status = engine_status()
    click.echo(f"docker: {'ok' if status.ok else 'unusable'}: {status.reason}")
    if status.ok:
        res = subprocess.run(["docker", "image", "inspect", "--format", "{{.Id}}", OFFLINE_BASE],
                             capture_output=True, text=True)
        found = res.stdout.strip()[:19] if res.returncode == 0 else "missing (run `sudo sandboxes/build-base-image.sh`)"
        click.echo(f"base image {OFFLINE_BASE}: {found}")
    sys.exit(0 if status.ok else 1)
