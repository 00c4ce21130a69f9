"""Every free string of the settings is checked whole: a valid value passes, the same value with a
trailing newline (which `re.match("^...$")` lets through) is refused, naming its key."""

from __future__ import annotations

import copy
import re
from typing import Any

import pytest

from tests.paths import ROOT
from vllm_serving.findings import ConfigError
from vllm_serving.settings.stack_config import parse_stack_config

BASE: dict[str, Any] = {
    "hardware": {"gpu": "A100-80GB", "count": 2},
    "image": {"tag": "v0.19.1"},
    "model": {"name": "Qwen3.5-27B", "hostPath": "/models/qwen"},
}
# (path to the value inside the config, a valid value); the key the error names is the path.
FREE_STRINGS: list[tuple[tuple[str | int, ...], str]] = [
    (("image", "registry"), "harbor.local:30000"),
    (("image", "repository"), "vllm/vllm-openai"),
    (("image", "tag"), "v0.19.1"),
    (("image", "digest"), "sha256:" + "ab" * 32),
    (("image", "username"), "robot$ci+deploy"),
    (("target", "dockerHost"), "ssh://deploy@gpu-01.example.com:2222"),
    (("target", "dockerHost"), "unix:///var/run/docker.sock"),
    (("target", "sshOpts", 0), "-oStrictHostKeyChecking=yes"),
    (("model", "hostPath"), "/data/models/qwen"),
    (("model", "containerPath"), "/models/qwen"),
    (("model", "servedName"), "Qwen/Qwen3.5-27B"),
    (("cache", "hostPath"), "/srv/vllm-cache"),
    (("cache", "volumeName"), "vllm-cache"),
    (("container", "name"), "vllm-qwen"),
    (("container", "runtime"), "nvidia"),
    (("container", "logMaxSize"), "100m"),
    (("network", "bindAddress"), "10.0.0.5"),
    (("network", "publicHost"), "gpu-01.example.com"),
    (("engine", "reasoningParser"), "qwen3"),
    (("engine", "toolCallParser"), "qwen3_coder"),
    (("engine", "extraArgs", 0), "--enforce-eager"),
    (("engine", "speculativeConfig", "method"), "mtp"),
    (("kubernetes", "namespace"), "vllm"),
    (("kubernetes", "gpuResource"), "nvidia.com/gpu"),
    (("kubernetes", "runtimeClassName"), "nvidia"),
    (("kubernetes", "imagePullSecrets", 0), "harbor-pull"),
    (("kubernetes", "resources", "cpu"), "16"),
    (("kubernetes", "weights", "hostPath"), "/data/models/qwen"),
    (("kubernetes", "tolerations", 0, "key"), "nvidia.com/gpu"),
    (("kubernetes", "allowFrom", 0, "namespace"), "monitoring"),
    (("kubernetes", "allowFrom", 0, "cidr"), "10.20.0.0/16"),
]
NEEDS: dict[str, dict[str, Any]] = {
    "speculativeConfig": {"numSpeculativeTokens": 1},
    "tolerations": {"operator": "Exists"},
}


def _config(path: tuple[str | int, ...], value: str) -> dict[str, Any]:
    sections = copy.deepcopy(BASE)
    node: Any = sections.setdefault(str(path[0]), {})
    for part, nxt in zip(path[1:-1], path[2:], strict=True):
        child: Any = [] if isinstance(nxt, int) else dict(NEEDS.get(str(part), {}))
        if isinstance(part, int):
            node.append(child)
        else:
            node[part] = node.get(part, child)
        node = node[part] if not isinstance(part, int) else node[-1]
    last = path[-1]
    if isinstance(last, int):
        node.append(value)
    else:
        node[last] = value
    return {f"vllm-serving:{k}": v for k, v in sections.items()}


def _key(path: tuple[str | int, ...]) -> str:
    text = str(path[0])
    for part in path[1:]:
        text += f"[{part}]" if isinstance(part, int) else f".{part}"
    return f"vllm-serving:{text}"


def _ids() -> list[str]:
    return [_key(p).removeprefix("vllm-serving:") + ("" if i == 0 else f"#{i}")
            for i, p in ((sum(1 for q, _ in FREE_STRINGS[:n] if q == path), path)
                         for n, (path, _) in enumerate(FREE_STRINGS))]


@pytest.mark.parametrize(("path", "value"), FREE_STRINGS, ids=_ids())
def test_valid_value_passes_and_a_trailing_newline_is_refused(path: tuple[str | int, ...], value: str) -> None:
    parse_stack_config(_config(path, value))
    with pytest.raises(ConfigError) as refused:
        parse_stack_config(_config(path, value + "\n"))
    keys = {f.key for f in refused.value.findings}
    assert any(k == _key(path) or k.startswith(_key(path) + ".") for k in keys), keys
    for finding in refused.value.findings:
        assert "\n" not in finding.message + finding.fix, "a finding is one line"


SETTINGS = ROOT / "vllm_serving" / "settings"


def test_no_settings_module_validates_with_match() -> None:
    """`re.match` with `$` accepts a final newline; fullmatch is the only way here."""
    offenders = [f"{p.name}:{n}" for p in sorted(SETTINGS.glob("*.py"))
                 for n, line in enumerate(p.read_text().splitlines(), 1)
                 if re.search(r"\.match\(value", line)]
    assert offenders == []


@pytest.mark.parametrize(("section", "value", "key", "says"), [
    ("container", {"runtime": "nvidia $(touch /tmp/x)"}, "container.runtime", "Docker runtime name"),
    ("network", {"publicHost": "http://gpu-01"}, "network.publicHost", "has a scheme"),
    ("network", {"publicHost": "gpu-01:30006"}, "network.publicHost", "network.hostPort"),
    ("network", {"publicHost": "10.0.0.5:30006"}, "network.publicHost", "network.hostPort"),
    ("network", {"publicHost": "fe80::1"}, "network.publicHost", "[fe80::1]"),
    ("target", {"dockerHost": "tcp://gpu-01:2375"}, "target.dockerHost", "ssh://user@host"),
    ("target", {"dockerHost": "tcp://gpu-01:2376"}, "target.dockerHost", "plain tcp://"),
    ("engine", {"env": {"maxModelLen": "8192"}}, "engine.env.maxModelLen", "directly under vllm-serving:engine"),
    ("engine", {"env": {"max-model-len": 8192}}, "engine.env.max-model-len", "as maxModelLen"),
    ("engine", {"env": {"2FAST": "1"}}, "engine.env.2FAST", "not an environment variable name"),
    ("engine", {"extraArgs": ["--x\n--y"]}, "engine.extraArgs[0]", "one line"),
    ("kubernetes", {"allowFrom": []}, "kubernetes.allowFrom", "namespaceSelector: {}"),
    ("kubernetes", {"allowFrom": [{}]}, "kubernetes.allowFrom[0].namespace", "names no source"),
    ("kubernetes", {"allowFrom": [{"cidr": "10.0.0.0/8", "namespace": "a"}]}, "kubernetes.allowFrom[0].cidr",
     "of its own"),
    ("kubernetes", {"nodeSelector": {"nvidia.com/gpu.product": "A100 80GB"}}, "kubernetes.nodeSelector",
     "label value"),
])
def test_free_strings_with_the_wrong_form(section: str, value: dict[str, Any], key: str, says: str) -> None:
    with pytest.raises(ConfigError) as refused:
        parse_stack_config({f"vllm-serving:{k}": v for k, v in {**BASE, section: value}.items()})
    lines = {f.key: f"{f.message} - {f.fix}" for f in refused.value.findings}
    assert f"vllm-serving:{key}" in lines, lines
    assert says in lines[f"vllm-serving:{key}"]


@pytest.mark.parametrize("host", ["gpu-01", "gpu-01.example.com", "10.0.0.5", "[fe80::1]"])
def test_public_hosts_that_are_hosts_pass(host: str) -> None:
    parse_stack_config(_config(("network", "publicHost"), host))


def test_bad_values_are_quoted_in_one_line_without_their_line_breaks() -> None:
    with pytest.raises(ConfigError) as refused:
        parse_stack_config(_config(("image", "tag"), "v0.19.1\n$(id)"))
    (finding,) = refused.value.findings
    assert "\n" not in finding.message and "\\n" in finding.message
