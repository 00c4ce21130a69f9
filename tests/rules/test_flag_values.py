"""flag_values.py at its boundaries: extraArgs values against choices and types, and the release's
feature gates (vLLM v0.19.1's registry: `EngineArgs._check_feature_supported`, config validators)."""

from __future__ import annotations

import pytest

from tests.rules.boundary import Boundary, check_boundary, codes, findings
from vllm_serving.findings import config_key


def extra(*items: str, tag: str | None = None) -> dict[str, object]:
    edits: dict[str, object] = {"engine": {"extra_args": items}}
    if tag is not None:
        edits["image"] = {"tag": tag}
    return edits


ITEM0 = config_key("engine", "extraArgs", 0)
ITEM1 = config_key("engine", "extraArgs", 1)


def seqs(max_num_seqs: str, batched_tokens: int | None) -> dict[str, object]:
    """`--max-num-seqs` as an extraArgs item beside the typed engine.maxNumBatchedTokens."""
    return {"engine": {"max_num_batched_tokens": batched_tokens, "max_num_seqs": None,
                       "extra_args": ("--max-num-seqs", max_num_seqs)}}

BOUNDARIES = [
    Boundary("extra-arg-choice", "v100", extra("--performance-mode", "fast"), extra("--performance-mode", "throughput"),
             "--performance-mode fast -> throughput", key=ITEM0, says=("balanced, interactivity, throughput",)),
    Boundary("extra-arg-choice", "v100", extra("--performance-mode=Throughput"),
             extra("--performance-mode=throughput"), "choices are exact: Throughput -> throughput", key=ITEM0),
    Boundary("extra-arg-choice", "v100", extra("--enforce-eager", "--block-size", "sixteen"),
             extra("--enforce-eager", "--block-size", "16"), "--block-size sixteen -> 16", key=ITEM1,
             says=("--block-size takes a whole number, which this value is not",)),
    Boundary("extra-arg-choice", "v100", extra("--hf-overrides", "{max_window_layers: 4}"),
             extra("--hf-overrides", '{"max_window_layers": 4}'), "--hf-overrides: not JSON -> JSON", key=ITEM0),
    Boundary("extra-arg-choice", "v100", extra("--max-num-partial-prefills", "2k"),
             extra("--max-num-partial-prefills", "2"), "an int flag without k/M suffixes: 2k -> 2", key=ITEM0),
    Boundary("extra-arg-feature-gate", "v100", extra("--max-num-partial-prefills", "2"),
             extra("--max-num-partial-prefills", "1"), "v0.19.1: concurrent partial prefill 2 -> 1 (the default)",
             key=ITEM0, says=("NotImplementedError", "Concurrent Partial Prefill is not supported")),
    Boundary("extra-arg-feature-gate", "v100", extra("--mm-shm-cache-max-object-size-mb", "64"),
             extra("--mm-shm-cache-max-object-size-mb", "64", "--mm-processor-cache-type", "shm"),
             "a shm cache object size: + --mm-processor-cache-type shm", key=ITEM0, says=("ValueError",)),
    Boundary("extra-arg-feature-gate", "v100", extra("--enable-log-outputs"),
             extra("--enable-log-outputs", "--enable-log-requests"),
             "--enable-log-outputs: + --enable-log-requests (validate_parsed_serve_args)", key=ITEM0,
             says=("TypeError", "--enable-log-outputs requires --enable-log-requests")),
    Boundary("extra-arg-expert-parallel-dense", "v100", extra("--enable-expert-parallel"),
             {**extra("--enable-expert-parallel"), "model": {"name": "Qwen3.5-35B-A3B"}},
             "expert parallelism: dense Qwen3.5-27B -> Qwen3.5-35B-A3B (256 experts)", key=ITEM0),
    Boundary("extra-arg-expert-parallel-dense", "v100", extra("-ep"), extra("-ep", "--no-enable-expert-parallel"),
             "-ep, then --no-enable-expert-parallel (the last wins)", key=ITEM0),
    Boundary("extra-arg-feature-gate", "v100", extra("--enable-eplb"),
             extra("--enable-eplb", "--enable-expert-parallel"),
             "--enable-eplb: + --enable-expert-parallel", key=ITEM0,
             says=("enable_expert_parallel must be True to use EPLB",)),
    # a None default reaches the config as None (v0.19.1 config/observability.py _validate_tracing_config)
    Boundary("extra-arg-feature-gate", "v100", extra("--collect-detailed-traces=all"),
             extra("--collect-detailed-traces=all", "--otlp-traces-endpoint", "http://otel:4317"),
             "detailed traces: + --otlp-traces-endpoint", key=ITEM0,
             says=("refuses --collect-detailed-traces, --otlp-traces-endpoint as set here (ValueError): "
                   "collect_detailed_traces requires `--otlp-traces-endpoint` to be set.",
                   "change or remove --collect-detailed-traces in engine.extraArgs")),
    # v0.21.0 config/multimodal.py _validate_multimodal_config: a scale path needs the FP8 encoder attention
    Boundary("extra-arg-feature-gate", "v100", extra("--mm-encoder-fp8-scale-path", "/scales.json", tag="v0.21.0"),
             extra("--mm-encoder-fp8-scale-path", "/scales.json", "--mm-encoder-attn-dtype", "fp8", tag="v0.21.0"),
             "FP8 encoder scales: + --mm-encoder-attn-dtype fp8", key=ITEM0,
             says=("require 'mm_encoder_attn_dtype' to be 'fp8'",)),
    # the gate's message filled with the values vLLM sees: the typed key's and the item's
    Boundary("extra-arg-feature-gate", "v100", seqs("4096", 2048), seqs("2048", 2048),
             "max_num_seqs 4096 -> 2048 beside 2048 batched tokens", key=ITEM0,
             says=("max_num_batched_tokens (2048) must be greater than or equal to max_num_seqs (4096).",
                   "change or remove --max-num-seqs in engine.extraArgs")),
    # ... but a None vLLM fills in first is not judged: EngineArgs raises the token budget to max_num_seqs
    # (v0.19.1 engine/arg_utils.py _set_default_max_num_seqs_and_batched_tokens_args)
    Boundary("extra-arg-feature-gate", "v100", seqs("4096", 2048), seqs("4096", None),
             "engine.maxNumBatchedTokens 2048 -> unset (vLLM's default follows max_num_seqs)", key=ITEM0),
    # engine/arg_utils.py human_readable_int: a lower-case suffix is decimal, an upper-case one binary
    Boundary("extra-arg-feature-gate", "v100",
             {"engine": {"max_num_batched_tokens": None, "max_num_seqs": 1024,
                         "extra_args": ("--max-num-batched-tokens", "1k")}},
             {"engine": {"max_num_batched_tokens": None, "max_num_seqs": 1024,
                         "extra_args": ("--max-num-batched-tokens", "1K")}},
             "1k (1,000) -> 1K (1,024) batched tokens beside max_num_seqs 1024", key=ITEM0,
             says=("max_num_batched_tokens (1000) must be greater than or equal to max_num_seqs (1024).",)),
    Boundary("extra-arg-load-format-unknown", "v100", extra("--load-format", "safetensor"),
             extra("--load-format", "safetensors"), "--load-format safetensor -> safetensors", key=ITEM0,
             says=("runai_streamer", "safetensors")),
    Boundary("extra-arg-load-format-unknown", "v100", extra("--load-format=tensorize"),
             extra("--load-format=Tensorizer"), "LoadConfig lower-cases it: tensorize -> Tensorizer", key=ITEM0),
]


@pytest.mark.parametrize("case", BOUNDARIES, ids=[c.id for c in BOUNDARIES])
def test_boundary(case: Boundary) -> None:
    check_boundary(case)


def test_typed_keys_alone_open_no_gate() -> None:
    """The typed keys' own checks are other rules: a gate needs an extraArgs item."""
    assert "extra-arg-feature-gate" not in codes("v100", {"engine": {"max_num_batched_tokens": 16, "max_num_seqs": 32}})


@pytest.mark.parametrize("value", ["32k", "1G", "25.6k", "1024"])
def test_human_readable_values_convert(value: str) -> None:
    """vLLM reads 32k, 1G, 25.6k for a human-readable int (engine/arg_utils.py human_readable_int)."""
    assert "extra-arg-choice" not in codes("v100", extra("--kv-cache-memory-bytes", value))


def test_binary_suffix_with_decimals_is_not_a_number_vllm_reads() -> None:
    assert "extra-arg-choice" in codes("v100", extra("--kv-cache-memory-bytes", "1.5G"))


FIX = "write a value the flag takes (vllm serve --help lists them), or remove the item"


@pytest.mark.parametrize(("items", "kind"), [
    (("--hf-overrides", "{max_window_layers: 4}"), "JSON"),  # arg_utils.py: --hf-overrides is json.loads
    (("--block-size", "sixteen"), "a whole number"),
    (("--gpu-memory-utilization", "ninety"), "a number"),
])
def test_a_value_the_type_cannot_read_names_the_type_word_for_word(items: tuple[str, str], kind: str) -> None:
    (hit,) = [f for f in findings("v100", extra(*items)) if f.code == "extra-arg-choice"]
    assert (hit.key, hit.message, hit.fix) == (
        ITEM0, f"{items[0]} takes {kind}, which this value is not (vLLM v0.19.1): vLLM exits while parsing its "
               "arguments", FIX)


# v0.19.1 vllm/model_executor/model_loader/__init__.py _LOAD_FORMAT_TO_MODEL_LOADER, in sorted order
V0_19_1_LOADERS = ("auto, bitsandbytes, dummy, fastsafetensors, gguf, hf, instanttensor, mistral, npcache, pt, "
                   "runai_streamer, runai_streamer_sharded, safetensors, sharded_state, tensorizer")


def test_an_unknown_load_format_lists_the_release_s_loaders_word_for_word() -> None:
    (hit,) = [f for f in findings("v100", extra("--load-format", "safetensor")) if f.code.endswith("format-unknown")]
    assert (hit.key, hit.message, hit.fix) == (
        ITEM0, "vLLM v0.19.1 has no model loader for --load-format safetensor",
        f"use one of {V0_19_1_LOADERS}, or remove the item (auto); a loader a plugin registers needs a waiver")


def test_a_gate_vllm_does_not_compare_on_none_is_not_judged_on_none() -> None:
    """v0.30.0 config/parallel.py ParallelConfig.__post_init__: elastic_ep_max_dp_size (default None) is
    replaced by data_parallel_size before `elastic_ep_max_dp_size < data_parallel_size`; the registry's gate
    keeps the comparison alone, which cannot be evaluated on None, and such a gate refuses nothing."""
    assert "extra-arg-feature-gate" not in codes("v100", extra("--data-parallel-size", "2", tag="v0.30.0"))


@pytest.mark.parametrize("tag", ["v0.30.0", "v0.34.0"])
def test_a_flag_vllm_replaces_before_its_test_is_not_judged_on_the_stack_s_value(tag: str) -> None:
    """v0.30.0-v0.34.0 config/parallel.py ParallelConfig.__post_init__ sets elastic_ep_max_dp_size to
    data_parallel_size unless --enable-elastic-ep is on, and only then compares the two: vLLM starts
    with --elastic-ep-max-dp-size 1 and data parallel size 2, so nothing may refuse it."""
    stack = extra("--data-parallel-size", "2", "--elastic-ep-max-dp-size", "1", tag=tag)
    assert "extra-arg-feature-gate" not in codes("v100", stack)


def _gate_messages(stack: str, edits: dict[str, object]) -> list[str]:
    return [f.message for f in findings(stack, edits) if f.code == "extra-arg-feature-gate"]


def test_a_gate_on_a_config_field_is_judged_through_the_flag_that_sets_it() -> None:
    """v0.30.0 config/mamba.py MambaConfig.validate_ssu_algorithm: `backend` is the field
    `--mamba-backend` sets; the check returns early when no SSU algorithm is chosen."""
    assert _gate_messages("a100", extra("--mamba-backend", "triton", tag="v0.30.0")) == []
    [message] = _gate_messages("a100", extra("--mamba-ssu-algorithm", "simple", "--mamba-backend", "triton",
                                             tag="v0.30.0"))
    assert "Mamba SSU algorithm selection is only supported with the FlashInfer backend" in message
    assert _gate_messages("a100", extra("--mamba-ssu-algorithm", "simple", "--mamba-backend", "flashinfer",
                                        tag="v0.30.0")) == []


def test_a_config_field_left_unset_gets_the_default_its_flag_passes() -> None:
    """v0.10.2 engine/arg_utils.py passes DecodingConfig(backend=self.guided_decoding_backend), "auto"
    unless set, and DecodingConfig.__post_init__ refuses disable_any_whitespace for any backend but
    xgrammar and guidance."""
    [message] = _gate_messages("a100", extra("--guided-decoding-disable-any-whitespace", tag="v0.10.2"))
    assert message == ("vLLM v0.10.2 refuses --guided-decoding-backend, --guided-decoding-disable-any-whitespace as "
                       "set here (ValueError): disable_any_whitespace is only supported for xgrammar and guidance "
                       "backends.")
    assert _gate_messages("a100", extra("--guided-decoding-disable-any-whitespace", "--guided-decoding-backend",
                                        "xgrammar", tag="v0.10.2")) == []


@pytest.mark.parametrize("tag", ["v0.19.1", "v0.30.0", "v0.34.0"])
def test_the_serve_commands_own_checks_are_read_in_every_release(tag: str) -> None:
    """validate_parsed_serve_args (entrypoints/openai/, launchers/ in v0.29-v0.32, then common/
    cli_args.py) returns early for another subcommand than serve; under `vllm serve` its checks apply."""
    [message] = _gate_messages("a100", extra("--enable-log-outputs", tag=tag))
    assert message == (f"vLLM {tag} refuses --enable-log-outputs, --enable-log-requests as set here (TypeError): "
                       "Error: --enable-log-outputs requires --enable-log-requests")


@pytest.mark.parametrize("tag", ["v0.28.0", "v0.30.0", "v0.31.0"])
def test_a_check_that_returns_early_refuses_only_past_its_return(tag: str) -> None:
    """v0.28.0-v0.31.0 config/vllm.py VllmConfig._verify_sampling_replay_config returns unless the model
    returns sampling masks (sampling distribution replay), and only then refuses a speculative config:
    an ordinary --speculative-config starts."""
    ngram = '{"method": "ngram", "num_speculative_tokens": 2, "prompt_lookup_max": 3}'
    assert _gate_messages("a100", extra("--speculative-config", ngram, tag=tag)) == []
