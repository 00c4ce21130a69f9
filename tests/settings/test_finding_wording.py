"""The edges of the findings' wording, each written out from the rule it states: where a hint
starts and stops applying (a percentage between 10 and 100, a fraction with vLLM's binary suffix,
an item of 4096 characters), what a key's odd character is called, and the texts of findings the
catalogue in test_error_messages.py does not reach (label values, endpoints, control characters)."""

from __future__ import annotations

import datetime
from typing import Any

import pytest
from pydantic import ValidationError

from tests.settings.minimal_stack import parse_minimal
from vllm_serving.findings import ConfigError, Finding
from vllm_serving.settings.config_hints import spoken_kind
from vllm_serving.settings.engine import MAX_EXTRA_ARG_CHARS, EngineSettings
from vllm_serving.settings.release import bare_stack
from vllm_serving.settings.target import derived_host_id
from vllm_serving.settings.text_checks import stack_name_problem

PROJECT = "vllm-serving"
GMU_DOC = "(Share of each GPU's memory vLLM may use (`--gpu-memory-utilization`), in (0, 1].)"


def _one(key: str, **sections: Any) -> Finding:
    with pytest.raises(ConfigError) as caught:
        parse_minimal(**sections)
    found = {f.key: f for f in caught.value.findings}
    assert f"{PROJECT}:{key}" in found, found
    return found[f"{PROJECT}:{key}"]


@pytest.mark.parametrize(("value", "fix"), [
    # a share of 1 written as a percentage: 10 to 100 read as 0.1 to 1; below 10 is no percentage anyone writes
    (10, "write 0.1 (a share of 1, not a percentage)"), (100, "write 1 (a share of 1, not a percentage)"),
    (9, "write a value at most 1.0"), (101, "write a value at most 1.0"),
])
def test_a_percentage_hint_holds_from_10_to_100_only(value: int, fix: str) -> None:
    f = _one("engine.gpuMemoryUtilization", engine={"gpuMemoryUtilization": value})
    assert (f.code, f.message, f.fix) == ("config-range", f"{value} is out of range", f"{fix} {GMU_DOC}")


def test_a_fraction_with_vllm_s_binary_suffix_is_refused_as_vllm_refuses_it() -> None:
    # vllm/engine/arg_utils.py human_readable_int (v0.19.1): "Decimals are not allowed with binary
    # suffixes like K. Did you mean to use 1.5k instead?"
    f = _one("engine.maxModelLen", engine={"maxModelLen": "1.5K"})
    assert f.fix.startswith("write a whole number: vLLM refuses 1.5K (no fraction with a binary suffix such as K); "
                            "1.5k would be 1500 (")


def test_vllm_s_binary_shorthand_names_its_decimal_twin() -> None:
    f = _one("engine.maxModelLen", engine={"maxModelLen": "32K"})
    assert f.fix.startswith("write the whole number 32768 (32K in vLLM's shorthand, where 32k would be 32000; "
                            "the config takes digits only)")


@pytest.mark.parametrize(("key", "says"), [
    # DEL prints as nothing, so the key looks right: name it as the control character it is
    ("max\x7fModelLen", ": it contains the control character '\\x7f' (U+007F unnamed character)"),
    ("max\x80ModelLen", ": it contains the non-ASCII character '\\x80' (U+0080 unnamed character)"),
    ("max~ModelLen", ""),  # the last printable ASCII character is nothing odd
])
def test_an_odd_character_in_a_key_is_named_by_what_it_is(key: str, says: str) -> None:
    f = _one(f"engine.{key}", engine={key: 1})
    assert f.message == f"unknown key {key!r}{says}"
    assert f.fix == "did you mean 'maxModelLen'? rename the key"


def test_a_key_with_an_extra_leading_letter_is_a_typo_not_a_spelling() -> None:
    # only dashes (vLLM's --flag) are dropped before comparing spellings, not letters
    f = _one("engine.XmaxModelLen", engine={"XmaxModelLen": 1})
    assert f.fix == "did you mean 'maxModelLen'? rename the key"


def test_an_unknown_nested_key_with_no_close_match_lists_that_section_s_keys() -> None:
    f = _one("engine.zzzzqqqq", engine={"zzzzqqqq": 1})
    assert f.fix.startswith("remove it; known keys here: tensorParallelSize, pipelineParallelSize, dataParallelSize, ")
    assert f.fix.endswith(", extraArgs, env")


@pytest.mark.parametrize(("value", "spoken"), [
    (None, "nothing"), (True, "the boolean true"), (0.5, "the number 0.5"), ("x", "text"), ((1,), "a list"),
    ({"a": 1}, "a mapping"),
    # YAML 1.1 reads an unquoted 2024-01-01 as a date
    (datetime.date(2024, 1, 1), "a date"),
])
def test_a_value_is_spoken_of_in_the_stack_file_s_words(value: object, spoken: str) -> None:
    assert spoken_kind(value) == spoken


def test_an_unquoted_date_for_a_section_is_called_a_date() -> None:
    f = _one("engine", engine=datetime.date(2024, 1, 1))
    assert f.message == "must be a mapping of keys, got a date"


def test_a_json_object_indented_in_quotes_is_still_json_text() -> None:
    f = _one("engine.speculativeConfig", engine={"speculativeConfig": '  {"method": "mtp"}'})
    assert f.message == "is JSON text, not YAML keys"


def test_a_yaml_boolean_for_a_choice_names_the_word_it_stands_for_or_lists_the_choices() -> None:
    f = _one("container.restart", container={"restart": False})
    assert f.fix == "write 'no' in quotes: YAML reads an unquoted no as the boolean false"
    f = _one("engine.dtype", engine={"dtype": True})
    assert f.fix == "write one of 'auto', 'half', 'float16', 'bfloat16', 'float' or 'float32'"


def test_a_bad_label_value_names_its_key_and_the_form() -> None:
    f = _one("kubernetes.nodeSelector", target={"kind": "kubernetes"},
             kubernetes={"nodeSelector": {"nvidia.com/gpu.product": "bad value!"}})
    assert (f.message, f.fix) == (
        "nodeSelector value 'bad value!' for nvidia.com/gpu.product is not a Kubernetes label value",
        "use at most 63 letters, digits, '-', '_' or '.', starting and ending with a letter or digit")


@pytest.mark.parametrize(("endpoint", "message", "fix"), [
    ("tcp://gpu01:2375", "'tcp://gpu01:2375' is the Docker API over plain tcp://: anyone who reaches the port controls "
     "the host, and the registry password crosses the network in clear",
     "write ssh://user@host (the daemon stays on its local socket)"),
    # the scheme is what comes before the first '://', whatever the rest holds
    ("tcp://gpu01:2375/ssh://x", "'tcp://gpu01:2375/ssh://x' is the Docker API over plain tcp://: anyone who reaches "
     "the port controls the host, and the registry password crosses the network in clear",
     "write ssh://user@host (the daemon stays on its local socket)"),
    ("http://gpu01", "'http://gpu01' is not a Docker endpoint",
     "write ssh://user@host (remote) or unix:///var/run/docker.sock (local)"),
])
def test_a_docker_endpoint_off_the_safe_schemes_says_why(endpoint: str, message: str, fix: str) -> None:
    f = _one("target.dockerHost", target={"dockerHost": endpoint})
    assert (f.message, f.fix) == (message, fix)


def test_a_parser_name_of_the_wrong_form_says_how_vllm_names_it() -> None:
    f = _one("engine.reasoningParser", engine={"reasoningParser": "bad name!"})
    assert (f.message, f.fix) == ("'bad name!' is not a parser or method name",
                                  "write the name as vLLM registers it, e.g. qwen3 or qwen3_coder")


@pytest.mark.parametrize(("section", "key", "item", "shown"), [
    ("engine", "engine.extraArgs[0]", "--x\x07" + "y" * 60, "engine.extraArgs item " + repr("--x\x07" + "y" * 36)),
    ("target", "target.sshOpts[0]", "-oPort=22\x07", "ssh option '-oPort=22\\x07'"),
])
def test_a_control_character_in_a_list_item_is_shown_escaped(section: str, key: str, item: str, shown: str) -> None:
    sections = ({"engine": {"extraArgs": [item]}} if section == "engine"
                else {"target": {"dockerHost": "ssh://d@gpu", "sshOpts": [item]}})
    f = _one(key, **sections)
    assert (f.message, f.fix) == (f"{shown} contains a control character (a newline, tab or NUL)",
                                  "write it on one line, without control characters")


def test_an_extra_args_item_may_be_as_long_as_the_cap_and_no_longer() -> None:
    assert parse_minimal(engine={"extraArgs": ["a" * MAX_EXTRA_ARG_CHARS]}).engine.extra_args
    f = _one("engine.extraArgs[0]", engine={"extraArgs": ["a" * (MAX_EXTRA_ARG_CHARS + 1)]})
    assert (f.message, f.fix) == (f"an engine.extraArgs item of 4097 characters ({'a' * 40!r}...)",
                                  "keep each item to at most 4096 characters")


def test_a_settings_model_validated_alone_reads_the_finding_s_message() -> None:
    # pydantic renders a custom error from its template: the message must be the finding's own text
    with pytest.raises(ValidationError) as caught:
        EngineSettings.model_validate({"reasoningParser": "bad name!"})
    (error,) = caught.value.errors()
    assert error["msg"] == "'bad name!' is not a parser or method name"


@pytest.mark.parametrize(("sections", "key", "message", "fix"), [
    ({"engine": {"quantization": "FP8!"}}, "engine.quantization", "'FP8!' is not a quantization method name",
     "write the method as vLLM names it, e.g. fp8, awq_marlin or gptq_marlin"),
    ({"target": {"kind": "kubernetes"}, "kubernetes": {"imagePullSecrets": ["ok-secret", "Bad_Secret"]}},
     "kubernetes.imagePullSecrets[1]", "'Bad_Secret' is not a valid Kubernetes Secret name",
     "use lower-case letters, digits, '-' and '.', starting and ending with a letter or digit"),
    ({"cache": {"volumeName": "-bad"}}, "cache.volumeName", "'-bad' is not a Docker volume name",
     "use letters, digits, '_', '.' or '-', starting with a letter or digit"),
    ({"container": {"shmSize": "12q"}}, "container.shmSize",
     "'12q' is not a size; write it as Docker does, e.g. '32g' or '512m'",
     "write a size such as '32g' (GiB) or '512m' (MiB)"),
    ({"model": {"name": "Qwen3.5-27B", "hostPath": "//data/" + "m" * 70}}, "model.hostPath",
     f"path {('//data/' + 'm' * 70)[:60]!r} starts with '//': the kernel, Docker and the kubelet read it as "
     f"{('/data/' + 'm' * 70)[:60]!r}, which a reader of the stack may not see",
     f"write it with one leading slash: {('/data/' + 'm' * 70)[:60]}"),
    ({"waivers": [{"code": "engine-dtype", "reason": "a"}, {"code": "engine-dtype", "reason": "b"}]}, "waivers[1]",
     "waives engine-dtype again (waivers[0] already does)", "remove this entry, or merge its reason into waivers[0]"),
    # the key is read in full whether or not the namespace is written
    ({"waivers": [{"code": "engine-dtype", "key": "engine.dtype", "reason": "a"},
                  {"code": "engine-dtype", "key": "vllm-serving:engine.dtype", "reason": "b"}]}, "waivers[1]",
     "waives engine-dtype at vllm-serving:engine.dtype again (waivers[0] already does)",
     "remove this entry, or merge its reason into waivers[0]"),
    ({"engine": {"extraArgs": ["--x"] * 129}}, "engine.extraArgs", "engine.extraArgs has 129 items",
     "pass at most 128: vLLM flags this project models have keys of their own (vllm-stack check names them)"),
])
def test_more_findings_read_as_written_here(sections: dict[str, Any], key: str, message: str, fix: str) -> None:
    f = _one(key, **sections)
    assert (f.message, f.fix) == (message, fix)


def test_too_many_waivers_say_how_to_need_fewer() -> None:
    waivers = [{"code": f"code-{i}", "reason": "r"} for i in range(65)]
    f = _one("waivers", waivers=waivers)
    assert (f.message, f.fix) == ("waivers has 65 entries", "keep at most 64: fix the findings instead of waiving "
                                  "them, or waive a code at every key by leaving its key out")


def test_a_path_the_kernel_would_refuse_as_too_long_is_refused_here() -> None:
    # PATH_MAX (4096) counts the terminating NUL: 4095 bytes is the longest path the kernel takes
    names = "/".join(["d" * 200] * 21)
    longest = "/" + names[:4094]
    assert len(longest.encode()) == 4095
    assert parse_minimal(model={"name": "Qwen3.5-27B", "hostPath": longest}).model.host_path == longest
    f = _one("model.hostPath", model={"name": "Qwen3.5-27B", "hostPath": longest + "d"})
    assert f.message == f"path {longest[:60]!r}... has 4096 bytes: the kernel refuses it (ENAMETOOLONG), so the " \
                        "mount fails only when the container starts"
    assert f.fix == "use a path under 4096 bytes with names of at most 255 bytes"


def test_a_stack_name_is_found_from_a_qualified_stack_reference() -> None:

    assert bare_stack("acme/vllm-serving/v100-staging") == "v100-staging"
    assert bare_stack("v100") == "v100"


@pytest.mark.parametrize(("section", "key"), [("container", "shmSize"), ("container", "startupTimeout")])
def test_a_fraction_for_a_size_or_a_duration_is_a_number_of_the_wrong_kind(section: str, key: str) -> None:
    # a size or duration is text in Docker's notation or a whole number: 1.5 is neither
    f = _one(f"{section}.{key}", **{section: {key: 1.5}})
    assert (f.code, f.message) == ("config-type", "expects int, got 1.5")


def test_a_bad_stack_name_is_quoted_to_sixty_characters() -> None:

    assert stack_name_problem("v100-staging") is None
    assert stack_name_problem("bad name " + "x" * 80) == f"{('bad name ' + 'x' * 80)[:60]!r} is not a Pulumi stack name"


@pytest.mark.parametrize(("host", "message", "fix"), [
    ("http://gpu01.example.com", "'http://gpu01.example.com' has a scheme",
     "write the host alone, e.g. gpu01.example.com; the URLs are always http:// (vLLM serves plain HTTP)"),
    ("[2001:db8::zz]", "'[2001:db8::zz]' is not an IPv6 address", "write it as [2001:db8::1]"),
    ("[2001:db8::1", "'[2001:db8::1' is not a host name",
     "write a host name or address such as gpu01.example.com or 10.0.0.5, with no path"),
    ("2001:db8::1", "'2001:db8::1' is an IPv6 address without brackets",
     "write it as [2001:db8::1] so the port stays separate in the URLs"),
    ("gpu01.example.com:8000", "'gpu01.example.com:8000' has a port",
     "write the host alone and put the port in network.hostPort"),
    ("[2001:db8::1]:8000", "'[2001:db8::1]:8000' has a port",
     "write the host alone and put the port in network.hostPort"),
    ("gpu01.example.com/v1", "'gpu01.example.com/v1' is not a host name",
     "write a host name or address such as gpu01.example.com or 10.0.0.5, with no path"),
])
def test_a_public_host_is_a_host_alone(host: str, message: str, fix: str) -> None:
    f = _one("network.publicHost", network={"publicHost": host})
    assert (f.message, f.fix) == (message, fix)


@pytest.mark.parametrize("host", ["gpu01.example.com", "10.0.0.5", "[2001:db8::1]", "[::1]", "[2001:db8::1:2]"])
def test_a_host_name_or_address_is_taken_as_written(host: str) -> None:
    assert parse_minimal(network={"publicHost": host}).network.public_host == host


def test_a_fleet_host_s_public_host_is_checked_the_same_way() -> None:
    hosts = [{"dockerHost": "ssh://d@gpu01", "publicHost": "https://gpu01"}]
    f = _one("target.hosts[0].publicHost", target={"kind": "docker", "hosts": hosts})
    assert f.message == "'https://gpu01' has a scheme"


@pytest.mark.parametrize(("docker_host", "host_id"), [
    ("ssh://deploy@gpu01.example.com", "gpu01"),         # the first label of a DNS name
    ("ssh://deploy@GPU02.Example.com:2222", "gpu02"),    # lower case, whatever the port
    ("ssh://10.0.0.5", "10-0-0-5"),                      # an address whole, '-' for its dots
    ("ssh://deploy@[fd00::7]:2222", "fd00-7"),           # IPv6: brackets off, ':' runs as one '-'
    ("ssh://deploy@" + "a" * 50 + ".example.com", "a" * 40),  # at most 40 characters
    ("ssh://deploy@" + "a" * 39 + "_b.example.com", "a" * 39),  # no '-' left at the cut
    ("unix:///var/run/docker.sock", "local"),
])
def test_a_fleet_host_s_id_is_derived_from_its_endpoint(docker_host: str, host_id: str) -> None:

    assert derived_host_id(docker_host) == host_id
