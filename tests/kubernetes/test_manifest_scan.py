"""The rendered manifests pass the Kubernetes schemas and a checkov scan (with documented skips)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import kubernetes_validate
import pytest
import yaml

from tests.kubernetes.cluster_version import KUBERNETES_VERSION
from tests.stack_builders import make_spec
from vllm_serving.render.kubernetes.objects import kubernetes_objects, manifests_yaml
from vllm_serving.spec import ServingSpec

# checkov's Kubernetes checks that the vLLM server cannot pass, and why.
SKIPS: dict[str, str] = {
    # CFS quota throttling stalls vLLM's CPU-bound scheduler, tokenizer and detokenizer threads
    # (latency spikes); the pod gets a CPU request and a memory limit instead.
    "CKV_K8S_11": "CPU limits",
    # The image is ~20 GB and pinned by tag (or digest): pulling it on every start only delays recovery.
    "CKV_K8S_15": "imagePullPolicy Always",
    # vLLM JIT-compiles kernels at run time into ~/.triton, ~/.cache/flashinfer and /tmp (torch inductor).
    "CKV_K8S_22": "read-only root filesystem",
    # The official vllm/vllm-openai image runs as root (its caches live under /root/.cache);
    # all capabilities are dropped and privilege escalation is off instead.
    "CKV_K8S_23": "root containers",
    "CKV_K8S_40": "high UID",
    # vLLM reads the API key only from VLLM_API_KEY or --api-key, never from a file; the variable
    # comes from a Secret through secretKeyRef, never as a plain value.
    "CKV_K8S_35": "secrets as files",
}
# Only while the stack pins a tag: with image.digest set the check passes and is not skipped.
DIGEST_SKIP = {"CKV_K8S_43": "image digest"}


def _checkov() -> str | None:
    local = Path(sys.executable).parent / "checkov"
    return str(local) if local.exists() else shutil.which("checkov")


def _specs() -> dict[str, ServingSpec]:
    full = dict(secrets=("apiKey", "hfToken", "registryPassword"),
                image={"username": "robot", "registry": "harbor.local:30000"})
    return {
        "a100-k8s": make_spec(),
        "with-secrets": make_spec(**full),  # type: ignore[arg-type]
        "replicas-hostpath": make_spec(kubernetes={
            "replicas": 2, "cache": {"accessMode": "ReadWriteMany"}, "weights": {"hostPath": "/data/m"},
            "service": {"type": "NodePort", "nodePort": 30080}}),
        "created-claim-digest": make_spec(
            image={"digest": "sha256:" + "ab" * 32},
            kubernetes={"weights": {"claim": {"size": "64g", "storageClassName": "fast"}}}),
    }


@pytest.mark.parametrize("name", list(_specs()))
def test_manifests_validate_against_kubernetes_schemas(name: str) -> None:
    objects = list(yaml.safe_load_all(manifests_yaml(kubernetes_objects(_specs()[name]))))
    for obj in objects:
        kubernetes_validate.validate(obj, KUBERNETES_VERSION, strict=True)  # raises on error
    kinds = {o["kind"] for o in objects}
    assert {"Deployment", "Service"} <= kinds


@pytest.fixture(scope="module")
def scan(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[dict[str, Any]]]:
    """One checkov run over every variant's manifests: failed checks by variant."""
    exe = _checkov()
    if exe is None:
        pytest.skip("checkov is not installed (uv sync --group dev)")
    folder = tmp_path_factory.mktemp("manifests")
    for name, spec in _specs().items():
        (folder / f"{name}.yaml").write_text(manifests_yaml(kubernetes_objects(spec)))
    proc = subprocess.run(
        [exe, "-d", str(folder), "--framework", "kubernetes", "--compact", "--quiet", "-o", "json",
         "--skip-download"],
        capture_output=True, text=True, timeout=600)
    assert proc.stdout.strip(), proc.stderr[-2000:]
    report = json.loads(proc.stdout)
    reports = report if isinstance(report, list) else [report]
    assert all(r["summary"]["parsing_errors"] == 0 for r in reports)
    failed: dict[str, list[dict[str, Any]]] = {name: [] for name in _specs()}
    for check in (c for r in reports for c in r["results"]["failed_checks"]):
        failed[Path(check["file_path"]).stem].append(check)
    return failed


@pytest.mark.parametrize("name", list(_specs()))
def test_checkov_scan_clean_apart_from_documented_skips(
        name: str, scan: dict[str, list[dict[str, Any]]]) -> None:
    spec = _specs()[name]
    allowed = SKIPS | ({} if spec.settings.image.digest else DIGEST_SKIP)
    unexpected = sorted({(c["check_id"], c["check_name"]) for c in scan[name] if c["check_id"] not in allowed})
    assert not unexpected, unexpected


def test_every_skip_is_still_needed(scan: dict[str, list[dict[str, Any]]]) -> None:
    fired = {c["check_id"] for checks in scan.values() for c in checks}
    assert set(SKIPS) | set(DIGEST_SKIP) <= fired, "drop skips that no longer fire"
