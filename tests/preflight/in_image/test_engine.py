"""The `engine` check: the image's own vLLM (here a stand-in for v0.19.1 with its module layout,
flags and messages: tests/preflight/fake_vllm) judges the server's exact argv; its words, mapped to
the stack's keys, become the failure."""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.preflight.fake_site import fake_site
from tests.preflight.program import run_program
from tests.stack_builders import make_spec
from vllm_serving.preflight.command import docker_weights_source, flag_keys, preflight_command
from vllm_serving.preflight.in_image import engine, vllm_calls
from vllm_serving.preflight.in_image.main import parse, run
from vllm_serving.preflight.in_image.report import CheckFailed
from vllm_serving.preflight.in_image.vllm_calls import CANDIDATES

KEYS = json.dumps(flag_keys(make_spec("v100")))
RECORDED_V0_19_1 = preflight_command(make_spec("v100"), "docker", "SOURCE")


def _recorded_entry_points() -> str:
    assert RECORDED_V0_19_1 is not None
    args = list(RECORDED_V0_19_1.args)
    return args[args.index("--vllm-entry-points") + 1]


def _engine(site: Path | None, argv: list[str], *, recorded: bool = True,
            env: dict[str, str] | None = None) -> tuple[int, list[str]]:
    options = ["--flag-keys", KEYS, *(["--vllm-entry-points", _recorded_entry_points()] if recorded else [])]
    done = run_program([*options, "engine", "--", *argv], site, env)
    return done.returncode, done.stdout.splitlines()


def _forget_vllm() -> None:
    for name in [n for n in sys.modules if n == "vllm" or n.startswith("vllm.")]:
        del sys.modules[name]


@pytest.fixture
def vllm_here(site: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """vLLM's steps in this process (the child's `vllm_calls.run`), for the many cases of its words;
    the tests above and below run the program as the container does, child process and all."""
    def in_process(args: argparse.Namespace, seconds: float = 0) -> dict[str, Any]:
        return vllm_calls.run(args.serve_argv, json.loads(args.vllm_entry_points or "{}"))

    _forget_vllm()
    monkeypatch.syspath_prepend(str(site))
    monkeypatch.setattr(engine, "ask_vllm", in_process)
    monkeypatch.delenv("VLLM_WORKER_MULTIPROC_METHOD", raising=False)  # cli_env_setup sets it: undone after
    yield
    _forget_vllm()


def test_the_servers_argv_reaches_vllm_byte_for_byte(site: Path, model: Path, tmp_path: Path) -> None:
    spec = make_spec("v100", model={"containerPath": str(model)}, engine={"env": {"VLLM_LOGGING_LEVEL": "INFO"}})
    command = preflight_command(spec, "docker", docker_weights_source(spec))
    assert command is not None
    command = command.for_server(spec.args, spec.env)
    record = tmp_path / "seen.json"
    args = [a for a in command.args if a not in ("runtime", "gpus", "arch", "memory", "curl")]
    done = run_program(args, site, {**dict(command.env), "FAKE_VLLM_ARGV_FILE": str(record)})
    assert done.returncode == 0, done.stdout
    seen = json.loads(record.read_text())
    assert seen["argv"] == list(spec.args)  # what vLLM's parser got is what the server gets
    assert seen["env"]["VLLM_LOGGING_LEVEL"] == "INFO" and ("VLLM_LOGGING_LEVEL", "INFO") in spec.env
    line = next(line for line in done.stdout.splitlines() if line.startswith("ok    engine"))
    assert "vLLM v0.19.1 accepts the argv (parse, validate, api-server, config, attention)" in line
    assert "max_model_len 8192, dtype float16" in line and "attention TRITON_ATTN" in line


REFUSALS = [
    # (extra argv, vLLM's words, the step, the keys the fix names)
    (["--kv-cache-dtype", "fp9"], "argparse: argument --kv-cache-dtype: invalid choice: 'fp9'",
     "parsing the argv as `vllm serve`", ["vllm-serving:engine.kvCacheDtype"]),
    (["--max-model-len", "300000"], "ValueError in ModelConfig: User-specified max_model_len (300000) is "
     "greater than the derived max_model_len (max_position_embeddings=262144", "creating the engine config",
     ["vllm-serving:engine.maxModelLen"]),
    (["--enable-auto-tool-choice"], "TypeError: Error: --enable-auto-tool-choice requires --tool-call-parser",
     "validating the serve arguments",
     ["vllm-serving:engine.enableAutoToolChoice", "vllm-serving:engine.toolCallParser"]),
    (["--enable-auto-tool-choice", "--tool-call-parser", "qwen4_coder"],
     "KeyError: invalid tool call parser: qwen4_coder (chose from {", "validating the API server arguments",
     ["vllm-serving:engine.toolCallParser"]),
    (["--attention-backend", "FLASH_ATTN", "--kv-cache-dtype", "fp8"],
     "ValueError: Selected backend AttentionBackendEnum.FLASH_ATTN is not valid for this configuration. "
     "Reason: ['kv_cache_dtype not supported']", "choosing the attention backend",
     ["vllm-serving:engine.kvCacheDtype", "vllm-serving:engine.attentionBackend"]),
    (["--attention-backend", "FLASH_ATTENTION"], "ValueError in AttentionConfig: Unknown attention backend: "
     "'FLASH_ATTENTION'. Valid options are: ", "creating the engine config", ["vllm-serving:engine.attentionBackend"]),
]


@pytest.mark.usefixtures("vllm_here")
@pytest.mark.parametrize(("extra", "words", "step", "keys"), REFUSALS)
def test_vllms_refusal_is_the_failure_with_the_stack_key(model: Path, extra: list[str], words: str,
                                                         step: str, keys: list[str]) -> None:
    argv = ["--model", str(model), "--max-model-len", "8192", *extra]
    ok, lines = run(parse(["--flag-keys", KEYS, "--vllm-entry-points", _recorded_entry_points(), "engine", "--",
                           *argv]))
    assert not ok, lines
    fail, fix, verdict = lines
    assert fail.startswith(f"FAIL  engine  the rules passed this; vLLM v0.19.1 says ({step}): {words}")
    assert fix.strip() == f"fix: change {', '.join(keys)} as vLLM v0.19.1's words above ask, or pin " \
                          "vllm-serving:image.tag to a release that accepts it; `vllm-stack check` passed this " \
                          "stack, so report it: the rules should refuse it at preview"
    assert verdict == "preflight: FAILED (engine)"


def test_the_servers_environment_is_vllms(site: Path, model: Path) -> None:
    # vLLM reads VLLM_ALLOW_LONG_MAX_MODEL_LEN from its environment: the check has the server's
    argv = ["--model", str(model), "--max-model-len", "300000"]
    assert _engine(site, argv)[0] == 1
    code, lines = _engine(site, argv, env={"VLLM_ALLOW_LONG_MAX_MODEL_LEN": "1"})
    assert code == 0 and "max_model_len 300000" in lines[0]


def test_a_tag_without_a_registry_finds_the_entry_points_itself(site: Path, model: Path) -> None:
    code, lines = _engine(site, ["--model", str(model), "--kv-cache-dtype", "fp9"], recorded=False)
    assert code == 1 and "invalid choice: 'fp9'" in lines[0]
    code, lines = _engine(site, ["--model", str(model)], recorded=False)
    assert code == 0 and "(parse, validate, api-server, config, attention)" in lines[0]


def test_a_step_this_release_lacks_is_named_not_guessed(tmp_path: Path, model: Path) -> None:
    site = fake_site(tmp_path, without=("v1/attention/selector.py",))
    code, lines = _engine(site, ["--model", str(model)])
    assert code == 0, lines
    assert lines[0].startswith("ok    engine  vLLM v0.19.1 accepts the argv (parse, validate, api-server, config)")
    assert lines[0].endswith("; not run: attention (no attention selector in this release (looked for "
                             "vllm.v1.attention.selector:get_attn_backend, vllm.attention.selector:get_attn_backend))")


def test_a_release_without_the_serve_parser_is_reported_not_run(tmp_path: Path, model: Path) -> None:
    site = fake_site(tmp_path, without=("entrypoints/cli/serve.py",))
    code, lines = _engine(site, ["--model", str(model)])
    assert code == 0, lines
    assert lines[0].startswith("skip  engine  not run: vLLM v0.19.1: no step could run: parse (no serve subcommand")
    assert lines[-1] == "preflight: passed (1 checks, not run: engine)"


def test_an_image_without_vllm_fails(model: Path) -> None:
    code, lines = _engine(None, ["--model", str(model)])
    assert code == 1
    assert lines[0] == ("FAIL  engine  vLLM cannot be imported in this image: "
                        "ModuleNotFoundError: No module named 'vllm'")
    assert lines[1].strip() == "fix: use a vLLM image (vllm-serving:image.repository, image.tag)"


def test_a_vllm_that_crashes_is_a_failure_with_its_last_words(tmp_path: Path, model: Path) -> None:
    (tmp_path / "vllm").mkdir()
    (tmp_path / "vllm" / "__init__.py").write_text("import os\nfor i in range(12): print(f'loading {i}')\n"
                                                   "print('Fatal Python error: Segmentation fault')\n"
                                                   "os._exit(139)\n")
    code, lines = _engine(tmp_path, ["--model", str(model)])
    assert code == 1
    assert lines[0] == "FAIL  engine  vLLM's own checks ended without a result (exit code 139)"
    # its last 8 lines, the crash last
    assert [line.strip() for line in lines[1:9]] == [*(f"| loading {i}" for i in range(5, 12)),
                                                     "| Fatal Python error: Segmentation fault"]
    assert lines[9].strip().startswith("fix: ")


def test_a_hung_vllm_is_stopped_at_the_budget_with_what_it_started(tmp_path: Path, model: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    # vLLM starts subprocesses (its model inspection) that share the output pipe: they go too
    (tmp_path / "vllm").mkdir()
    (tmp_path / "vllm" / "__init__.py").write_text(
        "import subprocess, sys, time\n"
        "subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'])\n"
        "time.sleep(60)\n")
    monkeypatch.setenv("PYTHONPATH", str(tmp_path))
    args = parse(["engine", "--", "--model", str(model)])
    started = time.monotonic()
    with pytest.raises(CheckFailed) as failed:
        engine.ask_vllm(args, seconds=1)
    assert str(failed.value) == "vLLM's own checks did not finish within 1 s"
    assert time.monotonic() - started < 30  # not the 60 s the subprocess would hold the pipe


def test_the_budget_fits_the_preflights() -> None:
    from vllm_serving.preflight.command import TIMEOUT_SECONDS

    assert engine.ENGINE_SECONDS + 120 <= TIMEOUT_SECONDS  # the GPU checks and the memory check after it


def test_every_recorded_entry_point_is_also_a_candidate() -> None:
    """A tag with no registry is checked with the candidates: they cover every recorded release."""
    recorded = json.loads(_recorded_entry_points())
    for name, where in recorded.items():
        assert where in CANDIDATES[name], name


def test_no_argv_is_a_failure_not_a_pass() -> None:
    with pytest.raises(CheckFailed, match="no server argv was given"):
        engine.check_engine(argparse.Namespace(serve_argv=None))


@pytest.mark.usefixtures("vllm_here")
def test_an_attention_refusal_shows_what_the_check_asked_for(model: Path) -> None:
    # the check's reading of the model's layers sits beside vLLM's words, so a wrong reading shows:
    # Qwen3.5-27B's head_dim 256 (tests/preflight/program.py CONFIG), the torch dtype of --dtype float16,
    # the KV cache dtype asked for, no MLA
    argv = ["--model", str(model), "--max-model-len", "8192", "--dtype", "float16",
            "--attention-backend", "FLASH_ATTN", "--kv-cache-dtype", "fp8"]
    ok, lines = run(parse(["--vllm-entry-points", _recorded_entry_points(), "engine", "--", *argv]))
    assert not ok
    assert lines[0].endswith("(asked for the model's attention layers: head_size=256, dtype=torch.float16, "
                             "kv_cache_dtype=fp8, use_mla=False)")
