"""The scrape config, the alerts and the dashboard never carry a secret, not even with --reveal-secrets:
with an API key the scrape job names a token file the operator fills."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml

from tests.paths import PROJECT_DIR, stack_file
from vllm_serving.cli import main
from vllm_serving.cli.render import OBSERVABILITY_FORMATS, secret_variable
from vllm_serving.settings import SECRET_KEYS

SENTINEL = "SENTINEL-apikey-7f3c9a"
CIPHERTEXT = {"secure": "v1:bm90LWEtbm9uY2Uh:bm90LWEtcmVhbC10YWchIQ=="}


@pytest.fixture
def keyed_project(tmp_path: Path) -> Path:
    """v100 and a100-k8s with every secret declared (`secure:`)."""
    shutil.copy(PROJECT_DIR / "Pulumi.yaml", tmp_path / "Pulumi.yaml")
    for stack in ("v100", "a100-k8s"):
        data = yaml.safe_load((stack_file(stack)).read_text())
        data["config"].update({f"vllm-serving:{key}": dict(CIPHERTEXT) for key in SECRET_KEYS})  # no YAML anchors
        (tmp_path / f"Pulumi.{stack}.yaml").write_text(yaml.safe_dump(data, sort_keys=False))
    return tmp_path


@pytest.mark.parametrize("fmt", sorted(OBSERVABILITY_FORMATS))
@pytest.mark.parametrize("stack", ["v100", "a100-k8s"])
def test_no_secret_in_observability_renders(keyed_project: Path, stack: str, fmt: str,
                                            capsys: pytest.CaptureFixture[str],
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    for key in SECRET_KEYS:
        monkeypatch.setenv(secret_variable(key), f"{SENTINEL}-{key}")
    code = main(["--project-dir", str(keyed_project), "render", stack, "--format", fmt, "--reveal-secrets"])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert SENTINEL not in out and "********" not in out
    if fmt == "prometheus":
        job = yaml.safe_load(out)["scrape_configs"][0]
        assert job["authorization"]["credentials_file"].startswith("/etc/prometheus/secrets/")
        assert set(job["authorization"]) == {"type", "credentials_file"}  # no inline credentials
