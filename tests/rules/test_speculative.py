"""speculative.py at its boundaries: method names, draft models, MTP layers and token counts."""

from __future__ import annotations

import pytest

from tests.rules.boundary import Boundary, check_boundary
from vllm_serving.catalog.models import MODELS
from vllm_serving.settings.engine import SpeculativeSettings

FP8 = MODELS["Qwen3.6-27B-FP8"]
QWEN3 = {"name": "Qwen3-32B"}
QWEN3_NEXT = {"name": "Qwen3-Next-80B-A3B-Thinking"}


def NEMOTRON_H(layers: int) -> dict[str, object]:  # noqa: N802 - reads as the model it builds
    return {"name": None, "architecture": MODELS["Qwen3-32B"].model_copy(update={
        "model_type": "nemotron_h", "architecture": "NemotronHForCausalLM", "mtp_layers": layers})}


def spec(method: str, n: int = 1, model: str | None = None) -> dict[str, object]:
    return {"engine": {"speculative_config": SpeculativeSettings(method=method, num_speculative_tokens=n,
                                                                  model=model)}}


def async_spec(method: str, extra: tuple[str, ...]) -> dict[str, object]:
    return {"engine": {"speculative_config": SpeculativeSettings(method=method, num_speculative_tokens=3),
                       "extra_args": extra}}


def mtp_layers(n: int) -> dict[str, object]:
    return {"name": None, "architecture": FP8.model_copy(update={"mtp_layers": n})}


BOUNDARIES = [
    Boundary("speculative-method-unknown", "a100", spec("eagle4", model="/draft"), spec("eagle3", model="/draft"),
             "eagle4 -> eagle3", says=("draft_model, eagle, eagle3",), lacks=("qwen3_next_mtp",)),
    Boundary("speculative-method-unknown", "a100", spec("MTP"), spec("mtp"), "MTP -> mtp (names are exact)"),
    Boundary("speculative-draft-model-missing", "a100", spec("eagle3"), spec("eagle3", model="/models/eagle3"),
             "eagle3 without -> with a draft model"),
    Boundary("speculative-draft-model-missing", "a100", spec("draft_model"), spec("ngram"),
             "draft_model -> ngram (no draft weights)"),
    Boundary("speculative-mtp-unsupported", "a100", {**spec("mtp"), "model": QWEN3},
             {**spec("mtp"), "model": QWEN3_NEXT}, "qwen3 (no MTP rewrite) -> qwen3_next (rewritten to qwen3_next_mtp)",
             says=("model type qwen3)",)),
    Boundary("speculative-mtp-unsupported", "a100", {**spec("qwen3_5_mtp"), "model": QWEN3},
             {**spec("ngram"), "model": QWEN3}, "qwen3: qwen3_5_mtp (an mtp alias) -> ngram"),
    Boundary("speculative-mtp-unsupported", "a100", {**spec("mtp"), "model": NEMOTRON_H(0)},
             {**spec("mtp"), "model": NEMOTRON_H(1)},
             "nemotron_h: the rewrite needs num_nextn_predict_layers > 0: 0 -> 1"),
    Boundary("speculative-draft-model-multimodal", "a100", spec("draft_model", 2, model="/models/draft"),
             {**spec("draft_model", 2, model="/models/draft"), "engine": {
                 "speculative_config": SpeculativeSettings(method="draft_model", num_speculative_tokens=2,
                                                           model="/models/draft"),
                 "extra_args": ("--language-model-only",)}},
             "Qwen3.6 (multimodal) with a draft model: + --language-model-only"),
    Boundary("speculative-draft-model-multimodal", "a100", spec("draft_model", 2, model="/models/draft"),
             {**spec("draft_model", 2, model="/models/draft"), "model": QWEN3},
             "a draft model: multimodal Qwen3.6 -> text-only Qwen3-32B"),
    Boundary("speculative-draft-model-multimodal", "a100", {"engine": {
                 "speculative_config": SpeculativeSettings(method="draft_model", num_speculative_tokens=2,
                                                           model="/models/draft"),
                 "extra_args": ("--limit-mm-per-prompt", '{"image": 0, "video": 1}')}},
             {"engine": {"speculative_config": SpeculativeSettings(method="draft_model", num_speculative_tokens=2,
                                                                   model="/models/draft"),
                         "extra_args": ("--limit-mm-per-prompt", '{"image": 0, "video": 0}')}},
             "--limit-mm-per-prompt video 1 -> 0 (no modality left)"),
    Boundary("speculative-method-deprecated", "a100", spec("qwen3_next_mtp"), spec("mtp"),
             "qwen3_next_mtp -> mtp", says=("method: mtp",)),
    Boundary("speculative-tokens-many", "a100", spec("mtp", 2), spec("mtp", 1), "MTP: 2 -> 1 token"),
    Boundary("speculative-tokens-many", "a100", spec("qwen3_next_mtp", 2), spec("ngram", 2),
             "2 tokens: an MTP alias -> ngram"),
    Boundary("speculative-tokens-indivisible", "a100", {**spec("mtp", 3), "model": mtp_layers(2)},
             {**spec("mtp", 4), "model": mtp_layers(2)}, "2 MTP layers: 3 -> 4 tokens",
             fix="set engine.speculativeConfig.numSpeculativeTokens to at most 2, or a multiple: 2, 4, 6"),
    Boundary("speculative-tokens-indivisible", "a100", {**spec("mtp", 3), "model": mtp_layers(2)},
             {**spec("ngram", 3), "model": mtp_layers(2)}, "3 tokens, 2 MTP layers: mtp -> ngram"),
    Boundary("speculative-tokens-indivisible", "a100", {**spec("mtp", 3), "model": mtp_layers(2)},
             {**spec("mtp", 3), "model": mtp_layers(3)}, "3 tokens: 2 -> 3 MTP layers"),
    Boundary("speculative-tokens-indivisible", "a100", {**spec("mtp", 5), "model": mtp_layers(2)},
             {**spec("mtp", 2), "model": mtp_layers(2)}, "2 MTP layers: 5 -> 2 tokens (at most the layers)"),
    Boundary("speculative-tokens-indivisible", "a100", {**spec("mtp", 17), "model": mtp_layers(2)},
             {**spec("mtp", 18), "model": mtp_layers(2)}, "more than 16 tokens are fine: 17 -> 18 over 2 layers"),
    Boundary("speculative-target-unsupported", "a100",
             {**spec("eagle3", 3, "/draft"), "model": {"name": "gemma-3-27b-it"}},
             {**spec("eagle3", 3, "/draft"), "model": QWEN3}, "eagle3: Gemma 3 (gemma3_text) -> Qwen3-32B (qwen3)",
             says=("gemma3_text",)),
    Boundary("speculative-target-unsupported", "a100",
             {**spec("eagle3", 3, "/draft"), "model": {"name": "Mistral-Small-3.1-24B-Instruct-2503"}},
             {**spec("eagle", 3, "/draft"), "model": {"name": "Mistral-Small-3.1-24B-Instruct-2503"}},
             "Mistral Small 3.1 (text model mistral): eagle3 -> eagle (no aux hidden states)"),
    Boundary("speculative-async-scheduling", "a100", async_spec("ngram", ("--async-scheduling",)),
             async_spec("ngram", ()), "ngram: --async-scheduling -> unset (vLLM turns it off itself)",
             says=("ngram_gpu",)),
    Boundary("speculative-async-scheduling", "a100", async_spec("ngram", ("--async-scheduling",)),
             async_spec("ngram", ("--async-scheduling", "--no-async-scheduling")), "the last switch wins"),
]


@pytest.mark.parametrize("case", BOUNDARIES, ids=[c.id for c in BOUNDARIES])
def test_boundary(case: Boundary) -> None:
    check_boundary(case)
