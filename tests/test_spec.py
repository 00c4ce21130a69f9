"""One resolved deployment: where clients reach it (the stack's URL outputs), what it is called,
what it loads, and every unknown catalog name refused at once with the key and a suggestion.
Expected URLs and figures are written out here as an operator would type or work them out."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.paths import FIXTURES, PROJECT_DIR
from tests.stack_builders import make_spec, stack_values
from vllm_serving.catalog.gpus import CPU
from vllm_serving.findings import ConfigError, Severity
from vllm_serving.release.carried import release_of
from vllm_serving.release.promotion import Promotion
from vllm_serving.settings.stack_config import parse_stack_config
from vllm_serving.spec import promoted_spec, resolve
from vllm_serving.stack_files.loader import project_defaults


def test_a_docker_hosts_endpoints_are_vllms_routes_on_the_host_port() -> None:
    # vLLM's routes: /v1 (OpenAI API), /health, /v1/models, /metrics (vllm/entrypoints/openai/models/
    # api_router.py, serve/instrumentator/health.py and metrics.py, v0.19.1); v100 publishes port 30006
    assert make_spec("v100").endpoints() == {
        "baseUrl": "http://localhost:30006/v1",
        "healthUrl": "http://localhost:30006/health",
        "modelsUrl": "http://localhost:30006/v1/models",
        "metricsUrl": "http://localhost:30006/metrics",
    }


@pytest.mark.parametrize(("stack", "network", "origin"), [
    ("v100", {}, "http://localhost:30006"),  # local Docker, every address: localhost answers
    ("v100-staging", {}, "http://gpu-v100-stg:30006"),  # target.dockerHost ssh://deploy@gpu-v100-stg
    ("v100", {"bindAddress": "127.0.0.1"}, "http://127.0.0.1:30006"),  # only that address answers
    ("v100-staging", {"bindAddress": "10.0.0.5"}, "http://10.0.0.5:30006"),  # even on a remote host
    ("v100", {"bindAddress": "::1"}, "http://[::1]:30006"),  # an IPv6 host in a URL takes brackets
    ("v100", {"bindAddress": "::"}, "http://localhost:30006"),  # IPv6's every-address, as 0.0.0.0
    ("v100-staging", {"publicHost": "llm.example.com", "bindAddress": "10.0.0.5"}, "http://llm.example.com:30006"),
])
def test_a_docker_hosts_origin_is_where_clients_reach_it(stack: str, network: dict[str, str], origin: str) -> None:
    spec = make_spec(stack, network=network)
    assert spec.origin == origin
    assert spec.endpoints()["baseUrl"] == origin + "/v1"


def test_a_kubernetes_stack_is_reached_at_its_services_cluster_dns_name() -> None:
    assert make_spec("a100-k8s").origin == "http://vllm.vllm.svc.cluster.local:8000"
    moved = make_spec("a100-k8s", container={"name": "qwen"}, network={"publicHost": "ignored.example.com"},
                      kubernetes={"namespace": "llm", "service": {"port": 9000}})
    assert moved.endpoints()["metricsUrl"] == "http://qwen.llm.svc.cluster.local:9000/metrics"


def test_the_server_listens_on_vllms_default_port() -> None:
    # `port: int = 8000` in vllm/entrypoints/openai/cli_args.py: the argv sets no --port
    spec = make_spec("v100")
    assert spec.container_port == 8000
    assert "--port" not in spec.args


def test_names_a_client_uses() -> None:
    v100 = make_spec("v100")
    assert v100.name == "vllm-qwen35-27b"  # container.name
    assert v100.served_model_name == "qwen3.5-27b"  # model.servedName
    # without servedName vLLM serves the model under the path it loads it from (--model)
    assert make_spec("a100").served_model_name == "/Qwen3.6-27B-FP8"


def test_resolved_from_the_settings() -> None:
    spec = make_spec("v100", secrets=("apiKey", "hfToken"))
    assert spec.stack == "v100"
    assert spec.gpu.name == "V100-32GB" and spec.model.num_hidden_layers == 64  # Qwen3.5-27B: 64 layers
    assert spec.args[:4] == ("--model", "/data/models/Qwen3.5-27B", "--served-model-name", "qwen3.5-27b")
    assert spec.env == (("VLLM_USE_MODELSCOPE", "false"),)
    assert spec.secret_env == ("VLLM_API_KEY", "HF_TOKEN")  # values stay Pulumi secrets
    assert spec.promotion is None
    assert make_spec("local").gpu is CPU  # hardware.device: cpu asks the catalog for no GPU


def test_the_startup_budget_follows_the_weights_unless_the_stack_sets_it() -> None:
    # Qwen3.5-27B holds 50.99 GiB of weights (per tensor, vision tower included; the catalog checks it
    # against vLLM's logged load): 300 + 15 x 50.99 = 1065 s -> 18 min
    assert make_spec("v100").startup_seconds == 1080
    assert make_spec("local").startup_seconds == 900  # container.startupTimeout: 15m
    assert make_spec("v100", container={"startupTimeout": "40m"}).startup_seconds == 2400


def test_every_unknown_catalog_name_is_refused_at_once_with_the_key_and_a_suggestion() -> None:
    with pytest.raises(ConfigError) as refused:
        make_spec("v100", hardware={"gpu": "A100-80G"}, model={"name": "Qwen3.5-27X"})
    gpu, model = refused.value.findings
    assert gpu.severity is Severity.ERROR and model.severity is Severity.ERROR
    assert (gpu.code, gpu.key) == ("gpu-unknown", "vllm-serving:hardware.gpu")
    assert "'A100-80G' is not in the GPU catalog" in gpu.message
    # 80G is how people write 80GB: one suggestion, not a list of every A100
    assert gpu.fix == "did you mean A100-80GB? (vllm-stack gpus lists them)"
    assert (model.code, model.key) == ("model-unknown", "vllm-serving:model.name")
    assert "'Qwen3.5-27X' is not in the model catalog" in model.message
    assert model.fix.startswith("did you mean Qwen3.5-27B, ")
    assert model.fix.endswith("? (vllm-stack models lists them), or point model.configFile at the model's "
                              "config.json or describe it under model.architecture")


def test_a_name_like_no_catalog_entry_points_at_the_lists() -> None:
    with pytest.raises(ConfigError) as refused:
        make_spec("v100", hardware={"gpu": "zzzzqqq"})
    (finding,) = refused.value.findings
    assert finding.fix == "use a catalog name (vllm-stack gpus lists them)"
    with pytest.raises(ConfigError) as refused:
        make_spec("v100", model={"name": "qqqqqqqqqqqqqqqqqqqqqq"})
    (finding,) = refused.value.findings
    assert finding.fix.startswith("name a catalog model (vllm-stack models lists them)")


def test_a_relative_config_file_is_read_from_the_project(tmp_path: Path) -> None:
    (tmp_path / "cfg").mkdir()
    shutil.copy(FIXTURES / "hf" / "qwen3-4b.config.json", tmp_path / "cfg" / "config.json")
    settings = parse_stack_config(stack_values("v100", model={"name": None, "configFile": "cfg/config.json"}))
    spec = resolve(settings, "v100", project_dir=tmp_path)
    # the fixture's own figures (Qwen3-4B's config.json)
    assert (spec.model.num_hidden_layers, spec.model.hidden_size, spec.model.num_key_value_heads) == (36, 2560, 8)
    with pytest.raises(ConfigError) as refused:
        resolve(settings, "v100", project_dir=tmp_path / "elsewhere")
    assert [f.key for f in refused.value.findings] == ["vllm-serving:model.configFile"]
    unknown_gpu = parse_stack_config(stack_values("v100", hardware={"gpu": "V100-16G"},
                                                  model={"name": None, "configFile": "cfg/config.json"}))
    with pytest.raises(ConfigError) as refused:  # every error at once: the GPU's and the file's
        resolve(unknown_gpu, "v100", project_dir=tmp_path / "elsewhere")
    assert [f.key for f in refused.value.findings] == ["vllm-serving:hardware.gpu", "vllm-serving:model.configFile"]


def test_a_model_described_inline_is_the_one_resolved() -> None:
    # Qwen3-4B's figures (tests/fixtures/hf/qwen3-4b.config.json); 4.02 B parameters in bf16
    architecture = {"architecture": "Qwen3ForCausalLM", "modelType": "qwen3", "family": "qwen3", "paramsBillion": 4.02,
                    "numHiddenLayers": 36, "fullAttentionLayers": 36, "hiddenSize": 2560, "vocabSize": 151936,
                    "maxPositionEmbeddings": 40960, "numAttentionHeads": 32, "numKeyValueHeads": 8, "headDim": 128}
    spec = make_spec("v100", model={"name": None, "architecture": architecture})
    assert (spec.model.architecture, spec.model.num_hidden_layers) == ("Qwen3ForCausalLM", 36)
    # 4.02e9 x 2 bytes = 7.49 GiB: 300 + 15 x 7.49 = 412 s -> 7 min
    assert spec.startup_seconds == 420


def test_a_promoted_stacks_errors_name_both_stacks() -> None:
    source = "organization/vllm-serving/v100-staging"
    values = stack_values("v100-prod", hardware={"gpu": "V100-16G"})
    with pytest.raises(ConfigError) as refused:
        promoted_spec(values, set(), Promotion(source, "v100-prod", {}), project_defaults(PROJECT_DIR))
    assert [f.code for f in refused.value.findings] == ["release-missing"]
    release = release_of(make_spec("v100-staging").settings, "v100-staging")
    promotion = Promotion(source, "v100-prod", release)
    with pytest.raises(ConfigError) as refused:
        promoted_spec(values, set(), promotion, project_defaults(PROJECT_DIR))
    (gpu,) = refused.value.findings  # the stack's own key: its own fix, both stacks named
    assert gpu.code == "gpu-unknown"
    assert gpu.message.endswith("[stack v100-prod, release promoted from v100-staging]")
    unknown_model = Promotion(source, "v100-prod", {**release, "model": {**release["model"], "name": "Qwen9"}})
    with pytest.raises(ConfigError) as refused:
        promoted_spec(stack_values("v100-prod"), set(), unknown_model, project_defaults(PROJECT_DIR))
    (model,) = refused.value.findings  # the release's key: fixed in the source, never in prod
    assert model.code == "model-unknown"
    assert model.message.endswith("[model.name is in the release of v100-staging, promoted into v100-prod]")
    assert model.fix.startswith("change it in v100-staging")
    keyed = {**stack_values("v100-prod"), "vllm-serving:apiKey": "[secret]"}
    spec = promoted_spec(keyed, {"vllm-serving:apiKey"}, promotion, project_defaults(PROJECT_DIR))
    assert spec.promotion is promotion and spec.stack == "v100-prod"
    assert spec.secret_env == ("VLLM_API_KEY",)  # the promoting stack's own secret, still a secret


def test_a_promoted_config_file_is_read_from_the_project(tmp_path: Path) -> None:
    (tmp_path / "cfg").mkdir()
    shutil.copy(FIXTURES / "hf" / "qwen3-4b.config.json", tmp_path / "cfg" / "config.json")
    release = release_of(make_spec("v100-staging").settings, "v100-staging")
    model = {k: v for k, v in release["model"].items() if k != "name"} | {"configFile": "cfg/config.json"}
    promotion = Promotion("organization/vllm-serving/v100-staging", "v100-prod", {**release, "model": model})
    spec = promoted_spec(stack_values("v100-prod"), set(), promotion, project_defaults(PROJECT_DIR), tmp_path)
    assert spec.model.hidden_size == 2560
