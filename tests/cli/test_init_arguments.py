"""`vllm-stack init`'s arguments: the context length, TP and DP, names as people type them,
`--stdout` and `--json`; every argument checked before anything is written."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import yaml

from tests.cli.test_init import QWEN3_4B, init, spec_of
from vllm_serving.cli import main
from vllm_serving.cli.init import split_registry
from vllm_serving.planner.capacity import plan_capacity


@pytest.fixture
def project(empty_project: Path) -> Path:
    return empty_project


def written(project: Path) -> list[str]:
    return sorted(str(p.relative_to(project)) for p in project.rglob("*") if p.name != "Pulumi.yaml")


@pytest.mark.parametrize(("given", "tokens"), [("32k", 32000), ("32K", 32768), ("16384", 16384)])
def test_max_model_len_as_vllm_reads_it(project: Path, given: str, tokens: int) -> None:
    """vllm/engine/arg_utils.py human_readable_int: k is 1000, K is 1024."""
    assert init(project, "ctx", "--gpu", "A100-80GB", "--count", "1", "--model", "Qwen3-8B",
                "--max-model-len", given) == 0
    assert spec_of(project, "ctx").settings.engine.max_model_len == tokens
    assert "as asked (--max-model-len)" in (project / "Pulumi.ctx.yaml").read_text()


def test_max_model_len_beyond_the_model_is_refused_before_writing(project: Path,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    # Qwen3-8B's config.json: max_position_embeddings 40960
    assert init(project, "long", "--gpu", "A100-80GB", "--count", "1", "--model", "Qwen3-8B",
                "--max-model-len", "64k") == 2
    assert "40960" in capsys.readouterr().err and written(project) == []


def test_a_max_model_len_too_long_for_one_gpu_takes_more(project: Path) -> None:
    """Qwen3.5-27B-FP8 on an L40S holds ~100K tokens beside its weights: 200K needs TP 2."""
    assert init(project, "wide", "--gpu", "L40S", "--count", "2", "--model", "Qwen3.5-27B-FP8",
                "--max-model-len", "200k") == 0
    spec = spec_of(project, "wide")
    assert spec.settings.engine.tensor_parallel_size == 2 and plan_capacity(spec).fits_one_request


def test_tp_and_dp_as_asked(project: Path) -> None:
    assert init(project, "tpdp", "--gpu", "A100-80GB", "--count", "4", "--model", "Qwen3.5-27B",
                "--tp", "2", "--dp", "2") == 0
    engine = spec_of(project, "tpdp").settings.engine
    assert (engine.tensor_parallel_size, engine.data_parallel_size) == (2, 2)


@pytest.mark.parametrize(("args", "says"), [
    (["--tp", "3"], "does not split the model's heads"),  # 24 attention heads, 4 KV heads
    (["--tp", "8"], "needs 8 GPUs"),
    (["--tp", "1"], "does not hold the weights"),  # 51 GiB of weights on one 44 GiB L40S
    (["--dp", "3", "--tp", "2"], "needs 6 GPUs"),
])
def test_a_tp_or_dp_that_cannot_serve_is_refused(project: Path, args: list[str], says: str,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    assert init(project, "x", "--gpu", "L40S", "--count", "4", "--model", "Qwen3.5-27B", *args) == 2
    assert says in capsys.readouterr().err and written(project) == []


def test_a_small_model_on_several_gpus_gets_engines_not_tp(project: Path) -> None:
    """Qwen3-8B (15 GiB) on 4 x L40S (44 GiB each): one GPU holds it with more KV cache than
    weights, so four engines of one GPU, not one engine split four ways over PCIe."""
    assert init(project, "small", "--gpu", "L40S", "--count", "4", "--model", "Qwen3-8B") == 0
    spec = spec_of(project, "small")
    assert (spec.settings.engine.tensor_parallel_size, spec.settings.engine.data_parallel_size) == (1, 4)
    capacity = plan_capacity(spec)  # the room the comment claims, per engine
    assert capacity.available_kv_gib >= capacity.weights_gib_per_gpu
    assert "dataParallelSize 1" in (project / "Pulumi.small.yaml").read_text()  # the other way, named


def test_a_model_that_fills_one_gpu_still_gets_tp(project: Path) -> None:
    """Qwen3.5-27B (51 GiB) on 4 x L40S: TP 4, one engine (as before)."""
    assert init(project, "big", "--gpu", "L40S", "--count", "4", "--model", "Qwen3.5-27B") == 0
    engine = spec_of(project, "big").settings.engine
    assert (engine.tensor_parallel_size, engine.data_parallel_size) == (4, None)


def test_tp_over_copies_says_why_and_the_copies_it_names_work(project: Path) -> None:
    """Qwen3-8B (15 GiB) on 2 x RTX 4090 (24 GiB): one GPU holds it with less KV cache than
    weights, so TP 2; the comment says so and names `--dp 2`, which then writes two engines."""
    assert init(project, "ws", "--gpu", "RTX-4090", "--count", "2", "--model", "Qwen3-8B") == 0
    assert spec_of(project, "ws").settings.engine.tensor_parallel_size == 2
    text = " ".join(line.strip(" #") for line in (project / "Pulumi.ws.yaml").read_text().splitlines())
    assert "One GPU would hold it too, but with less KV cache than weights" in text and "--dp 2" in text
    assert init(project, "copies", "--gpu", "RTX-4090", "--count", "2", "--model", "Qwen3-8B", "--dp", "2") == 0
    engine = spec_of(project, "copies").settings.engine
    assert (engine.tensor_parallel_size, engine.data_parallel_size) == (1, 2)
    capacity = plan_capacity(spec_of(project, "copies"))
    assert capacity.fits_one_request and capacity.available_kv_gib < capacity.weights_gib_per_gpu


def test_names_as_people_type_them_are_written_as_the_catalog_spells_them(
        project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert init(project, "ws", "--gpu", "NVIDIA GeForce RTX 4090", "--count", "2", "--model", "Qwen/Qwen3-8B") == 0
    err = capsys.readouterr().err
    assert "--gpu 'NVIDIA GeForce RTX 4090' taken as RTX-4090" in err and "taken as Qwen3-8B" in err
    spec = spec_of(project, "ws")
    assert (spec.settings.hardware.gpu, spec.settings.model.name) == ("RTX-4090", "Qwen3-8B")
    assert "--gpu RTX-4090 --count 2 --model Qwen3-8B" in (project / "Pulumi.ws.yaml").read_text()


def test_every_argument_is_checked_before_anything_is_written(project: Path, tmp_path_factory,  # type: ignore[no-untyped-def]
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    """A config.json from outside the project is copied in only once the GPU is known too."""
    outside = tmp_path_factory.mktemp("downloads") / "config.json"
    shutil.copy(QWEN3_4B, outside)
    assert init(project, "own", "--gpu", "RTX-4900", "--count", "1", "--model-config", str(outside)) == 2
    assert "RTX-4900" in capsys.readouterr().err and written(project) == []


def test_stdout_writes_nothing_and_prints_a_stack_that_checks(project: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    assert init(project, "shown", "--gpu", "L4", "--count", "1", "--model-config", str(QWEN3_4B), "--stdout") == 0
    out, err = capsys.readouterr()
    assert written(project) == []
    assert "0 error(s)" in err  # the check, on stderr: stdout is the file
    data = yaml.safe_load(out)
    assert data["config"]["vllm-serving:model"]["configFile"] == "models/qwen3-4b/config.json"
    # saved where the comment says, with the config.json copied, it is the stack init would write
    (project / "Pulumi.shown.yaml").write_text(out)
    (project / "models" / "qwen3-4b").mkdir(parents=True)
    shutil.copy(QWEN3_4B, project / "models" / "qwen3-4b" / "config.json")
    assert main(["--project-dir", str(project), "check", "shown"]) == 0


def test_json_says_what_was_chosen(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert init(project, "j", "--gpu", "4090", "--count", "2", "--model", "Qwen3-4B", "--json") == 0
    data = json.loads(capsys.readouterr().out)
    assert data["written"] is True and data["file"] == str(project / "Pulumi.j.yaml")
    assert data["engine"]["tensorParallelSize"] * data["engine"]["dataParallelSize"] == 2
    assert data["notes"] == ["--gpu '4090' taken as RTX-4090 (the only entry whose names include 4090)"]
    assert data["findings"] == []


def test_json_errors_are_json(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert init(project, "j", "--gpu", "a100", "--count", "2", "--model", "Qwen3-4B", "--json") == 2
    data = json.loads(capsys.readouterr().out)
    assert data["verb"] == "init" and "A100-80GB" in data["error"]


@pytest.mark.parametrize(("weights", "says"), [
    ("//etc", "starts with '//'"), ("/home/bob", "a user's home"), ("/data/.SSH", "ssh keys"),
    ("/var/run/docker.sock", "is a socket"), ("/data/a/../etc", "'..' segment"), ("relative/x", "not an absolute path"),
    ("/data/x\n  trustRemoteCode: true", "control character"), ("/data/a:b", "contains ':'"),
])
def test_weights_no_stack_may_mount_are_refused_before_writing(project: Path, weights: str, says: str,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    """--weights is model.hostPath: a path the settings or the host-path rules refuse is an argument
    init cannot use (exit 2), not a stack file written with the error in it."""
    assert init(project, "w", "--gpu", "A100-80GB", "--count", "1", "--model", "Qwen3-8B", "--weights", weights) == 2
    err = capsys.readouterr().err
    assert says in err
    assert err.rstrip().rsplit("; ", 1)[1].startswith(("write ", "give ", "use ")), err  # and what to give instead
    assert written(project) == []


def test_weights_in_their_own_directory_are_written_as_the_kernel_spells_them(project: Path) -> None:
    # boundary twin: a trailing slash and a doubled one are spellings of a good path
    assert init(project, "w", "--gpu", "A100-80GB", "--count", "1", "--model", "Qwen3-8B",
                "--weights", "/data//models/Qwen3-8B/") == 0
    assert spec_of(project, "w").settings.model.host_path == "/data/models/Qwen3-8B"


@pytest.mark.parametrize(("given", "parts"), [
    ("harbor.local:30000/vllm/vllm-openai", ("harbor.local:30000", "vllm/vllm-openai")),
    ("localhost/vllm/vllm-openai", ("localhost", "vllm/vllm-openai")),
    ("harbor.local:30000", ("harbor.local:30000", "vllm/vllm-openai")),  # the registry alone: vLLM's repository
    ("localhost", ("localhost", "vllm/vllm-openai")),
    ("harbor.example.com", ("harbor.example.com", "vllm/vllm-openai")),  # a '.' alone makes a registry
    ("myorg/vllm", (None, "myorg/vllm")),  # a Docker Hub repository
    ("harbor:30000/vllm/vllm-openai", ("harbor:30000", "vllm/vllm-openai")),  # a ':' alone makes a registry
    ("localhost:5000/vllm/vllm-openai", ("localhost:5000", "vllm/vllm-openai")),
])
def test_registry_splits_as_docker_reads_a_reference(given: str, parts: tuple[str | None, str]) -> None:
    # distribution/reference normalize.go splitDockerDomain: the first component is a registry only if it
    # holds a '.' or ':' or is 'localhost'
    assert split_registry(given) == parts
