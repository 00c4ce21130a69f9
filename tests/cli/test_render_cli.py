"""`vllm-stack render`: every stack in every format, offline; secrets masked unless revealed."""

from __future__ import annotations

import shutil
import stat
from pathlib import Path

import pytest
import yaml

from tests.fleet.fleet_stacks import FLEET_FILE
from tests.paths import PROJECT_DIR, stack_file
from vllm_serving.cli import main
from vllm_serving.masking import MASK


def _render(capsys: pytest.CaptureFixture[str], *argv: str, project: Path = PROJECT_DIR) -> tuple[int, str, str]:
    code = main(["--project-dir", str(project), "render", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def _with_secret_stack(tmp_path: Path) -> Path:
    """A copy of a100-k8s whose stack file holds an (encrypted) apiKey, as `pulumi config set --secret` writes it."""
    tmp_path.mkdir(parents=True, exist_ok=True)
    shutil.copy(PROJECT_DIR / "Pulumi.yaml", tmp_path / "Pulumi.yaml")
    text = (stack_file("a100-k8s")).read_text()
    text += "  vllm-serving:apiKey:\n    secure: AAABAG5vdC1hLW5vbmNlIW5vdC1hLXJlYWwtdGFnISFrZXk=\n"
    (tmp_path / "Pulumi.a100-k8s.yaml").write_text(text)
    return tmp_path


def test_k8s_multi_document(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _render(capsys, "a100-k8s", "--format", "k8s")
    assert code == 0
    kinds = [d["kind"] for d in yaml.safe_load_all(out)]
    assert kinds == ["Namespace", "PersistentVolumeClaim", "Deployment", "Service", "NetworkPolicy"]


@pytest.mark.parametrize("stack", ["a100", "v100", "a100-k8s"])
@pytest.mark.parametrize("fmt", ["k8s", "docker-run", "compose"])
def test_every_stack_in_every_format(capsys: pytest.CaptureFixture[str], stack: str, fmt: str) -> None:
    code, out, err = _render(capsys, stack, "--format", fmt)
    assert code == 0, err
    if fmt == "docker-run":
        assert out.startswith("docker run -d")
    else:
        assert list(yaml.safe_load_all(out))


def test_compose_of_a100(capsys: pytest.CaptureFixture[str]) -> None:
    _, out, _ = _render(capsys, "a100", "--format", "compose")
    service = yaml.safe_load(out)["services"]["vllm"]
    assert service["deploy"]["resources"]["reservations"]["devices"][0]["device_ids"] == ["6", "7", "8", "9"]


def test_secrets_masked_then_revealed_from_env(
        capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    project = _with_secret_stack(tmp_path)
    monkeypatch.setenv("VLLM_SERVING_SECRET_APIKEY", "SENTINEL-apikey-123")
    _, out, _ = _render(capsys, "a100-k8s", "--format", "k8s", project=project)
    secret = next(d for d in yaml.safe_load_all(out) if d["kind"] == "Secret")
    assert secret["stringData"] == {"VLLM_API_KEY": MASK}
    assert "SENTINEL" not in out
    _, out, _ = _render(capsys, "a100-k8s", "--format", "docker-run", "--reveal-secrets", project=project)
    assert "VLLM_API_KEY=SENTINEL-apikey-123" in out
    monkeypatch.delenv("VLLM_SERVING_SECRET_APIKEY")
    _, out, err = _render(capsys, "a100-k8s", "--format", "compose", "--reveal-secrets", project=project)
    assert yaml.safe_load(out)["services"]["vllm"]["environment"]["VLLM_API_KEY"] == MASK
    assert "VLLM_SERVING_SECRET_APIKEY" in err


def test_output_file_private_when_revealing(
        capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    project = _with_secret_stack(tmp_path / "p")
    out_file = tmp_path / "manifests.yaml"
    monkeypatch.setenv("VLLM_SERVING_SECRET_APIKEY", "SENTINEL-apikey-123")
    code, out, _ = _render(capsys, "a100-k8s", "--reveal-secrets", "-o", str(out_file), project=project)
    assert code == 0 and out == ""
    assert "SENTINEL-apikey-123" in out_file.read_text()
    assert stat.S_IMODE(out_file.stat().st_mode) == 0o600


def test_unknown_stack_is_a_config_error(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = _render(capsys, "nope", "--format", "k8s")
    assert code == 2 and "no such stack file" in err


# tests/fixtures/fleet/Pulumi.fleet.yaml: three hosts, gpu02 on GPUs 4-7, the others on the default 0-3
FLEET_HOSTS = ["# host gpu01 (ssh://deploy@gpu01.example.internal)", "# host gpu02 (ssh://deploy@gpu02.example.internal)",
               "# host gpu03 (ssh://deploy@10.0.0.13)"]


def test_a_fleet_renders_one_command_per_host_with_its_gpus(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _render(capsys, str(FLEET_FILE), "--format", "docker-run")
    assert code == 0 and [line for line in out.splitlines() if line.startswith("# host")] == FLEET_HOSTS
    assert [line.strip() for line in out.splitlines() if "--gpus" in line] == [
        "--gpus '\"device=0,1,2,3\"' \\", "--gpus '\"device=4,5,6,7\"' \\", "--gpus '\"device=0,1,2,3\"' \\"]
    code, out, _ = _render(capsys, str(FLEET_FILE), "--format", "compose")
    assert code == 0 and out.count("\n---\n") == 2 and [ln for ln in out.splitlines() if ln.startswith("# host")] == (
        FLEET_HOSTS)
    code, out, _ = _render(capsys, str(FLEET_FILE), "--format", "compose", "--host", "gpu03")
    assert code == 0 and out.splitlines()[0] == FLEET_HOSTS[2] and "# host gpu01" not in out and "---" not in out
    code, out, _ = _render(capsys, str(FLEET_FILE), "--format", "docker-run", "--host", "gpu02")
    assert code == 0 and [line for line in out.splitlines() if line.startswith("# host")] == [FLEET_HOSTS[1]]
    assert [line.strip() for line in out.splitlines() if "--gpus" in line] == ["--gpus '\"device=4,5,6,7\"' \\"]


def test_host_on_a_one_server_stack_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = _render(capsys, "v100", "--format", "compose", "--host", "gpu01")
    assert (code, out) == (2, "")
    assert "--host gpu01: stack v100 has no target.hosts (it is one server)" in err
