"""The `smoke` verb's own decisions (cli/smoke.py): which URL each host is checked at (its own,
`--host`'s, `--base-url`'s), the exit status, the API key taken from the environment, and the
arguments it refuses. Addresses are loopback only: port 9 (discard) has no listener, so /health
fails at once and the log command of the server that does not answer is the last line."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import yaml

from tests.docker_engine.standin.server import ServerConfig, serve
from tests.fleet.fleet_stacks import FLEET_FILE, IDS
from tests.paths import PROJECT_DIR, stack_file
from vllm_serving.cli import main

DEAD = "http://127.0.0.1:9/v1"
# tests/fixtures/fleet/Pulumi.fleet.yaml: each host's Docker, and the container's name
DOCKER = {"gpu01": "ssh://deploy@gpu01.example.internal", "gpu02": "ssh://deploy@gpu02.example.internal",
          "gpu03": "ssh://deploy@10.0.0.13"}
LOOPBACK = dict(zip(IDS, ("127.0.0.1", "127.0.0.2", "127.0.0.3"), strict=True))  # Linux routes 127/8 to lo


@pytest.fixture
def fleet(tmp_path: Path) -> Path:
    """The fleet test stack, each host's publicHost a loopback address, hostPort 9."""
    shutil.copy(PROJECT_DIR / "Pulumi.yaml", tmp_path)
    doc = yaml.safe_load(FLEET_FILE.read_text(encoding="utf-8"))
    for host, address in zip(doc["config"]["vllm-serving:target"]["hosts"], LOOPBACK.values(), strict=True):
        host["publicHost"] = address
    doc["config"]["vllm-serving:network"] = {"hostPort": 9}
    (tmp_path / "Pulumi.fleet.yaml").write_text(yaml.safe_dump(doc), encoding="utf-8")
    return tmp_path


def smoke(project: Path, capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, list[str]]:
    code = main(["--project-dir", str(project), "smoke", *argv])
    return code, capsys.readouterr().out.splitlines()


def _headers(lines: list[str]) -> list[str]:
    return [line for line in lines if line.startswith("smoke ")]


def test_each_fleet_host_is_checked_at_its_own_url(fleet: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, lines = smoke(fleet, capsys, "fleet")
    assert code == 1
    assert _headers(lines) == [f"smoke fleet host {h} against http://{a}:9/v1" for h, a in LOOPBACK.items()]
    assert lines[-1] == "0/3 hosts passed; failed: gpu01, gpu02, gpu03"
    # each host's log is read on that host's Docker
    assert [line.rsplit(": ", 1)[1] for line in lines if "its log says why" in line] == [
        f"docker -H {DOCKER[h]} logs --tail 200 vllm-qwen36" for h in IDS]


def test_a_fleet_under_json_is_one_json_object_with_every_host(fleet: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["--project-dir", str(fleet), "smoke", "fleet", "--json"])
    data = json.loads(capsys.readouterr().out)
    assert code == 1 and data["ok"] is False
    assert [(h["host"], h["baseUrl"], h["ok"]) for h in data["hosts"]] == [
        (h, f"http://{a}:9/v1", False) for h, a in LOOPBACK.items()]


def test_host_checks_one_host_at_its_url_or_at_base_url(fleet: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, lines = smoke(fleet, capsys, "fleet", "--host", "gpu02")
    assert (code, _headers(lines)) == (1, ["smoke fleet host gpu02 against http://127.0.0.2:9/v1"])
    code, lines = smoke(fleet, capsys, "fleet", "--host", "gpu02", "--base-url", DEAD)  # a tunnel to gpu02, say
    assert (code, _headers(lines)) == (1, [f"smoke fleet host gpu02 against {DEAD}"])
    assert lines[-1] == "0/1 hosts passed; failed: gpu02"


def test_base_url_alone_checks_that_one_url(fleet: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, lines = smoke(fleet, capsys, "fleet", "--base-url", DEAD)  # the fleet's load balancer, say
    assert (code, _headers(lines)) == (1, [f"smoke fleet against {DEAD}"])


def test_one_server_is_checked_at_its_stacks_base_url(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # no --base-url: the URL `pulumi stack output baseUrl` gives (publicHost and hostPort), loopback here
    shutil.copy(PROJECT_DIR / "Pulumi.yaml", tmp_path)
    doc = yaml.safe_load(stack_file("v100").read_text(encoding="utf-8"))
    doc["config"]["vllm-serving:network"] = {**doc["config"]["vllm-serving:network"], "publicHost": "127.0.0.1",
                                             "hostPort": 9}
    (tmp_path / "Pulumi.v100.yaml").write_text(yaml.safe_dump(doc), encoding="utf-8")
    code, lines = smoke(tmp_path, capsys, "v100")
    assert code == 1 and lines[0] == f"smoke v100 against {DEAD}"


def test_one_server_that_does_not_answer_exits_1_with_its_log_command(capsys: pytest.CaptureFixture[str]) -> None:
    code, lines = smoke(PROJECT_DIR, capsys, "v100", "--base-url", DEAD)
    container = yaml.safe_load(stack_file("v100").read_text(encoding="utf-8"))["config"]["vllm-serving:container"]
    assert code == 1 and lines[0] == f"smoke v100 against {DEAD}"
    assert lines[-1].endswith(f"its log says why: docker logs --tail 200 {container['name']}")


def test_the_api_key_is_read_from_the_environment(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    key = "sk-cli-smoke-0123456789abcdef"
    # a stand-in answering as the v100 stack says (Pulumi.v100.yaml: servedName, maxModelLen 8192, qwen3
    # reasoning, auto tool choice), refusing requests without the key
    server = serve(ServerConfig(["qwen3.5-27b"], "/data/models/Qwen3.5-27B", 8192, reasoning_parser="qwen3",
                                auto_tools=True, api_key=key))
    try:
        shutil.copy(PROJECT_DIR / "Pulumi.yaml", tmp_path)
        doc = yaml.safe_load(stack_file("v100").read_text(encoding="utf-8"))
        doc["config"]["vllm-serving:apiKey"] = {"secure": "AAABAG5vdC1hLW5vbmNlIW5vdC1hLXJlYWwtdGFnISFrZXk="}
        (tmp_path / "Pulumi.v100.yaml").write_text(yaml.safe_dump(doc), encoding="utf-8")
        url = f"http://127.0.0.1:{server.server_address[1]}/v1"
        monkeypatch.setenv("VLLM_SERVING_SECRET_APIKEY", key)
        code, lines = smoke(tmp_path, capsys, "v100", "--base-url", url, "--timeout", "5")
    finally:
        server.stop()
    assert code == 0, lines
    assert [line.split()[:2] for line in lines if line.startswith("  api-key")] == [["api-key", "pass"]]
    assert key not in "\n".join(lines)


def test_host_on_a_one_server_stack_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--project-dir", str(PROJECT_DIR), "smoke", "v100", "--host", "gpu01"]) == 2
    assert "--host gpu01: stack v100 has no target.hosts (it is one server)" in capsys.readouterr().err


@pytest.mark.parametrize(("flag", "value", "says"), [
    ("--base-url", "gpu-host:8000/v1", "'gpu-host:8000/v1': give a URL such as http://gpu-host:8000/v1"),
    ("--timeout", "0", "'0': give a positive number of seconds"),
])
def test_a_bad_argument_says_what_to_give(flag: str, value: str, says: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as stop:
        main(["smoke", "v100", flag, value])
    assert stop.value.code == 2
    assert capsys.readouterr().err.rstrip().endswith(f"error: argument {flag}: {says}")
