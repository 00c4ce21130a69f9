"""`vllm-stack plan`: the seed 000 deployment, offline."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.fleet.fleet_stacks import FLEET_FILE
from tests.paths import PROJECT_DIR, ROOT, stack_file
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


def test_a_stack_with_errors_gets_its_findings_and_no_plan(capsys: pytest.CaptureFixture[str]) -> None:
    # tests/stacks/invalid/v100-bf16.yaml: bfloat16 on a V100 (compute capability 7.0; vLLM needs 8.0)
    path = ROOT / "tests" / "stacks" / "invalid" / "v100-bf16.yaml"
    assert main(["--project-dir", str(PROJECT_DIR), "plan", str(path)]) == 1
    out, err = capsys.readouterr()
    assert out == "" and err.startswith("ERROR dtype-bf16-unsupported vllm-serving:engine.dtype")


def test_a_fleets_plan_sizes_each_host(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--project-dir", str(PROJECT_DIR), "plan", str(FLEET_FILE)]) == 0
    # every host serves the same model on its own 4 A100s
    assert capsys.readouterr().out.splitlines()[0] == "each host: Qwen3.6-27B-FP8 on 4 x A100-80GB (TP 4), vLLM v0.19.1"


def test_the_text_shows_every_scale_out_figure_the_json_gives(capsys: pytest.CaptureFixture[str]) -> None:
    # three hosts, three engines: what the fleet serves in all, read by a person or by a script alike
    assert main(["--project-dir", str(PROJECT_DIR), "plan", str(FLEET_FILE), "--json"]) == 0
    scale_out = json.loads(capsys.readouterr().out)["scaleOut"]
    assert (scale_out["engines"], scale_out["gpus"]) == (3, 12)
    assert main(["--project-dir", str(PROJECT_DIR), "plan", str(FLEET_FILE)]) == 0
    lines = capsys.readouterr().out.splitlines()
    block = lines[lines.index("  Scale out") + 1:][:len(scale_out)]
    assert [line.split(None, 1) for line in block] == [[key, str(value)] for key, value in scale_out.items()]


def test_a_secret_environment_variable_is_named_never_shown(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    shutil.copy(PROJECT_DIR / "Pulumi.yaml", tmp_path)
    doc = yaml.safe_load(stack_file("a100").read_text(encoding="utf-8"))
    doc["config"]["vllm-serving:apiKey"] = {"secure": "AAABAG5vdC1hLW5vbmNlIW5vdC1hLXJlYWwtdGFnISFrZXk="}
    (tmp_path / "Pulumi.a100.yaml").write_text(yaml.safe_dump(doc), encoding="utf-8")
    assert main(["--project-dir", str(tmp_path), "plan", "a100"]) == 0
    # vLLM reads the API key from VLLM_API_KEY (vllm/entrypoints/openai/api_server.py, envs.py)
    assert "    VLLM_API_KEY=<secret>" in capsys.readouterr().out.splitlines()


def test_a_fleets_text_lists_each_host_with_its_docker_gpus_and_url(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--project-dir", str(PROJECT_DIR), "plan", str(FLEET_FILE), "--json"]) == 0
    hosts = json.loads(capsys.readouterr().out)["fleet"]["hosts"]
    assert main(["--project-dir", str(PROJECT_DIR), "plan", str(FLEET_FILE)]) == 0
    lines = capsys.readouterr().out.splitlines()
    block = lines[lines.index("  Hosts") + 1:][:len(hosts)]
    assert [line.split() for line in block] == [
        [h["name"], h["dockerHost"], "GPUs", h["gpusGiven"], h["baseUrl"]] for h in hosts]
