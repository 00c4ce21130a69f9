"""Secret hygiene: every secret the config accepts is set to a sentinel and looked for everywhere.

Resources may carry a secret only under Pulumi's secret marker, and only where it belongs:
Docker in the container's `envs` and the provider's `registryAuth`; Kubernetes in `Secret`
objects, referenced from the pod through `secretKeyRef`. Outputs, logs, `plan`, `check` and
every `render` format show no secret unless `render --reveal-secrets` is asked for.
"""

from __future__ import annotations

import base64
import copy
import json
import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.conftest import shipped_stack
from tests.paths import PROJECT_DIR
from tests.pulumi_harness import SECRET_SIG, ProgramRun, Registered, plain_text, secret_paths, stack_config
from tests.safety.helpers import SENTINELS, run_cli, stack_files, stacks_of_kind
from vllm_serving.cli.render import FORMATS, secret_variable
from vllm_serving.settings import SECRET_KEYS

ALL_STACKS = [p.name.split(".", 1)[1].rsplit(".", 1)[0] for p in stack_files()]
USER = "robot"
SECRET_ENV = {"apiKey": "VLLM_API_KEY", "hfToken": "HF_TOKEN"}


def test_sentinels_cover_every_secret_key() -> None:
    assert set(SENTINELS) == set(SECRET_KEYS)


def _with_registry_user(stack: str) -> dict[str, Any]:
    """The shipped stack, pulling with credentials so the registry password is used too."""
    config = copy.deepcopy(shipped_stack(stack))
    config["vllm-serving:image"] = {**config["vllm-serving:image"], "username": USER}
    return config


def _leaks(text: str) -> list[str]:
    return [key for key, value in SENTINELS.items() if value in text]


def _run(program: Any, stack: str) -> ProgramRun:
    run: ProgramRun = program(_with_registry_user(stack), stack=stack, secrets=SENTINELS)
    return run


def _inputs_text(resource: Registered) -> str:
    return json.dumps(resource.inputs)


def unwrap(value: Any) -> Any:
    """Inputs with Pulumi's secret wrappers (`{sig: ..., value: V}`) replaced by V."""
    if isinstance(value, dict):
        if SECRET_SIG in value:
            return unwrap(value.get("value"))
        return {k: unwrap(v) for k, v in value.items()}
    if isinstance(value, list):
        return [unwrap(v) for v in value]
    return value


@pytest.mark.parametrize("stack", ALL_STACKS)
def test_no_secret_in_plain_inputs_outputs_or_logs(program: Any, stack: str) -> None:
    run = _run(program, stack)
    assert run.resources
    for resource in run.resources:
        assert not _leaks(plain_text(resource.raw)), f"{resource.type} {resource.name} leaks in plain text"
    for name, value in run.outputs.items():
        if name not in run.secret_outputs:
            assert not _leaks(json.dumps(value, default=str)), f"stack output {name} leaks"
    assert not _leaks("\n".join(run.warnings))


@pytest.mark.parametrize("stack", stacks_of_kind("docker"))
def test_docker_secrets_only_in_secret_envs_and_registry_auth(program: Any, stack: str) -> None:
    run = _run(program, stack)
    holders = {r.type for r in run.resources if _leaks(_inputs_text(r))}
    assert holders <= {"docker:index/container:Container", "pulumi:providers:docker"}, holders
    container = run.one("Container")
    assert ".envs" in set(secret_paths(container.raw)), "envs must be secret-marked"
    envs = unwrap(container.inputs["envs"])
    for key, env in SECRET_ENV.items():
        assert f"{env}={SENTINELS[key]}" in envs, f"{env} does not reach the container"
    provider = run.one("providers:docker")
    assert SENTINELS["registryPassword"] in _inputs_text(provider), "registry password not used"
    assert list(secret_paths(provider.raw)), "registryAuth must be secret-marked"
    labels = json.dumps(container.inputs.get("labels"))
    command = json.dumps(container.inputs.get("command"))
    assert not _leaks(labels + command)


@pytest.mark.parametrize("stack", stacks_of_kind("kubernetes"))
def test_kubernetes_secrets_only_in_secret_objects(program: Any, stack: str) -> None:
    run = _run(program, stack)
    for resource in run.resources:
        if _leaks(_inputs_text(resource)):
            assert resource.type == "kubernetes:core/v1:Secret", f"{resource.type} {resource.name}"
            assert list(secret_paths(resource.raw)), f"{resource.name}: secret data must be secret-marked"
    secrets = run.of_type("core/v1:Secret")
    everything = " ".join(_inputs_text(s) for s in secrets)
    for key in SECRET_ENV:
        assert SENTINELS[key] in everything, f"{key} reaches no Secret"
    auth = base64.b64encode(f"{USER}:{SENTINELS['registryPassword']}".encode()).decode()
    assert SENTINELS["registryPassword"] in everything or auth in everything
    pod = unwrap(run.one("apps/v1:Deployment").inputs)["spec"]["template"]["spec"]
    env = {e["name"]: e for c in pod["containers"] for e in c.get("env", [])}
    names = {unwrap(s.inputs)["metadata"]["name"] for s in secrets}
    for name in SECRET_ENV.values():
        assert "value" not in env[name], f"{name} must not be a literal value"
        assert env[name]["valueFrom"]["secretKeyRef"]["name"] in names
    assert {p["name"] for p in pod.get("imagePullSecrets", [])} & names, "no pull secret referenced"


@pytest.fixture
def secret_project(tmp_path: Path) -> Path:
    """The shipped stack files with every secret declared (`secure:`) and a registry user."""
    shutil.copy(PROJECT_DIR / "Pulumi.yaml", tmp_path / "Pulumi.yaml")
    for path in stack_files():
        data = yaml.safe_load(path.read_text())
        image = data["config"].get("vllm-serving:image") or stack_config(path)["vllm-serving:image"]
        data["config"]["vllm-serving:image"] = {**image, "username": USER}
        for key in SECRET_KEYS:
            data["config"][f"vllm-serving:{key}"] = {"secure": "v1:bm90LWEtbm9uY2Uh:bm90LWEtcmVhbC10YWchIQ=="}
        (tmp_path / path.name).write_text(yaml.safe_dump(data, sort_keys=False))
    return tmp_path


def _secret_env() -> dict[str, str]:
    return {secret_variable(key): value for key, value in SENTINELS.items()}


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("stack", ALL_STACKS)
def test_render_masks_unless_revealed(secret_project: Path, stack: str, fmt: str) -> None:
    base = ["--project-dir", str(secret_project), "render", stack, "--format", fmt]
    masked = run_cli(*base, env=_secret_env())
    assert masked.code == 0, masked.text
    assert not _leaks(masked.text), f"render {fmt} leaks without --reveal-secrets"
    assert "********" in masked.out
    revealed = run_cli(*base, "--reveal-secrets", env=_secret_env())
    assert revealed.code == 0, revealed.text
    for key in SECRET_ENV:
        assert SENTINELS[key] in revealed.out, f"--reveal-secrets does not reveal {key}"
    if fmt == "k8s":
        for doc in yaml.safe_load_all(revealed.out):
            if doc and doc.get("kind") != "Secret":
                assert not _leaks(json.dumps(doc)), f"{doc.get('kind')} carries a secret value"


@pytest.mark.parametrize("stack", ALL_STACKS)
def test_plan_and_check_never_show_secrets(secret_project: Path, stack: str) -> None:
    for argv in (["plan", stack, "--json"], ["plan", stack], ["check", stack], ["check", stack, "--json"]):
        result = run_cli("--project-dir", str(secret_project), *argv, env=_secret_env())
        assert result.code in (0, 1), result.text
        assert "Traceback" not in result.text
        assert not _leaks(result.text), f"{argv} leaks"
    plan = json.loads(run_cli("--project-dir", str(secret_project), "plan", stack, "--json").out)
    assert set(plan["secrets"].values()) == {"set"}


def test_revealed_render_file_is_private(secret_project: Path) -> None:
    out = secret_project / "revealed.yaml"
    result = run_cli("--project-dir", str(secret_project), "render", ALL_STACKS[0], "--format", "k8s",
                     "--reveal-secrets", "--output", str(out), env=_secret_env())
    assert result.code == 0, result.text
    assert out.stat().st_mode & 0o077 == 0
