"""`vllm-stack smoke` as a newcomer watches it: each row as its check finishes, and after a
failed /health a stop with the command that shows the server's log."""

from __future__ import annotations

import json
import socket
import time

import pytest

from tests.paths import DOCS, PROJECT_DIR, stack_file
from tests.smoke.conftest import StartServer
from vllm_serving.smoke import checks
from vllm_serving.smoke.report import smoke_stack
from vllm_serving.stack_files.loader import load_spec


def _free_port() -> int:
    with socket.socket() as s:  # a port nobody listens on: bind, note it, close
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _smoke(stack: str, url: str, *, json_output: bool = False,
           timeout: float = 5) -> tuple[bool, list[tuple[float, str]]]:
    lines: list[tuple[float, str]] = []
    started = time.monotonic()
    ok = smoke_stack(load_spec(stack_file(stack), stack, PROJECT_DIR), base_url=url, api_key=None,
                     timeout=timeout, json_output=json_output,
                     emit=lambda line: lines.append((time.monotonic() - started, line)))
    return ok, lines


def test_each_row_is_printed_when_its_check_finishes(start_server: StartServer) -> None:
    """The chat completion hangs (0.5 s timeout): health and models are on screen before it ends."""
    url = start_server(faults={"/v1/chat/completions": "hang"})
    ok, lines = _smoke("v100", url, timeout=0.5)
    assert not ok
    when = {line.split()[0]: at for at, line in lines[2:-1]}
    assert lines[0][1] == f"smoke v100 against {url}"
    assert when["health"] < when["chat"] - 0.4 and when["models"] < when["chat"] - 0.4


@pytest.mark.parametrize(("stack", "logs"), [
    ("v100", "docker logs --tail 200 vllm-qwen35-27b"),
    ("a100-k8s", "kubectl -n vllm logs -l app.kubernetes.io/instance=vllm,app.kubernetes.io/name=vllm -c vllm"),
])
def test_a_failed_health_stops_and_names_the_log(stack: str, logs: str) -> None:
    started = time.monotonic()
    ok, lines = _smoke(stack, f"http://127.0.0.1:{_free_port()}/v1", timeout=30)
    assert time.monotonic() - started < 10 and not ok
    text = [line for _, line in lines]
    assert [line.split()[:2] for line in text[2:9]][0] == ["health", "FAIL"]
    assert all("not run: the server does not answer /health" in line for line in text[3:9] if "api-key" not in line)
    assert text[-1].startswith("  the server does not answer /health, so nothing else was checked; its log says why: ")
    assert logs in text[-1]


def test_a_server_that_takes_the_connection_and_never_answers_is_found_out_quickly(
        start_server: StartServer, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(checks, "HEALTH_TIMEOUT_SECONDS", 0.3)  # 5 s in use: the point, without the wait
    url = start_server(faults={"/health": "hang"})
    started = time.monotonic()
    ok, lines = _smoke("v100", url, json_output=True, timeout=60)
    assert time.monotonic() - started < 10 and not ok
    [(_, text)] = lines
    doc = json.loads(text)
    assert doc["stack"] == "v100" and doc["baseUrl"] == url
    assert doc["logsCommand"] == "docker logs --tail 200 vllm-qwen35-27b"
    assert {c["name"]: c["status"] for c in doc["checks"]}["models"] == "skip"


def test_the_docs_say_the_health_timeout_in_use() -> None:
    """docs/cli.md and docs/deploy.md tell how long /health gets: the number smoke uses."""
    for page in ("cli.md", "deploy.md"):
        text = " ".join((DOCS / page).read_text(encoding="utf-8").split())
        assert f"`/health` gets {checks.HEALTH_TIMEOUT_SECONDS:g} s" in text, page
