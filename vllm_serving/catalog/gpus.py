"""The GPUs we know, as data: compute capability, memory and what their kernels support.

Memory is the total `nvidia-smi` reports (MiB), which is what vLLM's budget multiplies.
Kubernetes product labels are those NVIDIA's GPU feature discovery sets (`nvidia.com/gpu.product`).
"""

from __future__ import annotations

import difflib

from pydantic import BaseModel, ConfigDict


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

    @property
    def memory_gib(self) -> float:
        return self.memory_mib / 1024

    @property
    def cc(self) -> float:
        """Compute capability as a number (8.9) for comparisons with documented minimums."""
        return self.compute_capability[0] + self.compute_capability[1] / 10

    @property
    def sm(self) -> str:
        return f"sm_{self.compute_capability[0]}{self.compute_capability[1]}"

    @property
    def supports_bf16(self) -> bool:
        """bfloat16 kernels need CC 8.0 (Ampere)."""
        return self.cc >= 8.0

    @property
    def supports_fp8_w8a8(self) -> bool:
        """Full FP8 (weights and activations) needs CC 8.9 (Ada, Hopper)."""
        return self.cc >= 8.9

    @property
    def supports_fp8_weight_only(self) -> bool:
        """FP8 checkpoints run weight-only through FP8 Marlin kernels from CC 7.5."""
        return self.cc >= 7.5


def _gpu(name: str, cc: tuple[int, int], mib: int, label: str, arch: str) -> GpuSpec:
    return GpuSpec(
        name=name, compute_capability=cc, memory_mib=mib, product_label=label, architecture=arch
    )


GPUS: dict[str, GpuSpec] = {
    g.name: g
    for g in (
        _gpu("V100-16GB", (7, 0), 16384, "Tesla-V100-SXM2-16GB", "Volta"),
        _gpu("V100-32GB", (7, 0), 32768, "Tesla-V100-SXM2-32GB", "Volta"),
        _gpu("T4", (7, 5), 15360, "Tesla-T4", "Turing"),
        _gpu("A10", (8, 6), 23028, "NVIDIA-A10", "Ampere"),
        _gpu("A100-40GB", (8, 0), 40960, "NVIDIA-A100-SXM4-40GB", "Ampere"),
        _gpu("A100-80GB", (8, 0), 81920, "NVIDIA-A100-SXM4-80GB", "Ampere"),
        _gpu("A800-80GB", (8, 0), 81920, "NVIDIA-A800-SXM4-80GB", "Ampere"),
        _gpu("L4", (8, 9), 23034, "NVIDIA-L4", "Ada"),
        _gpu("L40S", (8, 9), 46068, "NVIDIA-L40S", "Ada"),
        _gpu("H100-80GB", (9, 0), 81559, "NVIDIA-H100-80GB-HBM3", "Hopper"),
        _gpu("H100-NVL", (9, 0), 95830, "NVIDIA-H100-NVL", "Hopper"),
        _gpu("H200", (9, 0), 143771, "NVIDIA-H200", "Hopper"),
        _gpu("B200", (10, 0), 183359, "NVIDIA-B200", "Blackwell"),
    )
}


def find_gpu(name: str) -> GpuSpec | None:
    """Case-insensitive catalog lookup."""
    by_lower = {k.lower(): v for k, v in GPUS.items()}
    return by_lower.get(name.lower())


def suggest_gpu(name: str) -> list[str]:
    return difflib.get_close_matches(name, list(GPUS), n=3, cutoff=0.4)
