"""`render --format compose` of the a100 stack reproduces seed 004's Compose service, except the
corrections documented in vllm_serving/render/compose_file.py (and commented in Pulumi.a100.yaml)."""

from __future__ import annotations

import dataclasses
from typing import Any

import yaml

from tests.seed_commands import SEED_FILES, SEEDS, normalise_args
from tests.stack_builders import make_spec
from vllm_serving.masking import MASK
from vllm_serving.render.compose_file import compose_document, compose_yaml
from vllm_serving.render.docker_container import container_spec
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
        service = compose_document(dataclasses.replace(c, bind_address=address))["services"][c.name]
        assert service["ports"] == [published]
