"""The outgoing server's host PIDs over an ssh:// Docker host: `docker top` run there through the
stack's ssh options (a fake `ssh` here records its argv and answers as the remote docker CLI does).
The Engine API path (a socket or a TCP address) is asked of a stand-in engine here, and of a real one
in tests/docker_engine/test_engine_check.py."""

from __future__ import annotations

import http.server
import json
import os
import socketserver
import stat
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from components.docker.server_processes import server_pids

TOP = "UID  PID   PPID  C STIME TTY TIME     CMD\nroot 4101  4080  0 10:00 ?   00:00:01 python3 -m vllm\n" \
      "root 4188  4101  9 10:00 ?   00:09:00 VLLM::Worker_TP0\n"


def _fake_ssh(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, out: str, err: str = "", code: int = 0) -> Path:
    argv = tmp_path / "argv"
    ssh = tmp_path / "ssh"
    ssh.write_text(f"#!/bin/sh\nprintf '%s\\n' \"$@\" > {argv}\ncat <<'EOF'\n{out}EOF\n"
                   f"printf '%s' '{err}' >&2\nexit {code}\n")
    ssh.chmod(ssh.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv("PATH", f"{tmp_path}{os.pathsep}{os.environ['PATH']}")
    return argv


def test_docker_top_over_ssh_gives_the_servers_host_pids(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    argv = _fake_ssh(monkeypatch, tmp_path, TOP)
    found = server_pids("ssh://deploy@gpu-v100-01:2222", ("-o", "StrictHostKeyChecking=yes"), "vllm-v100")
    assert found == frozenset({4101, 4188})
    assert argv.read_text().split("\n")[:-1] == ["-o", "BatchMode=yes", "-o", "StrictHostKeyChecking=yes", "-p",
                                                 "2222", "-l", "deploy", "--", "gpu-v100-01", "docker", "top",
                                                 "vllm-v100"]


@pytest.mark.parametrize("said", ["Error response from daemon: No such container: vllm-v100",
                                  "Error response from daemon: container 3f2a is not running"])
def test_no_running_server_holds_nothing(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, said: str) -> None:
    _fake_ssh(monkeypatch, tmp_path, "", said, 1)
    assert server_pids("ssh://gpu-v100-01", (), "vllm-v100") == frozenset()


def test_a_host_slow_to_answer_is_still_read(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    # an ssh connection over a WAN or through a bastion takes seconds before `docker top` answers
    _fake_ssh(monkeypatch, tmp_path, TOP)
    ssh = tmp_path / "ssh"
    ssh.write_text(ssh.read_text().replace("#!/bin/sh\n", "#!/bin/sh\nsleep 2.5\n", 1))
    assert server_pids("ssh://gpu-v100-01", (), "vllm-v100") == frozenset({4101, 4188})


def test_an_unreachable_host_is_a_reason_not_an_empty_list(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    _fake_ssh(monkeypatch, tmp_path, "", "ssh: connect to host gpu-v100-01 port 22: Connection refused", 255)
    found = server_pids("ssh://gpu-v100-01", (), "vllm-v100")
    assert found == "`docker top` over ssh: ssh: connect to host gpu-v100-01 port 22: Connection refused"
    assert isinstance(server_pids("unix:///nonexistent/docker.sock", (), "vllm-v100"), str)


# The Engine API's answer to `GET /containers/{id}/top` (Docker Engine API v1.43, ContainerTop: 200
# {"Titles": [...], "Processes": [[...], ...]}, 404 no such container; 409 the daemon's Conflict for
# a container that is not running), served by a stand-in engine on a socket or a TCP port.
TOP_JSON = {"Titles": ["UID", "PID", "PPID", "C", "STIME", "TTY", "TIME", "CMD"],
            "Processes": [["root", "4101", "4080", "0", "10:00", "?", "00:00:01", "python3 -m vllm"],
                          ["root", "4188", "4101", "9", "10:00", "?", "00:09:00", "VLLM::Worker_TP0"]]}


class _Engine(http.server.BaseHTTPRequestHandler):
    answers: dict[str, tuple[int, object]] = {}
    asked: list[str] = []

    def do_GET(self) -> None:  # noqa: N802 (http.server's name)
        self.asked.append(self.path)
        status, body = self.answers.get(self.path, (404, {"message": f"page not found: {self.path}"}))
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: object) -> None:
        pass

    def address_string(self) -> str:  # a unix socket's peer has no host
        return "engine"


class _UnixEngine(socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
    daemon_threads = True


@pytest.fixture(params=["unix", "tcp"])
def engine(request: pytest.FixtureRequest, tmp_path: Path,
           monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[str, type[_Engine]]]:
    """(DOCKER_HOST of a stand-in engine, its handler: set `answers`, read `asked`)."""
    handler = type("Engine", (_Engine,), {"answers": {}, "asked": []})
    monkeypatch.delenv("DOCKER_TLS_VERIFY", raising=False)
    server: socketserver.BaseServer
    if request.param == "unix":
        socket_path = tmp_path / "docker.sock"
        server, host = _UnixEngine(str(socket_path), handler), f"unix://{socket_path}"
    else:
        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        host = f"tcp://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True)
    thread.start()
    yield host, handler
    server.shutdown()
    server.server_close()


def test_the_engine_api_gives_the_servers_host_pids(engine: tuple[str, type[_Engine]]) -> None:
    host, handler = engine
    handler.answers["/containers/vllm-v100/top"] = (200, TOP_JSON)
    assert server_pids(host, (), "vllm-v100") == frozenset({4101, 4188})
    assert handler.asked == ["/containers/vllm-v100/top"]


@pytest.mark.parametrize(("status", "body"), [
    (404, {"message": "No such container: vllm-v100"}),
    (409, {"message": "Container 3f2a is not running"}),
    (200, {"Titles": TOP_JSON["Titles"], "Processes": None}),
])
def test_no_server_on_the_engine_holds_nothing(engine: tuple[str, type[_Engine]], status: int, body: object) -> None:
    host, handler = engine
    handler.answers["/containers/vllm-v100/top"] = (status, body)
    assert server_pids(host, (), "vllm-v100") == frozenset()


def test_an_engine_error_is_a_reason_not_an_empty_list(engine: tuple[str, type[_Engine]]) -> None:
    host, handler = engine
    handler.answers["/containers/vllm-v100/top"] = (500, {"message": "runc did not terminate successfully"})
    found = server_pids(host, (), "vllm-v100")
    assert isinstance(found, str) and "vllm-v100" in found and "HTTPStatusError" in found


def test_the_docker_host_variable_is_the_engine_when_the_stack_names_none(
        engine: tuple[str, type[_Engine]], monkeypatch: pytest.MonkeyPatch) -> None:
    host, handler = engine
    handler.answers["/containers/vllm-v100/top"] = (200, TOP_JSON)
    monkeypatch.setenv("DOCKER_HOST", host)
    assert server_pids(None, (), "vllm-v100") == frozenset({4101, 4188})


@pytest.mark.parametrize("engine", ["tcp"], indirect=True)  # TLS applies to a TCP engine only
def test_a_tls_engine_is_never_asked_in_plain_http(engine: tuple[str, type[_Engine]],
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    # DOCKER_TLS_VERIFY: the engine wants client certificates; a plain request would be refused (or
    # worse, be answered by something else on that port): the preflight's own verdict stands instead
    host, handler = engine
    handler.answers["/containers/vllm-v100/top"] = (200, TOP_JSON)
    monkeypatch.setenv("DOCKER_TLS_VERIFY", "1")
    found = server_pids(host, (), "vllm-v100")
    assert isinstance(found, str) and "TLS" in found
    assert handler.asked == []
