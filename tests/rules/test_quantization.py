"""quantization.py at its boundaries: method names, checkpoint agreement, deprecation, CC."""

from __future__ import annotations

import pytest

from tests.rules.boundary import Boundary, check_boundary, codes
from vllm_serving.catalog.models import MODELS, CheckpointQuantization
from vllm_serving.findings import config_key

QWEN = MODELS["Qwen3.5-27B"]
GPTQ = {"name": None, "architecture": QWEN.model_copy(update={"quantization": "gptq"})}
AWQ = {"name": None, "architecture": QWEN.model_copy(update={"quantization": "awq"})}
GPTQ_INT4 = {"name": None, "architecture": QWEN.model_copy(update={"quantization": "gptq-int4"})}
FBGEMM = {"name": None, "architecture": QWEN.model_copy(update={"quantization": "fbgemm_fp8"})}
A100 = {"gpu": "A100-80GB"}
MODEL_KEY = config_key("model", "name")
QUANT_KEY = config_key("engine", "quantization")
AWQ_128 = {"name": None, "architecture": QWEN.model_copy(update={
    "quantization": "awq", "weights_dtype": "float16",
    "quantization_config": CheckpointQuantization(bits=4, group_size=128, zero_point=True)})}
AWQ_256 = {"name": None, "architecture": QWEN.model_copy(update={
    "quantization": "awq", "weights_dtype": "float16",
    "quantization_config": CheckpointQuantization(bits=4, group_size=256, zero_point=True)})}


def gptq(sym: bool) -> dict[str, object]:
    """A GPTQ checkpoint as its config.json states it (4 bits, group 128, desc_act off)."""
    return {"name": None, "architecture": QWEN.model_copy(update={
        "quantization": "gptq", "weights_dtype": "float16", "quantization_config": CheckpointQuantization(
            bits=4, group_size=128, symmetric=sym, desc_act=False)})}
GGUF = {"name": None, "architecture": QWEN.model_copy(update={"quantization": "gguf"})}
GPT_OSS = {"name": "gpt-oss-20b"}
BNB = {"name": None, "architecture": QWEN.model_copy(update={"quantization": "bitsandbytes"})}
NEVER_A_METHOD = {"name": None, "architecture": QWEN.model_copy(update={"quantization": "vendor-private"})}


def forced(method: str | None, **engine: object) -> dict[str, object]:
    return {"quantization": method, **engine}


BOUNDARIES = [
    Boundary("quantization-checkpoint-dropped", "a100", {"model": BNB, "image": {"tag": "v0.28.0"}},
             {"model": BNB, "image": {"tag": "v0.27.1"}}, "bitsandbytes checkpoint: v0.28.0 (dropped) -> v0.27.1",
             says=("v0.27.1 was the last", "pin image.tag v0.27.1")),
    Boundary("quantization-checkpoint-dropped", "a100", {"model": BNB, "image": {"tag": "v0.34.0"}},
             {"model": NEVER_A_METHOD, "image": {"tag": "v0.34.0"}},
             "bitsandbytes -> a name no release listed (an override may claim it: left alone)"),
    Boundary("quantization-unknown", "v100", {"engine": forced("marlin"), "hardware": A100},
             {"engine": forced("fp8"), "hardware": A100}, "marlin -> fp8 on a 16-bit checkpoint",
             says=("awq, awq_marlin, bitsandbytes", "v0.19.1"), lacks=("experts_int8", "cpu_awq")),
    Boundary("quantization-unknown", "v100", {"engine": forced("marlin"), "hardware": A100},
             {"engine": forced("marlin"), "hardware": A100, "model": GPTQ},
             "marlin: 16-bit -> GPTQ checkpoint (alias of gptq_marlin)"),
    Boundary("quantization-unknown", "v100", {"engine": forced("auto-round"), "hardware": A100},
             {"engine": forced("inc"), "hardware": A100, "model": GPTQ},
             "auto-round (a config name, not a method) -> inc"),
    Boundary("quantization-checkpoint-mismatch", "v100", {"engine": forced("gptq"), "hardware": A100},
             {"engine": forced("fp8"), "hardware": A100}, "16-bit: gptq -> fp8 (quantized while loading)",
             says=("the 16-bit (unquantized) checkpoint", "use fp8")),
    Boundary("quantization-checkpoint-mismatch", "v100", {"engine": forced("gptq"), "hardware": A100},
             {"engine": forced("marlin"), "hardware": A100}, "16-bit: gptq -> marlin (quantization-unknown instead)"),
    Boundary("quantization-checkpoint-mismatch", "v100",
             {"engine": forced("awq"), "hardware": A100, "model": GPTQ_INT4},
             {"engine": forced("gptq"), "hardware": A100, "model": GPTQ_INT4},
             "the catalog's gptq-int4 checkpoint: awq -> gptq"),
    Boundary("quantization-checkpoint-mismatch", "v100", {"engine": forced("awq"), "hardware": A100},
             {"engine": forced("bitsandbytes"), "hardware": A100}, "16-bit: awq -> bitsandbytes (in-flight)"),
    Boundary("quantization-checkpoint-mismatch", "a100", {"engine": forced("awq")}, {"engine": forced("fp8")},
             "FP8 checkpoint: awq -> fp8", says=("remove engine.quantization", "fp8")),
    Boundary("quantization-checkpoint-mismatch", "v100",
             {"engine": forced("awq_marlin"), "hardware": A100, "model": GPTQ},
             {"engine": forced("gptq_marlin"), "hardware": A100, "model": GPTQ},
             "GPTQ checkpoint: awq_marlin -> gptq_marlin"),
    Boundary("quantization-checkpoint-mismatch", "v100",
             {"engine": forced("gptq"), "hardware": A100, "model": AWQ},
             {"engine": forced("awq"), "hardware": A100, "model": AWQ}, "AWQ checkpoint: gptq -> awq"),
    Boundary("quantization-deprecated", "v100", {"hardware": A100, "model": FBGEMM},
             {"hardware": A100, "model": FBGEMM, "engine": {"extra_args": ("--allow-deprecated-quantization",)}},
             "fbgemm_fp8 checkpoint: + --allow-deprecated-quantization", key=MODEL_KEY),
    Boundary("quantization-deprecated", "v100",
             {"hardware": A100, "model": FBGEMM,
              "engine": {"extra_args": ("--allow-deprecated-quantization", "--no-allow-deprecated-quantization")}},
             {"hardware": A100, "model": FBGEMM, "engine": {"extra_args": ("--allow-deprecated-q",)}},
             "last --no- form wins -> an abbreviation argparse accepts", key=MODEL_KEY),
    Boundary("quantization-deprecated", "v100", {"engine": forced("experts_int8"), "hardware": A100},
             {"engine": forced("bitsandbytes"), "hardware": A100}, "forced experts_int8 -> bitsandbytes"),
    Boundary("quantization-cc-too-low", "v100", {"model": AWQ}, {"model": AWQ, "hardware": {"gpu": "T4"}},
             "AWQ checkpoint: V100 (7.0) -> T4 (7.5)", key=MODEL_KEY,
             says=("awq kernels need compute capability 7.5;",)),
    Boundary("quantization-cc-too-low", "v100", {"model": GPTQ, "engine": forced("gptq_marlin")},
             {"model": GPTQ, "engine": forced("gptq_marlin"), "hardware": {"gpu": "T4"}},
             "forced gptq_marlin: V100 -> T4 (7.5, not 8.0)", says=("need compute capability 7.5;",)),
    Boundary("quantization-cc-too-low", "v100", {"model": AWQ, "engine": forced("marlin")},
             {"model": AWQ, "engine": forced("marlin"), "hardware": {"gpu": "T4"}},
             "marlin on AWQ runs awq_marlin: V100 -> T4", says=("awq_marlin",)),
    Boundary("quantization-cc-too-low", "v100", {"model": GPTQ, "engine": forced("gptq_marlin")},
             {"model": GPTQ, "engine": forced("gptq")}, "V100: gptq_marlin -> gptq (CC 6.0)"),
    Boundary("quantization-dtype-unsupported", "a100", {"model": GPT_OSS, "engine": forced(None, dtype="half")},
             {"model": GPT_OSS, "engine": forced(None, dtype="bfloat16")},
             "mxfp4 (gpt-oss) on A100: half -> bfloat16", says=("mxfp4", "bfloat16", "set engine.dtype to bfloat16")),
    Boundary("quantization-dtype-unsupported", "v100", {"model": AWQ_128, "hardware": A100,
                                                        "engine": forced("awq", dtype="bfloat16")},
             {"model": AWQ_128, "hardware": A100, "engine": forced(None, dtype="bfloat16")},
             "AWQ on A100 in bfloat16: forced awq -> unforced (awq_marlin)", says=("awq runs its kernels in float16",)),
    # a catalog entry states no quantization_config: it counts as AutoAWQ's common checkpoint (4 bits,
    # group 128, zero points), which awq_marlin.py is_awq_marlin_compatible converts on an A100
    Boundary("quantization-dtype-unsupported", "v100", {"model": AWQ, "hardware": A100,
                                                        "engine": forced("awq", dtype="bfloat16")},
             {"model": AWQ, "hardware": A100, "engine": forced(None, dtype="bfloat16")},
             "catalog AWQ entry in bfloat16: forced awq -> unforced (awq_marlin)", says=("awq runs its kernels",)),
    Boundary("quantization-dtype-unsupported", "v100", {"model": AWQ_256, "hardware": A100,
                                                        "engine": forced(None, dtype="bfloat16")},
             {"model": AWQ_128, "hardware": A100, "engine": forced(None, dtype="bfloat16")},
             "AWQ group size 256 (no Marlin) -> 128 (awq_marlin)"),
    Boundary("quantization-dtype-unsupported", "v100", {"model": gptq(False), "hardware": A100,
                                                        "engine": forced(None, dtype="bfloat16")},
             {"model": gptq(True), "hardware": A100, "engine": forced(None, dtype="bfloat16")},
             "GPTQ in bfloat16: asymmetric (no Marlin: gptq, float16 only) -> symmetric (gptq_marlin)",
             says=("gptq runs its kernels in float16",)),
    Boundary("quantization-dtype-unsupported", "a100", {"engine": forced(None, dtype="float32")},
             {"engine": forced(None, dtype="bfloat16")}, "FP8 checkpoint: float32 -> bfloat16",
             says=("fp8 runs its kernels in bfloat16, float16",)),
    Boundary("quantization-dtype-unsupported", "v100", {"model": GGUF, "hardware": {"gpu": "B200"},
                                                        "engine": forced(None, dtype="bfloat16")},
             {"model": GGUF, "hardware": {"gpu": "H100-80GB"}, "engine": forced(None, dtype="bfloat16")},
             "GGUF in bfloat16: B200 (10.0) -> H100 (9.0)",
             # v0.19.1 gguf.py get_supported_act_dtypes: [torch.half, torch.float32] from CC 10.0,
             # spelled as engine.dtype takes them
             fix="set engine.dtype to half or float32"),
    Boundary("quantization-cc-too-low", "v100", {"engine": forced("modelopt"), "hardware": {"gpu": "A100-80GB"}},
             {"engine": forced("modelopt"), "hardware": {"gpu": "L4"}}, "modelopt: A100 (8.0) -> L4 (8.9)",
             says=("8.9",)),
]


@pytest.mark.parametrize("case", BOUNDARIES, ids=[c.id for c in BOUNDARIES])
def test_boundary(case: Boundary) -> None:
    check_boundary(case)


def test_a_gptq_checkpoint_runs_on_volta_unforced() -> None:
    """vLLM keeps GPTQ (CC 6.0) where the Marlin conversion cannot run."""
    assert not codes("v100", {"model": GPTQ}) & {"quantization-cc-too-low", "quantization-checkpoint-mismatch"}


def test_fp8_has_its_own_rules() -> None:
    """FP8 below its minimum is fp8-weights-unsupported, not a second quantization finding."""
    found = codes("v100", {"engine": forced("fp8")})
    assert "fp8-weights-unsupported" in found and "quantization-cc-too-low" not in found
