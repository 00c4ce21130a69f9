"""precision.py at its boundaries: dtype, FP8 weights and KV cache, attention backends."""

from __future__ import annotations

import json

import pytest

from tests.rules.boundary import Boundary, check_boundary, codes, gpu
from vllm_serving.catalog.models import MODELS
from vllm_serving.engine import release_registry
from vllm_serving.findings import config_key

QWEN = MODELS["Qwen3.5-27B"]
FP16_SHY = QWEN.model_copy(update={"refuses_float16": True, "model_type": "gemma2"})
SHY = {"name": None, "architecture": FP16_SHY}
# plamo2 is in v0.19.1's config/model.py _FLOAT16_NOT_SUPPORTED_MODELS, not in v0.34.0's: the
# release decides, whatever the catalog says of the model
PLAMO2 = {"name": None, "architecture": QWEN.model_copy(update={"refuses_float16": False, "model_type": "plamo2"})}
QUANT_KEY = config_key("engine", "quantization")

BOUNDARIES = [
    Boundary("dtype-bf16-unsupported", "v100", {"engine": {"dtype": "bfloat16"}, "hardware": {"gpu": "T4"}},
             {"engine": {"dtype": "bfloat16"}, "hardware": {"gpu": "A100-40GB"}}, "T4 (7.5) -> A100 (8.0)"),
    Boundary("dtype-bf16-unsupported", "v100", {"engine": {"dtype": "bfloat16"}},
             {"engine": {"dtype": "half"}}, "bfloat16 -> half on V100"),
    Boundary("dtype-auto-falls-back-to-half", "v100", {"engine": {"dtype": None}, "hardware": {"gpu": "T4"}},
             {"engine": {"dtype": None}, "hardware": {"gpu": "A100-40GB"}}, "T4 (7.5) -> A100 (8.0)",
             says=("runs in float16", "engine.dtype: half")),
    Boundary("dtype-auto-falls-back-to-half", "v100", {"engine": {"dtype": "auto"}},
             {"engine": {"dtype": "half"}}, "auto -> half"),
    Boundary("dtype-auto-falls-back-to-half", "v100", {"engine": {"dtype": None}, "model": SHY},
             {"engine": {"dtype": "float32"}, "model": SHY}, "float16-refusing model falls back to float32",
             says=("runs in float32", "engine.dtype: float32")),
    Boundary("dtype-fp16-refused", "v100", {"engine": {"dtype": "half"}, "model": SHY},
             {"engine": {"dtype": None}, "model": SHY}, "half -> auto (vLLM picks float32)",
             says=("gemma2",)),
    Boundary("dtype-fp16-refused", "v100", {"engine": {"dtype": "float16"}, "model": SHY},
             {"engine": {"dtype": "float32"}, "model": SHY}, "float16 -> float32"),
    Boundary("dtype-fp16-refused", "v100", {"engine": {"dtype": "half"}, "model": PLAMO2},
             {"engine": {"dtype": "half"}, "model": PLAMO2, "image": {"tag": "v0.34.0"}},
             "plamo2 in half: v0.19.1 lists it -> v0.34.0 does not", says=("plamo2", "v0.19.1")),
    Boundary("fp8-weights-unsupported", "a100", {"hardware": {"gpu": "V100-32GB"}},
             {"hardware": {"gpu": "T4"}}, "V100 (7.0) -> T4 (7.5)", says=("7.5",)),
    Boundary("fp8-weights-unsupported", "v100", {"engine": {"quantization": "fp8"}},
             {"engine": {"quantization": "fp8"}, "hardware": {"gpu": "T4"}},
             "forced fp8 on V100 -> T4: blames engine.quantization", key=QUANT_KEY),
    Boundary("fp8-weights-weight-only", "a100", {"hardware": {"gpu": "A10"}}, {"hardware": {"gpu": "L4"}},
             "A10 (8.6) -> L4 (8.9)"),
    Boundary("fp8-weights-weight-only", "a100", {"hardware": {"gpu": "T4"}},
             {"hardware": {"gpu": "V100-32GB"}}, "T4 (7.5) -> V100 (7.0, unsupported instead)"),
    Boundary("fp8-weights-weight-only", "a100", {"gpu": gpu("CC-8.8", (8, 8))}, {"gpu": gpu("CC-8.9", (8, 9))},
             "CC 8.8 -> 8.9"),
    Boundary("fp8-weights-weight-only", "v100", {"engine": {"quantization": "fp8"}, "hardware": {"gpu": "A100-80GB"}},
             {"engine": {"quantization": None}, "hardware": {"gpu": "A100-80GB"}},
             "forced fp8 -> none: blames engine.quantization", key=QUANT_KEY),
]


@pytest.mark.parametrize("case", BOUNDARIES, ids=[c.id for c in BOUNDARIES])
def test_boundary(case: Boundary) -> None:
    check_boundary(case)


def test_the_release_list_decides_over_the_catalog_flag() -> None:
    """A model type the release does not list runs in float16, even when the catalog marks the
    model as refusing it (v0.19.1 lists gemma2, gemma3, gemma3_text, plamo2, glm4)."""
    marked = {"name": None, "architecture": QWEN.model_copy(update={"refuses_float16": True})}
    assert "dtype-fp16-refused" not in codes("v100", {"engine": {"dtype": "half"}, "model": marked})


def test_a_registry_without_the_list_leaves_it_to_the_catalog(monkeypatch: pytest.MonkeyPatch) -> None:
    """A registry whose generator found no `_FLOAT16_NOT_SUPPORTED_MODELS` (tools/vllm_release/model_facts.py
    writes None then): the catalog's flag decides, gemma2 refused in half, the same model unmarked not."""
    data = json.loads((release_registry._RELEASES / "v0.19.1.json").read_text(encoding="utf-8"))
    data["models"]["float16_refused"] = None
    unlisted = release_registry.release_from_json(data)
    monkeypatch.setattr("vllm_serving.rules.base.release_for_tag", lambda tag: (unlisted, None))
    unmarked = {"name": None, "architecture": FP16_SHY.model_copy(update={"refuses_float16": False})}
    assert "dtype-fp16-refused" in codes("v100", {"engine": {"dtype": "half"}, "model": SHY})
    assert "dtype-fp16-refused" not in codes("v100", {"engine": {"dtype": "half"}, "model": unmarked})
