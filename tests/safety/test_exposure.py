"""What the deployment exposes, as docs/security.md describes it: bind address, privileges, code."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.conftest import shipped_stack
from tests.paths import stack_file
from tests.safety.helpers import SENTINELS, run_cli, stacks_of_kind

P = "vllm-serving:"
DOCKER = stacks_of_kind("docker")
K8S = stacks_of_kind("kubernetes")


@pytest.mark.parametrize("stack", DOCKER)
def test_bind_address_reaches_the_published_port(program: Any, stack: str) -> None:
    config = copy.deepcopy(shipped_stack(stack))
    config[P + "network"] = {**config.get(P + "network", {}), "bindAddress": "127.0.0.1"}
    run = program(config, stack=stack, secrets=SENTINELS)
    ports = run.one("Container").inputs["ports"]
    assert [p["ip"] for p in ports] == ["127.0.0.1"]
    assert run.outputs["baseUrl"].startswith("http://127.0.0.1:")


@pytest.mark.parametrize("stack", DOCKER)
def test_shipped_docker_stacks_are_not_privileged_and_run_no_remote_code(program: Any, stack: str) -> None:
    container = program(shipped_stack(stack), stack=stack, secrets=SENTINELS).one("Container").inputs
    assert container.get("privileged") in (False, None)
    assert "--trust-remote-code" not in container["command"]


@pytest.mark.parametrize("stack", K8S)
def test_kubernetes_pod_is_locked_down(program: Any, stack: str) -> None:
    run = program(shipped_stack(stack), stack=stack, secrets=SENTINELS)
    pod = run.one("apps/v1:Deployment").inputs["spec"]["template"]["spec"]
    assert pod.get("automountServiceAccountToken") is False
    for container in pod["containers"]:
        security = container["securityContext"]
        assert security["privileged"] is False and security["allowPrivilegeEscalation"] is False
        assert "--trust-remote-code" not in container["args"]
    service = run.one("core/v1:Service").inputs["spec"]
    assert service.get("type", "ClusterIP") == "ClusterIP", "shipped stack stays inside the cluster"
    (policy,) = run.of_type("networking.k8s.io/v1:NetworkPolicy")
    assert [rule["ports"] for rule in policy.inputs["spec"]["ingress"]] == [[{"port": "http", "protocol": "TCP"}]]


@pytest.mark.parametrize(("section", "setting", "code"), [
    ("container", {"privileged": True}, "container-privileged"),
    ("engine", {"trustRemoteCode": True}, "trust-remote-code-native"),
])
def test_risky_settings_are_flagged_by_check(tmp_path: Path, section: str, setting: dict[str, Any],
                                             code: str) -> None:
    data = yaml.safe_load(stack_file(DOCKER[0]).read_text())
    data["config"][P + section] = {**data["config"][P + section], **setting}
    path = tmp_path / "Pulumi.risky.yaml"
    path.write_text(yaml.safe_dump(data))
    result = run_cli("check", "--config-file", str(path))
    assert code in result.text, result.text
