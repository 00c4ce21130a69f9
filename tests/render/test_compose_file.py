"""`render --format compose` of the a100 stack reproduces seed 004's Compose service, except the
corrections documented in vllm_serving/render/compose_file.py (and commented in Pulumi.a100.yaml)."""

from __future__ import annotations

import json
from importlib import resources
from typing import Any

import jsonschema
import msgspec
import pytest
import yaml

from tests.paths import PROJECT_DIR, SHIPPED_STACKS, stack_file
from tests.seed_commands import SEED_FILES, SEEDS, normalise_args
from tests.stack_builders import make_spec
from vllm_serving.masking import MASK
from vllm_serving.render.compose_file import compose_document, compose_yaml, escape_interpolation
from vllm_serving.render.docker_container import container_spec
from vllm_serving.stack_files.loader import load_spec
from vllm_serving.units import parse_size


def seed_compose() -> dict[str, Any]:
    """The Compose file of seed 004, cut out of the write-up (from `version:` to `shm_size:`)."""
    lines = (SEEDS / SEED_FILES["a100"]).read_text(encoding="utf-8").splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("version:"))
    end = next(i for i, line in enumerate(lines) if line.strip().startswith("shm_size:"))
    doc: dict[str, Any] = yaml.safe_load("\n".join(lines[start:end + 1]))
    return doc


def ours() -> dict[str, Any]:
    doc: dict[str, Any] = yaml.safe_load(compose_yaml(container_spec(make_spec("a100"))))
    return doc


def test_matches_seed_004_service() -> None:
    seed, mine = seed_compose()["services"]["vllm"], ours()["services"]["vllm"]
    assert seed["image"] == "vllm/vllm-openai:latest"
    assert mine["image"] == "vllm/vllm-openai:v0.19.1"  # latest pinned
    assert mine["ports"] == seed["ports"] == ["8000:8000"]
    # the weights: same target, real host path instead of ./, read-only; the compile cache added
    (seed_volume,) = seed["volumes"]
    assert seed_volume == "./Qwen3.6-27B-FP8:/Qwen3.6-27B-FP8"
    assert mine["volumes"] == ["/data/models/Qwen3.6-27B-FP8:/Qwen3.6-27B-FP8:ro",
                               "vllm-cache:/root/.cache/vllm"]
    assert parse_size(mine["shm_size"]) == parse_size(seed["shm_size"].removesuffix("b"))
    seed_gpus = seed["deploy"]["resources"]["reservations"]["devices"]
    assert mine["deploy"]["resources"]["reservations"]["devices"] == seed_gpus
    # CPU/memory reservations are not modelled by the Docker settings (documented omission)
    assert {k: v for k, v in seed["deploy"]["resources"]["reservations"].items() if k != "devices"} \
        == {"cpus": 16, "memory": "32GB"}


def test_command_is_seed_004_plus_corrections() -> None:
    seed = normalise_args([str(a) for a in seed_compose()["services"]["vllm"]["command"]])
    mine = normalise_args(ours()["services"]["vllm"]["command"])
    seed["--attention-backend"] = "FLASHINFER"  # FP8 KV cache on CC 8.0 (A100)
    seed["--max-num-seqs"] = 32.0  # the seed's own tuning (its performance section)
    # the seed's speculative config sits in its prose, not in its Compose file; the stack has it
    mine.pop("--speculative-config")
    assert mine == seed


def test_additions_and_shape() -> None:
    doc = ours()
    assert "version" not in doc  # obsolete in the Compose specification
    service = doc["services"]["vllm"]
    assert service["container_name"] == "vllm" and service["ipc"] == "private"
    assert service["healthcheck"]["test"][:2] == ["CMD", "curl"]
    assert service["healthcheck"]["start_period"] == "13m0s"
    assert service["logging"] == {"driver": "json-file", "options": {"max-file": "3", "max-size": "100m"}}
    assert doc["volumes"] == {"vllm-cache": {"name": "vllm-cache"}}


def test_all_gpus_secrets_and_named_weights() -> None:
    spec = make_spec("v100", secrets=("apiKey", "registryPassword"))
    c = container_spec(spec)
    service = compose_document(c)["services"][c.name]
    assert service["deploy"]["resources"]["reservations"]["devices"] == [
        {"driver": "nvidia", "count": "all", "capabilities": ["gpu"]}]
    assert service["environment"]["VLLM_API_KEY"] == MASK
    assert compose_document(c, {"VLLM_API_KEY": "k"})["services"][c.name]["environment"]["VLLM_API_KEY"] == "k"
    doc = compose_document(container_spec(make_spec("a100-k8s")))
    assert doc["volumes"]["qwen3-6-27b-fp8"] == {"name": "qwen3-6-27b-fp8", "external": True}
    assert doc["services"]["vllm"]["volumes"][0] == "qwen3-6-27b-fp8:/Qwen3.6-27B-FP8:ro"


def test_deterministic() -> None:
    c = container_spec(make_spec("a100"))
    assert compose_yaml(c) == compose_yaml(container_spec(make_spec("a100")))


def test_ports_publish_on_the_bind_address_ipv6_in_brackets() -> None:
    c = container_spec(make_spec("v100"))
    for address, published in (("0.0.0.0", f"{c.host_port}:{c.container_port}"),
                               ("127.0.0.1", f"127.0.0.1:{c.host_port}:{c.container_port}"),
                               ("::1", f"[::1]:{c.host_port}:{c.container_port}")):
        service = compose_document(msgspec.structs.replace(c, bind_address=address))["services"][c.name]
        assert service["ports"] == [published]


COMPOSE_SPEC = json.loads((resources.files("check_jsonschema.builtin_schemas.vendor") / "compose-spec.json")
                          .read_text(encoding="utf-8"))
"""The Compose Specification's own JSON schema (compose-spec/compose-spec, schema/compose-spec.json), as
check-jsonschema (a dev dependency) vendors it: unknown keys and wrong types fail, as `docker compose` refuses them."""


def _compose_errors(doc: dict[str, Any]) -> list[str]:
    validator = jsonschema.validators.validator_for(COMPOSE_SPEC)(COMPOSE_SPEC)
    return [f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in validator.iter_errors(doc)]


@pytest.mark.parametrize("stack", SHIPPED_STACKS)
def test_every_stack_renders_a_file_compose_accepts(stack: str) -> None:
    c = container_spec(load_spec(stack_file(stack), stack, PROJECT_DIR))  # promoted ones as well
    c = msgspec.structs.replace(c, secret_env=("VLLM_API_KEY", "HF_TOKEN"))
    assert _compose_errors(yaml.safe_load(compose_yaml(c))) == []


def test_the_compose_schema_catches_a_misspelt_key() -> None:
    doc = ours()
    doc["services"]["vllm"]["stop_grace_periode"] = "60s"
    doc["services"]["vllm"]["healthcheck"]["intervall"] = "30s"
    errors = _compose_errors(doc)
    assert any("stop_grace_periode" in e for e in errors) and any("intervall" in e for e in errors)


def test_the_v100_service_runs_as_its_docker_run_does() -> None:
    """The same options as `render --format docker-run` (tests/render/test_docker_run.py), in Compose's words."""
    c = container_spec(make_spec("v100"))
    service = compose_document(c)["services"]["vllm-qwen35-27b"]
    assert (service["ipc"], service["runtime"], "shm_size" in service) == ("host", "nvidia", False)
    assert "privileged" not in service  # the NVIDIA runtime exposes the GPUs without it
    assert service["security_opt"] == ["no-new-privileges=true", "label=disable"]
    assert (service["restart"], service["stop_signal"], service["stop_grace_period"]) == (
        "unless-stopped", "SIGTERM", "60s")
    # vLLM's /health on its default port; the start period is the 21-minute load budget of Qwen3.5-27B
    assert service["healthcheck"] == {"test": ["CMD", "curl", "-fsS", "http://localhost:8000/health"],
                                      "interval": "30s", "timeout": "10s", "start_period": "18m0s", "retries": 3}
    assert service["labels"] == {"vllm-serving.model": "qwen3.5-27b", "vllm-serving.stack": "v100"}
    assert service["environment"] == {"VLLM_USE_MODELSCOPE": "false"}
    assert service["command"][:4] == ["--model", "/data/models/Qwen3.5-27B", "--served-model-name", "qwen3.5-27b"]
    assert "volumes" not in compose_document(c)  # bind mounts only: no named volume to declare
    privileged = compose_document(msgspec.structs.replace(c, privileged=True, runtime=None))["services"][c.name]
    assert privileged["privileged"] is True and "runtime" not in privileged


def test_a_cpu_stack_reserves_no_gpu() -> None:
    c = container_spec(make_spec("local"))
    service = compose_document(c)["services"][c.name]
    assert "deploy" not in service
    assert service["ports"] == ["127.0.0.1:8000:8000"] and service["shm_size"] == "4g"


def test_a_dollar_reaches_the_container_as_typed() -> None:
    """Compose reads `$$` as one `$` and would expand a lone `$VAR` from the shell running it."""
    c = msgspec.structs.replace(container_spec(make_spec("v100")), env=(("PROMPT", "costs $5 or ${PRICE}"),),
                            command=("--model", "/m", "--chat-template", "$HOME/t.jinja"))
    text = compose_yaml(c)
    service = yaml.safe_load(text)["services"][c.name]
    assert service["environment"]["PROMPT"] == "costs $$5 or $${PRICE}"
    assert service["command"][-1] == "$$HOME/t.jinja"
    assert service["environment"]["PROMPT"].replace("$$", "$") == "costs $5 or ${PRICE}"  # what Compose gives
    assert compose_document(c)["services"][c.name]["environment"]["PROMPT"] == "costs $5 or ${PRICE}"
    assert escape_interpolation({"$KEY": ["$v", 3, {"k": "$w"}]}) == {"$KEY": ["$$v", 3, {"k": "$$w"}]}


def test_the_file_reads_like_the_seeds_one_word_per_line() -> None:
    """Block style as seed 004 writes it: each argv word on its own line (a review diff shows the one
    flag that changed), the image first under the service, then its name."""
    text = compose_yaml(container_spec(make_spec("a100")))
    assert text.startswith("services:\n  vllm:\n    image: vllm/vllm-openai:v0.19.1\n    container_name: vllm\n")
    assert "    command:\n    - --model\n    - /Qwen3.6-27B-FP8\n    - --tensor-parallel-size\n    - '4'\n" in text
    assert "[" not in text.split("healthcheck:")[1].split("labels:")[0]  # no flow-style list anywhere


def test_revealed_secrets_reach_the_file_escaped() -> None:
    c = container_spec(make_spec("v100", secrets=("apiKey",)))
    assert "      VLLM_API_KEY: '********'\n" in compose_yaml(c)
    revealed = yaml.safe_load(compose_yaml(c, {"VLLM_API_KEY": "sk-$1"}))
    assert revealed["services"][c.name]["environment"]["VLLM_API_KEY"] == "sk-$$1"  # Compose gives the container sk-$1
