"""`vllm-stack smoke` on a Docker fleet: every host checked at its own URL, one block of rows per
host, exit 1 when any host fails; `--host ID` checks one. Each host is a stand-in server on its
own loopback address (127.0.0.1-3, one port), named as the host's `publicHost`."""

from __future__ import annotations

import json
import shutil
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
import yaml

from tests.docker_engine.standin.server import ServerConfig, StandinServer, serve
from tests.fleet.fleet_stacks import FLEET_FILE, IDS
from tests.paths import PROJECT_DIR
from tests.smoke.verb import smoke_verb
from vllm_serving.smoke import report

# Linux routes all of 127.0.0.0/8 to the loopback interface: three hosts, one port
ADDRESSES = dict(zip(IDS, ("127.0.0.1", "127.0.0.2", "127.0.0.3"), strict=True))

StartFleet = Callable[..., Path]


def _project(directory: Path, port: int) -> Path:
    """The fleet test stack with each host's publicHost a loopback address and hostPort `port`."""
    shutil.copy(PROJECT_DIR / "Pulumi.yaml", directory)
    doc: dict[str, Any] = yaml.safe_load(FLEET_FILE.read_text())
    for host, address in zip(doc["config"]["vllm-serving:target"]["hosts"], ADDRESSES.values(), strict=True):
        host["publicHost"] = address
    doc["config"]["vllm-serving:network"] = {"hostPort": port}
    (directory / "Pulumi.fleet.yaml").write_text(yaml.safe_dump(doc))
    return directory


def _standin(**changes: Any) -> ServerConfig:
    """A stand-in that answers as the fleet stack's servers should, but for `changes`."""
    # What the fleet stack file says, read by hand: no servedName, so vLLM serves the model under
    # its --model path, the default mount /models/<model.name>; maxModelLen 32768; no tool parser.
    served = "/models/Qwen3.6-27B-FP8"
    values: dict[str, Any] = {"served_names": [served], "model_path": served, "max_model_len": 32768,
                              "auto_tools": False}
    return ServerConfig(**(values | changes))


@pytest.fixture
def start_fleet(tmp_path: Path) -> Iterator[StartFleet]:
    """`start_fleet(down=(ids), gpu02={config changes})` -> the project, its hosts served on loopback."""
    servers: list[StandinServer] = []

    def start(down: tuple[str, ...] = (), **changes: dict[str, Any]) -> Path:
        # a port free on 127.0.0.1, then the same port on each host's own address
        probe = serve(ServerConfig([], "", 1))
        port = probe.server_address[1]
        probe.stop()
        project = _project(tmp_path, port)
        for host, address in ADDRESSES.items():
            if host in down:
                continue
            try:
                servers.append(serve(_standin(**changes.get(host, {})), address, port))
            except OSError as exc:
                pytest.skip(f"cannot serve on {address}:{port} ({exc}): this system routes only 127.0.0.1")
        return project

    yield start
    for server in servers:
        server.stop()


def test_every_host_is_checked_in_its_own_block(start_fleet: StartFleet,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    project = start_fleet()
    assert smoke_verb(project, "fleet", "--timeout", "5") == 0
    out = capsys.readouterr().out
    headers = [line for line in out.splitlines() if line.startswith("smoke ")]
    port = yaml.safe_load((project / "Pulumi.fleet.yaml").read_text())["config"]["vllm-serving:network"]["hostPort"]
    assert headers == [f"smoke fleet host {h} against http://{a}:{port}/v1" for h, a in ADDRESSES.items()]
    assert out.count("  5/5 passed") == 3  # health, models, chat, metrics, kv-cache on each host
    assert out.splitlines()[-1] == "3/3 hosts passed"


def test_one_failing_host_fails_the_fleet_and_is_named(start_fleet: StartFleet,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    project = start_fleet(down=("gpu03",), gpu02={"served_names": ["other"]})
    assert smoke_verb(project, "fleet", "--timeout", "5") == 1
    assert capsys.readouterr().out.splitlines()[-1] == "1/3 hosts passed; failed: gpu02, gpu03"
    assert smoke_verb(project, "fleet", "--timeout", "5", "--json") == 1
    doc = json.loads(capsys.readouterr().out)
    assert doc["ok"] is False
    hosts = {h["host"]: h for h in doc["hosts"]}
    assert [h["host"] for h in doc["hosts"]] == list(IDS)
    assert {name: h["ok"] for name, h in hosts.items()} == {"gpu01": True, "gpu02": False, "gpu03": False}
    checks = {c["name"]: c for c in hosts["gpu02"]["checks"]}
    assert checks["health"]["status"] == "pass" and checks["models"]["status"] == "fail"
    assert "cannot connect" in hosts["gpu03"]["checks"][0]["detail"]
    assert hosts["gpu03"]["baseUrl"].startswith("http://127.0.0.3:")


def test_host_picks_one_host(start_fleet: StartFleet, capsys: pytest.CaptureFixture[str]) -> None:
    project = start_fleet(down=("gpu03",))
    assert smoke_verb(project, "fleet", "--timeout", "5", "--host", "gpu02") == 0
    out = capsys.readouterr().out
    assert [line.split()[3] for line in out.splitlines() if line.startswith("smoke ")] == ["gpu02"]
    assert out.splitlines()[-1] == "1/1 hosts passed"
    assert smoke_verb(project, "fleet", "--timeout", "5", "--host", "gpu03") == 1


def test_base_url_alone_checks_that_url_once(start_fleet: StartFleet, capsys: pytest.CaptureFixture[str]) -> None:
    """The fleet's load balancer, say: one block, as for one server."""
    project = start_fleet(down=("gpu02", "gpu03"))
    port = yaml.safe_load((project / "Pulumi.fleet.yaml").read_text())["config"]["vllm-serving:network"]["hostPort"]
    url = f"http://127.0.0.1:{port}/v1"
    assert smoke_verb(project, "fleet", "--timeout", "5", "--base-url", url) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0] == f"smoke fleet against {url}" and out.count("smoke ") == 1


def test_an_unknown_host_exits_2_naming_the_hosts(start_fleet: StartFleet, capsys: pytest.CaptureFixture[str]) -> None:
    project = start_fleet(down=IDS)
    assert smoke_verb(project, "fleet", "--host", "gpu09") == 2
    captured = capsys.readouterr()
    assert captured.out == "" and "gpu01, gpu02, gpu03" in captured.err


def test_host_on_a_one_server_stack_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert smoke_verb(PROJECT_DIR, "v100", "--host", "gpu01") == 2
    assert "has no target.hosts" in capsys.readouterr().err


def test_a_large_fleet_is_checked_eight_hosts_at_a_time(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each host waits on its own server, so hosts are checked at once, but not every host of a
    large fleet: eight connections at a time (smoke/report.py MAX_PARALLEL_HOSTS)."""
    state = {"active": 0, "peak": 0}
    changed = threading.Condition()

    def checks(base_url: str, expected: object, **_: object) -> list[object]:
        with changed:
            state["active"] += 1
            state["peak"] = max(state["peak"], state["active"])
            changed.notify_all()
            # hold until eight run together (or give up: fewer workers then show as a lower peak)
            changed.wait_for(lambda: state["peak"] >= 8, timeout=2)
            state["active"] -= 1
        return []

    monkeypatch.setattr(report, "run_checks", checks)
    monkeypatch.setattr(report, "expectations_from_spec", lambda spec: None)
    hosts = [(f"gpu{i:02d}", f"http://127.0.0.{i + 1}:8000") for i in range(12)]
    ok, text = report.smoke_fleet(SimpleNamespace(stack="fleet"), hosts, api_key=None, timeout=1.0,  # type: ignore[arg-type]
                                  json_output=True)
    assert state["peak"] == 8
    assert ok and [h["host"] for h in json.loads(text)["hosts"]] == [h for h, _ in hosts]
