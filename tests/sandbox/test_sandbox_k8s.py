"""Helm values for inspect-k8s-sandbox's agent-env chart, and the sandbox CLI commands."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from readbench.cli import main
from readbench.sandbox.k8s import render_k8s_values

IMAGE = "reg.example/readbench-src-click:0123456789ab"
VALUES = f"""\
services:
  default:
    image: {IMAGE}
    imagePullPolicy: IfNotPresent
    command:
    - tail
    - -f
    - /dev/null
    workingDir: /repo
    runtimeClassName: gvisor
    resources:
      requests:
        cpu: '1'
        memory: 2Gi
      limits:
        cpu: '1'
        memory: 2Gi
allowDomains: []
networkPolicy:
  enabled: true
labels:
  readbench-source: click
annotations:
  readbench/image: {IMAGE}
"""


def test_values_mirror_the_compose_sandbox() -> None:
    assert render_k8s_values(IMAGE, source="click") == VALUES


def test_without_network_policy_no_allow_list_is_rendered() -> None:
    # the chart fails on allow* values while networkPolicy.enabled is false
    values = yaml.safe_load(render_k8s_values(IMAGE, source="click", network_policy=False, cpu="500m",
                                              memory="512Mi", runtime_class="CLUSTER_DEFAULT"))
    assert "allowDomains" not in values
    assert values["networkPolicy"] == {"enabled": False}
    assert values["services"]["default"]["resources"] == {
        "requests": {"cpu": "500m", "memory": "512Mi"}, "limits": {"cpu": "500m", "memory": "512Mi"}}
    assert values["services"]["default"]["runtimeClassName"] == "CLUSTER_DEFAULT"


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [({"cpu": "one"}, "cpu must be a Kubernetes CPU quantity like 1, 500m or 1.5, got 'one'"),
     ({"memory": "2GB"}, "memory must be a Kubernetes memory quantity like 2Gi or 512Mi, got '2GB'"),
     ({"source": "a b"}, "source must be a valid Kubernetes label value, got 'a b'"),
     ({"image_pull_policy": "Sometimes"}, "image_pull_policy must be IfNotPresent, Always or Never, got 'Sometimes'")],
)
def test_bad_arguments_are_named(kwargs: dict, message: str) -> None:
    args = {"source": "click", **kwargs}
    with pytest.raises(ValueError) as exc:
        render_k8s_values(IMAGE, **args)
    assert str(exc.value) == message


def _merge(base: dict, over: dict) -> dict:
    out = dict(base)
    for key, value in over.items():
        out[key] = _merge(base[key], value) if isinstance(value, dict) and isinstance(base.get(key), dict) else value
    return out


@pytest.mark.parametrize("network_policy", [True, False])
def test_values_pass_the_charts_own_schema(network_policy: bool) -> None:
    # optional dependency `.[k8s]`; helm validates the chart's values.yaml merged with ours.
    # find_spec locates the package without importing it (its __init__ needs `kubernetes`).
    spec = importlib.util.find_spec("k8s_sandbox")
    if spec is None or not spec.submodule_search_locations:
        pytest.skip("inspect-k8s-sandbox not installed (pip install -e '.[k8s]')")
    import jsonschema

    chart = Path(list(spec.submodule_search_locations)[0]) / "resources" / "helm" / "agent-env"
    schema = json.loads((chart / "values.schema.json").read_text())
    defaults = yaml.safe_load((chart / "values.yaml").read_text())
    ours = yaml.safe_load(render_k8s_values(IMAGE, source="click", network_policy=network_policy))
    jsonschema.validate(_merge(defaults, ours), schema)


def test_cli_k8s_values_prints_the_values() -> None:
    res = CliRunner().invoke(main, ["k8s-values", "--source", "click", "--image", IMAGE])
    assert (res.exit_code, res.output) == (0, VALUES)


def test_cli_k8s_values_names_a_bad_quantity_and_exits_2() -> None:
    res = CliRunner().invoke(main, ["k8s-values", "--source", "click", "--image", IMAGE, "--memory", "2GB"])
    assert res.exit_code == 2
    assert "memory must be a Kubernetes memory quantity like 2Gi or 512Mi, got '2GB'" in res.output


def test_cli_images_wants_name_tree_and_deps_together(tmp_path) -> None:
    res = CliRunner().invoke(main, ["images", "--name", "x", "--tree", str(tmp_path)])
    assert res.exit_code == 2
    assert "--name, --tree and --deps go together" in res.output
