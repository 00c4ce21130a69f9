"""A fleet offline: `vllm-stack plan`, `render` (one command or Compose file per host) and `diff`
against a single server or a fleet with a host fewer."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import pytest
import yaml

from tests.fleet.fleet_stacks import FLEET_FILE, IDS, fleet_config
from tests.paths import PROJECT_DIR
from vllm_serving.cli import main


def _cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(["--project-dir", str(PROJECT_DIR), *argv])
    out, err = capsys.readouterr()
    return code, out, err


def _write(tmp_path: Path, name: str, config: dict[str, object]) -> Path:
    path = tmp_path / f"Pulumi.{name}.yaml"
    path.write_text(yaml.safe_dump({"config": config}), encoding="utf-8")
    return path


def test_plan_lists_every_host_and_the_endpoints(capsys) -> None:
    code, out, _ = _cli(capsys, "plan", str(FLEET_FILE), "--json")
    assert code == 0
    plan = json.loads(out)
    assert [h["name"] for h in plan["fleet"]["hosts"]] == list(IDS)
    assert plan["fleet"]["endpoints"] == [h["baseUrl"] for h in plan["fleet"]["hosts"]]
    assert plan["target"]["where"] == "3 hosts: gpu01, gpu02, gpu03"
    assert plan["gpu"]["given"] == "per host"
    assert [h["gpusGiven"] for h in plan["fleet"]["hosts"]] == ["device=0,1,2,3", "device=4,5,6,7",
                                                                "device=0,1,2,3"]
    # every host is one more engine with its own KV cache
    assert plan["scaleOut"]["engines"] == 3
    assert plan["scaleOut"]["kvCacheTokensTotal"] == 3 * plan["capacity"]["kv_cache_tokens"]
    deployments = [r["name"] for r in plan["resources"] if r["type"] == "vllm-serving:docker:VllmDeployment"]
    assert deployments == [f"vllm-qwen36-{i}" for i in IDS]


def test_plan_text_shows_hosts_and_the_rollout_order(capsys) -> None:
    code, out, _ = _cli(capsys, "plan", str(FLEET_FILE))
    assert code == 0
    hosts = out.split("  Hosts\n", 1)[1].split("\n  Rollout")[0].splitlines()
    assert [line.split()[0] for line in hosts] == list(IDS)
    assert "one host at a time" in out
    assert out.count("# host ") == 3


def _commands(text: str) -> dict[str, list[str]]:
    """Host comment line -> the words of the command under it."""
    found: dict[str, list[str]] = {}
    for part in text.split("\n\n"):
        head, _, command = part.partition("\n")
        found[head] = shlex.split(command.replace("\\\n", " "))
    return found


def test_render_docker_run_prints_one_command_per_host(capsys) -> None:
    code, out, _ = _cli(capsys, "render", str(FLEET_FILE), "--format", "docker-run")
    assert code == 0
    commands = _commands(out)
    assert list(commands) == ["# host gpu01 (ssh://deploy@gpu01.example.internal)",
                              "# host gpu02 (ssh://deploy@gpu02.example.internal)",
                              "# host gpu03 (ssh://deploy@10.0.0.13)"]
    gpus = [words[words.index("--gpus") + 1] for words in commands.values()]
    assert gpus == ['"device=0,1,2,3"', '"device=4,5,6,7"', '"device=0,1,2,3"']
    assert all(words[:3] == ["docker", "run", "-d"] for words in commands.values())


def test_render_compose_gives_each_host_its_file(capsys) -> None:
    code, out, _ = _cli(capsys, "render", str(FLEET_FILE), "--format", "compose")
    assert code == 0
    documents = list(yaml.safe_load_all(out))
    assert len(documents) == 3
    devices = [doc["services"]["vllm-qwen36"]["deploy"]["resources"]["reservations"]["devices"][0]["device_ids"]
               for doc in documents]
    assert devices == [["0", "1", "2", "3"], ["4", "5", "6", "7"], ["0", "1", "2", "3"]]
    code, one, _ = _cli(capsys, "render", str(FLEET_FILE), "--format", "compose", "--host", "gpu02")
    assert code == 0
    assert one.startswith("# host gpu02 (ssh://deploy@gpu02.example.internal)\n")
    assert yaml.safe_load(one) == documents[1]


def test_render_host_that_is_not_in_the_fleet(capsys) -> None:
    code, out, err = _cli(capsys, "render", str(FLEET_FILE), "--format", "compose", "--host", "gpu09")
    assert (code, out) == (2, "")
    assert "gpu01, gpu02, gpu03" in err
    code, _, err = _cli(capsys, "render", "a100", "--format", "compose", "--host", "gpu01")
    assert code == 2 and "no target.hosts" in err


def test_diff_single_server_to_fleet_lists_the_added_hosts(capsys, tmp_path: Path) -> None:
    single = fleet_config()
    single["vllm-serving:target"] = {"kind": "docker", "dockerHost": "ssh://deploy@gpu01.example.internal",
                                     "sshOpts": ["-o", "StrictHostKeyChecking=yes"]}
    path = _write(tmp_path, "single", single)
    code, out, _ = _cli(capsys, "diff", str(path), str(FLEET_FILE), "--json")
    assert code == 1
    changes = {(c["section"], c["key"]): c for c in json.loads(out)["changes"]}
    # gpu01 is the single server's host: matched by id, unchanged; the other two are added
    assert {k for k, c in changes.items() if k[0] == "hosts"} == {("hosts", "gpu02"), ("hosts", "gpu03")}
    assert all(c["kind"] == "added" for k, c in changes.items() if k[0] == "hosts")
    assert changes[("target", "where")]["a"] == "1 host: gpu01"
    assert not any(k[0] == "endpoints" for k in changes)  # the URLs are compared per host


def test_diff_fleet_without_its_middle_host(capsys, tmp_path: Path) -> None:
    config = fleet_config()
    del config["vllm-serving:target"]["hosts"][1]
    path = _write(tmp_path, "smaller", config)
    code, out, _ = _cli(capsys, "diff", str(FLEET_FILE), str(path))
    assert code == 1
    block = out.split("\n  hosts\n", 1)[1].split("\n  GPU\n")[0]
    # one line: the host that goes; the two that stay are unchanged
    assert block.splitlines() == ["    gpu02  ssh://deploy@gpu02.example.internal, GPUs device=4,5,6,7, "
                                  "http://gpu02.example.internal:8000/v1 -> (unset)"]


def test_diff_of_single_servers_has_no_hosts_section(capsys) -> None:
    code, out, _ = _cli(capsys, "diff", "v100", "a100", "--json")
    assert code == 1
    assert not [c for c in json.loads(out)["changes"] if c["section"] == "hosts"]
