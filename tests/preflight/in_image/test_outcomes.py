"""What a step's exception means: vLLM's refusal in its words, or not - the Hub refusing a request
the preflight makes without the server's token (huggingface_hub raises GatedRepoError, or an HTTP
error with status 401, under vLLM's own ValueError, which pydantic wraps in a ValidationError)."""

from __future__ import annotations

from typing import Any

import pytest

from vllm_serving.preflight.in_image.outcomes import outcome, words

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
