"""attention.py at its boundaries: the backend vLLM v0.19.1 selects or refuses for the model.

The models' features come from the catalog (gpt-oss has attention sinks, Gemma 3 multimodal-prefix
attention); the backends' answers from the committed v0.19.1 registry, generated from the wheel.
"""

from __future__ import annotations

import msgspec
import pytest

from tests.rules.boundary import Boundary, check_boundary, codes, findings, gpu
from vllm_serving.catalog.models import MODELS
from vllm_serving.findings import config_key
from vllm_serving.rules import attention
from vllm_serving.rules.base import Context
from vllm_serving.startup.attention import Verdict

GPT_OSS = {"name": "gpt-oss-20b"}
GEMMA3 = {"name": "gemma-3-27b-it"}
QWEN3 = {"name": "Qwen3-32B"}
KV = config_key("engine", "kvCacheDtype")
# gpt-oss with 16-wide heads: Triton takes heads from 32, Flex takes no sinks
TINY_HEADS = {"name": None, "architecture": MODELS["gpt-oss-20b"].model_copy(update={"head_dim": 16})}
TWIN_HEADS = {"name": None, "architecture": MODELS["gpt-oss-20b"].model_copy(update={"head_dim": 32})}


H100 = {"gpu": "H100-80GB"}


def forced(backend: str, **engine: object) -> dict[str, object]:
    """Engine edits: an auto KV cache and a forced backend."""
    return kv(None, attention_backend=backend, **engine)


def kv(cache: str | None, **engine: object) -> dict[str, object]:
    """Engine edits: a KV cache dtype, no forced backend unless given."""
    return {"kv_cache_dtype": cache, "attention_backend": None, **engine}


BOUNDARIES = [
    # -- an FP8 cache where auto-selection lands -------------------------------------------------
    Boundary("fp8-kv-cache-unsupported", "v100", {"engine": kv("fp8")},
             {"engine": kv("fp8"), "hardware": {"gpu": "T4"}}, "V100 (7.0, Triton) -> T4 (7.5, FlashInfer)",
             says=("float8_e4m3fn", "8.9")),
    Boundary("fp8-kv-cache-unsupported", "v100", {"engine": kv("fp8_e5m2")}, {"engine": kv(None)},
             "V100: fp8_e5m2 is stored as e4m3fn too -> auto", says=("stores fp8_e5m2 as float8_e4m3fn",)),
    Boundary("fp8-kv-cache-unsupported", "a100", {"engine": kv("fp8"), "model": GPT_OSS},
             {"engine": kv("fp8"), "model": GPT_OSS, "hardware": {"gpu": "L4"}},
             "gpt-oss sinks leave Triton: A100 (8.0) -> L4 (8.9)", says=("TRITON_ATTN",)),
    Boundary("fp8-kv-cache-unsupported", "a100", {"engine": kv("fp8"), "model": GEMMA3},
             {"engine": kv("fp8"), "model": GEMMA3, "gpu": gpu("CC-8.9", (8, 9))},
             "Gemma 3's multimodal prefix leaves Triton: CC 8.0 -> 8.9"),
    Boundary("fp8-kv-cache-unsupported", "a100", {"engine": kv("fp8_e5m2"), "model": QWEN3, "hardware": H100},
             {"engine": kv("fp8_e4m3"), "model": QWEN3, "hardware": H100},
             "H100 picks FlashAttention 3, which has no e5m2: fp8_e5m2 -> fp8_e4m3", says=("FLASH_ATTN",)),
    # -- a forced backend and an FP8 cache ---------------------------------------------------------
    Boundary("fp8-kv-cache-backend", "a100", {"engine": {"attention_backend": "TRITON_ATTN"}},
             {"engine": {"attention_backend": "TRITON_ATTN"}, "hardware": {"gpu": "L4"}},
             "Triton e4m3: A100 (8.0) -> L4 (8.9)", says=("FLASHINFER",)),
    Boundary("fp8-kv-cache-backend", "a100", {"engine": {"attention_backend": "TRITON_ATTN"},
                                              "gpu": gpu("CC-8.8", (8, 8))},
             {"engine": {"attention_backend": "TRITON_ATTN"}, "gpu": gpu("CC-8.9", (8, 9))}, "Triton e4m3: 8.8 -> 8.9"),
    Boundary("fp8-kv-cache-backend", "a100", {"engine": {"attention_backend": "TRITON_ATTN",
                                                         "kv_cache_dtype": "fp8_e5m2"}, "hardware": {"gpu": "T4"}},
             {"engine": {"attention_backend": "FLASHINFER", "kv_cache_dtype": "fp8_e5m2"}, "hardware": {"gpu": "T4"}},
             "T4 fp8_e5m2: Triton (stored as e4m3fn) -> FlashInfer", says=("float8_e4m3fn",)),
    Boundary("fp8-kv-cache-backend", "a100", {"engine": {"attention_backend": "FLASH_ATTN"}},
             {"engine": {"attention_backend": "FLASH_ATTN"}, "hardware": {"gpu": "H100-80GB"}},
             "FlashAttention: A100 (FA2) -> H100 (FA3)"),
    Boundary("fp8-kv-cache-backend", "a100", {"engine": {"attention_backend": "FLASH_ATTN"},
                                              "hardware": {"gpu": "B200"}},
             {"engine": {"attention_backend": "FLASHINFER"}, "hardware": {"gpu": "B200"}},
             "B200 (10.0, FA4): FlashAttention -> FlashInfer"),
    Boundary("fp8-kv-cache-backend", "a100", {"engine": {"attention_backend": "FLEX_ATTENTION"}},
             {"engine": {"attention_backend": "FLASHINFER"}}, "Flex -> FlashInfer on A100"),
    Boundary("fp8-kv-cache-backend", "a100", {"engine": {"attention_backend": "FLEX_ATTENTION"},
                                              "hardware": {"gpu": "L4"}},
             {"engine": {"attention_backend": "TRITON_ATTN"}, "hardware": {"gpu": "L4"}}, "L4: Flex -> Triton",
             fix="set engine.attentionBackend to one of FLASHINFER, TRITON_ATTN, or remove it "
                 "(auto-selection picks one)"),
    Boundary("fp8-kv-cache-backend", "a100", {"engine": {"attention_backend": "FLASH_ATTN"}},
             {"engine": {"attention_backend": "FLASH_ATTN"}, "hardware": {"gpu": "T4"}},
             "FlashAttention: A100 -> T4 (it does not run there: attention-backend-unsupported instead)"),
    # -- a forced backend the model, GPU or dtype rules out ----------------------------------------
    Boundary("attention-backend-unsupported", "v100", {"engine": {"attention_backend": "FLASHINFER"}},
             {"engine": {"attention_backend": "FLASHINFER"}, "hardware": {"gpu": "T4"}}, "FlashInfer: V100 -> T4",
             says=("compute capability not supported",)),
    Boundary("attention-backend-unsupported", "v100", {"engine": {"attention_backend": "FLASHINFER"},
                                                       "gpu": gpu("CC-12.2", (12, 2))},
             {"engine": {"attention_backend": "FLASHINFER"}, "gpu": gpu("CC-12.1", (12, 1))},
             "FlashInfer: CC 12.2 -> 12.1"),
    Boundary("attention-backend-unsupported", "v100", {"engine": {"attention_backend": "FLASH_ATTN"},
                                                       "hardware": {"gpu": "T4"}},
             {"engine": {"attention_backend": "FLASH_ATTN"}, "hardware": {"gpu": "A100-40GB"}},
             "FlashAttention: T4 (7.5) -> A100 (8.0)", says=("TRITON_ATTN",)),
    Boundary("attention-backend-unsupported", "v100", {"engine": {"attention_backend": "FLASH_ATTN"}},
             {"engine": {"attention_backend": "TRITON_ATTN"}}, "V100: FlashAttention -> Triton",
             fix="remove engine.attentionBackend (auto-selection), or use one of: TRITON_ATTN, FLEX_ATTENTION"),
    Boundary("attention-backend-unsupported", "a100", {"engine": forced("FLASHINFER"), "model": GPT_OSS},
             {"engine": forced("FLASHINFER"), "model": GPT_OSS, "hardware": {"gpu": "B200"}},
             "gpt-oss sinks on FlashInfer: A100 -> B200 (TRT-LLM attention)", says=("attention sinks not supported",)),
    Boundary("attention-backend-unsupported", "a100", {"engine": forced("FLASH_ATTN"), "model": GPT_OSS},
             {"engine": forced("FLASH_ATTN"), "model": GPT_OSS, "hardware": H100},
             "gpt-oss sinks on FlashAttention: A100 -> H100 (FA3)",
             says=("sink not supported on compute capability < 9.0",)),
    Boundary("attention-backend-unsupported", "a100", {"engine": forced("FLASH_ATTN"), "model": GEMMA3},
             {"engine": forced("TRITON_ATTN"), "model": GEMMA3},
             "Gemma 3's multimodal prefix: FlashAttention -> Triton",
             says=("partial multimodal token full attention not supported",)),
    Boundary("attention-backend-unsupported", "a100", {"engine": forced("FLASHINFER", dtype="float32")},
             {"engine": forced("FLASHINFER", dtype="bfloat16")},
             "FlashInfer: float32 -> bfloat16", says=("dtype not supported",)),
    # v0.24.0 v1/attention/selector.py: use_batch_invariant=envs.VLLM_BATCH_INVARIANT; FlashInfer does not
    # support batch invariance (backend.py validate_configuration)
    Boundary("attention-backend-unsupported", "a100",
             {"engine": forced("FLASHINFER", env={"VLLM_BATCH_INVARIANT": "1"}), "image": {"tag": "v0.24.0"}},
             {"engine": forced("FLASHINFER", env={"VLLM_BATCH_INVARIANT": "0"}), "image": {"tag": "v0.24.0"}},
             "v0.24.0 FlashInfer: VLLM_BATCH_INVARIANT 1 -> 0", says=("batch invariance not supported",)),
    Boundary("attention-backend-unknown", "a100", {"engine": kv(None, attention_backend="FLASHINFER2")},
             {"engine": kv(None, attention_backend="flashinfer")}, "FLASHINFER2 -> flashinfer (vLLM upper-cases it)"),
    Boundary("attention-no-backend", "v100", {"model": TINY_HEADS}, {"model": TWIN_HEADS},
             "sinks and 16-wide heads on V100: Triton needs 32, Flex takes no sinks -> heads of 32",
             says=("TRITON_ATTN: head_size not supported", "FLEX_ATTENTION: attention sinks not supported")),
]


@pytest.mark.parametrize("case", BOUNDARIES, ids=[c.id for c in BOUNDARIES])
def test_boundary(case: Boundary) -> None:
    check_boundary(case)


def test_fp8_kv_on_a100_needs_no_pinned_backend() -> None:
    """vLLM's auto-selection skips FlashAttention-2 (no FP8 KV) and picks FlashInfer: no finding."""
    found = codes("a100", {"engine": {"attention_backend": None}})
    assert not found & {"fp8-kv-cache-unsupported", "fp8-kv-cache-backend", "attention-backend-unsupported"}


@pytest.mark.parametrize(("model", "gpu_name"), [
    (GPT_OSS, "A100-80GB"), (GPT_OSS, "H100-80GB"), (GPT_OSS, "B200"), (GEMMA3, "A100-80GB"), (QWEN3, "V100-32GB"),
])
def test_models_run_unforced_with_an_auto_kv_cache(model: dict[str, str], gpu_name: str) -> None:
    """Auto-selection always finds a backend for these models with an auto cache (Triton at worst)."""
    found = codes("a100", {"engine": kv(None, dtype="half" if gpu_name == "V100-32GB" else None), "model": model,
                           "hardware": {"gpu": gpu_name}})
    assert not found & {"fp8-kv-cache-unsupported", "attention-no-backend", "attention-backend-unsupported"}


@pytest.mark.parametrize("spelling", ["auto", "AUTO", "Auto"])
def test_auto_is_no_forced_backend(spelling: str) -> None:
    """vLLM v0.19.1 config/attention.py `AttentionConfig.validate_backend_before`: "auto" in any case
    is None (automatic selection), so the stack is checked exactly as with no backend set."""
    assert codes("v100", {"engine": kv(None, attention_backend=spelling)}) == codes("v100", {"engine": kv(None)})
    assert "attention-backend-unknown" not in codes("v100", {"engine": kv(None, attention_backend=spelling)})


@pytest.mark.parametrize(("tried", "key", "reasons"), [
    ({"TRITON_ATTN": ("dtype not supported",), "FLEX_ATTENTION": ("dtype not supported", "head_size not supported")},
     config_key("engine", "dtype"),
     "TRITON_ATTN: dtype not supported; FLEX_ATTENTION: dtype not supported, head_size not supported"),
    ({"TRITON_ATTN": ("dtype not supported",), "FLEX_ATTENTION": ("head_size not supported",)},
     config_key("hardware", "gpu"), "TRITON_ATTN: dtype not supported; FLEX_ATTENTION: head_size not supported"),
])
def test_no_backend_names_the_dtype_when_every_backend_refuses_it(
        monkeypatch: pytest.MonkeyPatch, tried: dict[str, tuple[str, ...]], key: str, reasons: str) -> None:
    """Every release read lets Triton and Flex take float32, float16 and bfloat16, so no shipped
    registry refuses a dtype everywhere; a release that did (its `validate_configuration` says
    "dtype not supported" for every backend tried) is fixed by engine.dtype, anything else by the GPU.
    The verdict is stood in for; the finding is the rule's."""
    real_layers = attention.layers

    def refused(ctx: Context) -> list[attention.Layer]:
        return [msgspec.structs.replace(layer, verdict=Verdict(None, False, tried=tried)) for layer in real_layers(ctx)]

    monkeypatch.setattr(attention, "layers", refused)
    hits = [f for f in findings("v100", {"engine": kv(None, dtype="half")}) if f.code == "attention-no-backend"]
    assert [h.key for h in hits] == [key]
    assert hits[0].message == f"no attention backend of vLLM v0.19.1 runs this model on V100-32GB (CC 7.0): {reasons}"


REFUSED = {"TRITON_ATTN": ("dtype not supported",), "FLEX_ATTENTION": ("dtype not supported",)}


@pytest.mark.parametrize(("verdict", "mla"), [
    (Verdict(None, False, tried=REFUSED, undecided=True), False),  # a check the registry cannot read: no verdict
    (Verdict(None, False, tried={}), False),                      # nothing tried: the registry had no order
    (Verdict(None, False, tried=REFUSED), True),                  # an MLA layer: model_sizing.py judges its backend
    (Verdict("TRITON_ATTN", False, tried={"FLASH_ATTN": ("dtype not supported",)}), False),  # one was found
    (Verdict("FLASHINFER", True, reasons=("dtype not supported",)), False),  # forced: attention-backend-unsupported
])
def test_no_backend_is_said_only_of_a_decided_auto_selection_that_found_none(
        monkeypatch: pytest.MonkeyPatch, verdict: Verdict, mla: bool) -> None:
    real_layers = attention.layers

    def answered(ctx: Context) -> list[attention.Layer]:
        return [msgspec.structs.replace(layer, verdict=verdict, query=msgspec.structs.replace(layer.query, use_mla=mla))
                for layer in real_layers(ctx)]

    monkeypatch.setattr(attention, "layers", answered)
    assert "attention-no-backend" not in {f.code for f in findings("v100", {"engine": kv(None, dtype="half")})}


KV_ONLY = {"TRITON_ATTN": ("kv_cache_dtype not supported",), "FLEX_ATTENTION": ("kv_cache_dtype not supported",)}
HEADS = {"TRITON_ATTN": ("kv_cache_dtype not supported",), "FLEX_ATTENTION": ("head_size not supported",)}


@pytest.mark.parametrize(("verdicts", "codes_found", "codes_absent"), [
    # the FP8 cache is every backend's objection: fp8-kv-cache-unsupported says so, with its fix
    ([KV_ONLY], {"fp8-kv-cache-unsupported"}, {"attention-no-backend"}),
    # another objection besides the cache: no backend runs the model at all
    ([HEADS], {"attention-no-backend"}, set()),
    # full-attention layers refuse only the cache, the sliding-window ones more: the latter are still said
    ([KV_ONLY, HEADS], {"attention-no-backend", "fp8-kv-cache-unsupported"}, set()),
])
def test_an_fp8_cache_that_every_backend_refuses_is_its_own_finding(
        monkeypatch: pytest.MonkeyPatch, verdicts: list[dict[str, tuple[str, ...]]], codes_found: set[str],
        codes_absent: set[str]) -> None:
    real_layers = attention.layers

    def refused(ctx: Context) -> list[attention.Layer]:
        layer = real_layers(ctx)[0]
        return [msgspec.structs.replace(layer, verdict=Verdict(None, False, tried=tried), failure=None)
                for tried in verdicts]

    monkeypatch.setattr(attention, "layers", refused)
    found = {f.code for f in findings("v100", {"engine": kv("fp8", dtype="half")})}
    assert codes_found <= found and not codes_absent & found


def test_a_later_layer_kind_without_a_backend_is_still_said(monkeypatch: pytest.MonkeyPatch) -> None:
    """Gemma-like models ask twice (full and sliding-window layers): the full layers finding a
    backend does not hide sliding ones that find none; and without an FP8 cache a cache objection
    is no FP8 finding's to make."""
    real_layers = attention.layers

    def two_kinds(ctx: Context) -> list[attention.Layer]:
        layer = real_layers(ctx)[0]
        return [msgspec.structs.replace(layer, verdict=Verdict("TRITON_ATTN", False, tried={})),
                msgspec.structs.replace(layer, verdict=Verdict(None, False, tried=KV_ONLY), failure=None)]

    monkeypatch.setattr(attention, "layers", two_kinds)
    hits = [f for f in findings("v100", {"engine": kv(None, dtype="half")}) if f.code == "attention-no-backend"]
    assert [h.key for h in hits] == [config_key("hardware", "gpu")]


def test_an_unknown_backend_is_answered_with_the_cuda_backends_only() -> None:
    # the release lists every platform's backends (ROCM_*, XPU, CPU_ATTN); on a CUDA GPU only
    # CUDA's can be set, so the fix names those alone
    (finding,) = [f for f in findings("a100", {"engine": kv(None, attention_backend="FLASHINFER2")})
                  if f.code == "attention-backend-unknown"]
    named = finding.fix.split("one of ", 1)[1].split(", or remove", 1)[0].split(", ")
    assert {"FLASH_ATTN", "FLASHINFER", "TRITON_ATTN"} <= set(named)
    assert [b for b in named if b.startswith(("ROCM", "XPU", "CPU")) or b in ("NO_ATTENTION", "CUSTOM")] == []


def test_a_forced_backend_refusing_only_the_fp8_cache_is_one_finding() -> None:
    """v0.19.1 FLASH_ATTN on A100 (FlashAttention 2): the FP8 cache is its only complaint
    (kv_cache_dtype needs fa_version 3 on 9.x), so the user reads one finding on the cache and the
    backend, not a second one calling the backend unable to run the model."""
    found = findings("a100", {"engine": {"attention_backend": "FLASH_ATTN"}})
    assert [f.code for f in found if f.code in {"fp8-kv-cache-backend", "attention-backend-unsupported"}] == [
        "fp8-kv-cache-backend"]
