"""The stack diff: per-flag argv, keyed mounts/ports/env, secrets by name, stable order."""

from __future__ import annotations

from functools import cache
from typing import Any, get_args, get_origin

import pytest

from tests.paths import PROJECT_DIR, stack_file
from tests.stack_builders import edit, make_spec, shipped_settings, spec_of
from vllm_serving.findings import Finding, Severity
from vllm_serving.settings.stack import SECTIONS as SETTINGS_SECTIONS
from vllm_serving.settings.stack import StackSettings
from vllm_serving.settings.waivers import Waiver
from vllm_serving.spec import ServingSpec
from vllm_serving.stack_files.loader import load_spec
from vllm_serving.views.stack_diff import (
    POSITIONAL,
    SECRET_VALUE,
    SECTIONS,
    SETTINGS_KEYS,
    Change,
    diff_views,
    parse_argv,
    stack_diff,
    stack_view,
)


@cache
def shipped(stack: str) -> ServingSpec:
    return load_spec(stack_file(stack), stack, PROJECT_DIR)


def by_key(changes: list[Change]) -> dict[tuple[str, str], tuple[str | None, str | None]]:
    return {(c.section, c.key): (c.a, c.b) for c in changes}


@pytest.mark.parametrize("stack", ["v100", "a100", "a100-k8s"])
def test_a_stack_compared_with_itself_is_identical(stack: str) -> None:
    assert stack_diff(shipped(stack), shipped(stack)) == []


def test_changing_the_dtype_shows_exactly_that_flag() -> None:
    base = shipped_settings("v100")
    # float16 computes as half does, so capacity stays put: only the flag's text moves
    changes = stack_diff(spec_of(base), spec_of(edit(base, engine={"dtype": "float16"})))
    assert changes == [Change("argv", "--dtype", "half", "float16")]
    assert changes[0].kind == "changed"


def test_flags_that_appear_and_disappear_are_added_and_removed() -> None:
    base = shipped_settings("v100")
    other = edit(base, engine={"dtype": None, "kv_cache_dtype": "fp8"})
    argv = [c for c in stack_diff(spec_of(base), spec_of(other)) if c.section == "argv"]
    assert [(c.key, c.a, c.b, c.kind) for c in argv] == [
        ("--dtype", "half", None, "removed"),
        ("--kv-cache-dtype", None, "fp8", "added"),
    ]


def test_a_secret_env_var_shows_by_name_never_a_value() -> None:
    base = shipped_settings("a100")
    with_key = edit(base, secrets_set=frozenset({"apiKey"}))
    changes = stack_diff(spec_of(base), spec_of(with_key))
    assert changes == [Change("env", "VLLM_API_KEY", None, SECRET_VALUE)]
    assert SECRET_VALUE == "<secret>"  # what `vllm-stack diff` prints and its --json carries
    # two stacks both holding the secret compare equal: its value is not theirs to show
    assert stack_diff(spec_of(with_key), spec_of(with_key)) == []


def test_plain_env_is_compared_by_name_and_value() -> None:
    base = shipped_settings("v100")
    other = edit(base, engine={"env": {"VLLM_USE_MODELSCOPE": "true", "NCCL_DEBUG": "INFO"}})
    assert by_key(stack_diff(spec_of(base), spec_of(other))) == {
        ("env", "NCCL_DEBUG"): (None, "INFO"),
        ("env", "VLLM_USE_MODELSCOPE"): ("false", "true"),
    }


def test_argv_is_compared_per_flag_not_by_position() -> None:
    base = shipped_settings("a100")
    one = edit(base, engine={"extra_args": ("--max-num-partial-prefills", "2", "--enforce-eager")})
    other = edit(base, engine={"extra_args": ("--enforce-eager", "--max_num_partial_prefills=2")})
    assert stack_diff(spec_of(one), spec_of(other)) == []
    changed = edit(base, engine={"extra_args": ("--enforce-eager", "--max-num-partial-prefills", "4")})
    assert stack_diff(spec_of(one), spec_of(changed)) == [
        Change("argv", "--max-num-partial-prefills", "2", "4")]


def test_parse_argv_pairs_flags_with_values() -> None:
    parsed = parse_argv(["serve", "--model", "/m", "--enforce-eager", "--seed", "-1",
                         "--no-enable-prefix-caching", "--middleware", "a", "--middleware", "b c",
                         "extra", "--block-size=32"])
    assert parsed == {"--model": "/m", "--enforce-eager": "true", "--seed": "-1",
                      "--enable-prefix-caching": "false", "--middleware": "a 'b c'",
                      "--block-size": "32", POSITIONAL: "serve extra"}


def test_mounts_are_keyed_by_container_path() -> None:
    base = shipped_settings("v100")
    other = edit(base, model={"host_path": "/srv/models/Qwen3.5-27B"})
    changes = stack_diff(spec_of(base), spec_of(other))
    assert by_key(changes) == {("mounts", "/data/models/Qwen3.5-27B"): (
        "/u02/models/Qwen3.5-27B (read-only, bind)", "/srv/models/Qwen3.5-27B (read-only, bind)")}


def test_a_mount_says_whether_the_server_may_write_it() -> None:
    """Pulumi.v100.yaml: the weights read-only, the compile cache writable, both host directories."""
    view = stack_view(shipped("v100"))
    assert view["mounts"] == {"/data/models/Qwen3.5-27B": "/u02/models/Qwen3.5-27B (read-only, bind)",
                              "/root/.cache/vllm": "/u02/models/data/vllm-cache (writable, bind)"}


def test_ports_are_keyed_by_container_port() -> None:
    base = shipped_settings("v100")
    other = edit(base, network={"host_port": 30007, "bind_address": "127.0.0.1"})
    changes = by_key(stack_diff(spec_of(base), spec_of(other)))
    assert changes[("ports", "8000")] == ("0.0.0.0:30006", "127.0.0.1:30007")
    assert {section for section, _ in changes} == {"ports", "endpoints"}


def test_v100_to_a100_names_what_a_reviewer_needs() -> None:
    changes = by_key(stack_diff(shipped("v100"), shipped("a100")))
    assert changes[("gpu", "name")] == ("V100-32GB", "A100-80GB")
    assert changes[("image", "reference")] == (
        "192.168.122.156:30000/vllm/vllm-openai:v0.19.1", "vllm/vllm-openai:v0.19.1")
    assert changes[("argv", "--tensor-parallel-size")] == ("8", "4")
    assert changes[("argv", "--kv-cache-dtype")] == (None, "fp8")
    assert changes[("capacity", "kv_cache_dtype")] == ("auto", "fp8")
    assert ("argv", "--enable-prefix-caching") not in changes  # both set it: no line
    assert changes[("capacity", "tp")] == ("8", "4")
    assert changes[("model", "name")] == ("Qwen3.5-27B", "Qwen3.6-27B-FP8")


def test_the_gpu_and_the_model_are_named_once_not_again_under_capacity() -> None:
    changes = by_key(stack_diff(shipped("v100"), shipped("local")))
    assert changes[("gpu", "name")] == ("V100-32GB", "CPU")
    assert changes[("model", "architecture.architecture")] == ("Qwen3_5ForConditionalGeneration", "Qwen3ForCausalLM")
    assert ("capacity", "gpu") not in changes and ("capacity", "model") not in changes


def test_changes_come_in_section_then_key_order() -> None:
    changes = stack_diff(shipped("v100"), shipped("a100"))
    sections = [c.section for c in changes]
    assert sections == sorted(sections, key=SECTIONS.index)
    argv = [c.key for c in changes if c.section == "argv"]
    # the argv's own order (--dtype before --kv-cache-dtype), not alphabetical
    assert argv.index("--tensor-parallel-size") < argv.index("--dtype") < argv.index("--kv-cache-dtype")
    container = [c.key for c in changes if c.section == "container"]
    assert container == sorted(container)


def test_reversing_the_sides_swaps_added_and_removed() -> None:
    forward = stack_diff(shipped("v100"), shipped("a100"))
    backward = {(c.section, c.key): c for c in stack_diff(shipped("a100"), shipped("v100"))}
    for c in forward:
        back = backward[(c.section, c.key)]
        assert (back.a, back.b) == (c.b, c.a)
        assert {c.kind, back.kind} in ({"changed"}, {"added", "removed"})


def test_the_view_covers_every_section() -> None:
    assert tuple(stack_view(shipped("a100-k8s"))) == SECTIONS


def test_promoting_staging_to_prod_changes_only_the_host_the_release_source_and_protection() -> None:
    staging = load_spec(stack_file("v100-staging"), "v100-staging", PROJECT_DIR)
    prod = load_spec(stack_file("v100-prod"), "v100-prod", PROJECT_DIR)
    changes = stack_diff(staging, prod)
    assert {c.section for c in changes} == {"target", "model", "release", "endpoints"}
    # production keeps its weights volume from `pulumi destroy`
    assert [(c.key, c.a, c.b) for c in changes if c.section == "model"] == [("protect", "false", "true")]
    (release,) = [c for c in changes if c.section == "release"]
    assert (release.key, release.a, release.b) == (
        "promotedFrom", None, "organization/vllm-serving/v100-staging")


# (stack, settings section, its change as the stack file writes it, the diff line it must show as)
SETTING_CHANGES: list[tuple[str, str, dict[str, Any], tuple[str, str]]] = [
    ("v100", "target", {"sshOpts": ["-o", "StrictHostKeyChecking=yes"]}, ("target", "sshOpts")),
    ("v100", "hardware", {"count": 16}, ("gpu", "hostCount")),
    ("v100", "image", {"pullTimeout": "45m"}, ("image", "pullTimeout")),
    ("v100", "model", {"protect": True}, ("model", "protect")),
    ("v100", "cache", {"enabled": False}, ("mounts", "/root/.cache/vllm")),
    ("v100", "engine", {"maxNumSeqs": 64}, ("argv", "--max-num-seqs")),
    ("v100", "container", {"logMaxSize": "200m"}, ("container", "logMaxSize")),
    ("v100", "container", {"stopGracePeriod": "2m"}, ("container", "stopGracePeriod")),
    ("v100", "network", {"behindProxy": True}, ("network", "behindProxy")),
    ("a100-k8s", "kubernetes", {"nodes": 2, "cache": {"accessMode": "ReadWriteMany"}}, ("kubernetes", "nodes")),
    ("a100-k8s", "kubernetes", {"nodes": 2, "cache": {"accessMode": "ReadWriteMany"},
                                "rdma": {"resource": "rdma/rdma_shared_device_a"}}, ("kubernetes", "rdma.resource")),
    ("a100-k8s", "kubernetes", {"allowFrom": [{"namespace": "monitoring"}]}, ("kubernetes", "allowFrom")),
    ("a100-k8s", "kubernetes", {"networkPolicy": False}, ("kubernetes", "networkPolicy")),
    ("a100-k8s", "kubernetes", {"createNamespace": False}, ("kubernetes", "createNamespace")),
    ("a100-k8s", "kubernetes", {"service": {"type": "NodePort", "nodePort": 30080}},
     ("kubernetes", "service.nodePort")),
    ("a100-k8s", "kubernetes", {"resources": {"memory": "96g"}}, ("kubernetes", "resources.memory")),
    ("a100-k8s", "kubernetes", {"terminationGracePeriodSeconds": 120},
     ("kubernetes", "terminationGracePeriodSeconds")),
    ("a100-k8s", "kubernetes", {"replicas": 2, "cache": {"accessMode": "ReadWriteMany"}}, ("container", "replicas")),
    ("v100", "release", {"promoteFrom": "organization/vllm-serving/v100-staging"}, ("release", "promotedFrom")),
    ("v100", "preflight", {"enabled": False}, ("preflight", "enabled")),
    ("a100-k8s", "observability", {"prometheusOperator": True}, ("observability", "prometheusOperator")),
    ("a100-k8s", "observability", {"grafanaDashboard": True}, ("observability", "grafanaDashboard")),
    ("v100", "observability", {"ttftP95Seconds": 5}, ("observability", "ttftP95Seconds")),
    ("v100", "observability", {"scrapeInterval": "30s"}, ("observability", "scrapeInterval")),
    ("a100-k8s", "observability", {"labels": {"release": "kube-prometheus-stack"}}, ("observability", "labels")),
    ("a100-k8s", "observability", {"dashboardNamespace": "monitoring"}, ("observability", "dashboardNamespace")),
    ("v100", "capacity", {"minConcurrency": 4}, ("capacity", "minConcurrency")),
]


@pytest.mark.parametrize(("stack", "section", "change", "shown"), SETTING_CHANGES,
                         ids=[f"{c[1]}.{next(iter(c[2]))}" for c in SETTING_CHANGES])
def test_every_settings_change_shows_in_the_diff(stack: str, section: str, change: dict[str, Any],
                                                 shown: tuple[str, str]) -> None:
    before, after = make_spec(stack), make_spec(stack, **{section: change})
    changes = by_key(stack_diff(before, after))
    assert shown in changes
    assert stack_diff(after, after) == []


def test_a_waiver_shows_with_its_reason_and_what_it_lets_through() -> None:
    before = edit(shipped_settings("v100"), engine={"dtype": "bfloat16"})
    waiver = Waiver(code="dtype-bf16-unsupported", reason="patched image", key="vllm-serving:engine.dtype")
    after = before.model_copy(update={"waivers": (waiver,)})
    assert by_key(stack_diff(spec_of(before), spec_of(after))) == {
        ("waivers", "dtype-bf16-unsupported [vllm-serving:engine.dtype]"):
            (None, "patched image (sets aside error at vllm-serving:engine.dtype)")}
    reworded = after.model_copy(update={"waivers": (waiver.model_copy(update={"reason": "OPS-1"}),)})
    assert [c.kind for c in stack_diff(spec_of(after), spec_of(reworded))] == ["changed"]


def test_every_settings_section_has_a_change_that_shows() -> None:
    # waivers, a list, by test_a_waiver_shows_with_its_reason_and_what_it_lets_through
    assert {c[1] for c in SETTING_CHANGES} | {"waivers"} == set(SETTINGS_SECTIONS)


def test_settings_read_as_the_stack_file_writes_them() -> None:
    changes = by_key(stack_diff(make_spec("a100-k8s"), make_spec(
        "a100-k8s", kubernetes={"resources": {"memory": "96g"}}, observability={"scrapeInterval": "30s"})))
    assert changes[("kubernetes", "resources.memory")] == ("64Gi", "96Gi")
    assert changes[("observability", "scrapeInterval")] == ("15s", "30s")


def test_a_fact_the_plan_shows_is_not_repeated_from_the_settings() -> None:
    changes = stack_diff(make_spec("a100-k8s"), make_spec("a100-k8s", kubernetes={"namespace": "inference"}))
    assert ("kubernetes", "namespace") not in by_key(changes)
    assert by_key(changes)[("container", "namespace")] == ("vllm", "inference")


# Settings keys the plan's own facts show (argv, mounts, ports, endpoints, ...); every other key
# must be one SETTINGS_KEYS compares, so a new setting cannot slip past `diff` unseen.
SHOWN_BY_THE_PLAN: dict[str, frozenset[str] | None] = {
    "target": frozenset({"kind", "dockerHost", "hosts"}),
    "hardware": None,  # gpu, hostCount, given
    "image": frozenset({"registry", "repository", "tag", "digest", "username"}),
    "model": frozenset({"name", "architecture", "configFile", "hostPath", "volumeName", "containerPath",
                        "servedName"}),
    "cache": None,  # mounts
    "engine": None,  # argv and env
    "container": frozenset({"name", "runtime", "ipcMode", "shmSize", "privileged", "restart", "startupTimeout"}),
    "network": frozenset({"hostPort", "bindAddress", "publicHost"}),
    "release": None,  # promotedFrom
    "waivers": None,  # code and key name each entry, its reason is the value
}


@pytest.mark.parametrize("section", SETTINGS_SECTIONS)
def test_every_setting_is_compared(section: str) -> None:
    annotation = StackSettings.model_fields[section].annotation
    model = get_args(annotation)[0] if get_origin(annotation) is tuple else annotation  # a list: its items
    fields = {f.alias or n for n, f in model.model_fields.items()}
    plan = SHOWN_BY_THE_PLAN.get(section, frozenset())
    compared = SETTINGS_KEYS.get(section, ())
    unseen = set() if plan is None or compared is None else fields - plan - set(compared)
    assert unseen == set(), f"{section}: add {sorted(unseen)} to SETTINGS_KEYS or show it in the plan"


def test_a_value_with_spaces_or_json_reads_as_given_not_shell_quoted() -> None:
    """One value is shown as vLLM receives it; only a repeated flag's values are joined as a shell
    would quote them, so `a b` and `['a', 'b']` stay told apart."""
    parsed = parse_argv(["--served-model-name", "qwen 27b", "--speculative-config", '{"method": "mtp"}',
                         "--middleware", "a b", "--middleware", "c"])
    assert parsed == {"--served-model-name": "qwen 27b", "--speculative-config": '{"method": "mtp"}',
                      "--middleware": "'a b' c"}


def test_fractions_and_lists_read_as_the_stack_sets_them() -> None:
    """A float keeps its digits (Pulumi.v100.yaml's 0.8 -> 0.85, not rounded away); a list is compact
    JSON on one line."""
    base = shipped_settings("v100")
    changes = by_key(stack_diff(spec_of(base), spec_of(edit(base, engine={"gpu_memory_utilization": 0.85}))))
    assert changes[("capacity", "gpu_memory_utilization")] == ("0.8", "0.85")
    assert changes[("argv", "--gpu-memory-utilization")] == ("0.8", "0.85")
    ssh = by_key(stack_diff(make_spec("v100"), make_spec("v100", target={"sshOpts": ["-o", "Port=2222"]})))
    assert ssh[("target", "sshOpts")] == ("[]", '["-o","Port=2222"]')
    selector = by_key(stack_diff(make_spec("a100-k8s"), make_spec(
        "a100-k8s", kubernetes={"nodeSelector": {"zone": "a", "pool": "gpu"}})))
    assert selector[("container", "nodeSelector")] == (
        '{"nvidia.com/gpu.product":"NVIDIA-A100-SXM4-80GB"}', '{"pool":"gpu","zone":"a"}')


def test_a_waiver_that_sets_several_findings_aside_lists_each(monkeypatch: pytest.MonkeyPatch) -> None:
    """A waiver without a key covers its code wherever it fires: each finding it lets through is
    named, with its severity and key. (`check` stands in for the rules, which this view does not
    own: two findings of one code.)"""
    found = [Finding("parallel-gpus-idle", Severity.WARNING, "vllm-serving:hardware.count", "idle", "fix", "ok"),
             Finding("parallel-gpus-idle", Severity.ERROR, "vllm-serving:engine.tensorParallelSize", "x", "fix", "ok"),
             Finding("other", Severity.ERROR, "vllm-serving:engine.dtype", "x", "fix", "ok")]
    monkeypatch.setattr("vllm_serving.views.stack_diff.check", lambda spec: found)
    settings = shipped_settings("v100").model_copy(
        update={"waivers": (Waiver(code="parallel-gpus-idle", reason="two engines planned"),)})
    assert stack_view(spec_of(settings))["waivers"] == {
        "parallel-gpus-idle": "two engines planned (sets aside error at vllm-serving:engine.tensorParallelSize, "
                              "warning at vllm-serving:hardware.count)"}


def test_a_waiver_that_sets_nothing_aside_says_check_tells_why() -> None:
    base = shipped_settings("v100")
    waiver = Waiver(code="dtype-bf16-unsupported", reason="patched image")
    after = base.model_copy(update={"waivers": (waiver,)})
    assert by_key(stack_diff(spec_of(base), spec_of(after))) == {
        ("waivers", "dtype-bf16-unsupported"):
            (None, "patched image (sets aside nothing: vllm-stack check says why)")}


def test_a_new_registry_user_is_a_line_of_the_image() -> None:
    base = shipped_settings("v100")
    changes = by_key(stack_diff(spec_of(base), spec_of(edit(base, image={"username": "robot$ci"}))))
    assert changes == {("image", "registryUser"): ("admin", "robot$ci")}


def test_a_flag_only_one_side_sets_takes_its_place_in_the_argv_order() -> None:
    # A sets --tool-call-parser, B changes it and adds --kv-cache-dtype: the flags come in the order vLLM's
    # argv is written (--kv-cache-dtype near --dtype, the parsers last), not A's keys first
    base = shipped_settings("v100")
    other = edit(base, engine={"tool_call_parser": "hermes", "kv_cache_dtype": "fp8"})
    argv = [c.key for c in stack_diff(spec_of(base), spec_of(other)) if c.section == "argv"]
    assert argv == ["--kv-cache-dtype", "--tool-call-parser"]


def test_ports_come_in_numeric_order() -> None:
    # compared as numbers, as a reader scans them: 8000 before 30006 (as text, "30006" < "8000")
    a = {"ports": {"8000": "0.0.0.0:30006", "30006": "0.0.0.0:1"}}
    b = {"ports": {"8000": "0.0.0.0:30007", "30006": "0.0.0.0:2"}}
    assert [c.key for c in diff_views(a, b)] == ["8000", "30006"]


def test_a_change_as_diff_json_writes_it() -> None:
    # `vllm-stack diff --json`: each change with both sides and what kind of change it is
    assert Change("argv", "--dtype", "half", "bfloat16").as_dict() == {
        "section": "argv", "key": "--dtype", "a": "half", "b": "bfloat16", "kind": "changed"}
    assert Change("env", "HF_HOME", None, "/cache").as_dict()["kind"] == "added"
    assert Change("env", "HF_HOME", "/cache", None).as_dict()["kind"] == "removed"


def test_a_lone_dash_is_a_value_not_a_flag() -> None:
    # by convention `-` names stdin or stdout; argparse takes it as a value
    assert parse_argv(["--chat-template", "-", "--enforce-eager"]) == {"--chat-template": "-",
                                                                       "--enforce-eager": "true"}
