"""`vllm-stack init`: a new stack file that passes `check`, for the newcomer's own GPUs and model."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import yaml

from tests.paths import FIXTURES
from vllm_serving.catalog.gpus import find_gpu
from vllm_serving.catalog.models import find_model
from vllm_serving.cli import main
from vllm_serving.planner.capacity import plan_capacity
from vllm_serving.scaffold.engine_choice import CONTEXT_STEP, gpus_needed
from vllm_serving.spec import ServingSpec
from vllm_serving.stack_files.loader import load_spec

QWEN3_4B = FIXTURES / "hf" / "qwen3-4b.config.json"


def init(project: Path, *args: str) -> int:
    return main(["--project-dir", str(project), "init", *args])


def spec_of(project: Path, name: str) -> ServingSpec:
    return load_spec(project / f"Pulumi.{name}.yaml", name, project)


@pytest.mark.parametrize(("gpu", "count", "model", "target"), [
    ("V100-32GB", 8, "Qwen3.5-27B", "docker"),
    ("A100-80GB", 4, "Qwen3.6-27B-FP8", "docker"),
    ("H100-80GB", 2, "Qwen3.5-27B", "kubernetes"),
    ("A100-40GB", 6, "Qwen3.5-27B", "docker"),
])
def test_init_writes_a_stack_that_check_passes(empty_project: Path, gpu: str, count: int, model: str,
                                               target: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert init(empty_project, "mine", "--gpu", gpu, "--count", str(count), "--model", model,
                "--target", target) == 0
    out = capsys.readouterr().out
    assert "== mine ==" in out and "0 error(s)" in out
    # the same file, checked again as a user would, has no error either
    assert main(["--project-dir", str(empty_project), "check", "mine"]) == 0
    spec = spec_of(empty_project, "mine")
    assert spec.settings.target.kind == target
    assert spec.gpu.name == gpu and spec.settings.model.name == model
    assert "parallel-gpus-idle" not in capsys.readouterr().out


def test_tp_is_the_largest_power_of_two_the_heads_allow(empty_project: Path) -> None:
    # Qwen3.5-27B: 24 attention heads, 4 KV heads, 16/48 linear heads; 6 GPUs -> TP 4 on GPUs 0-3
    assert init(empty_project, "six", "--gpu", "A100-40GB", "--count", "6", "--model", "Qwen3.5-27B") == 0
    settings = spec_of(empty_project, "six").settings
    assert settings.engine.tensor_parallel_size == 4
    assert settings.hardware.device_ids == (0, 1, 2, 3)
    assert init(empty_project, "eight", "--gpu", "V100-32GB", "--count", "8", "--model", "Qwen3.5-27B") == 0
    settings = spec_of(empty_project, "eight").settings
    assert settings.engine.tensor_parallel_size == 8 and settings.hardware.device_ids is None


def test_dtype_follows_the_gpu(empty_project: Path) -> None:
    assert init(empty_project, "volta", "--gpu", "V100-32GB", "--count", "8", "--model", "Qwen3.5-27B") == 0
    assert init(empty_project, "ampere", "--gpu", "A100-80GB", "--count", "2", "--model", "Qwen3.5-27B") == 0
    assert spec_of(empty_project, "volta").settings.engine.dtype == "half"
    assert spec_of(empty_project, "ampere").settings.engine.dtype == "bfloat16"


def test_max_model_len_is_the_longest_that_fits(empty_project: Path) -> None:
    # 31 GiB of FP8 weights on one 45 GiB L40S: memory, not the model's 262144 positions, limits it
    project = empty_project
    assert init(project, "tight", "--gpu", "L40S", "--count", "1", "--model", "Qwen3.5-27B-FP8") == 0
    spec = spec_of(project, "tight")
    written = spec.settings.engine.max_model_len
    assert written is not None and written % CONTEXT_STEP == 0
    capacity = plan_capacity(spec)
    assert capacity.fits_one_request
    assert written <= capacity.max_model_len_that_fits < written + CONTEXT_STEP
    assert written < spec.model.max_position_embeddings
    assert "the KV cache's limit" in (project / "Pulumi.tight.yaml").read_text()


def test_max_model_len_stops_at_the_models_limit(empty_project: Path) -> None:
    assert init(empty_project, "roomy", "--gpu", "L40S", "--count", "2", "--model", "Qwen3.5-27B-FP8") == 0
    spec = spec_of(empty_project, "roomy")
    assert spec.settings.engine.max_model_len == spec.model.max_position_embeddings


def test_parsers_of_the_model(empty_project: Path) -> None:
    assert init(empty_project, "p", "--gpu", "A100-80GB", "--count", "2", "--model", "Qwen3.5-27B") == 0
    engine = spec_of(empty_project, "p").settings.engine
    assert (engine.reasoning_parser, engine.tool_call_parser, engine.enable_auto_tool_choice) == (
        "qwen3", "qwen3_coder", True)


def test_written_yaml_is_commented_and_loads(empty_project: Path) -> None:
    assert init(empty_project, "doc", "--gpu", "A100-80GB", "--count", "4", "--model", "Qwen3.5-27B",
                "--registry", "harbor.local:30000/vllm/vllm-openai") == 0
    path = empty_project / "Pulumi.doc.yaml"
    lines = path.read_text().splitlines()
    # every key of the engine section comes right after its comment or its group's
    engine = lines[lines.index("  vllm-serving:engine:") + 1:]
    engine = engine[:next(i for i, line in enumerate(engine) if line.startswith("  vllm-serving:"))]
    keys = [i for i, line in enumerate(engine) if not line.lstrip().startswith("#")]
    assert keys and all(engine[i - 1].lstrip().startswith(("#", "enableAutoToolChoice")) for i in keys)
    data = yaml.safe_load(path.read_text())
    assert data["config"]["vllm-serving:image"]["registry"] == "harbor.local:30000"
    spec = spec_of(empty_project, "doc")
    assert spec.settings.image.reference == "harbor.local:30000/vllm/vllm-openai:v0.19.1"
    assert spec.settings.image.username is None  # a project default registry user does not leak in


def test_model_config_names_the_file(empty_project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = empty_project / "models" / "Qwen3-4B" / "config.json"
    config.parent.mkdir(parents=True)
    shutil.copy(QWEN3_4B, config)
    assert init(empty_project, "own", "--gpu", "L4", "--count", "1", "--model-config", str(config)) == 0
    model = yaml.safe_load((empty_project / "Pulumi.own.yaml").read_text())["config"]["vllm-serving:model"]
    assert model["configFile"] == "models/Qwen3-4B/config.json"
    assert (model["hostPath"], model["servedName"]) == ("/models/Qwen3-4B", "qwen3-4b")
    assert "0 error(s)" in capsys.readouterr().out
    # a config.json outside the project is copied in: the stack names it relative to the project
    assert init(empty_project, "outside", "--gpu", "T4", "--count", "1", "--model-config", str(QWEN3_4B)) == 0
    spec = spec_of(empty_project, "outside")
    copied = "models/qwen3-4b/config.json"  # named for the file: qwen3-4b.config.json
    assert spec.settings.model.config_file == copied
    assert (empty_project / copied).read_bytes() == QWEN3_4B.read_bytes()
    assert spec.settings.engine.dtype == "half" and spec.model.num_hidden_layers == 36


def test_refuses_to_overwrite(empty_project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = empty_project / "Pulumi.taken.yaml"
    path.write_text("config: {}\n")
    assert init(empty_project, "taken", "--gpu", "L4", "--count", "1", "--model", "Qwen3.5-27B-FP8") == 2
    assert "refusing to overwrite" in capsys.readouterr().err
    assert path.read_text() == "config: {}\n"


@pytest.mark.parametrize(("option", "value", "closest"), [
    ("--gpu", "A100-80GBB", "A100-80GB"),
    ("--model", "Qwen3.5-27", "Qwen3.5-27B"),
])
def test_unknown_names_suggest_the_closest(empty_project: Path, option: str, value: str, closest: str,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    args = {"--gpu": "A100-80GB", "--model": "Qwen3.5-27B"} | {option: value}
    assert init(empty_project, "x", "--count", "2", *[w for kv in args.items() for w in kv]) == 2
    assert closest in capsys.readouterr().err
    assert not (empty_project / "Pulumi.x.yaml").exists()


def test_model_config_missing_a_field_says_which(empty_project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    facts = json.loads(QWEN3_4B.read_text())
    del facts["num_attention_heads"]
    broken = empty_project / "config.json"
    broken.write_text(json.dumps(facts))
    assert init(empty_project, "x", "--gpu", "L4", "--count", "1", "--model-config", str(broken)) == 2
    assert "num_attention_heads" in capsys.readouterr().err
    assert not (empty_project / "Pulumi.x.yaml").exists()


def test_model_that_cannot_fit_says_how_many_gpus(empty_project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert init(empty_project, "small", "--gpu", "T4", "--count", "1", "--model", "Qwen3.5-27B") == 1
    err = capsys.readouterr().err
    model, gpu = find_model("Qwen3.5-27B"), find_gpu("T4")
    assert model is not None and gpu is not None
    need = gpus_needed(model, gpu)
    assert need is not None and need > 1
    assert f"needs {need} GPUs" in err and not (empty_project / "Pulumi.small.yaml").exists()
    # and that many do serve it
    assert init(empty_project, "enough", "--gpu", "T4", "--count", str(need), "--model", "Qwen3.5-27B") == 0
