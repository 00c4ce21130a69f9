"""scheduler.py at its boundaries: batch tokens against context, sequences and the hybrid block."""

from __future__ import annotations

import pytest

from tests.rules.boundary import Boundary, check_boundary, codes, gpu
from vllm_serving.findings import config_key

NO_CHUNKED = ("--no-enable-chunked-prefill",)
THROUGHPUT = ("--performance-mode", "throughput")
SEQS_KEY = config_key("engine", "maxNumSeqs")
# a100's attention block, worked out by hand from vLLM 0.19.1's HybridAttentionMambaModelConfig
# (model_executor/models/config.py; prefix caching in align mode: the smallest multiple of 16 whose
# attention page holds one GDN state). Qwen3.6-27B at TP 4, MTP with 4 speculative tokens:
#   conv state  (4 - 1 + 4) x (128*16*2 + 128*48) / 4 = 7 x 2560 bf16        =  35,840 B
#   SSM state   48/4 x 128 x 128 float32 (config.json's mamba_ssm_dtype)      = 786,432 B
#   attention   2 (K and V) x 4/4 KV heads x 256 head_dim x 1 B (fp8) per token =   512 B
#   16 x ceil(822,272 / (16 x 512)) = 16 x ceil(100.4) = 16 x 101             = 1616 tokens
A100_BLOCK = 1616


def batch(tokens: int | None = None, seqs: int | None = None, extra: tuple[str, ...] = (),
          **engine: object) -> dict[str, object]:
    return {"engine": {"max_num_batched_tokens": tokens, "max_num_seqs": seqs, "extra_args": extra, **engine}}


V0_34 = {"tag": "v0.34.0"}
BOUNDARIES = [
    Boundary("max-num-batched-tokens-below-max-model-len", "v100", batch(8191, extra=NO_CHUNKED),
             batch(8192, extra=NO_CHUNKED), "chunked prefill off, maxModelLen 8192: 8191 -> 8192 tokens"),
    Boundary("max-num-batched-tokens-below-max-model-len", "v100", batch(8191, extra=NO_CHUNKED),
             batch(8191), "8191 tokens: chunked prefill off -> on (vLLM's default)"),
    Boundary("max-num-batched-tokens-below-max-model-len", "v100", batch(4096, extra=("--no-enable-chunked",)),
             batch(4096, extra=("--no-enable-chunked", "--enable-chunked-prefill")),
             "an abbreviated --no- form -> overridden by a later --enable-chunked-prefill"),
    Boundary("max-num-batched-tokens-below-max-num-seqs", "v100", batch(256, 257), batch(257, 257),
             "257 sequences: 256 -> 257 tokens"),
    Boundary("max-num-batched-tokens-below-max-num-seqs", "v100", batch(seqs=2049), batch(seqs=2048),
             "A100-sized default of 2048 tokens: 2049 -> 2048 sequences", key=SEQS_KEY),
    Boundary("max-num-batched-tokens-below-max-num-seqs", "v100", batch(seqs=2049), batch(seqs=2049, extra=NO_CHUNKED),
             "2049 sequences: chunked prefill on -> off (the default rises to maxModelLen 8192)", key=SEQS_KEY),
    Boundary("max-num-batched-tokens-below-max-num-seqs", "a100",
             {**batch(seqs=2049), "gpu": gpu("G", (9, 0), 81920, cuda_total_gib=70 - 1 / 1024)},
             {**batch(seqs=2049), "gpu": gpu("G", (9, 0), 81920, cuda_total_gib=70)},
             "CUDA total 70 GiB - 1 MiB -> 70 GiB (large defaults: vLLM compares get_device_total_memory)",
             key=SEQS_KEY),
    Boundary("max-num-batched-tokens-below-max-num-seqs", "a100",
             {**batch(seqs=8193), "image": V0_34, "gpu": gpu("G", (10, 0), 196608, cuda_total_gib=160 - 1 / 1024)},
             {**batch(seqs=8193), "image": V0_34, "gpu": gpu("G", (10, 0), 196608, cuda_total_gib=160)},
             "v0.34.0, CUDA total 160 GiB - 1 MiB -> 160 GiB (16384 tokens: the tier v0.28 added)", key=SEQS_KEY),
    Boundary("max-num-batched-tokens-below-max-num-seqs", "a100",
             {**batch(seqs=8193), "gpu": gpu("G", (10, 0), 196608, cuda_total_gib=170)},
             {**batch(seqs=8193), "image": V0_34, "gpu": gpu("G", (10, 0), 196608, cuda_total_gib=170)},
             "a 170 GiB GPU: v0.19.1 (8192 tokens) -> v0.34.0 (16384)", key=SEQS_KEY),
    Boundary("max-num-batched-tokens-below-max-num-seqs", "a100", batch(seqs=2049),
             {**batch(seqs=2049), "hardware": {"gpu": "H100-80GB"}},
             "2049 sequences, tokens unset: A100-80GB (2048) -> H100 (8192)", key=SEQS_KEY),
    Boundary("max-num-batched-tokens-below-max-num-seqs", "a100", {**batch(seqs=2049), "hardware": {"gpu": "L40S"}},
             {**batch(seqs=2049), "hardware": {"gpu": "A800-80GB"}},
             "2049 sequences: L40S (45 GiB, 2048) -> A800-80GB (not an A100: 8192)", key=SEQS_KEY),
    Boundary("max-num-batched-tokens-below-max-num-seqs", "v100", batch(seqs=2049),
             batch(seqs=2049, extra=THROUGHPUT),
             "2049 sequences: --performance-mode throughput doubles the 2048-token default", key=SEQS_KEY),
    Boundary("max-num-batched-tokens-below-max-num-seqs", "v100", batch(seqs=4097, extra=THROUGHPUT),
             batch(seqs=4096, extra=THROUGHPUT),
             "throughput mode's 4096 tokens: 4097 -> 4096 sequences", key=SEQS_KEY),
    Boundary("max-num-batched-tokens-below-max-num-seqs", "a100",
             {**batch(seqs=8193), "hardware": {"gpu": "H100-80GB"}},
             {**batch(seqs=8192), "hardware": {"gpu": "H100-80GB"}},
             "H100 default 8192 tokens: 8193 -> 8192 sequences", key=SEQS_KEY),
    Boundary("hybrid-block-exceeds-batched-tokens", "a100", batch(A100_BLOCK - 1, 32), batch(A100_BLOCK, 32),
             f"a100's {A100_BLOCK}-token block: {A100_BLOCK - 1} -> {A100_BLOCK} tokens", says=(str(A100_BLOCK),)),
    Boundary("hybrid-block-exceeds-batched-tokens", "a100", batch(A100_BLOCK - 1, 32),
             batch(A100_BLOCK - 1, 32, enable_prefix_caching=False), "prefix caching on -> off (no align mode)"),
    # both limits unset: vLLM caps the token default at max_num_seqs x maxModelLen, and throughput mode
    # doubles the 256-sequence default too (v0.19.1 engine/arg_utils.py
    # _set_default_max_num_seqs_and_batched_tokens_args): 256 x 6 = 1536 < 1616 <= 512 x 6 = 3072
    Boundary("hybrid-block-exceeds-batched-tokens", "a100", batch(max_model_len=6),
             batch(max_model_len=6, extra=THROUGHPUT),
             "maxModelLen 6: default mode (256 x 6 = 1536 tokens) -> throughput (512 x 6 = 3072)",
             says=("above maxNumBatchedTokens 1536",)),
    Boundary("hybrid-block-exceeds-batched-tokens", "a100", batch(A100_BLOCK - 1, 32),
             batch(A100_BLOCK - 1, 32, enable_prefix_caching=None), "prefix caching on -> unset (off for hybrids)"),
    Boundary("hybrid-prefix-caching-needs-chunked-prefill", "v100", batch(extra=NO_CHUNKED),
             batch(extra=NO_CHUNKED, enable_prefix_caching=False), "chunked prefill off: prefix caching on -> off"),
    Boundary("hybrid-prefix-caching-needs-chunked-prefill", "v100", batch(extra=NO_CHUNKED),
             batch(extra=(*NO_CHUNKED, "--enable-chunked-prefill")), "the last chunked-prefill flag wins"),
    Boundary("mamba-block-size-needs-prefix-caching", "a100",
             batch(extra=("--mamba-block-size", "256"), enable_prefix_caching=False),
             batch(extra=("--mamba-block-size", "256"), enable_prefix_caching=True),
             "--mamba-block-size 256: prefix caching off -> on"),
    Boundary("mamba-block-size-needs-prefix-caching", "a100",
             batch(extra=("--mamba-block-size", "256"), enable_prefix_caching=False),
             batch(enable_prefix_caching=False), "prefix caching off: --mamba-block-size 256 -> unset"),
]


@pytest.mark.parametrize("case", BOUNDARIES, ids=[c.id for c in BOUNDARIES])
def test_boundary(case: Boundary) -> None:
    check_boundary(case)


def test_shipped_stacks_fit_vllm_defaults() -> None:
    """v100 leaves both limits to vLLM (2048 tokens, 256 sequences); its 400-token block fits."""
    found = codes("v100", {}) | codes("a100", {})
    assert not found & {"max-num-batched-tokens-below-max-num-seqs", "hybrid-block-exceeds-batched-tokens"}
