"""The outgoing server's host PIDs over an ssh:// Docker host: `docker top` run there through the
stack's ssh options (a fake `ssh` here records its argv and answers as the remote docker CLI does).
The socket path is exercised against a real engine in tests/docker_engine/test_engine_check.py."""

from __future__ import annotations

import os
import stat
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


def test_an_unreachable_host_is_a_reason_not_an_empty_list(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    _fake_ssh(monkeypatch, tmp_path, "", "ssh: connect to host gpu-v100-01 port 22: Connection refused", 255)
    found = server_pids("ssh://gpu-v100-01", (), "vllm-v100")
    assert found == "`docker top` over ssh: ssh: connect to host gpu-v100-01 port 22: Connection refused"
    assert isinstance(server_pids("unix:///nonexistent/docker.sock", (), "vllm-v100"), str)
