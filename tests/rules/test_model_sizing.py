"""model_sizing.py at its boundaries: an MLA model where vLLM has no MLA kernel for it (a GPU
below compute capability 8.0, the CPU backend, dtypes no MLA backend reads, a forced non-MLA
backend), each beside the nearest stack that runs. The planner sizes MLA and sliding-window
caches itself (tests/planner/test_mla.py, tests/planner/test_sliding_window.py)."""

from __future__ import annotations

import pytest

from tests.rules.boundary import Boundary, check_boundary, codes, findings, gpu
from vllm_serving.catalog.models import MODELS
from vllm_serving.findings import config_key

DEEPSEEK = {"name": None, "architecture": MODELS["DeepSeek-V3"]}
# The a100 stack forces FLASHINFER (its FP8 KV cache on CC 8.0); MLA stacks leave the choice to vLLM.
AUTO = {"attention_backend": None}
# The same facts in bfloat16: the catalog's FP8 checkpoint is refused below CC 7.5 on its own.
DEEPSEEK_BF16 = {"name": None, "architecture": MODELS["DeepSeek-V3"].model_copy(update={"quantization": None})}
MLA_OFF = {"VLLM_MLA_DISABLE": "1"}

BOUNDARIES = [
    Boundary("model-mla-gpu-unsupported", "a100", {"model": DEEPSEEK, "engine": AUTO, "gpu": gpu("SM75", (7, 5))},
             {"model": DEEPSEEK, "engine": AUTO, "gpu": gpu("SM80", (8, 0))}, "CC 7.5 -> 8.0",
             says=("DeepseekV3ForCausalLM", "SM75 (CC 7.5)", "8.0 or newer")),
    Boundary("model-mla-gpu-unsupported", "v100", {"model": DEEPSEEK_BF16},
             {"model": DEEPSEEK_BF16, "engine": {"env": MLA_OFF}}, "V100 -> VLLM_MLA_DISABLE=1 (ordinary attention)"),
    Boundary("model-mla-no-backend", "a100", {"model": DEEPSEEK, "engine": {**AUTO, "kv_cache_dtype": "fp8_e5m2"}},
             {"model": DEEPSEEK, "engine": {**AUTO, "kv_cache_dtype": "fp8_e4m3"}}, "fp8_e5m2 -> fp8_e4m3 KV cache",
             says=("fp8_e5m2 KV cache", "A100-80GB")),
    Boundary("model-mla-no-backend", "a100", {"model": DEEPSEEK, "engine": {**AUTO, "dtype": "float32"}},
             {"model": DEEPSEEK, "engine": {**AUTO, "dtype": "bfloat16"}}, "float32 -> bfloat16",
             key=config_key("engine", "dtype"), says=("in float32",)),
    Boundary("model-mla-attention-backend", "a100", {"model": DEEPSEEK, "engine": {"attention_backend": "FLASHINFER"}},
             {"model": DEEPSEEK, "engine": AUTO}, "forced FLASHINFER -> auto",
             says=("FLASHINFER cannot run the multi-head latent attention", "MLA not supported", "(TRITON_MLA)")),
    Boundary("model-mla-attention-backend", "a100", {"model": DEEPSEEK, "engine": {"attention_backend": "FLASHMLA"}},
             {"model": DEEPSEEK, "engine": {"attention_backend": "TRITON_MLA"}},
             "A100: forced FLASHMLA (9.x and 10.x) -> TRITON_MLA (an MLA backend that runs here)",
             says=("compute capability not supported",)),
    # on a CPU target the key to change is the device (vllm/platforms/cpu.py: "MLA is not supported on CPU")
    Boundary("model-mla-gpu-unsupported", "local", {"model": {"name": "DeepSeek-V3"}},
             {"model": {"name": "Qwen3-0.6B"}}, "CPU target: DeepSeek-V3 (MLA) -> Qwen3-0.6B",
             key="vllm-serving:hardware.device", says=("not on the CPU backend",)),
]


@pytest.mark.parametrize("case", BOUNDARIES, ids=[c.id for c in BOUNDARIES])
def test_boundary(case: Boundary) -> None:
    check_boundary(case)


@pytest.mark.parametrize("model", ["gpt-oss-120b", "gemma-3-27b-it", "DeepSeek-R1"])
def test_sized_models_raise_no_sizing_finding(model: str) -> None:
    """Sliding-window and MLA models are planned, not flagged, where vLLM runs them."""
    found = codes("a100", {"model": {"name": model}, "engine": AUTO})
    assert not {code for code in found if code.startswith("model-")}, found


def _forced(edits: dict[str, object]) -> tuple[str, str]:
    (hit,) = [f for f in findings("a100", edits) if f.code == "model-mla-attention-backend"]
    return hit.message, hit.fix


def test_a_release_without_backend_checks_says_what_vllm_says() -> None:
    """v0.11.0's registry has no validate_configuration for FLASHINFER: a non-MLA backend on MLA layers gets
    vLLM's own reason (v0.11.2 vllm/attention/backends/abstract.py AttentionBackend.validate_configuration:
    "MLA not supported")."""
    assert _forced({"model": DEEPSEEK, "image": {"tag": "v0.11.0"}, "engine": {"attention_backend": "FLASHINFER"}}) == (
        "FLASHINFER cannot run the multi-head latent attention of DeepseekV3ForCausalLM: MLA not supported",
        "remove engine.attentionBackend: vLLM picks an MLA backend itself (TRITON_MLA)")


def test_no_mla_backend_to_fall_back_on_is_said() -> None:
    """No MLA backend reads an fp8_e5m2 cache: the fix cannot name the one vLLM would pick."""
    _, fix = _forced({"model": DEEPSEEK, "engine": {"attention_backend": "FLASHINFER", "kv_cache_dtype": "fp8_e5m2"}})
    assert fix == "remove engine.attentionBackend: vLLM picks an MLA backend itself (none on this GPU)"
