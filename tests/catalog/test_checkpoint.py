"""A checkpoint counted per tensor: from config.json shapes with each quantization's packing, or
from the safetensors headers beside a configFile (read bounded, never the tensors)."""

from __future__ import annotations

import json
import os
import struct
import time
from pathlib import Path

import pytest

from tests.paths import FIXTURES
from vllm_serving.catalog.checkpoint import checkpoint_bytes, element_counts
from vllm_serving.catalog.checkpoint_headers import MAX_HEADER_BYTES, HeaderError, header_weights
from vllm_serving.catalog.hf_config import load_hf_config
from vllm_serving.catalog.models import MODELS
from vllm_serving.findings import ConfigError

QWEN35 = FIXTURES / "hf" / "qwen3.5-27b.config.json"


def shard(path: Path, tensors: dict[str, tuple[str, list[int]]]) -> None:
    """A safetensors file's header alone: the reader must never need the tensors behind it."""
    header: dict[str, object] = {name: {"dtype": dtype, "shape": shape, "data_offsets": [0, 0]}
                                 for name, (dtype, shape) in tensors.items()}
    header["__metadata__"] = {"format": "pt"}
    raw = json.dumps(header).encode()
    path.write_bytes(struct.pack("<Q", len(raw)) + raw)


def test_fp8_checkpoints_keep_embeddings_and_the_head_in_16_bits() -> None:
    """Qwen3-32B-FP8: 151,936 x 5,120 embeddings and an untied head at 2 bytes, projections at
    1 byte plus a float32 scale per 128 x 128 block."""
    fp8 = checkpoint_bytes(MODELS["Qwen3-32B-FP8"])
    assert fp8.get("embedding") == fp8.get("lm_head") == 151936 * 5120 * 2
    mlp = 64 * 3 * 5120 * 25600
    assert fp8.get("mlp") == pytest.approx(mlp * (1 + 4 / 128**2))


def test_qwen3_5_fp8_quantizes_the_deltanet_projections_not_its_small_tensors() -> None:
    """What vLLM logged loading Qwen3.6-27B-FP8 (catalog loggedLoads) holds the projections in
    FP8; in_proj_a/b, conv1d, A_log and dt_bias stay 16-bit, as does the vision tower."""
    bf16, fp8 = checkpoint_bytes(MODELS["Qwen3.5-27B"]), checkpoint_bytes(MODELS["Qwen3.5-27B-FP8"])
    assert fp8.get("linear_attention_proj") == pytest.approx(bf16.get("linear_attention_proj") / 2, rel=1e-3)
    assert fp8.get("linear_attention_small") == bf16.get("linear_attention_small") > 0
    assert fp8.get("mlp") == pytest.approx(bf16.get("mlp") / 2, rel=1e-3)
    assert fp8.get("vision") == bf16.get("vision") > 0


def test_moe_fp8_keeps_shared_experts_and_routers_in_16_bits() -> None:
    bf16, fp8 = checkpoint_bytes(MODELS["Qwen3.5-35B-A3B"]), checkpoint_bytes(
        MODELS["Qwen3.5-35B-A3B"].model_copy(update={"quantization": "fp8"}))
    assert fp8.get("shared_expert") == bf16.get("shared_expert") > 0
    assert fp8.get("router") == bf16.get("router") > 0
    assert fp8.get("experts") == pytest.approx(bf16.get("experts") / 2, rel=1e-3)


def test_four_bit_methods_pack_eight_values_into_an_int32_with_scales_and_zeros() -> None:
    """AWQ/GPTQ, group 128: 0.5 B of int32-packed weight, an fp16 scale and a 4-bit zero per 128."""
    awq = checkpoint_bytes(MODELS["Qwen3-8B"].model_copy(update={"quantization": "awq"}))
    elements = element_counts(MODELS["Qwen3-8B"])["mlp"]
    assert awq.get("mlp") == pytest.approx(elements * (0.5 + 2 / 128 + 0.5 / 128))
    assert awq.get("embedding") == 151936 * 4096 * 2
    # GPTQ quantizes the same projections: 36 layers x 3 x 4096 x 12288 MLP elements (config.json)
    gptq = checkpoint_bytes(MODELS["Qwen3-8B"].model_copy(update={"quantization": "gptq"}))
    assert gptq.get("mlp") == pytest.approx(36 * 3 * 4096 * 12288 * (0.5 + 2 / 128 + 0.5 / 128))


def test_tied_embeddings_load_once() -> None:
    tied = checkpoint_bytes(MODELS["Qwen3-0.6B"])
    assert MODELS["Qwen3-0.6B"].tie_word_embeddings and tied.get("lm_head") == 0


def test_mtp_layers_are_counted_apart_from_what_loads() -> None:
    ckpt = checkpoint_bytes(MODELS["Qwen3.5-27B"])
    assert ckpt.get("mtp") > 0
    assert ckpt.loaded_total() == pytest.approx(sum(ckpt.by_kind.values()) - ckpt.get("mtp"))


def test_headers_give_the_checkpoint_without_reading_its_tensors(tmp_path: Path) -> None:
    (tmp_path / "config.json").write_text(QWEN35.read_text())
    (tmp_path / "model.safetensors.index.json").write_text(json.dumps({"weight_map": {
        "model.language_model.embed_tokens.weight": "a.safetensors", "mtp.fc.weight": "b.safetensors",
        "model.language_model.layers.0.mlp.up_proj.weight": "b.safetensors"}}))
    shard(tmp_path / "a.safetensors", {"model.language_model.embed_tokens.weight": ("BF16", [248320, 5120])})
    shard(tmp_path / "b.safetensors", {"mtp.fc.weight": ("BF16", [5120, 10240]),
                                       "model.language_model.layers.0.mlp.up_proj.weight": ("F8_E4M3", [17408, 5120])})
    found = header_weights(tmp_path, 64)
    assert found is not None and found.files == 2
    assert found.loaded_bytes == 248320 * 5120 * 2 + 17408 * 5120
    assert found.mtp_bytes == 5120 * 10240 * 2
    model = load_hf_config(tmp_path / "config.json")
    assert model.weights_gib == pytest.approx(found.loaded_bytes / 2**30)
    assert model.weights_source is not None and "safetensors headers" in model.weights_source


def test_a_config_json_alone_is_sized_from_its_shapes(tmp_path: Path) -> None:
    (tmp_path / "config.json").write_text(QWEN35.read_text())
    assert header_weights(tmp_path, 64) is None
    assert load_hf_config(tmp_path / "config.json").weights_gib is None


def test_a_header_longer_than_any_checkpoint_is_refused_unread(tmp_path: Path) -> None:
    (tmp_path / "model.safetensors").write_bytes(struct.pack("<Q", MAX_HEADER_BYTES + 1) + b"{}")
    with pytest.raises(HeaderError, match="header of"):
        header_weights(tmp_path, 1)


@pytest.mark.parametrize("shard", ["../x.safetensors", "sub/x.safetensors", "/etc/x.safetensors",
                                   ".x.safetensors"])
def test_an_index_naming_files_outside_its_directory_is_refused(tmp_path: Path, shard: str) -> None:
    """A shard in a subdirectory, elsewhere or hidden is no file Hugging Face's layout puts beside
    the index: refused before anything is opened."""
    (tmp_path / "model.safetensors.index.json").write_text(json.dumps({"weight_map": {"w": shard}}))
    with pytest.raises(HeaderError, match="outside the directory"):
        header_weights(tmp_path, 1)


def test_an_unreadable_checkpoint_names_the_config_key(tmp_path: Path) -> None:
    (tmp_path / "config.json").write_text(QWEN35.read_text())
    (tmp_path / "model.safetensors").write_bytes(b"\x03\x00\x00\x00\x00\x00\x00\x00abc")
    with pytest.raises(ConfigError) as caught:
        load_hf_config(tmp_path / "config.json", "vllm-serving:model.configFile")
    assert caught.value.findings[0].key == "vllm-serving:model.configFile"
    assert "not JSON" in caught.value.findings[0].message


def _raw_shard(path: Path, header_json: str) -> None:
    raw = header_json.encode()
    path.write_bytes(struct.pack("<Q", len(raw)) + raw)


@pytest.mark.parametrize("shape", [
    "[1e400]",  # infinity once parsed: int() raised OverflowError, an internal error
    '["4096"]', "[4.5, 2]", "[-5, 3]", "[true, 2]", "5", "null", '{"0": 4}',
    "[" + ",".join(["9999999999"] * 20) + "]",  # 20 dims: past any tensor's
    "[4294967296, 4294967296, 4294967296]",  # 2^96 elements: past any tensor's
])
def test_a_tensor_shape_that_is_not_whole_numbers_is_refused_naming_the_tensor(tmp_path: Path, shape: str) -> None:
    _raw_shard(tmp_path / "model.safetensors",
               '{"model.layers.0.w": {"dtype": "BF16", "shape": ' + shape + ', "data_offsets": [0, 0]}}')
    with pytest.raises(HeaderError, match="model.layers.0.w"):
        header_weights(tmp_path, 1)


def test_a_real_tensor_shape_is_counted(tmp_path: Path) -> None:
    # boundary twin: five dims of a conv weight, and a scalar (shape [])
    shard(tmp_path / "model.safetensors", {"w": ("BF16", [2, 3, 4, 5, 6]), "s": ("F32", [])})
    found = header_weights(tmp_path, 1)
    assert found is not None and found.loaded_bytes == 2 * 3 * 4 * 5 * 6 * 2 + 4


def test_a_header_of_a_million_dims_is_refused_in_well_under_a_second(tmp_path: Path) -> None:
    """A 1 MB header whose shape multiplied out to a million-digit integer took ~10 s of CPU in
    `check`; it is now refused by its length before any arithmetic."""
    (tmp_path / "config.json").write_text(QWEN35.read_text())
    _raw_shard(tmp_path / "model.safetensors",
               '{"w": {"dtype": "BF16", "shape": [' + ",".join(["9999999999"] * 100_000) + '], "data_offsets": [0,0]}}')
    started = time.process_time()
    with pytest.raises(ConfigError) as caught:
        load_hf_config(tmp_path / "config.json", "vllm-serving:model.configFile")
    assert time.process_time() - started < 0.5
    assert "the shape is not a list of at most" in caught.value.findings[0].message


@pytest.mark.parametrize("special", ["fifo", "/dev/zero"])
def test_an_index_that_is_not_a_regular_file_is_never_read(tmp_path: Path, special: str) -> None:
    index = tmp_path / "model.safetensors.index.json"
    if special == "fifo":
        os.mkfifo(index)  # is_file() is False for it: no checkpoint, nothing read
        assert header_weights(tmp_path, 1) is None
    else:
        index.symlink_to(special)
        assert header_weights(tmp_path, 1) is None


def test_the_shards_headers_together_are_bounded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("vllm_serving.catalog.checkpoint_headers.MAX_HEADERS_BYTES", 200)
    names = [f"s{i}.safetensors" for i in range(4)]
    (tmp_path / "model.safetensors.index.json").write_text(json.dumps({"weight_map": {n: n for n in names}}))
    for name in names:
        shard(tmp_path / name, {name: ("BF16", [8, 8])})  # ~100 bytes each: the third passes 200
    with pytest.raises(HeaderError, match="add up to more than"):
        header_weights(tmp_path, 1)


def test_mtp_tensors_inside_the_model_prefix_are_counted_apart(tmp_path: Path) -> None:
    """LongCat-Flash keeps its MTP layer under `model.mtp.` (vLLM's longcat_flash.py skips every
    name holding `.mtp.` when it loads the served model); Qwen3.5's is `mtp.` at the top."""
    shard(tmp_path / "model.safetensors", {"model.mtp.layers.0.mlp.up_proj.weight": ("BF16", [64, 32]),
                                           "mtp.fc.weight": ("BF16", [32, 64]),
                                           "model.layers.0.mlp.up_proj.weight": ("BF16", [64, 32]),
                                           "model.layers.1.mlp.up_proj.weight": ("BF16", [64, 32])})
    found = header_weights(tmp_path, 2)
    assert found is not None
    assert (found.loaded_bytes, found.mtp_bytes) == (2 * 64 * 32 * 2, 2 * 64 * 32 * 2)
    # DeepSeek's next-n layer is the layer numbered num_hidden_layers: with 1 decoder layer, layer 1
    found = header_weights(tmp_path, 1)
    assert found is not None and found.mtp_bytes == 3 * 64 * 32 * 2


def test_an_unknown_dtype_is_named_in_at_most_twenty_characters(tmp_path: Path) -> None:
    """safetensors' dtype names are short (F8_E4M3, BF16): a hostile one is quoted cut."""
    hostile = '{"w": {"dtype": "' + "Q" * 5000 + '", "shape": [1], "data_offsets": [0, 0]}}'
    _raw_shard(tmp_path / "model.safetensors", hostile)
    with pytest.raises(HeaderError) as refused:
        header_weights(tmp_path, 1)
    assert str(refused.value) == f"tensor 'w': unknown dtype {'Q' * 20!r}"


def test_the_norms_are_two_per_layer_and_one_at_the_end() -> None:
    # Qwen/Qwen3-8B model.safetensors.index.json: model.layers.N.input_layernorm.weight and
    # post_attention_layernorm.weight per layer, model.norm.weight once, each hidden_size (4096) wide;
    # 36 layers (the q/k norms are head_dim wide and counted with attention)
    assert element_counts(MODELS["Qwen3-8B"])["norm"] == (2 * 36 + 1) * 4096


def test_shards_whose_headers_add_up_to_the_bound_exactly_are_read(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """Boundary twin of the bound above: the bound is what the headers may add up to, inclusive."""
    names = [f"s{i}.safetensors" for i in range(3)]
    (tmp_path / "model.safetensors.index.json").write_text(json.dumps({"weight_map": {n: n for n in names}}))
    for name in names:
        shard(tmp_path / name, {name: ("BF16", [8, 8])})
    headers = sum((tmp_path / name).stat().st_size - 8 for name in names)  # each file: 8-byte length, header
    monkeypatch.setattr("vllm_serving.catalog.checkpoint_headers.MAX_HEADERS_BYTES", headers)
    found = header_weights(tmp_path, 1)
    assert found is not None and found.loaded_bytes == 3 * 8 * 8 * 2


def _what_check_shows(tmp_path: Path, name: str, content: bytes) -> str:
    """The finding `check` shows for a configFile whose checkpoint file `name` holds `content`."""
    (tmp_path / "config.json").write_text(QWEN35.read_text())
    (tmp_path / name).write_bytes(content)
    with pytest.raises(ConfigError) as caught:
        load_hf_config(tmp_path / "config.json", "vllm-serving:model.configFile")
    return caught.value.findings[0].message


@pytest.mark.parametrize("index", ["{not json", '{"metadata": {}}', "[]"])
def test_an_index_without_a_weight_map_says_so(tmp_path: Path, index: str) -> None:
    """What `check` shows for a truncated or foreign index beside the configFile."""
    assert _what_check_shows(tmp_path, "model.safetensors.index.json", index.encode()).endswith(
        "the checkpoint beside it is unreadable: model.safetensors.index.json: no weight_map")


@pytest.mark.parametrize("entry", ['{"dtype": "BF16", "data_offsets": [0, 0]}',
                                   '{"shape": [4], "data_offsets": [0, 0]}', '"BF16"'])
def test_a_tensor_without_its_dtype_or_its_shape_is_refused_naming_it(tmp_path: Path, entry: str) -> None:
    _raw_shard(tmp_path / "model.safetensors", '{"model.layers.0.w": ' + entry + "}")
    with pytest.raises(HeaderError) as refused:
        header_weights(tmp_path, 1)
    assert str(refused.value) == "tensor 'model.layers.0.w' has no dtype and shape"


@pytest.mark.parametrize("raw", [b"", b"\x03\x00\x00"])
def test_a_shard_shorter_than_its_length_field_is_named_in_what_check_shows(tmp_path: Path, raw: bytes) -> None:
    """A copy cut off before the 8-byte length (an interrupted rsync): `check` names the shard and why."""
    assert _what_check_shows(tmp_path, "model.safetensors", raw).endswith(
        "the checkpoint beside it is unreadable: model.safetensors: shorter than a safetensors header")


def _index_of(tmp_path: Path, shards: int) -> None:
    names = [f"model-{i:05d}-of-{shards:05d}.safetensors" for i in range(1, shards + 1)]
    (tmp_path / "model.safetensors.index.json").write_text(
        json.dumps({"weight_map": {f"w{i}": name for i, name in enumerate(names)}}))


def test_an_index_of_4096_shards_is_taken_and_one_more_refused(tmp_path: Path) -> None:
    """4096 shards (MAX_SHARDS, written out: more than any published checkpoint's) is still a
    checkpoint - here one whose shards are not copied yet, so None; 4097 is refused unread."""
    _index_of(tmp_path, 4096)
    assert header_weights(tmp_path, 1) is None
    _index_of(tmp_path, 4097)
    with pytest.raises(HeaderError) as refused:
        header_weights(tmp_path, 1)
    assert str(refused.value) == \
        "model.safetensors.index.json: its weight_map names files outside the directory or too many"
