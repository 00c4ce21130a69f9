"""What a step's exception means: vLLM's refusal in its words, or not - the Hub refusing a request
the preflight makes without the server's token (huggingface_hub raises GatedRepoError, or an HTTP
error with status 401, under vLLM's own ValueError, which pydantic wraps in a ValidationError)."""

from __future__ import annotations

import json
import sys
import types
from typing import Any

import pytest

from vllm_serving.preflight.in_image import vllm_calls
from vllm_serving.preflight.in_image.outcomes import Refused, outcome, words

OWN = "/nowhere/vllm_preflight"  # the check's code runs from elsewhere: these exceptions are vLLM's


class GatedRepoError(Exception):
    """Its name and module as huggingface_hub/errors.py has them."""


GatedRepoError.__module__ = "huggingface_hub.errors"


class HfHubHTTPError(Exception):
    def __init__(self, message: str, status: int) -> None:
        super().__init__(message)
        self.response = type("Response", (), {"status_code": status})()


HfHubHTTPError.__module__ = "huggingface_hub.errors"


class ValidationError(ValueError):
    """pydantic_core's ValidationError as vLLM's config classes raise it: the config's ValueError
    only in errors()[0]["ctx"]["error"], no __cause__."""

    title = "SpeculativeConfig"

    def __init__(self, inner: BaseException) -> None:
        super().__init__("1 validation error for SpeculativeConfig")
        self.inner = inner

    def errors(self) -> list[dict[str, Any]]:
        return [{"msg": f"Value error, {self.inner}", "ctx": {"error": self.inner}}]


def _raised(cause: BaseException) -> BaseException:
    """vLLM's transformers_utils/config.py: `raise ValueError(error_message) from e`, in a config class."""
    try:
        try:
            raise cause
        except Exception as e:
            raise ValueError("Invalid repository ID or local directory specified: 'org/draft'.") from e
    except ValueError as inner:
        return ValidationError(inner)


@pytest.mark.parametrize("cause", [GatedRepoError("401 Client Error: access to model org/draft is restricted"),
                                   HfHubHTTPError("401 Client Error: Unauthorized", 401),
                                   # a gated repository whose terms the (absent) token's user has not accepted
                                   HfHubHTTPError("403 Client Error: Forbidden", 403)])
def test_the_hub_refusing_the_token_less_preflight_is_not_vllms_refusal(cause: BaseException,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("HF_TOKEN", raising=False)
    status, detail = outcome(_raised(cause), OWN)
    assert status == "not-run"
    assert detail.startswith("the Hugging Face Hub refused the request without a token (the preflight is not given "
                             "the server's hfToken): ValueError in SpeculativeConfig: Invalid repository ID")


def test_with_a_token_the_hubs_refusal_is_vllms(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_TOKEN", "hf_x")
    assert outcome(_raised(GatedRepoError("401")), OWN)[0] == "refused"


@pytest.mark.parametrize("cause", [HfHubHTTPError("404 Client Error: Not Found", 404), OSError("no such file")])
def test_other_failures_to_read_the_config_are_vllms_refusal(cause: BaseException) -> None:
    status, detail = outcome(_raised(cause), OWN)
    assert status == "refused"
    assert detail == words(_raised(cause)) == ("ValueError in SpeculativeConfig: Invalid repository ID or local "
                                               "directory specified: 'org/draft'.")


def _refusing(monkeypatch: pytest.MonkeyPatch, *messages: str) -> dict[str, Any]:
    """The child's result document when each step is refused with these words (a faked vLLM)."""
    monkeypatch.setitem(sys.modules, "vllm", types.SimpleNamespace(__version__="0.19.1"))

    def step(text: str) -> Any:
        def refuse(_: Any) -> str:
            raise Refused(text)
        return refuse

    steps = tuple((f"step-{i}", step(text)) for i, text in enumerate(messages))
    monkeypatch.setattr(vllm_calls, "STEPS", steps)
    monkeypatch.setattr(vllm_calls, "outcome", lambda exc, _: ("not-run", str(exc)))  # so every step runs
    return vllm_calls.run([], {})


def test_a_long_refusal_reaches_the_report_whole(monkeypatch: pytest.MonkeyPatch) -> None:
    # pydantic's errors for a config class, with the choices they list, run to a few thousand characters
    long = "ValueError in ModelConfig: " + "; ".join(f"choice_{i:04d}" for i in range(250))  # 3,276 chars
    assert _refusing(monkeypatch, long)["steps"][0]["detail"] == long


def test_the_result_fits_the_pipe_it_is_read_from(monkeypatch: pytest.MonkeyPatch) -> None:
    # the parent reads the pipe after the child exited: the child's write must not block, so the whole
    # document fits a pipe's default capacity, 65,536 bytes on Linux (pipe(7)), whatever vLLM says
    document = json.dumps(_refusing(monkeypatch, *["x" * 100_000] * 5))
    assert len(document.encode()) < 65_536


@pytest.mark.parametrize(("extensible", "skips"), [(True, True), (False, False), (None, False), ("absent", False)])
def test_only_an_extensible_kv_cache_that_is_on_skips_the_start_up_test(extensible: object, skips: bool) -> None:
    # v0.34 config/cache.py: `enable_extensible_kv_cache: bool = Field(default=None)`, None until settled,
    # False where it falls back to the profiled estimate; releases before v0.34 have no such field
    cache = types.SimpleNamespace(gpu_memory_utilization=0.9, cache_dtype="auto")
    if extensible != "absent":
        cache.enable_extensible_kv_cache = extensible
    config = types.SimpleNamespace(cache_config=cache, model_config=types.SimpleNamespace(max_model_len=8192))
    assert vllm_calls.facts(config)["extensible_kv_cache"] is skips
