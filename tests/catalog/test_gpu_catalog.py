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


# Memory on NVIDIA's data sheets (GB as marketed: GiB of chips) for cards whose catalog name does
# not carry it. nvidia-smi's total is at most that and, with ECC on GDDR (T4, A10, L4, L40S), 15/16
# of it less a little the driver keeps: never below 0.935 of it. A figure in MB taken for MiB, or
# another card's, falls outside.
MARKETED_GB = {
    "T4": 16, "A10": 24, "L4": 24, "L40S": 48, "RTX-4090": 24, "RTX-6000-Ada": 48, "H100-PCIe": 80,
    "H100-NVL": 94, "H200": 141, "H200-NVL": 141, "B200": 180, "RTX-5090": 32, "RTX-PRO-6000": 96,
    "RTX-PRO-6000-WS": 96,
}


@pytest.mark.parametrize("name", sorted(MARKETED_GB))
def test_memory_is_the_data_sheets_less_at_most_ecc(name: str) -> None:
    marketed_mib = MARKETED_GB[name] * 1024
    assert 0.935 * marketed_mib <= GPUS[name].memory_mib <= marketed_mib


def test_every_card_on_the_data_sheets_is_in_the_catalog() -> None:
    assert set(MARKETED_GB) <= set(GPUS)


# CUDA cores on NVIDIA's data sheets / cores per SM of the architecture (whitepapers: 64 on
# Volta, Turing and GA100; 128 on GA10x, Ada, Hopper and consumer Blackwell).
CUDA_CORES_PER_SM = {
    "V100-32GB": (5120, 64), "T4": (2560, 64), "A100-80GB": (6912, 64), "A10": (9216, 128), "L4": (7424, 128),
    "L40S": (18176, 128), "RTX-4090": (16384, 128), "RTX-6000-Ada": (18176, 128), "H100-80GB": (16896, 128),
    "H100-PCIe": (14592, 128), "RTX-5090": (21760, 128), "RTX-PRO-6000": (24064, 128),
}


@pytest.mark.parametrize("name", sorted(CUDA_CORES_PER_SM))
def test_sm_count_is_the_data_sheets_cores_over_cores_per_sm(name: str) -> None:
    cores, per_sm = CUDA_CORES_PER_SM[name]
    assert GPUS[name].sm_count == cores // per_sm


def test_the_measured_cuda_total_is_what_the_planner_budgets() -> None:
    """PyTorch's "total capacity" on an H100 SXM (vllm-project/vllm#27508) is 79.11 GiB, less than
    81,559 MiB x 0.985 = 78.45 GiB derived: the measured figure wins where there is one."""
    assert GPUS["H100-80GB"].cuda_memory_gib == 79.11
    assert GPUS["L40S"].cuda_memory_gib == 44.42


@pytest.mark.parametrize(("alias", "name"), [
    ("v100-sxm2-32gb", "V100-32GB"), ("a100-sxm4-80gb", "A100-80GB"), ("h100-sxm", "H100-80GB"),
    ("h200-sxm", "H200"), ("rtx-6000-pro", "RTX-PRO-6000"),
])
def test_the_form_factor_names_people_type_resolve(alias: str, name: str) -> None:
    assert find_gpu(alias) is GPUS[name]
