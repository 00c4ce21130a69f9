"""The vLLM release registry: what a release's `vllm serve` accepts and exports, as vLLM's own
source defines it (the committed JSON), and the generator that reads it from a wheel."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import msgspec
import pytest

from tests.engine.fake_wheel import build_wheel
from tests.paths import ROOT
from tools.vllm_release.generate import main as generate
from vllm_serving.engine.release_registry import (
    VllmRelease,
    known_versions,
    load,
    release_for_tag,
    release_from_json,
)

RELEASES = ROOT / "vllm_serving" / "engine" / "releases"
PINNED = "0.19.1"  # the image tag of the shipped stacks (Pulumi.a100.yaml, Pulumi.a100-k8s.yaml)


@pytest.fixture(scope="module")
def pinned() -> VllmRelease:
    return load(PINNED)


# -- flags as vLLM's FlexibleArgumentParser selects them --------------------------------------------

def test_short_alias_selects_tensor_parallel_size(pinned: VllmRelease) -> None:
    flag = pinned.flag("-tp")
    assert flag is not None and flag.name == "--tensor-parallel-size"
    match = pinned.match("-tp")
    assert match is not None and match.flag.name == "--tensor-parallel-size" and not match.negated


def test_unique_prefix_of_api_key_selects_it_in_any_spelling(pinned: VllmRelease) -> None:
    assert pinned.resolve_abbrev("--api-ke") == ("--api-key",)
    for spelling in ("--api-ke", "--api_ke=sk-123", "--api-k"):
        match = pinned.match(spelling)
        assert match is not None and match.flag.name == "--api-key", spelling


def test_ambiguous_prefix_selects_nothing(pinned: VllmRelease) -> None:
    candidates = pinned.resolve_abbrev("--h")
    assert {"--help", "--host", "--headless"} <= set(candidates)
    assert pinned.match("--h") is None


def test_no_form_of_a_boolean_flag_is_negated(pinned: VllmRelease) -> None:
    match = pinned.match("--no-enable-prefix-cach")  # a prefix of the --no- form
    assert match is not None
    assert match.flag.name == "--enable-prefix-caching" and match.negated


def test_dotted_sub_key_selects_the_json_flag(pinned: VllmRelease) -> None:
    for spelling in ("--speculative-config.method", "--speculative_config.num_speculative_tokens=2",
                     "-sc.method"):
        match = pinned.match(spelling)
        assert match is not None and match.flag.name == "--speculative-config", spelling
        assert match.flag.json_keys
    plain = pinned.flag("--max-model-len")
    assert plain is not None and not plain.json_keys and plain.human_readable


def test_underscores_become_dashes_in_the_flag_name_only(pinned: VllmRelease) -> None:
    # vllm/utils/argparse_utils.py (v0.19.1) parse_args: `(?<=--)[^\.]*`, "everything between the
    # first -- and the first .": a JSON sub-key keeps its underscores (SpeculativeConfig's field)
    assert pinned.normalise("--speculative_config.num_speculative_tokens=2") == (
        "--speculative-config.num_speculative_tokens=2")
    assert pinned.normalise("--max_num_seqs=4") == "--max-num-seqs=4"


def test_a_prefix_of_a_short_alias_selects_it(pinned: VllmRelease) -> None:
    # CPython argparse _get_option_tuples: a single-dash option matches every option starting with
    # it; `-t` starts only `-tp` in v0.19.1, so `-t 2` sets the tensor parallel size
    match = pinned.match("-t")
    assert match is not None and match.flag.name == "--tensor-parallel-size"
    # and `-t=2` too: CPython 3.12.10's _get_option_tuples splits a single-dash option at '=' before
    # it compares prefixes (`option_prefix, sep, explicit_arg = option_string.partition('=')`)
    match = pinned.match("-t=2")
    assert match is not None and match.flag.name == "--tensor-parallel-size"


def test_a_flags_choices_are_vllms(pinned: VllmRelease) -> None:
    # vllm/config/cache.py (v0.19.1): CacheDType = Literal["auto", "float16", "bfloat16", "fp8",
    # "fp8_e4m3", "fp8_e5m2", "fp8_inc", "fp8_ds_mla"]; the rules refuse a value outside them
    flag = pinned.flag("--kv-cache-dtype")
    assert flag is not None and flag.choices is not None
    assert sorted(flag.choices) == sorted(["auto", "float16", "bfloat16", "fp8", "fp8_e4m3", "fp8_e5m2", "fp8_inc",
                                           "fp8_ds_mla"])
    seqs = pinned.flag("--max-num-seqs")
    assert seqs is not None and seqs.choices is None  # any int


def test_optimization_shorthand_is_the_optimization_level(pinned: VllmRelease) -> None:
    assert pinned.parser.optimization_shorthand == "--optimization-level"
    match = pinned.match("-O3")
    assert match is not None and match.flag.name == "--optimization-level"


def test_rope_scaling_is_gone_from_the_pinned_release(pinned: VllmRelease) -> None:
    assert pinned.flag("--rope-scaling") is None
    assert pinned.match("--rope-scaling") is None
    assert pinned.resolve_abbrev("--rope") == ()
    assert load("0.10.2").flag("--rope-scaling") is not None  # it existed before the move to hf-overrides


def test_parser_facts_come_from_flexible_argument_parser(pinned: VllmRelease) -> None:
    facts = pinned.parser
    assert facts.allow_abbrev and facts.underscore_to_dash and facts.equals_value
    assert facts.dotted_json_keys and facts.list_append_suffix == "+"
    assert facts.source == "vllm/utils/argparse_utils.py"


# -- names --------------------------------------------------------------------------------------------

def test_parser_names_of_the_pinned_release(pinned: VllmRelease) -> None:
    assert "qwen3" in pinned.reasoning_parser_names
    assert "qwen3_coder" in pinned.tool_parser_names
    assert "qwen3_coder" not in pinned.reasoning_parser_names
    assert "qwen3" not in pinned.tool_parser_names


def test_metric_names_of_the_pinned_release(pinned: VllmRelease) -> None:
    assert {"vllm:kv_cache_usage_perc", "vllm:num_requests_running"} <= pinned.metric_names
    assert "vllm:gpu_cache_usage_perc" not in pinned.metric_names
    assert pinned.metric("vllm:gpu_cache_usage_perc") is None
    older = load("0.11.0").metrics["vllm:gpu_cache_usage_perc"]
    assert older.hidden  # 0.11 still had it, behind --show-hidden-metrics-for-version


def test_scraped_series_names_map_to_their_metric(pinned: VllmRelease) -> None:
    counter = pinned.metric("vllm:prompt_tokens_total")
    assert counter is not None and counter.name == "vllm:prompt_tokens" and counter.type == "counter"
    histogram = pinned.metric("vllm:time_to_first_token_seconds_bucket")
    assert histogram is not None and histogram.type == "histogram"
    assert pinned.metric("vllm:num_requests_running_total") is None  # a gauge has no _total


def test_env_names_follow_the_release(pinned: VllmRelease) -> None:
    assert "VLLM_LOGGING_LEVEL" in pinned.env_vars
    assert "VLLM_USE_V1" not in pinned.env_vars
    assert "VLLM_USE_V1" in load("0.10.2").env_vars


def test_speculative_methods_and_their_draft_model(pinned: VllmRelease) -> None:
    methods = pinned.speculative_methods
    assert methods["eagle"].needs_draft_model is True
    assert methods["mtp"].needs_draft_model is False and methods["mtp"].draft == "target_model"
    assert methods["qwen3_5_mtp"].alias_of == "mtp" and methods["qwen3_5_mtp"].needs_draft_model is False
    assert methods["ngram"].needs_draft_model is False


def test_quantization_minimum_capability(pinned: VllmRelease) -> None:
    methods = pinned.quantization_methods
    assert methods["awq_marlin"].min_capability == 75
    assert methods["gptq_marlin"].min_capability == 75
    assert methods["fp8"].min_capability == 75
    assert "marlin" not in methods


def test_attention_backend_compute_capability(pinned: VllmRelease) -> None:
    flashinfer = pinned.attention_backends["FLASHINFER"]
    assert flashinfer.supports_capability(7, 5) and not flashinfer.supports_capability(7, 0)
    flash_attn = pinned.attention_backends["FLASH_ATTN"]
    assert flash_attn.supports_capability(8, 0) and not flash_attn.supports_capability(7, 5)
    # v1/attention/backends/flashinfer.py (v0.19.1): `capability >= DeviceCapability(7, 5) and
    # capability <= DeviceCapability(12, 1)`: both ends included
    assert flashinfer.supports_capability(12, 1) and not flashinfer.supports_capability(12, 2)
    assert not flashinfer.supports_capability(13, 0)
    assert flashinfer.kv_cache_dtypes is not None and "fp8" in flashinfer.kv_cache_dtypes


# -- loading --------------------------------------------------------------------------------------------

@pytest.mark.parametrize("tag", ["v0.19.1", "v0.19.1-cu128", "0.19.1", "0.19.1+cu129"])
def test_release_tag_selects_its_release(tag: str) -> None:
    release, warning = release_for_tag(tag)
    assert release.version == PINNED and warning is None


@pytest.mark.parametrize("tag", ["v9.9.9", "latest", "v0.19", None])
def test_unknown_tag_gives_newest_release_and_says_so(tag: str | None) -> None:
    release, warning = release_for_tag(tag)
    newest = known_versions()[-1]
    assert release.version == newest
    assert warning is not None and f"v{newest}" in warning
    if tag:
        assert tag in warning


def test_load_reads_a_release_once_whatever_the_spelling() -> None:
    assert load("v0.19.1") is load("0.19.1")


def test_load_of_an_unknown_version_names_the_known_ones() -> None:
    with pytest.raises(KeyError, match=PINNED):
        load("0.0.1")


def test_versions_are_ordered_numerically() -> None:
    versions = known_versions()
    assert PINNED in versions
    assert list(versions) == sorted(versions, key=lambda v: tuple(int(p) for p in v.split(".")))


# -- the committed files ------------------------------------------------------------------------------

TOP_KEYS_V1 = {"attention_backends", "env_vars", "flags", "generator", "metrics", "parser", "positionals",
               "quantization", "reasoning_parsers", "schema", "speculative", "tool_parsers", "unextracted",
               "version", "wheel"}
# schema 2 adds the facts the rules read beyond names (v0.11.0's file, whose wheel is gone, stays at 1)
TOP_KEYS = {1: TOP_KEYS_V1, 2: TOP_KEYS_V1 | {"models", "gates"}}
TOP_KEYS = {schema: keys | {"preflight_entry_points", "load_formats"} for schema, keys in TOP_KEYS.items()}
FLAG_KEYS = {"action", "aliases", "choices", "deprecated", "dest", "field", "group", "hidden",
             "human_readable", "json", "nargs", "negations", "optional", "source", "takes_value", "type"}


@pytest.mark.parametrize("version", known_versions())
def test_committed_registry_has_the_expected_schema(version: str) -> None:
    data = json.loads((RELEASES / f"v{version}.json").read_text(encoding="utf-8"))
    assert set(data) == TOP_KEYS[data["schema"]] and data["version"] == version
    assert data["schema"] == 2 or version == "0.11.0"
    assert len(data["wheel"]["sha256"]) == 64
    assert data["wheel"]["file"].startswith(f"vllm-{version}-")
    owners: dict[str, str] = {}
    for name, flag in data["flags"].items():
        assert set(flag) == FLAG_KEYS, name
        assert flag["type"] in {"bool", "int", "float", "str", "json"}, name
        assert flag["json"] == (flag["type"] == "json" and flag["takes_value"]), name
        assert flag["takes_value"] or flag["nargs"] == 0, name
        assert bool(flag["negations"]) == (flag["action"] == "boolean_optional"), name
        for option in (name, *flag["aliases"], *flag["negations"]):
            assert option.startswith("-") and owners.setdefault(option, name) == name, option
    for name, metric in data["metrics"].items():
        assert name.startswith("vllm:") and metric["type"] in {"gauge", "counter", "histogram", None}
    for section in ("tool_parsers", "reasoning_parsers"):
        assert data[section] and all(path.startswith("vllm/") for path in data[section].values())
    assert all(n.isupper() for n in data["env_vars"]["names"])
    assert load(version).version == version


# -- the generator, on a tiny wheel with vLLM's layout --------------------------------------------------

def _generate(tmp_path: Path) -> tuple[Path, dict[str, Any]]:
    build_wheel(tmp_path, "9.9.9")
    assert generate(["9.9.9", "--wheel-dir", str(tmp_path), "--out", str(tmp_path / "out")]) == 0
    target = tmp_path / "out" / "v9.9.9.json"
    return target, json.loads(target.read_text(encoding="utf-8"))


def test_generator_reads_flags_from_the_parser_building_code(tmp_path: Path) -> None:
    _, data = _generate(tmp_path)
    flags = {name: (f["aliases"], f["negations"], f["type"], f["nargs"], f["choices"], f["json"])
             for name, f in data["flags"].items()}
    assert flags == {
        "--help": (["-h"], [], "bool", 0, None, False),
        "--port": ([], [], "int", None, None, False),
        "--api-key": ([], [], "str", "+", None, False),
        "--uvicorn-log-level": ([], [], "str", None, ["debug", "info"], False),
        "--allowed-origins": ([], [], "json", None, None, True),  # json.loads type, nargs deleted
        "--max-model-len": ([], [], "int", None, None, False),
        "--dtype": ([], [], "str", None, ["auto", "bfloat16", "half"], False),
        "--enable-prefix-caching": ([], ["--no-enable-prefix-caching"], "bool", 0, None, False),
        "--tensor-parallel-size": (["-tp"], [], "int", None, None, False),
        "--speculative-config": (["-sc"], [], "json", None, None, True),
        "--disable-log-stats": ([], [], "bool", 0, None, False),
        "--enable-log-requests": ([], ["--no-enable-log-requests"], "bool", 0, None, False),
        "--grpc": ([], [], "bool", 0, None, False),
        "--max-num-partial-prefills": ([], [], "int", None, None, False),
    }
    assert data["flags"]["--max-model-len"]["human_readable"]
    assert data["flags"]["--tensor-parallel-size"]["field"] == (
        "vllm/config/parallel.py:ParallelConfig.tensor_parallel_size")
    assert data["positionals"] == ["model_tag"]
    parser = data["parser"]
    assert parser["source"] == "vllm/utils/argparse_utils.py" and parser["allow_abbrev"]
    assert parser["underscore_to_dash"] and parser["dotted_json_keys"] and parser["equals_value"]
    assert parser["optimization_shorthand"] == "--optimization-level"


def test_generator_reads_name_registries(tmp_path: Path) -> None:
    _, data = _generate(tmp_path)
    assert data["tool_parsers"] == {"hermes": "vllm/tool_parsers/__init__.py",
                                    "qwen3_coder": "vllm/tool_parsers/__init__.py"}
    assert data["reasoning_parsers"] == {"qwen3": "vllm/reasoning/qwen3_reasoning_parser.py",
                                         "qwen3_alt": "vllm/reasoning/qwen3_reasoning_parser.py"}
    quant = data["quantization"]["methods"]
    assert {k: quant["awq"][k] for k in ("config_class", "deprecated", "min_capability", "source")} == {
        "config_class": "AWQConfig", "deprecated": True, "min_capability": 75,
        "source": "vllm/model_executor/layers/quantization/awq.py"}
    assert quant["fp8"]["min_capability"] is None  # only the base's NotImplementedError: not guessed
    assert "quantization: fp8 minimum capability not statically readable" in data["unextracted"]
    backends = data["attention_backends"]["backends"]
    assert backends["FLASH_ATTN"]["compute_capability"] == {"majors": None, "max": None, "min": [8, 0]}
    assert backends["FLASH_ATTN"]["kv_cache_dtypes"] == ["auto", "float16", "bfloat16"]  # inherited
    assert backends["FLASHINFER"]["compute_capability"] == {"majors": None, "max": [12, 1], "min": [7, 5]}
    assert backends["CUSTOM"]["class"] is None
    assert data["env_vars"]["names"] == ["VLLM_API_KEY", "VLLM_FLOAT32_MATMUL_PRECISION", "VLLM_KV_CACHE_LAYOUT",
                                         "VLLM_LOGGING_LEVEL", "VLLM_MLA_DISABLE", "VLLM_PP_LAYER_PARTITION"]


def test_generator_reads_speculative_methods_and_metrics(tmp_path: Path) -> None:
    _, data = _generate(tmp_path)
    assert data["speculative"]["methods"] == {
        "draft_model": {"alias_of": None, "draft": None, "needs_draft_model": True},
        "eagle": {"alias_of": None, "draft": None, "needs_draft_model": True},
        "mtp": {"alias_of": None, "draft": "target_model", "needs_draft_model": False},
        "ngram": {"alias_of": None, "draft": "none", "needs_draft_model": False},
        "qwen3_5_mtp": {"alias_of": "mtp", "draft": "target_model", "needs_draft_model": False},
    }
    metrics = {name: (m["type"], m["hidden"]) for name, m in data["metrics"].items()}
    assert metrics == {
        "vllm:num_requests_running": ("gauge", False),
        "vllm:gpu_cache_usage_perc": ("gauge", True),
        "vllm:prompt_tokens": ("counter", False),
        "vllm:time_to_first_token_seconds": ("histogram", False),
        "vllm:cache_config_info": ("gauge", False),  # its name is a local variable
        "vllm:spec_decode_num_drafts": ("counter", False),  # named in a table (fake_wheel_checks.py)
        "vllm:spec_decode_num_draft_tokens": ("counter", False),
    }


def test_regenerating_gives_the_same_bytes_and_a_loadable_release(tmp_path: Path) -> None:
    target, data = _generate(tmp_path)
    first = target.read_bytes()
    generate(["9.9.9", "--wheel-dir", str(tmp_path), "--out", str(tmp_path / "out")])
    assert target.read_bytes() == first
    release = release_from_json(data)
    match = release.match("--tensor_parallel_size=2")
    assert match is not None and match.flag.name == "--tensor-parallel-size"


# -- schema 2: the facts the rules read, folded from the release's own code ------------------------------

def test_generator_folds_each_backends_checks(tmp_path: Path) -> None:
    """validate_configuration's reasons become conditions over its inputs, helpers inlined:
    FlashInfer's sinks ask the platform for the 10.x family, FlashAttention's the FA version."""
    _, data = _generate(tmp_path)
    backends = data["attention_backends"]["backends"]
    flashinfer = {c["reason"]: c["when"] for c in backends["FLASHINFER"]["checks"]}
    assert flashinfer["attention sinks not supported"] == "has_sink and (not device_capability.major == 10)"
    assert flashinfer["head_size not supported"] == "not head_size in [64, 128, 256]"
    flash_attn = {c["reason"]: c["when"] for c in backends["FLASH_ATTN"]["checks"]}
    assert flash_attn["attention sinks not supported"] == "has_sink and (not fa_version == 3)"
    assert flash_attn["compute capability not supported"] == "not device_capability >= (8, 0)"
    assert backends["FLASH_ATTN"]["kv_cache_storage"] == {"fp8": "float8_e4m3fn", "fp8_e4m3": "float8_e4m3fn",
                                                          "fp8_e5m2": None}  # the mapping raises on e5m2
    assert backends["TRITON_ATTN"]["kv_cache_storage"] == {"fp8": "float8_e4m3fn", "fp8_e5m2": "float8_e4m3fn"}
    assert backends["TRITON_ATTN"]["kernels"] == "triton" and backends["FLASHINFER"]["kernels"] is None
    selection = data["attention_backends"]["selection"]
    assert selection["fa_version"] == "3 if device_capability.major == 9 else 2"
    assert selection["priorities"]["default"] == (
        "['FLASHINFER', 'FLASH_ATTN', 'TRITON_ATTN'] if device_capability.major == 10 "
        "else ['FLASH_ATTN', 'FLASHINFER', 'TRITON_ATTN']")
    assert "has_nvidia_artifactory" in data["attention_backends"]["assumed"]


def test_generator_reads_model_facts(tmp_path: Path) -> None:
    _, data = _generate(tmp_path)
    models = data["models"]
    assert models["float16_refused"] == ["gemma2", "gemma3"]
    assert models["mm_prefix_model_types"] == ["gemma3", "paligemma"]
    assert models["multimodal_architectures"] == ["Gemma3ForConditionalGeneration"]
    assert models["sink_architectures"] == {"GptOssForCausalLM": "always"}
    assert models["max_len"]["rope_types_not_scaling"] == ["su", "longrope", "llama3"]
    assert models["max_len"]["rope_from_original"] == {"yarn": "original_max_position_embeddings"}
    rewrites = data["speculative"]["mtp_rewrites"]
    assert rewrites["model_types"]["qwen3_next"]["mtp_model_type"] == "qwen3_next_mtp"
    assert rewrites["architectures"]["MiMoForCausalLM"]["n_predict_key"] == "num_nextn_predict_layers"
    assert data["speculative"]["draft_model"]["refuses_multimodal_target"]


def test_generator_reads_value_checks_and_gates(tmp_path: Path) -> None:
    _, data = _generate(tmp_path)
    values = data["env_vars"]["values"]
    assert values["VLLM_FLOAT32_MATMUL_PRECISION"] == {"case_sensitive": False, "choices": ["highest", "high"],
                                                       "list": False}
    assert values["VLLM_MLA_DISABLE"] == {"type": "int"}
    assert "VLLM_PP_LAYER_PARTITION" in data["env_vars"]["model_checks"]
    # none from __post_init__: its test reads a value it wrote itself (fake_wheel_facts.py), which no flag decides
    gate, serve = sorted(data["gates"]["gates"], key=lambda g: g["source"].startswith("vllm/entrypoints"))
    assert gate["when"] == "max_num_partial_prefills != 1" and gate["exception"] == "NotImplementedError"
    # validate_parsed_serve_args (fake_wheel.py): the subcommand is serve, getattr reads the flag, and an
    # early return a flag decides becomes a term of every later gate
    assert serve["when"] == "not port == 8001 and (uvicorn_log_level == 'debug' and port < 1024)"
    assert serve["flags"] == {"port": "--port", "uvicorn_log_level": "--uvicorn-log-level"}
    assert serve["defaults"] == {"port": 8000, "uvicorn_log_level": "info"}
    assert gate["defaults"] == {"max_num_partial_prefills": 1}
    assert data["gates"]["performance_mode"] == {"throughput": {"max_num_batched_tokens": 2}}
    quant = data["quantization"]
    assert quant["methods"]["awq"]["act_dtypes"] == "['float16']"
    assert quant["methods"]["awq"]["weight_packing"]["pack_factor"] == "32 // weight_bits"
    assert quant["methods"]["awq"]["weight_packing"]["config_keys"]["weight_bits"] == ["w_bit", "bits"]
    assert quant["marlin"]["min_capability"] == 75 and quant["override_order"] == ["awq_marlin"]
    assert quant["fp8_moe_block_checks"][0]["when"] == "intermediate_size_per_partition % block_n != 0"


def test_committed_registry_states_v0_19_1s_facts(pinned: VllmRelease) -> None:
    """Facts read from v0.19.1's wheel that the rules decide with (each checked by hand against its source)."""
    data = pinned.raw
    backends = data["attention_backends"]["backends"]
    triton = backends["TRITON_ATTN"]
    assert triton["kv_cache_storage"] == {"fp8": "float8_e4m3fn", "fp8_e4m3": "float8_e4m3fn",
                                          "fp8_e5m2": "float8_e4m3fn"}
    sinks = {c["reason"]: c["when"] for c in backends["FLASHINFER"]["checks"]}["attention sinks not supported"]
    assert sinks == "has_sink and (not device_capability.major == 10)"
    assert data["attention_backends"]["selection"]["priorities"]["default"].endswith(
        "['FLASH_ATTN', 'FLASHINFER', 'TRITON_ATTN', 'FLEX_ATTENTION']")
    assert data["models"]["float16_refused"] == ["gemma2", "gemma3", "gemma3_text", "glm4", "plamo2"]
    assert data["models"]["sink_architectures"]["GptOssForCausalLM"] == "always"
    assert data["speculative"]["mtp_rewrites"]["model_types"]["qwen3_next"]["mtp_model_type"] == "qwen3_next_mtp"
    assert data["quantization"]["methods"]["mxfp4"]["act_dtypes"] == "['bfloat16']"
    assert any(g["when"] == "max_num_partial_prefills != 1 or max_long_partial_prefills != 1"
               for g in data["gates"]["gates"])


def test_generator_reads_the_checks_vllm_makes_while_building(tmp_path: Path) -> None:
    """Facts read from code that runs as vLLM builds its config and its layers (fake_wheel_checks.py)."""
    _, data = _generate(tmp_path)
    assert data["load_formats"] == {"names": ["auto", "dummy", "safetensors"],
                                    "source": "vllm/model_executor/model_loader/__init__.py get_model_loader"}
    quant = data["quantization"]
    assert quant["compressed_tensors_schemes"]["min_capability"] == {
        "CompressedTensorsW8A8Fp8": 89, "CompressedTensorsWNA16": 75, "CompressedTensorsWNA16Marlin": 75}
    (row,) = quant["fp8_linear_block_checks"]["row"]
    assert row["when"] == ("tp_size > 1 and input_size // input_size_per_partition == tp_size and "
                           "(input_size_per_partition % block_k != 0)")
    assert row["message"].startswith("Weight input_size_per_partition = {input_size_per_partition}")
    assert quant["fp8_moe_refine_min_block"] == 32
    spec = data["speculative"]
    assert spec["aux_hidden_states"]["methods"] == ["eagle3", "extract_hidden_states"]
    assert spec["aux_hidden_states"]["model_types"] == ["llama", "qwen", "gpt_oss"]
    assert spec["async_scheduling"]["methods"] == ["draft_model", "eagle", "eagle3", "mtp", "qwen3_5_mtp"]
    backends = data["attention_backends"]["backends"]
    block = {c["reason"]: c["when"] for c in backends["FLASHINFER"]["checks"]}["block_size not supported"]
    assert block == "block_size is not None and not (block_size % 16 == 0 or block_size % 32 == 0 " \
                    "or block_size % 64 == 0)"
    assert {c["reason"]: c["when"] for c in backends["FLASH_ATTN"]["checks"]}["block_size not supported"] == (
        "block_size is not None and not (block_size % 1 == 0)")


def test_each_section_names_the_wheel_file_it_was_read_from() -> None:
    # docs/rules.md's release-sources table cites these: every section of the registry file, by name
    release = load("0.19.1")
    for section in ("parser", "speculative", "quantization", "attention_backends", "env_vars"):
        assert release.sources[section] == release.raw[section]["source"], section


def test_a_speculative_method_and_a_backend_keep_what_the_wheel_says() -> None:
    release = load("0.19.1")
    assert all(method.name == name for name, method in release.speculative_methods.items())
    # vllm/v1/attention/backends/mla/cutlass_mla.py: Blackwell (10.x) only
    cutlass = release.attention_backends["CUTLASS_MLA"]
    assert cutlass.majors == (10,)
    assert cutlass.supports_capability(9, 0) is False and cutlass.supports_capability(10, 0) is True


@pytest.mark.parametrize("tag", [None, "", "nightly"])
def test_an_unknown_or_missing_tag_is_checked_against_the_newest_release_and_says_how_to_add_one(
        tag: str | None) -> None:
    release, warning = release_for_tag(tag)
    assert release.version == known_versions()[-1] and warning is not None
    assert warning.startswith("no image tag " if not tag else f"image tag {tag!r} ")
    assert warning.endswith("add its registry with tools/vllm_release/generate.py")


def test_no_option_string_holds_an_equals_sign() -> None:
    # argparse splits `--flag=value` at the first '=' (CPython _parse_optional), so an option string
    # holding one could never be written; resolve_abbrev reads only the part before it
    assert [o for v in known_versions() for f in load(v).flags.values() for o in f.option_strings if "=" in o] == []


def test_a_lone_dash_abbreviates_no_flag() -> None:
    # argparse reads "-" as a positional (stdin by convention), never as a prefix of every flag
    assert load("0.19.1").resolve_abbrev("-") == ()


def test_the_registry_keeps_each_record_under_its_own_name() -> None:
    release = load("0.19.1")
    assert all(backend.name == name for name, backend in release.attention_backends.items())
    assert release.unextracted == tuple(release.raw["unextracted"])
    # the --help section a flag is listed under (vllm/entrypoints/openai/cli_args.py FrontendArgs)
    assert release.flags["--port"].group == "Frontend"


def test_a_flag_written_with_its_value_matches_the_flag() -> None:
    found = load("0.19.1").match("--max-model-len=8k")
    assert found is not None and found.flag.name == "--max-model-len" and not found.negated


def test_the_unknown_tag_warning_says_to_pin_a_known_release() -> None:
    _, warning = release_for_tag("nightly")
    assert warning is not None and "the newest known. Pin a known release tag, or add its registry" in warning


# -- each named entry keeps its own name and the vLLM file it was read from ---------------------------

def test_each_quantization_method_and_metric_keeps_its_name_and_source(pinned: VllmRelease) -> None:
    # the committed JSON is the oracle: a finding names the method or metric and cites its file
    data = json.loads((RELEASES / f"v{PINNED}.json").read_text(encoding="utf-8"))
    methods = pinned.quantization_methods
    assert {n: (m.name, m.source) for n, m in methods.items()} == {
        n: (n, q["source"]) for n, q in data["quantization"]["methods"].items()}
    assert {n: (m.name, m.source) for n, m in pinned.metrics.items()} == {
        n: (n, m["source"]) for n, m in data["metrics"].items()}
    # as read from vLLM v0.19.1: Fp8Config in fp8.py, the running-requests gauge in v1/metrics/loggers.py
    assert (methods["fp8"].name, methods["fp8"].source) == ("fp8", "vllm/model_executor/layers/quantization/fp8.py")
    running = pinned.metrics["vllm:num_requests_running"]
    assert (running.name, running.source) == ("vllm:num_requests_running", "vllm/v1/metrics/loggers.py")


def test_an_unknown_tag_s_warning_lists_the_releases_with_data_word_for_word() -> None:
    # the releases whose registry ships in vllm_serving/engine/releases/, oldest first
    shipped = sorted((p.stem for p in RELEASES.glob("v*.json")),
                     key=lambda v: tuple(int(x) for x in v[1:].split(".")))
    _, warning = release_for_tag("v9.9.9")
    assert warning == (f"image tag 'v9.9.9' names no vLLM release this project has data for (known: "
                       f"{', '.join(shipped)}); checking against {shipped[-1]}, the newest known. Pin a known "
                       "release tag, or add its registry with tools/vllm_release/generate.py")
    assert shipped[:2] == ["v0.10.2", "v0.11.0"] and "v0.19.1" in shipped


def test_a_value_glued_on_with_equals_resolves_by_the_option_before_it(pinned: VllmRelease) -> None:
    # argparse splits `--flag=value` at the first '=' before it looks the option up (CPython _parse_optional)
    assert pinned.resolve_abbrev("--max-num-seqs=4") == ("--max-num-seqs",)
    assert pinned.resolve_abbrev("--max-num-seq=4") == ("--max-num-seqs",)


def test_a_parser_without_abbreviations_resolves_only_whole_long_options(pinned: VllmRelease) -> None:
    # argparse.ArgumentParser(allow_abbrev=False): `--api-ke` is an unknown option, `--api-key` itself works
    strict = msgspec.structs.replace(pinned, parser=msgspec.structs.replace(pinned.parser, allow_abbrev=False))
    assert strict.resolve_abbrev("--api-ke") == ()
    assert strict.resolve_abbrev("--api-key") == ("--api-key",)
