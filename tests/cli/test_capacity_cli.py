"""`vllm-stack capacity`: catalog model or config.json, JSON keys, the worked example, errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.paths import PROJECT_DIR, ROOT, stack_file
from vllm_serving.catalog.models import MODELS
from vllm_serving.cli import main
from vllm_serving.cli.capacity_tp import tp_candidates
from vllm_serving.stack_files.loader import load_settings, read_stack_file

QWEN3_4B = ROOT / "tests" / "fixtures" / "hf" / "qwen3-4b.config.json"
KEYS = {"weights_gib_per_gpu", "kv_bytes_per_token_per_gpu", "available_kv_gib", "kv_cache_tokens",
        "max_concurrency"}


def _json(args: list[str], capsys: pytest.CaptureFixture[str]) -> dict[str, object]:
    assert main(["capacity", *args, "--json"]) == 0
    data: dict[str, object] = json.loads(capsys.readouterr().out)
    return data


@pytest.mark.parametrize(("kv", "logged"), [("auto", 83_488), ("fp8", 166_992)])
def test_worked_example_from_config_json(kv: str, logged: int, capsys: pytest.CaptureFixture[str]) -> None:
    data = _json(["--model-config", str(QWEN3_4B), "--gpu", "L4", "--tp", "1",
                  "--available-kv-gib", "11.47", "--kv-cache-dtype", kv], capsys)
    assert KEYS <= set(data) and list(data)[:5] == sorted(KEYS, key=list(data).index)
    tokens = data["kv_cache_tokens"]
    assert isinstance(tokens, int) and abs(tokens - logged) / logged < 0.01
    assert data["available_kv_gib"] == 11.47


def test_catalog_model_text_output(capsys: pytest.CaptureFixture[str]) -> None:
    args = ["capacity", "--model", "Qwen3.6-27B-FP8", "--gpu", "A100-80GB", "--gpus", "4", "--tp", "4",
            "--kv-cache-dtype", "fp8", "--gpu-memory-utilization", "0.95", "--max-model-len", "262144",
            "--vllm-version", "v0.19.1"]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0].startswith("Qwen3.6-27B-FP8 on 4 x A100-80GB (TP 4)")
    assert "Concurrency:" in out and "max concurrency at max-model-len" in out


def test_weights_do_not_fit_exit_1(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["capacity", "--model", "Qwen3.5-27B", "--gpu", "V100-32GB", "--tp", "1"]) == 1
    assert "the weights do not fit" in capsys.readouterr().out


@pytest.mark.parametrize(("args", "message"), [
    (["--model", "Qwen3.5-72B", "--gpu", "A100-80GB", "--tp", "4"],
     "'Qwen3.5-72B' is not in the model catalog; did you mean"),
    (["--model", "Qwen3.5-27B", "--gpu", "v100", "--tp", "8"], "could be any of V100-16GB, V100-32GB"),
    (["--model", "Qwen3.5-27B", "--gpu", "A100-80GB", "--tp", "8", "--gpus", "4"], "needs 8 GPUs"),
    (["--model", "Qwen3.5-27B", "--gpu", "A100-80GB", "--tp", "4", "--vllm-version", "main"], "not a version"),
    ([], "give a STACK, or --model (or --model-config) and --gpu"),
    (["--model", "Qwen3.5-27B"], "--gpu is needed with --model / --model-config"),
    (["--model", "Qwen3.5-27B", "--gpu", "L4", "--pp", "-1"], "--tp and --pp must be at least 1"),
    (["--model", "Qwen3.5-27B", "--gpu", "L4", "--gpu-memory-utilization", "1.5"],
     "--gpu-memory-utilization must be in (0, 1]"),
    (["v100", "--tp", "2", "--gpu", "L4"], "a stack carries its own settings; drop --gpu, --tp or the stack"),
    (["v100", "--enforce-eager"], "a stack carries its own settings; drop --enforce-eager or the stack"),
    (["v100", "--max-model-len", "8k", "--kv-cache-dtype", "fp8"],
     "a stack carries its own settings; drop --kv-cache-dtype, --max-model-len or the stack"),
])
def test_bad_input_exits_2(args: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["capacity", *args]) == 2
    assert message in capsys.readouterr().err


def test_bad_config_json_is_a_finding_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "config.json"
    path.write_text('{"model_type": "qwen3"}')
    assert main(["capacity", "--model-config", str(path), "--gpu", "L4", "--tp", "1"]) == 1
    assert capsys.readouterr().err.startswith("ERROR model-config-invalid")


def _capacity_args(stack: str) -> list[str]:
    """`capacity` flags carrying the same inputs as the stack file."""
    settings = load_settings(read_stack_file(stack_file(stack)))
    engine, spec_cfg = settings.engine, settings.engine.speculative_config
    args = ["--model", str(settings.model.name), "--gpu", settings.hardware.gpu,
            "--tp", str(engine.tensor_parallel_size), "--max-model-len", str(engine.max_model_len),
            "--gpu-memory-utilization", str(engine.gpu_memory_utilization)]
    args += ["--dtype", engine.dtype] if engine.dtype else []
    args += ["--kv-cache-dtype", engine.kv_cache_dtype] if engine.kv_cache_dtype else []
    args += ["--enable-prefix-caching" if engine.enable_prefix_caching else "--no-enable-prefix-caching"]
    if spec_cfg is not None:
        args += ["--num-speculative-tokens", str(spec_cfg.num_speculative_tokens),
                 "--speculative-method", spec_cfg.method]
    return args


def test_prefix_caching_and_speculative_flags(capsys: pytest.CaptureFixture[str]) -> None:
    base = ["--model", "Qwen3.6-27B-FP8", "--gpu", "A100-80GB", "--tp", "4", "--max-model-len", "262144",
            "--kv-cache-dtype", "fp8", "--available-kv-gib", "60"]
    default = _json(base, capsys)
    off = _json([*base, "--no-enable-prefix-caching"], capsys)
    on = _json([*base, "--enable-prefix-caching"], capsys)
    mtp = _json([*base, "--enable-prefix-caching", "--num-speculative-tokens", "4"], capsys)
    assert default == off and off["mamba_cache_mode"] == "none"  # vLLM's default for a hybrid
    assert on["mamba_cache_mode"] == "align" and on["blocks_per_request"] == off["blocks_per_request"] + 3
    assert (on["block_size"], mtp["block_size"]) == (1568, 1616)
    assert mtp["kv_bytes_per_token_per_gpu"] == 17 * 2 * 256  # the MTP layer joins the KV cache


def test_default_vllm_version_is_the_projects_pin(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """No --vllm-version: Pulumi.yaml's image.tag, else v0.19.1 - never "newest" (which would
    subtract CUDA graphs that v0.19.1 captures outside the KV budget)."""
    args = ["capacity", "--model", "Qwen3.5-27B", "--gpu", "A100-80GB", "--tp", "4", "--json"]

    def run(project: Path, *extra: str) -> dict[str, object]:
        assert main(["--project-dir", str(project), *args, *extra]) == 0
        data: dict[str, object] = json.loads(capsys.readouterr().out)
        return data

    pinned, newer = run(tmp_path, "--vllm-version", "v0.19.1"), run(tmp_path, "--vllm-version", "v0.21.0")
    assert pinned != newer
    assert run(tmp_path) == pinned  # no Pulumi.yaml: the release the planner reproduces
    assert run(PROJECT_DIR) == pinned  # the project pins v0.19.1
    (tmp_path / "Pulumi.yaml").write_text(
        "name: p\nruntime: python\nconfig:\n  vllm-serving:image:\n    value:\n      tag: v0.21.0\n")
    assert run(tmp_path) == newer


V100_8K = ["--model", "Qwen3.5-27B", "--gpu", "V100-32GB", "--tp", "8", "--max-model-len", "8k", "--dtype", "half"]


def test_a_length_over_max_model_len_gets_none_and_exit_1(capsys: pytest.CaptureFixture[str]) -> None:
    """The server refuses requests over its max-model-len, so the KV cache's room for them is no
    answer: `--for-context 32K` on a stack of `--max-model-len 32k` (32000) is a no, with the fix."""
    assert main(["capacity", *V100_8K, "--for-context", "8K"]) == 1
    out = capsys.readouterr().out
    concurrency = next(line for line in out.splitlines() if line.startswith("  Concurrency:"))
    assert "none: the server refuses requests over max-model-len 8,000; raise it to 8192" in concurrency
    assert main(["capacity", *V100_8K, "--for-context", "8k"]) == 0  # exactly max-model-len: served
    assert "requests of 8,000 tokens at once" in capsys.readouterr().out


def test_token_flags_read_vllms_shorthand_and_count_is_gpus(capsys: pytest.CaptureFixture[str]) -> None:
    """`32k` is 32000 and `32K` 32768 wherever a token count is asked, as in init; `--count` is
    init's name for the GPUs there are."""
    short = _json([*V100_8K[:-4], "--max-model-len", "32K", "--for-context", "4k", "--count", "8"], capsys)
    assert short["max_model_len"] == 32768 and short["for_context"]["tokens"] == 4000  # type: ignore[index]
    assert main(["capacity", *V100_8K, "--gpus", "4"]) == 2  # TP 8 on 4 GPUs
    assert "--gpus is 4" in capsys.readouterr().err


@pytest.mark.parametrize(("flag", "value"), [("--for-context", "32x"), ("--max-num-seqs", "many"),
                                             ("--gpu-memory-utilization", "most")])
def test_a_bad_number_says_what_to_write(flag: str, value: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as stop:  # argparse's own exit: the verb's usage, then the line
        main(["capacity", *V100_8K, flag, value])
    err = capsys.readouterr().err
    assert stop.value.code == 2
    assert f"argument {flag}: '{value}'" in err and ("e.g." in err or "whole number" in err)
    assert "_positive" not in err and "invalid" not in err


# Without --tp: the powers of two up to --gpus (8 by default) that divide the heads, smallest first.
# Qwen3-32B (its config.json): 64 heads, 8 KV heads, 64 layers, 32.8B parameters = 61 GiB in bf16.
def _first_line(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    code = main(["capacity", "--model", "Qwen3-32B", *args])
    return code, capsys.readouterr().out.splitlines()[0]


def test_without_tp_the_smallest_tp_that_fits_is_taken(capsys: pytest.CaptureFixture[str]) -> None:
    # L40S: 0.9 x 45 GiB = 40.5 GiB each. TP 1 cannot hold 61 GiB; TP 2 holds 30.5 GiB and leaves ~10 GiB
    # for a full 40,960-token request (64 layers x 4 KV heads x 128 x 2 x 2 bytes = 128 KiB a token: 5 GiB)
    assert _first_line(["--gpu", "L40S"], capsys) == (
        0, "Qwen3-32B on 2 x L40S (TP 2), vLLM v0.19.1; TP 2: the smallest of [1, 2, 4, 8] that fits (--tp to choose)")
    assert _json(["--model", "Qwen3-32B", "--gpu", "L40S"], capsys)["tp"] == 2
    # 6 GPUs: 8 is past them
    assert _first_line(["--gpu", "L40S", "--gpus", "6"], capsys)[1].endswith(
        "TP 2: the smallest of [1, 2, 4] that fits (--tp to choose)")


def test_without_tp_none_fitting_is_said_and_shown_at_the_largest(capsys: pytest.CaptureFixture[str]) -> None:
    # 2 x L4 (0.9 x 22.5 GiB each): 61 GiB of weights need more than both
    assert _first_line(["--gpu", "L4", "--gpus", "2"], capsys) == (
        1, "Qwen3-32B on 2 x L4 (TP 2), vLLM v0.19.1; TP 2: none of [1, 2] fits; shown at the largest (--tp to choose)")


def test_without_tp_a_size_the_rules_refuse_does_not_fit(capsys: pytest.CaptureFixture[str]) -> None:
    # V100 (CC 7.0) has no bfloat16 (vLLM platforms/cuda.py: bf16 needs CC 8.0) at any TP; in half, TP 4
    # is the first whose 15 GiB a GPU leaves room in 0.9 x 32 GiB = 28.8 GiB (TP 2's 30.5 GiB does not)
    assert _first_line(["--gpu", "V100-32GB", "--gpus", "4", "--dtype", "bfloat16"], capsys)[1].endswith(
        "TP 4: none of [1, 2, 4] fits; shown at the largest (--tp to choose)")
    assert _first_line(["--gpu", "V100-32GB", "--gpus", "4", "--dtype", "half"], capsys)[1].endswith(
        "TP 4: the smallest of [1, 2, 4] that fits (--tp to choose)")


@pytest.mark.parametrize(("heads", "gpus", "sizes"), [
    (64, None, [1, 2, 4, 8]), (64, 6, [1, 2, 4]), (64, 1, [1]), (28, None, [1, 2, 4]), (40, 16, [1, 2, 4, 8]),
    (7, 8, [1]),
])
def test_tp_candidates_divide_the_heads(heads: int, gpus: int | None, sizes: list[int]) -> None:
    model = MODELS["Qwen3-32B"].model_copy(update={"num_attention_heads": heads})
    assert tp_candidates(model, gpus) == sizes


def test_a_finding_about_a_flag_names_the_flag_beside_the_key(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["capacity", "--model", "Qwen3-32B", "--gpu", "L40S", "--tp", "0"]) == 1
    assert "vllm-serving:engine.tensorParallelSize (--tp): 0 is out of range" in capsys.readouterr().err


def test_the_label_gives_tp_and_pp_and_every_gpu(capsys: pytest.CaptureFixture[str]) -> None:
    assert _first_line(["--gpu", "L40S", "--tp", "2", "--pp", "2"], capsys) == (
        0, "Qwen3-32B on 4 x L40S (TP 2, PP 2), vLLM v0.19.1")


def test_without_tp_a_size_that_fits_only_at_the_estimate_is_passed_over(capsys: pytest.CaptureFixture[str]) -> None:
    # a size fits when one full request fits also at the release's worst measured error (capacity_tp.py):
    # on one H100 a 31,600-token request fits at the estimate, not at its worst error, so TP 2 is taken
    one = _json(["--model", "Qwen3-32B", "--gpu", "H100-80GB", "--tp", "1", "--max-model-len", "31600"], capsys)
    assert (one["fits_one_request"], one["fits_pessimistic"]) == (True, False)
    assert _first_line(["--gpu", "H100-80GB", "--gpus", "2", "--max-model-len", "31600"], capsys)[1].endswith(
        "TP 2: the smallest of [1, 2] that fits (--tp to choose)")


def test_all_of_the_memory_is_a_utilization_vllm_takes(capsys: pytest.CaptureFixture[str]) -> None:
    # vLLM v0.19.1 config/cache.py: gpu_memory_utilization Field(gt=0, le=1) - 1 is a value vLLM takes (the
    # rules then say a V100 has less than that free), not a wrong argument
    assert main(["capacity", *V100_8K, "--gpu-memory-utilization", "1"]) == 1
    out, err = capsys.readouterr()
    assert "ERROR gpu-memory-utilization-unsatisfiable" in out and "must be in (0, 1]" not in err


def test_an_engine_finding_of_ad_hoc_flags_is_shown_naming_the_flag(capsys: pytest.CaptureFixture[str]) -> None:
    # V100 is compute capability 7.0: no bfloat16 (vLLM needs 8.0)
    assert main(["capacity", *V100_8K[:-1], "bfloat16", "--json"]) == 1
    findings = json.loads(capsys.readouterr().out)["findings"]
    assert [(f["code"], f["key"]) for f in findings if f["severity"] == "error"] == [
        ("dtype-bf16-unsupported", "vllm-serving:engine.dtype (--dtype)")]


def test_for_context_says_whether_the_server_serves_that_length(capsys: pytest.CaptureFixture[str]) -> None:
    # --max-model-len 8k is 8000 tokens: 8k is served, 8K (8192) is past it
    at = _json([*V100_8K, "--for-context", "8k"], capsys)["for_context"]
    assert at["within_max_model_len"] is True  # type: ignore[index]
    assert main(["capacity", *V100_8K, "--for-context", "8K", "--json"]) == 1
    past = json.loads(capsys.readouterr().out)["for_context"]
    assert (past["tokens"], past["within_max_model_len"]) == (8192, False)


@pytest.mark.parametrize(("level", "mode"), [("0", "none"), ("1", "piecewise"), ("2", "full_and_piecewise"),
                                             ("3", "full_and_piecewise")])
def test_the_optimization_level_picks_vllms_cuda_graph_mode(level: str, mode: str,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    # vLLM v0.19.1 config/vllm.py OPTIMIZATION_LEVEL_00..03: cudagraph_mode NONE, PIECEWISE,
    # FULL_AND_PIECEWISE, FULL_AND_PIECEWISE
    base = ["--model", "Qwen3-8B", "--gpu", "A100-80GB", "--tp", "1", "--vllm-version", "v0.19.1"]
    data = _json([*base, "--optimization-level", level], capsys)
    assert data["cudagraph_mode"] == mode
    assert (data["cudagraph_estimate_gib"] == 0) == (mode == "none")


def test_for_context_reads_as_a_server_of_that_length(capsys: pytest.CaptureFixture[str]) -> None:
    # requests of 8192 tokens on a 32768-token server: the KV cache holds as many as on a server
    # sized for 8192 (the budget does not depend on the length), both figures to two places
    base = ["--model", "Qwen3-8B", "--gpu", "A100-80GB", "--tp", "1"]
    asked = _json([*base, "--max-model-len", "32768", "--for-context", "8192"], capsys)["for_context"]
    at_8k = _json([*base, "--max-model-len", "8192"], capsys)
    assert asked == {"tokens": 8192, "max_concurrency": at_8k["max_concurrency"],
                     "pessimistic_max_concurrency": at_8k["pessimistic_max_concurrency"],
                     "within_max_model_len": True}
    assert at_8k["pessimistic_max_concurrency"] != round(at_8k["pessimistic_max_concurrency"])  # type: ignore[call-overload]


def test_an_optimization_level_vllm_lacks_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    # vLLM v0.19.1 config/vllm.py OptimizationLevel: O0 to O3
    with pytest.raises(SystemExit) as stop:
        main(["capacity", "--model", "Qwen3-8B", "--gpu", "L4", "--optimization-level", "4"])
    assert stop.value.code == 2 and "argument --optimization-level: invalid choice: '4'" in capsys.readouterr().err


@pytest.mark.parametrize("value", ["-1", "two"])
def test_speculative_tokens_are_a_whole_number(value: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as stop:
        main(["capacity", "--model", "Qwen3.5-27B", "--gpu", "A100-80GB", "--num-speculative-tokens", value])
    assert stop.value.code == 2 and "argument --num-speculative-tokens" in capsys.readouterr().err


def test_a_stack_without_a_tp_is_labelled_as_one_gpu(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # vLLM's tensor_parallel_size defaults to 1 (config/parallel.py ParallelConfig)
    import shutil

    import yaml

    shutil.copy(PROJECT_DIR / "Pulumi.yaml", tmp_path)
    doc = yaml.safe_load(stack_file("v100").read_text())
    doc["config"]["vllm-serving:engine"].pop("tensorParallelSize", None)
    doc["config"]["vllm-serving:model"]["name"] = "Qwen3-8B"
    (tmp_path / "Pulumi.one.yaml").write_text(yaml.safe_dump(doc))
    main(["--project-dir", str(tmp_path), "capacity", "one"])
    assert "Qwen3-8B on 1 x V100-32GB (TP 1)" in capsys.readouterr().out
