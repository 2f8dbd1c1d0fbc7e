"""Helm values for inspect's Kubernetes sandbox (package ``inspect-k8s-sandbox``, chart ``agent-env``).

Scale-out path of docs/specs/inspect-notes.md §6: the eval process stays local, each sample's
sandbox is a pod. One values file per source image, used as ``sandbox=("k8s", "values.yaml")``.
The keys follow ``k8s_sandbox/resources/helm/agent-env/values.schema.json`` of
inspect-k8s-sandbox 0.14.0 (services.<name>: image, imagePullPolicy, command, workingDir,
runtimeClassName, resources; top level: allowDomains, networkPolicy, labels, annotations).

The values mirror the docker compose file (readbench.sandbox.images.render_compose):
- same image (pushed to a registry the cluster pulls from: the chart never builds, and its
  compose converter ignores ``x-local``), same ``tail -f /dev/null`` command, ``/repo`` workdir;
- ``networkPolicy.enabled: true`` with ``allowDomains: []``: the chart's Cilium policies allow no
  egress, the counterpart of ``network_mode: none``. On a cluster without Cilium pass
  ``network_policy=False`` and enforce isolation in the cluster;
- cpu/memory requests = limits (a fixed budget per sample, like compose's cpus/mem_limit);
- ``runtimeClassName``: the chart's default is gvisor; ``CLUSTER_DEFAULT`` leaves it unset.
"""

from __future__ import annotations

import re

import yaml

from readbench.sandbox.images import REPO_PATH

__all__ = ["render_k8s_values"]

_CPU_RE = re.compile(r"[0-9]+(\.[0-9]+)?m?")
_MEM_RE = re.compile(r"[0-9]+(\.[0-9]+)?(Ki|Mi|Gi|Ti|k|M|G|T)?")
_LABEL_RE = re.compile(r"([A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?)?")


def render_k8s_values(
    image: str,
    *,
    source: str,
    cpu: str = "1",
    memory: str = "2Gi",
    runtime_class: str = "gvisor",
    network_policy: bool = True,
    image_pull_policy: str = "IfNotPresent",
) -> str:
    """Helm values YAML (agent-env chart) for one source image.

    Args:
        image: full image reference the cluster can pull, e.g.
            ``registry.example/readbench-src-click:0123456789ab``.
        source: corpus source name, written as the pod label ``readbench-source``.
        cpu: Kubernetes CPU quantity for requests and limits (``1``, ``500m``, ``1.5``).
        memory: Kubernetes memory quantity for requests and limits (``2Gi``, ``512Mi``).
        runtime_class: pod runtime class (``gvisor``, ``runc``, or ``CLUSTER_DEFAULT`` = unset).
        network_policy: render the chart's Cilium policies (no egress); False on clusters without Cilium.
        image_pull_policy: ``IfNotPresent``, ``Always`` or ``Never``.

    Returns:
        YAML text, keys in the order above, ending with a newline.

    Raises:
        ValueError: an argument is malformed; the message names the argument and quotes the value.
    """
    if not image or any(c.isspace() for c in image):
        raise ValueError(f"image must be a non-empty reference without spaces, got {image!r}")
    if not source or not _LABEL_RE.fullmatch(source):
        raise ValueError(f"source must be a valid Kubernetes label value, got {source!r}")
    if not _CPU_RE.fullmatch(cpu):
        raise ValueError(f"cpu must be a Kubernetes CPU quantity like 1, 500m or 1.5, got {cpu!r}")
    if not _MEM_RE.fullmatch(memory):
        raise ValueError(f"memory must be a Kubernetes memory quantity like 2Gi or 512Mi, got {memory!r}")
    if not runtime_class or any(c.isspace() for c in runtime_class):
        raise ValueError(f"runtime_class must be a non-empty name, got {runtime_class!r}")
    if image_pull_policy not in ("IfNotPresent", "Always", "Never"):
        raise ValueError(f"image_pull_policy must be IfNotPresent, Always or Never, got {image_pull_policy!r}")
    quantities = {"cpu": cpu, "memory": memory}
    values = {
        "services": {
            "default": {
                "image": image,
                "imagePullPolicy": image_pull_policy,
                "command": ["tail", "-f", "/dev/null"],
                "workingDir": REPO_PATH,
                "runtimeClassName": runtime_class,
                "resources": {"requests": dict(quantities), "limits": dict(quantities)},
            }
        },
        # explicit empty allow-list = no egress; omitted without policies (the chart refuses
        # allow* values that nothing would enforce)
        **({"allowDomains": []} if network_policy else {}),
        "networkPolicy": {"enabled": network_policy},
        "labels": {"readbench-source": source},
        "annotations": {"readbench/image": image},
    }
    return yaml.safe_dump(values, sort_keys=False)
