"""What a user reads when a stack file is wrong: the finding's code (CI greps it), the key, and a
message and fix that say what is wrong and what to write. The expected texts are written out here
from the rule each states (YAML 1.1's booleans, the Unicode name of a look-alike letter, the list
of keys the stack file takes), not read back from the settings code."""

from __future__ import annotations

from typing import Any

import pytest

from tests.settings.minimal_stack import BASE
from vllm_serving.findings import ConfigError, Finding
from vllm_serving.settings.stack_config import parse_stack_config

PROJECT = "vllm-serving"


def _findings(secrets: frozenset[str] = frozenset(), /, **sections: Any) -> dict[str, Finding]:
    """Every finding of BASE with `sections` replaced (a key `apiKey` etc. is set as given)."""
    values = {f"{PROJECT}:{k}": v for k, v in {**BASE, **sections}.items()}
    try:
        parse_stack_config(values, secrets)
    except ConfigError as exc:
        return {f.key: f for f in exc.findings}
    return {}


def _one(key: str, secrets: frozenset[str] = frozenset(), /, **sections: Any) -> Finding:
    found = _findings(secrets, **sections)
    assert key in found, found
    return found[key]


def test_a_key_with_space_around_it_says_so_and_how_to_write_it() -> None:
    f = _one(f"{PROJECT}:engine.' maxModelLen'", engine={" maxModelLen": 4096})
    assert f.code == "config-unknown-key"
    assert f.message == "unknown key ' maxModelLen': it has white space around it (inside the quotes)"
    assert f.fix == "write it as maxModelLen (camelCase, as the YAML keys are spelt)"


@pytest.mark.parametrize(("key", "says"), [
    # a Cyrillic o (U+043E) typed for the Latin one: the name Unicode gives it
    ("maxM\u043edelLen", "the non-ASCII character '\u043e' (U+043E CYRILLIC SMALL LETTER O)"),
    # a private-use character has no Unicode name
    ("max\ue000ModelLen", "the non-ASCII character '\\ue000' (U+E000 unnamed character)"),
])
def test_a_look_alike_letter_is_named(key: str, says: str) -> None:
    found = [f for f in _findings(engine={key: 4096}).values() if f.code == "config-unknown-key"]
    assert len(found) == 1
    assert found[0].message.startswith(f"unknown key {key!r}: it contains {says}")
    assert "did you mean 'maxModelLen'" in found[0].fix


@pytest.mark.parametrize(("value", "says"), [(True, "as the boolean true"), (False, "as the boolean false")])
def test_an_unquoted_yaml_boolean_for_text_names_what_yaml_made_of_it(value: bool, says: str) -> None:
    f = _one(f"{PROJECT}:image.tag", image={"tag": value})
    assert f.code == "config-type" and f.message == f"expects text, got {value}"
    assert "write a quoted string" in f.fix and says in f.fix


def test_a_parser_name_with_a_space_is_refused_with_its_value() -> None:
    f = _one(f"{PROJECT}:engine.reasoningParser", engine={"reasoningParser": "qwen 3"})
    assert f.message == "'qwen 3' is not a parser or method name"
    assert "e.g. qwen3" in f.fix


@pytest.mark.parametrize(("section", "key", "value", "message", "fix"), [
    ("engine", "extraArgs", "--enforce-eager", "expects list, got '--enforce-eager'", "write a YAML list"),
    ("engine", "enablePrefixCaching", "maybe", "expects bool, got 'maybe'", "write true or false"),
    ("engine", "gpuMemoryUtilization", 0, "0 is out of range", "write a value greater than 0"),
    ("engine", "maxNumSeqs", 0, "0 is out of range", "write a value at least 1"),
    ("container", "logMaxFiles", 101, "101 is out of range", "write a value at most 100"),
    ("capacity", "minConcurrency", 0, "0 is out of range", "write a value greater than 0"),
])
def test_a_wrong_type_or_range_says_what_to_write(section: str, key: str, value: object, message: str,
                                                 fix: str) -> None:
    f = _one(f"{PROJECT}:{section}.{key}", **{section: {key: value}})
    assert f.code == ("config-range" if "range" in message else "config-type")
    assert f.message == message and f.fix.startswith(fix)


def test_a_section_that_is_no_mapping_is_a_type_error() -> None:
    f = _one(f"{PROJECT}:engine", engine=5)
    assert f.code == "config-type"
    assert f.message == "must be a mapping of keys, got the number 5"


def test_a_value_of_the_wrong_form_quotes_it_and_gives_the_pattern() -> None:
    f = _one(f"{PROJECT}:container.logMaxSize", container={"logMaxSize": "100MB"})
    assert f.code == "config-invalid"
    assert f.message == "'100MB' has the wrong form"
    assert f.fix.startswith("match the pattern ^\\d+[kmg]$")


@pytest.mark.parametrize(("sections", "key"), [
    ({"hardware": {"gpu": "", "count": 2}}, "hardware.gpu"),
    ({"engine": {"speculativeConfig": {"method": "", "numSpeculativeTokens": 1}}}, "engine.speculativeConfig.method"),
])
def test_an_empty_value_says_it_is_empty(sections: dict[str, Any], key: str) -> None:
    f = _one(f"{PROJECT}:{key}", **sections)
    assert (f.code, f.message) == ("config-invalid", "is empty") and f.fix.startswith("give a value (")


def test_a_wrong_value_inside_a_free_mapping_names_its_key() -> None:
    """engine.env is a mapping of names, not a settings model: no key documentation to add."""
    f = _one(f"{PROJECT}:engine.env.A", engine={"env": {"A": {"x": 1}}})
    assert (f.code, f.message, f.fix) == ("config-type", "expects text, got {'x': 1}", "write a quoted string")


def test_a_typo_in_a_list_item_is_matched_against_that_item_s_keys() -> None:
    hosts = [{"dockerHost": "ssh://deploy@gpu01.internal", "publicHots": "gpu01.example.com"}]
    f = _one(f"{PROJECT}:target.hosts[0].publicHots", target={"kind": "docker", "hosts": hosts})
    assert f.code == "config-unknown-key"
    assert f.fix == "did you mean 'publicHost'? rename the key"


def test_a_dotted_top_level_key_says_to_nest_it() -> None:
    f = _one(f"{PROJECT}:engine.maxModelLen", **{"engine.maxModelLen": 8192})
    assert f.code == "config-unknown-key"
    assert f.fix.startswith("nest it: maxModelLen indented under vllm-serving:engine")


def test_an_unknown_top_level_key_lists_the_keys_the_stack_file_takes() -> None:
    f = _one(f"{PROJECT}:zzzzqq", zzzzqq=1)
    assert f.code == "config-unknown-key" and f.message == "unknown config key 'zzzzqq'"
    # every section and secret key a stack file takes, so the user sees what was meant
    assert f.fix == ("remove it; known keys: target, hardware, image, model, cache, engine, container, network, "
                     "kubernetes, release, preflight, observability, waivers, capacity, registryPassword, "
                     "apiKey, hfToken")


@pytest.mark.parametrize("secret", ["apiKey", "hfToken", "registryPassword"])
def test_a_secret_in_plain_text_is_refused_and_one_held_as_secret_is_not(secret: str) -> None:
    f = _one(f"{PROJECT}:{secret}", **{secret: "sk-plain"})
    assert f.code == "config-secret-plaintext"
    assert f.message == "is stored in plain text in the stack file"
    assert f.fix == f"remove it and run: pulumi config set --secret {secret}"
    # Pulumi names a secret with its namespace; the CLI reads bare names: either marks it secret
    for held in (f"{PROJECT}:{secret}", secret):
        assert f"{PROJECT}:{secret}" not in _findings(frozenset({held}), **{secret: "sk-held"})


def test_repeated_device_ids_are_shown() -> None:
    f = _one(f"{PROJECT}:hardware.deviceIds", hardware={"gpu": "A100-80GB", "count": 2, "deviceIds": [0, 0]})
    assert (f.message, f.fix) == ("device ids repeat: [0, 0]", "list each GPU index once")


def test_plain_tcp_docker_host_says_to_use_ssh() -> None:
    f = _one(f"{PROJECT}:target.dockerHost", target={"kind": "docker", "dockerHost": "tcp://gpu01:2375"})
    assert f.message.startswith("'tcp://gpu01:2375' is the Docker API over plain tcp://")
    assert f.fix == "write ssh://user@host (the daemon stays on its local socket)"


def test_a_long_path_with_a_control_character_is_quoted_to_sixty_characters() -> None:
    path = "/models/" + "q" * 80 + "\n"
    f = _one(f"{PROJECT}:model.hostPath", model={"name": "Qwen3.5-27B", "hostPath": path})
    assert f.message == f"path {path[:60]!r} contains a control character (a newline, tab or NUL)"


def _ssh_refusal(*options: str) -> Finding:
    target = {"kind": "docker", "dockerHost": "ssh://deploy@gpu01.internal", "sshOpts": list(options)}
    return _one(f"{PROJECT}:target.sshOpts[0]", target=target)


@pytest.mark.parametrize("options", [("-o", 'ConnectTimeout="30"'), ("-oconnecttimeout='30'",)])
def test_a_quoted_ssh_value_names_the_option_as_ssh_config_spells_it(options: tuple[str, ...]) -> None:
    """ssh matches keywords in any case (readconf.c lowercases them) and strips quotes: the message
    names the option, says why the quotes matter, and gives the plain form."""
    f = _ssh_refusal(*options)
    assert "does not give ConnectTimeout" in f.message
    assert f.message.endswith("in plain characters (ssh reads quotes, spaces, '#' and ';' in a value "
                              "differently, or hands it to a shell)")
    assert f.fix.startswith("write it as -o ConnectTimeout=VALUE")


def test_an_ssh_option_off_the_list_is_refused_by_name() -> None:
    f = _ssh_refusal("-o", "Foo=bar")
    assert f.message == "the ssh option Foo is not one this project passes to ssh"
    assert f.fix.startswith("remove it; only these are passed: Port, User,")


def test_ssh_s_port_flag_gets_the_o_form_with_the_value_cut_to_sixty_characters() -> None:
    f = _ssh_refusal("-p", "2" * 100)
    assert f.message == "'-p' is ssh's -p flag: only -o options are passed"
    assert f.fix == f"write it as '-o Port={'2' * 60}'"


def test_a_fleet_host_s_repeated_device_ids_are_shown() -> None:
    hosts = [{"dockerHost": "ssh://deploy@gpu01.internal", "deviceIds": [1, 1]}]
    f = _one(f"{PROJECT}:target.hosts[0].deviceIds", target={"kind": "docker", "hosts": hosts})
    assert (f.message, f.fix) == ("device ids repeat: [1, 1]", "list each GPU index once")


# Whole findings as a user reads them, one per kind of mistake: the message and the fix are the
# interface (CI logs, `pulumi preview`), so they are pinned here word for word, each read for sense.
@pytest.mark.parametrize(("sections", "key", "code", "message", "fix"), [
    ({"hardware": {"count": 2}}, "hardware.gpu", "config-missing", "is required",
     "pulumi config set --path 'hardware.gpu' VALUE"),
    ({"container": {"startupTimeout": "ten minutes"}}, "container.startupTimeout", "config-invalid",
     "'ten minutes' is not a duration; write e.g. '90s', '20m' or '1h30m'",
     "write a duration such as '90s', '20m' or '1h30m'"),
    ({"engine": {"gpuMemoryUtilization": "90%"}}, "engine.gpuMemoryUtilization", "config-type",
     "expects float, got '90%'", "write 0.9 (a share of 1, not a percentage)"),
    ({"engine": {"speculativeConfig": '{"method": "mtp", "numSpeculativeTokens": 1}'}}, "engine.speculativeConfig",
     "config-type", "is JSON text, not YAML keys",
     "write the keys as YAML under engine.speculativeConfig (camelCase), one per line"),
    ({"engine": {"env": ["NCCL_DEBUG=INFO"]}}, "engine.env", "config-type",
     "is a list of NAME=value items (docker run -e style)",
     "write each as NAME: value under engine.env, e.g. NCCL_DEBUG: 'VALUE' (values in quotes)"),
    ({"engine": ["a"]}, "engine", "config-type", "must be a mapping of keys, got a list",
     "write it as YAML keys under engine"),
    ({"model": {**BASE["model"], "servedName": 123}}, "model.servedName", "config-type", "expects text, got 123",
     "write a quoted string, exactly as meant: unquoted, YAML reads it as a number (and drops what a number "
     "has no room for: 0.10 becomes 0.1, 010 becomes 8)"),
    ({"hardware": {**BASE["hardware"], "deviceIds": []}}, "hardware.deviceIds", "config-invalid",
     "an empty device list gives the container no GPU",
     "list GPU indices such as [6, 7, 8, 9], or remove the key for all GPUs"),
    ({"target": {"kind": "kubernetes"}, "kubernetes": {"namespace": "Bad_NS"}}, "kubernetes.namespace",
     "config-invalid", "'Bad_NS' is not a valid namespace name",
     "use at most 63 lower-case letters, digits and '-', e.g. vllm"),
    ({"target": {"dockerHost": "ssh://deploy@gpu:2222", "sshOpts": ["-p", "22"]}}, "target.sshOpts[0]",
     "config-invalid", "'-p' is ssh's -p flag: only -o options are passed", "write it as '-o Port=22'"),
    # vLLM's flag spellings in a stack file, with or without the dashes: the YAML key to write
    ({"engine": {"max-model-len": 8192}}, "engine.max-model-len", "config-unknown-key",
     "unknown key 'max-model-len'", "write it as maxModelLen (camelCase, as the YAML keys are spelt)"),
    ({"engine": {"--max_model_len": 8192}}, "engine.--max_model_len", "config-unknown-key",
     "unknown key '--max_model_len'", "write it as maxModelLen (camelCase, as the YAML keys are spelt)"),
    ({"target": {"dockerHost": "ssh://deploy@gpu", "sshOpts": ["-p"]}}, "target.sshOpts[0]", "config-invalid",
     "'-p' is ssh's -p flag: only -o options are passed", "write it as '-o Port=VALUE'"),
    ({"target": {"dockerHost": "ssh://deploy@gpu:2222", "sshOpts": ["-o", "Port=22"]}}, "target.sshOpts[0]",
     "config-invalid", "Port=22 overrides dockerHost's port 2222: ssh keeps the first value it reads, and "
     "sshOpts come first", "remove Port from sshOpts, or put 22 in dockerHost"),
    ({"model": {"name": "Qwen3.5-27B", "hostPath": "/" + "a" * 300}}, "model.hostPath", "config-invalid",
     "path '/" + "a" * 59 + "'... has a name of 300 bytes: the kernel refuses it (ENAMETOOLONG), so the mount "
     "fails only when the container starts", "use a path under 4096 bytes with names of at most 255 bytes"),
    ({"engine": {"attentionBackend": "flash attn"}}, "engine.attentionBackend", "config-invalid",
     "'flash attn' is not an attention backend name",
     "write the backend's name as vLLM lists it, e.g. FLASHINFER or TRITON_ATTN"),
    ({"engine": {"extraArgs": ["--api-key", "x"]}}, "engine.extraArgs[0]", "config-invalid",
     "this item passes (or misspells) --api-key, a secret: its value would sit in plain text in the stack "
     "file, the container spec and the process list",
     "remove it and its value from engine.extraArgs and run: pulumi config set --secret apiKey"),
    ({"engine": {"maxNumSeqs": "many"}}, "engine.maxNumSeqs", "config-type", "expects int, got 'many'",
     "write a whole number such as 8192 ("),
    ({"model": {"name": "Qwen3.5-27B", "hostPath": "models/qwen"}}, "model.hostPath", "config-invalid",
     "path 'models/qwen' is not an absolute path", "write an absolute path such as /data/models/Qwen3.5-27B"),
    ({"model": {**BASE["model"], "servedName": True}}, "model.servedName", "config-type", "expects text, got True",
     "write a quoted string: YAML reads an unquoted yes/on/y/true as the boolean true ("),
    ({"target": {"dockerHost": "ssh://d@gpu", "sshOpts": ["-o"]}}, "target.sshOpts[0]", "config-invalid",
     "'-o' is the last item: ssh would take the next word of its command line, one Docker adds, as the option",
     "write each option as -o Keyword=Value, or remove it"),
    # a nested key's fix ends with that key's own documentation (settings/kubernetes.py ServiceSettings.port)
    ({"target": {"kind": "kubernetes"}, "kubernetes": {"service": {"type": "NodePort", "port": "abc"}}},
     "kubernetes.service.port", "config-type", "expects int, got 'abc'",
     "write a whole number such as 8192 (Service port; the container port stays 8000.)"),
    # a long value is quoted up to 60 characters: the line stays readable
    ({"model": {**BASE["model"], "hostPath": "models/" + "q" * 80}}, "model.hostPath", "config-invalid",
     "path 'models/" + "q" * 53 + "' is not an absolute path", "write an absolute path such as /data/"),
    ({"engine": {"gpuMemoryUtilization": "high"}}, "engine.gpuMemoryUtilization", "config-type",
     "expects float, got 'high'", "write a number such as 0.9 ("),
    ({"target": {"hosts": [{"name": "gpu01", "dockerHost": "ssh://a@gpu01", "deviceIds": []}]}},
     "target.hosts[0].deviceIds", "config-invalid", "an empty device list gives the container no GPU",
     "list GPU indices such as [0, 1, 2, 3], or remove the key for hardware.deviceIds"),
    ({"target": {"kind": "kubernetes"}, "kubernetes": {"cache": {"storageClassName": "Bad_Class"}}},
     "kubernetes.cache.storageClassName", "config-invalid", "'Bad_Class' is not a valid Kubernetes storage class name",
     "use lower-case letters, digits, '-' and '.'"),
    ({"target": {"kind": "swarm"}}, "target.kind", "config-invalid", "'swarm' is not allowed",
     "write one of 'docker' or 'kubernetes'"),
    ({"target": {"kind": "kubernetes"}, "kubernetes": {"nodeSelector": {"bad key!": "x"}}},
     "kubernetes.nodeSelector", "config-invalid", "nodeSelector key 'bad key!' is not a Kubernetes label key",
     "write prefix/name such as nvidia.com/gpu.product (name: at most 63 letters, digits, '-_.')"),
])
def test_each_kind_of_mistake_reads_as_written_here(sections: dict[str, Any], key: str, code: str, message: str,
                                                    fix: str) -> None:
    f = _one(f"{PROJECT}:{key}", **sections)
    assert (f.code, f.message) == (code, message)
    assert f.fix.startswith(fix), f.fix


def test_a_local_socket_has_no_ssh_host_name() -> None:
    from vllm_serving.settings.target import ssh_hostname  # noqa: PLC0415

    assert ssh_hostname("unix:///var/run/docker.sock") is None and ssh_hostname("tcp://gpu:2376") is None
    assert ssh_hostname("ssh://deploy@[fd00::7]:2222") == "[fd00::7]"


def test_a_missing_section_says_which_and_how_to_add_it() -> None:
    values = {f"{PROJECT}:{k}": v for k, v in BASE.items() if k != "hardware"}
    with pytest.raises(ConfigError) as failed:
        parse_stack_config(values)
    (finding,) = [f for f in failed.value.findings if f.key == f"{PROJECT}:hardware"]
    assert (finding.code, finding.message) == ("config-missing", "the hardware section is missing")
    assert finding.fix.startswith(f"add `{PROJECT}:hardware:` to the stack file (")
