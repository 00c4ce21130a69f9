"""ssh options that would run a command (or load a library) where pulumi runs are refused."""

from __future__ import annotations

from typing import Any

import pytest

from vllm_serving.findings import ConfigError
from vllm_serving.settings.ssh_options import risky_options
from vllm_serving.settings.stack_config import parse_stack_config

BASE: dict[str, Any] = {
    "vllm-serving:hardware": {"gpu": "A100-80GB", "count": 2},
    "vllm-serving:image": {"tag": "v0.19.1"},
    "vllm-serving:model": {"name": "Qwen3.5-27B", "hostPath": "/models/qwen"},
}
SSH = "ssh://deploy@gpu01.internal"


def _keys(target: dict[str, Any]) -> list[str]:
    try:
        parse_stack_config({**BASE, "vllm-serving:target": target})
    except ConfigError as exc:
        return [f.key for f in exc.findings]
    return []


@pytest.mark.parametrize(("options", "index"), [
    (["-o", "ProxyCommand=nc %h %p"], 1),
    (["-oLocalCommand=id"], 0),
    (["-o", "proxycommand = sh -c x"], 1),  # keywords are case-insensitive, '=' optional
    (["-o ProxyCommand nc %h %p"], 0),  # flag and value in one item
    (["-p", "2222", "-F", "/tmp/ssh_config"], 2),
    (["-I", "/usr/lib/opensc-pkcs11.so"], 0),
    (["-o", "Match exec \"id\""], 1),
])
def test_local_execution_is_refused_at_its_item(options: list[str], index: int) -> None:
    assert _keys({"dockerHost": SSH, "sshOpts": options}) == [f"vllm-serving:target.sshOpts[{index}]"]


@pytest.mark.parametrize("options", [["-o", "StrictHostKeyChecking=yes"], ["-J", "bastion.internal"],
                                     ["-o", "ProxyJump=bastion"], ["-p", "2222", "-oServerAliveInterval=30"]])
def test_ordinary_options_pass(options: list[str]) -> None:
    assert _keys({"dockerHost": SSH, "sshOpts": options}) == []


def test_a_fleet_host_is_checked_with_its_own_key() -> None:
    hosts = [{"dockerHost": SSH}, {"dockerHost": "ssh://deploy@gpu02.internal", "sshOpts": ["-oKnownHostsCommand=id"]}]
    assert _keys({"hosts": hosts}) == ["vllm-serving:target.hosts[1].sshOpts[0]"]


def test_the_keyword_of_a_two_item_option_is_the_item_named() -> None:
    options = ("-o", "StrictHostKeyChecking=yes", "-oPermitLocalCommand=yes", "-o", "LocalCommand=id")
    assert [(i, name) for i, name, _ in risky_options(options)] == [(2, "PermitLocalCommand"), (4, "LocalCommand")]
