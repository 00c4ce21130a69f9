"""The GPU catalog: every card's memory, compute capability and node label agree with each other,
and every name a stack file uses still resolves."""

from __future__ import annotations

import re

import pytest
import yaml

from tests.paths import SHIPPED_STACK_FILES
from vllm_serving.catalog.gpus import GPU_ALIASES, GPUS, find_gpu, suggest_gpu

# NVIDIA architecture -> the compute capabilities its cards have.
ARCHITECTURE_CC = {
    "Volta": {(7, 0)}, "Turing": {(7, 5)}, "Ampere": {(8, 0), (8, 6)}, "Ada": {(8, 9)},
    "Hopper": {(9, 0)}, "Blackwell": {(10, 0), (12, 0)},
}
# GPU feature discovery's label: the nvidia-smi product name with spaces as dashes.
LABEL = re.compile(r"(Tesla|NVIDIA)-[A-Za-z0-9-]+")
SIZE_IN_NAME = re.compile(r"(\d+)GB")


@pytest.mark.parametrize("name", sorted(GPUS))
def test_card_facts_agree(name: str) -> None:
    gpu = GPUS[name]
    assert gpu.compute_capability in ARCHITECTURE_CC[gpu.architecture]
    assert LABEL.fullmatch(gpu.product_label), gpu.product_label
    size = SIZE_IN_NAME.search(name)
    if size:  # the marketed GB, less what the driver and ECC keep: within 10%
        assert 0.9 * int(size[1]) <= gpu.memory_gib <= int(size[1]), gpu.memory_gib
    assert gpu.supports_bf16 == (gpu.compute_capability >= (8, 0))


def test_labels_are_unique_so_a_node_selector_picks_one_card() -> None:
    labels = [g.product_label for g in GPUS.values()]
    assert len(labels) == len(set(labels))


def test_aliases_name_catalog_entries() -> None:
    for alias, name in GPU_ALIASES.items():
        assert find_gpu(alias) is GPUS[name]
        assert alias not in {n.lower() for n in GPUS}


@pytest.mark.parametrize("path", SHIPPED_STACK_FILES, ids=lambda p: p.name)
def test_every_gpu_a_stack_names_still_resolves(path) -> None:  # type: ignore[no-untyped-def]
    hardware = (yaml.safe_load(path.read_text(encoding="utf-8"))["config"]).get("vllm-serving:hardware") or {}
    if hardware.get("device") == "cpu" or "gpu" not in hardware:
        pytest.skip("no GPU named")
    assert find_gpu(hardware["gpu"]) is not None


@pytest.mark.parametrize(("written", "suggested"), [
    ("Tesla V100-SXM2-32GB", ["V100-32GB"]),  # nvidia-smi's name
    ("NVIDIA A100-SXM4-80GB", ["A100-80GB"]),
    ("NVIDIA-A100-80GB-PCIe", ["A100-PCIe-80GB"]),  # the node label
    ("H100 PCIe", ["H100-PCIe"]),  # a space for the dash
    ("a100", ["A100-40GB", "A100-PCIe-40GB", "A100-80GB", "A100-PCIe-80GB"]),  # the family: every size
])
def test_a_gpu_written_as_people_write_it_gets_the_catalog_name(written: str, suggested: list[str]) -> None:
    assert find_gpu(written) is None  # a stack file keeps the catalog's one spelling
    assert suggest_gpu(written) == suggested


# Which architectures run FP8, from the hardware, not from the catalog's own comparison: FP8 tensor
# cores arrived with Ada and Hopper (NVIDIA's architecture whitepapers); vLLM v0.19.1 runs FP8
# checkpoints weight-only through FP8 Marlin from CC 7.5 (quantization/fp8.py get_min_capability,
# utils/marlin_utils_fp8.py is_fp8_marlin_supported), so Turing and Ampere do and Volta does not.
FP8_TENSOR_CORES = {"Ada", "Hopper", "Blackwell"}
FP8_WEIGHT_ONLY = {"Turing", "Ampere"} | FP8_TENSOR_CORES


@pytest.mark.parametrize("name", sorted(GPUS))
def test_the_fp8_columns_follow_the_architecture(name: str) -> None:
    gpu = GPUS[name]
    assert gpu.supports_fp8_w8a8 == (gpu.architecture in FP8_TENSOR_CORES), name
    assert gpu.supports_fp8_weight_only == (gpu.architecture in FP8_WEIGHT_ONLY), name



def test_cuda_sees_a_little_less_than_nvidia_smi_shows() -> None:
    # torch.cuda.mem_get_info's total (what vLLM budgets from) is nvidia-smi's total less what the
    # driver keeps: never more, and well under a GiB on every card with a logged figure
    measured = {name: g for name, g in GPUS.items() if g.cuda_total_gib is not None}
    assert {"V100-32GB", "A100-80GB", "L40S", "H100-80GB"} <= set(measured)
    for name, g in measured.items():
        assert g.cuda_total_gib is not None
        assert 0 <= g.memory_mib / 1024 - g.cuda_total_gib < 1.0, name


@pytest.mark.parametrize("chip", [
    ("V100-16GB", "V100-32GB"),  # GV100: 80 SMs
    ("A100-40GB", "A100-PCIe-40GB", "A100-80GB", "A100-PCIe-80GB", "A800-80GB"),  # GA100 as sold: 108
    ("L40S", "RTX-6000-Ada"),  # AD102 as sold in both: 142
    ("H100-80GB", "H100-NVL", "H200", "H200-NVL"),  # GH100 SXM and NVL: 132
    ("RTX-PRO-6000", "RTX-PRO-6000-WS"),  # GB202: 188
])
def test_cards_built_on_the_same_chip_have_the_same_sms(chip: tuple[str, ...]) -> None:
    # NVIDIA's architecture whitepapers give one SM count per product configuration of a die
    assert len({GPUS[name].sm_count for name in chip}) == 1, {name: GPUS[name].sm_count for name in chip}
    assert GPUS["H100-PCIe"].sm_count != GPUS["H100-80GB"].sm_count  # 114: the PCIe card has fewer


# nvidia-smi's "N MiB / <total>MiB" in public logs of these cards (e.g. `0MiB / 32510MiB` on
# Tesla V100-SXM2-32GB, `/ 16160MiB` on V100-SXM2-16GB): what the catalog's memory column promises.
NVIDIA_SMI_TOTAL_MIB = {"V100-16GB": 16160, "V100-32GB": 32510}


@pytest.mark.parametrize("name", sorted(NVIDIA_SMI_TOTAL_MIB))
def test_memory_is_what_nvidia_smi_reports(name: str) -> None:
    assert GPUS[name].memory_mib == NVIDIA_SMI_TOTAL_MIB[name]
