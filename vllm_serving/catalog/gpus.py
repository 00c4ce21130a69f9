"""The GPUs we know, as data: compute capability, memory and what their kernels support.

Memory is the total `nvidia-smi` reports (MiB), which is what vLLM's budget multiplies.
Kubernetes product labels are those NVIDIA's GPU feature discovery sets (`nvidia.com/gpu.product`).
"""

from __future__ import annotations

import re

import msgspec
from pydantic import BaseModel, ConfigDict

from vllm_serving.catalog.names import Lookup, compact, lookup, tokens


class GpuSpec(BaseModel):
    """One GPU model."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str
    """Catalog name used in `hardware.gpu`."""
    compute_capability: tuple[int, int]
    """CUDA compute capability (major, minor); 7.0 is Volta."""
    memory_mib: int
    """Total memory per GPU in MiB as nvidia-smi reports it."""
    product_label: str
    """Value of the `nvidia.com/gpu.product` node label."""
    architecture: str
    """NVIDIA architecture name."""
    cuda_total_gib: float | None = None
    """Total memory as CUDA reports it (`cudaMemGetInfo`, what vLLM's budget multiplies), GiB;
    unset: derived from `memory_mib` (see `cuda_memory_gib`)."""
    sm_count: int | None = None
    """Streaming multiprocessors (NVIDIA's published figure): vLLM's Triton sampler keeps a
    vocabulary-wide buffer row per SM."""

    @property
    def memory_gib(self) -> float:
        return self.memory_mib / 1024

    @property
    def cuda_memory_gib(self) -> float:
        """CUDA's total: the measured figure, else nvidia-smi's less the share CUDA keeps
        (the measured ones in CUDA_TOTAL_GIB run 0.97-1.0 of it; 0.985 is about their median)."""
        return self.cuda_total_gib if self.cuda_total_gib is not None else self.memory_gib * 0.985

    @property
    def cc_text(self) -> str:
        """Compute capability for messages (`8.9`); comparisons use the tuple, as vLLM's
        DeviceCapability does (vllm/platforms/interface.py), so 7.5 < 8.0 < 8.9 < 10.0 hold."""
        return f"{self.compute_capability[0]}.{self.compute_capability[1]}"

    @property
    def sm(self) -> str:
        return f"sm_{self.compute_capability[0]}{self.compute_capability[1]}"

    @property
    def supports_bf16(self) -> bool:
        """bfloat16 kernels need CC 8.0 (Ampere)."""
        return self.compute_capability >= (8, 0)

    @property
    def supports_fp8_w8a8(self) -> bool:
        """Full FP8 (weights and activations) needs CC 8.9 (Ada, Hopper)."""
        return self.compute_capability >= (8, 9)

    @property
    def supports_fp8_weight_only(self) -> bool:
        """FP8 checkpoints run weight-only through FP8 Marlin kernels from CC 7.5."""
        return self.compute_capability >= (7, 5)


# CUDA's total memory (GiB) as a public log prints it (PyTorch's "total capacity", vLLM's or
# deviceQuery's), by catalog name; a GPU missing here derives it (GpuSpec.cuda_memory_gib).
CUDA_TOTAL_GIB: dict[str, float] = {
    "V100-16GB": 15.78,  # https://github.com/kchengiva/Shift-GCN/issues/34
    "V100-32GB": 31.74,  # https://github.com/liucongg/ChatGLM-Finetuning/issues/73
    "T4": 14.56,  # https://github.com/AlphaGPU/leetgpu-challenges/issues/52
    "A10": 21.99,  # https://github.com/zai-org/CogVLM/issues/236
    "A100-40GB": 39.39,  # 42298834944 B, https://github.com/bottlerocket-os/bottlerocket/pull/3873
    "A100-80GB": 79.25,  # https://github.com/LukeJYK/AutoScientists/blob/e3133549cf9561e4649b382f4f2e17e97e79cc6a/vllm.log
    "L4": 22.05,  # https://github.com/pytorch/pytorch/issues/175666
    "L40S": 44.42,  # https://github.com/stepfun-ai/Step-Video-T2V/issues/8
    "RTX-4090": 23.52,  # https://github.com/pytorch/pytorch/issues/182941
    "H100-80GB": 79.11,  # https://github.com/vllm-project/vllm/issues/27508
}


# Streaming multiprocessors per GPU, as NVIDIA's data sheets and architecture whitepapers give them.
SM_COUNT: dict[str, int] = {
    "V100-16GB": 80, "V100-32GB": 80, "T4": 40, "A10": 72, "A100-40GB": 108, "A100-PCIe-40GB": 108,
    "A100-80GB": 108, "A100-PCIe-80GB": 108, "A800-80GB": 108, "L4": 58, "L40S": 142, "RTX-4090": 128,
    "RTX-6000-Ada": 142, "H100-80GB": 132, "H100-PCIe": 114, "H100-NVL": 132, "H200": 132, "H200-NVL": 132,
    "B200": 148, "RTX-5090": 170, "RTX-PRO-6000": 188, "RTX-PRO-6000-WS": 188,
}


def _gpu(name: str, cc: tuple[int, int], mib: int, label: str, arch: str) -> GpuSpec:
    return GpuSpec(
        name=name, compute_capability=cc, memory_mib=mib, product_label=label, architecture=arch,
        cuda_total_gib=CUDA_TOTAL_GIB.get(name), sm_count=SM_COUNT.get(name),
    )


# Memory: the total nvidia-smi prints ("N MiB / <total>MiB") on a public log of that card, ECC as
# shipped; labels: GPU feature discovery's `nvidia.com/gpu.product`, the nvidia-smi name with
# spaces as dashes (seen in public node selectors: NVIDIA-A100-PCIE-40GB, NVIDIA-A100-80GB-PCIe,
# NVIDIA-H100-PCIe). Sources per row where a row was added or corrected after the first four.
GPUS: dict[str, GpuSpec] = {
    g.name: g
    for g in (
        # 16160 MiB: nvidia-smi of Tesla V100-SXM2-16GB (public logs)
        _gpu("V100-16GB", (7, 0), 16160, "Tesla-V100-SXM2-16GB", "Volta"),
        # 32510 MiB: nvidia-smi of Tesla V100-SXM2-32GB (and PCIe) in public logs; 32768 is the
        # marketed 32 GiB, which no V100 reports
        _gpu("V100-32GB", (7, 0), 32510, "Tesla-V100-SXM2-32GB", "Volta"),
        _gpu("T4", (7, 5), 15360, "Tesla-T4", "Turing"),
        _gpu("A10", (8, 6), 23028, "NVIDIA-A10", "Ampere"),
        _gpu("A100-40GB", (8, 0), 40960, "NVIDIA-A100-SXM4-40GB", "Ampere"),
        _gpu("A100-PCIe-40GB", (8, 0), 40960, "NVIDIA-A100-PCIE-40GB", "Ampere"),
        _gpu("A100-80GB", (8, 0), 81920, "NVIDIA-A100-SXM4-80GB", "Ampere"),
        _gpu("A100-PCIe-80GB", (8, 0), 81920, "NVIDIA-A100-80GB-PCIe", "Ampere"),
        _gpu("A800-80GB", (8, 0), 81920, "NVIDIA-A800-SXM4-80GB", "Ampere"),
        _gpu("L4", (8, 9), 23034, "NVIDIA-L4", "Ada"),
        _gpu("L40S", (8, 9), 46068, "NVIDIA-L40S", "Ada"),
        _gpu("RTX-4090", (8, 9), 24564, "NVIDIA-GeForce-RTX-4090", "Ada"),
        _gpu("RTX-6000-Ada", (8, 9), 49140, "NVIDIA-RTX-6000-Ada-Generation", "Ada"),
        _gpu("H100-80GB", (9, 0), 81559, "NVIDIA-H100-80GB-HBM3", "Hopper"),
        _gpu("H100-PCIe", (9, 0), 81559, "NVIDIA-H100-PCIe", "Hopper"),
        _gpu("H100-NVL", (9, 0), 95830, "NVIDIA-H100-NVL", "Hopper"),
        _gpu("H200", (9, 0), 143771, "NVIDIA-H200", "Hopper"),
        _gpu("H200-NVL", (9, 0), 143771, "NVIDIA-H200-NVL", "Hopper"),
        _gpu("B200", (10, 0), 183359, "NVIDIA-B200", "Blackwell"),
        _gpu("RTX-5090", (12, 0), 32607, "NVIDIA-GeForce-RTX-5090", "Blackwell"),
        # 97887 MiB: nvidia-smi of the Workstation Edition; the Server Edition carries the same
        # 96 GB of GDDR7 (taken to report the same total)
        _gpu("RTX-PRO-6000", (12, 0), 97887, "NVIDIA-RTX-PRO-6000-Blackwell-Server-Edition", "Blackwell"),
        _gpu("RTX-PRO-6000-WS", (12, 0), 97887, "NVIDIA-RTX-PRO-6000-Blackwell-Workstation-Edition",
             "Blackwell"),
    )
}

# Other names people use for a catalog entry (form factor spelled out), lower case -> entry.
GPU_ALIASES: dict[str, str] = {
    "v100-sxm2-16gb": "V100-16GB", "v100-sxm2-32gb": "V100-32GB", "a100-sxm4-40gb": "A100-40GB",
    "a100-sxm4-80gb": "A100-80GB", "h100-sxm": "H100-80GB", "h100": "H100-80GB", "h200-sxm": "H200",
    "rtx-6000-pro": "RTX-PRO-6000", "rtx-pro-6000-blackwell": "RTX-PRO-6000",
}


class CpuSpec(GpuSpec):
    """vLLM's CPU backend in the place of a GPU (`hardware.device: cpu`): no CUDA compute
    capability ((0, 0) stands for none), no device memory (the KV cache is the stack's
    VLLM_CPU_KVCACHE_SPACE), no node label; kept out of GPUS so no GPU list shows it."""

    @property
    def supports_bf16(self) -> bool:
        """vllm/platforms/cpu.py CpuPlatform.supported_dtypes: bf16, fp16, fp32 on x86 and aarch64."""
        return True


CPU = CpuSpec(name="CPU", compute_capability=(0, 0), memory_mib=0, product_label="", architecture="CPU")
"""The entry `hardware.device: cpu` resolves to."""


def find_gpu(name: str) -> GpuSpec | None:
    """Case-insensitive catalog lookup."""
    by_lower = {k.lower(): v for k, v in GPUS.items()}
    key = name.lower()
    return by_lower.get(key) or by_lower.get(GPU_ALIASES.get(key, "").lower())


# Words nvidia-smi and node labels put around the model name ("Tesla V100-SXM2-32GB",
# "NVIDIA A100-SXM4-80GB", "NVIDIA-GeForce-RTX-4090"): they say nothing about which card it is.
VENDOR_WORDS = frozenset({"nvidia", "tesla", "geforce", "quadro"})


def _spellings() -> dict[str, tuple[str, str]]:
    """Compact spelling -> (catalog name, what it is): the node label, which is nvidia-smi's name
    with spaces as dashes (GPU feature discovery), with and without the vendor words; the aliases."""
    found: dict[str, tuple[str, str]] = {}
    for gpu in GPUS.values():
        label_words = tokens(gpu.product_label)
        found.setdefault(compact(gpu.product_label), (gpu.name, "nvidia-smi's name, or the node label"))
        found.setdefault("".join(w for w in label_words if w not in VENDOR_WORDS),
                         (gpu.name, "nvidia-smi's name without the vendor"))
    for alias, name in GPU_ALIASES.items():
        found.setdefault(compact(alias), (name, "an alias"))
    return found


_SPELLINGS = _spellings()
_WORDS = {g.name: frozenset(tokens(g.name)) | frozenset(tokens(g.product_label)) for g in GPUS.values()}


# Memory as people write it, `32G` for 32 GB (seed 000's "V100 32G", `A100-80G`): one unit, one spelling.
_GIGABYTES = re.compile(r"(?<=\d)g(?![a-z])", re.IGNORECASE)


def lookup_gpu(typed: str) -> Lookup:
    """The catalog GPU a typed name means (names.lookup): `4090`, `rtx4090`, `NVIDIA GeForce RTX
    4090` and `NVIDIA-GeForce-RTX-4090` are each taken as RTX-4090, and `V100-32G` as V100-32GB,
    and said so."""
    unit = _GIGABYTES.sub("GB", typed)
    found = lookup(unit, list(GPUS), _SPELLINGS, _WORDS, VENDOR_WORDS)
    if unit == typed:
        return found
    how = found.how if found.how is not None or found.name is None else "the catalog's name, spelt another way"
    return msgspec.structs.replace(found, typed=typed, how=how)


def suggest_gpu(name: str) -> list[str]:
    """Catalog names for a name a stack file misspells: the one entry it means (nvidia-smi's or
    the node label's spelling, a unique part), else the entries sharing it (`a100`: every A100),
    else the closest spellings."""
    found = lookup_gpu(name)
    return [found.name] if found.name is not None else list(found.candidates)
