"""`vllm-stack plan`: the seed 000 deployment, offline."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.paths import PROJECT_DIR
from vllm_serving.cli import main


def test_plan_v100_prints_the_seed_deployment(capsys) -> None:
    assert main(["--project-dir", str(PROJECT_DIR), "plan", "v100"]) == 0
    out = capsys.readouterr().out
    for expected in ["V100-32GB", "Qwen3.5-27B", "192.168.122.156:30000/vllm/vllm-openai:v0.19.1",
                     "/u02/models/Qwen3.5-27B -> /data/models/Qwen3.5-27B (read-only",
                     "0.0.0.0:30006 -> 8000", "--tensor-parallel-size 8", "--dtype half",
                     "VLLM_USE_MODELSCOPE=false", "docker:index/container:Container",
                     "registryPassword: not set"]:
        assert expected in out, expected


def test_plan_json_is_machine_readable(capsys) -> None:
    assert main(["--project-dir", str(PROJECT_DIR), "plan", "a100", "--json"]) == 0
    plan = json.loads(capsys.readouterr().out)
    assert plan["gpu"]["given"] == "device=6,7,8,9"
    assert plan["endpoints"]["baseUrl"] == "http://localhost:8000/v1"
    assert plan["container"]["shmSizeMb"] == 32768


def test_unknown_stack_is_one_line_not_a_traceback(capsys) -> None:
    assert main(["--project-dir", str(PROJECT_DIR), "plan", "v99"]) == 2
    err = capsys.readouterr().err
    assert "Pulumi.v99.yaml" in err and "Traceback" not in err


def test_console_script_runs_without_pulumi_cli() -> None:
    done = subprocess.run([str(Path(sys.executable).parent / "vllm-stack"), "plan", "v100", "--json"],
                          cwd=PROJECT_DIR, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["stack"] == "v100"


def test_plan_of_a_kubernetes_stack_shows_the_pod_not_a_docker_host(capsys) -> None:
    assert main(["--project-dir", str(PROJECT_DIR), "plan", "a100-k8s", "--json"]) == 0
    plan = json.loads(capsys.readouterr().out)
    assert plan["endpoints"]["baseUrl"] == "http://vllm.vllm.svc.cluster.local:8000/v1"
    assert plan["gpu"]["given"] == "4 x nvidia.com/gpu per pod"
    weights = next(m for m in plan["mounts"] if m["target"] == "/Qwen3.6-27B-FP8")
    assert weights["readOnly"] is True and weights["kind"] == "persistentVolumeClaim"
    assert {"kind": "emptyDir", "source": "Memory 32Gi", "target": "/dev/shm", "readOnly": False} in plan["mounts"]
    assert plan["ports"] == [{"service": "ClusterIP vllm", "port": 8000, "containerPort": 8000}]
    assert all(r["type"].startswith(("kubernetes:", "vllm-serving:kubernetes")) for r in plan["resources"])


def test_plan_of_a_promoting_stack_says_where_its_release_comes_from(capsys) -> None:
    assert main(["--project-dir", str(PROJECT_DIR), "plan", "v100-prod", "--json"]) == 0
    prod = json.loads(capsys.readouterr().out)
    assert main(["--project-dir", str(PROJECT_DIR), "plan", "v100-staging", "--json"]) == 0
    staging = json.loads(capsys.readouterr().out)
    assert prod["release"]["promotedFrom"] == "organization/vllm-serving/v100-staging"
    assert staging["release"]["promotedFrom"] is None
    # same release flags, so the fingerprints agree; the host is prod's own
    assert prod["release"]["argvFingerprint"] == staging["release"]["argvFingerprint"]
    assert prod["target"]["where"] == "ssh://deploy@gpu-v100-01"
