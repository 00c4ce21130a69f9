"""The flag table (engine/flags.py) has a row for every setting that is a vLLM flag, each naming
the flag vLLM reads that setting from: a setting without its row is accepted and planned with
(`engine.maxNumBatchedTokens` sizes the activation peak) but never reaches `vllm serve`.

The oracles are independent of the table: the settings come from the settings model, and the
flag each one must become from vLLM's own parser, as the registry generated from the wheel records
its `add_argument` calls (vllm/engine/arg_utils.py `EngineArgs.add_cli_args`: each flag's dest is
the config field it sets, e.g. `--max-num-batched-tokens` -> `max_num_batched_tokens`,
vllm/config/scheduler.py `SchedulerConfig.max_num_batched_tokens`).
"""

from __future__ import annotations

import json
from typing import Any

from pydantic.alias_generators import to_camel

from tests.paths import ROOT
from vllm_serving.engine.flags import FLAGS, MODELLED_FLAGS, SECRET_ENV
from vllm_serving.settings.engine import EngineSettings

RELEASE = "0.19.1"
"""The release the shipped stacks pin."""
NOT_FLAGS = {"extra_args", "env"}
"""EngineSettings fields that are no vLLM flag: extraArgs is appended verbatim, env is the
container's environment."""
MODEL_DESTS = {"model.containerPath": "model", "model.servedName": "served_model_name"}
"""The model section's flags, by hand from vllm/engine/arg_utils.py: `--model` is the path vLLM
loads (ModelConfig.model), `--served-model-name` the name the API answers to."""


def release_flags() -> dict[str, dict[str, Any]]:
    """vLLM's flags as the wheel defines them, read from the registry file directly."""
    path = ROOT / "vllm_serving" / "engine" / "releases" / f"v{RELEASE}.json"
    flags: dict[str, dict[str, Any]] = json.loads(path.read_text(encoding="utf-8"))["flags"]
    return flags


def expected_dests() -> dict[str, str]:
    """Config key -> the argparse dest vLLM stores it under: every engine setting's own name."""
    engine = {f"engine.{to_camel(name)}": name for name in EngineSettings.model_fields if name not in NOT_FLAGS}
    return engine | MODEL_DESTS


def test_every_setting_that_is_a_vllm_flag_has_its_row() -> None:
    rows = {flag.key: flag for flag in FLAGS}
    assert set(rows) == set(expected_dests())
    assert len(rows) == len(FLAGS), "one row per key"


def test_each_row_names_the_flag_vllm_reads_the_setting_from() -> None:
    vllm = release_flags()
    dests = expected_dests()
    for flag in FLAGS:
        assert flag.flag in vllm, f"{flag.flag} is no flag of vLLM {RELEASE}"
        assert vllm[flag.flag]["dest"] == dests[flag.key], flag


def test_each_row_writes_its_value_in_the_form_vllm_parses() -> None:
    # vLLM's action decides what may follow the flag: a value, nothing (a switch), or a --no- form
    for flag in FLAGS:
        row = release_flags()[flag.flag]
        if flag.form in ("value", "json"):
            assert row["takes_value"], flag
        else:
            assert not row["takes_value"], flag
        if flag.form == "json":
            assert row["type"] == "json", flag
        if flag.form == "negatable":
            assert row["negations"] == [f"--no-{flag.flag.removeprefix('--')}"], flag


def test_a_modelled_flag_in_extra_args_is_sent_to_its_key() -> None:
    # extraArgs must not carry a flag a typed key sets: the refusal names that key
    assert MODELLED_FLAGS["--max-num-batched-tokens"] == "engine.maxNumBatchedTokens"
    assert MODELLED_FLAGS["--no-enable-prefix-caching"] == "engine.enablePrefixCaching"
    assert MODELLED_FLAGS["--served-model-name"] == "model.servedName"
    # the server's own address flags belong to the stack's network section and secrets: vLLM's
    # --host, --port and --api-key in extraArgs would fight the container's port mapping or put
    # the key in plain text
    assert "network.bindAddress" in MODELLED_FLAGS["--host"]
    assert "network.hostPort" in MODELLED_FLAGS["--port"]
    assert "--secret apiKey" in MODELLED_FLAGS["--api-key"]


def test_a_setting_vllm_decides_when_unset_sends_false_as_the_no_form() -> None:
    # engine.enablePrefixCaching unset lets vLLM choose per model (vllm/engine/arg_utils.py
    # EngineArgs.enable_prefix_caching: bool | None = None, resolved per model in
    # _set_default_chunked_prefill_and_prefix_caching_args): false must reach vLLM as
    # --no-enable-prefix-caching, not be left out,
    # which would leave vLLM's own choice in place
    tri_state = [name for name, field in EngineSettings.model_fields.items()
                 if field.annotation == bool | None and name not in NOT_FLAGS]
    assert "enable_prefix_caching" in tri_state
    for name in tri_state:
        flag = next(f for f in FLAGS if f.key == f"engine.{to_camel(name)}")
        assert flag.form == "negatable", flag


def test_each_secret_reaches_the_container_as_the_variable_its_reader_reads() -> None:
    # vLLM v0.19.1 vllm/envs.py: "VLLM_API_KEY": lambda: os.environ.get("VLLM_API_KEY", None), the API
    # server's key; huggingface_hub utils/_auth.py _get_token_from_environment reads HF_TOKEN (then the
    # legacy HUGGING_FACE_HUB_TOKEN) for gated downloads. Under another name the server runs without
    # its key, or the weights' download is refused (401).
    assert SECRET_ENV == {"apiKey": "VLLM_API_KEY", "hfToken": "HF_TOKEN"}
