"""What the smoke checks send, and how they read a server's odd answers: the request bodies off the
wire, an error body that is a bare string or too long for a row, a redirect, a tool call without its
function, the KV figures of several engines or of none. Expected text written by hand."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import Any

import httpx
import pytest
from msgspec.structs import replace

from tests.smoke.conftest import StartServer
from tests.smoke.test_checks import EXPECTED, PLANNED
from tests.stack_builders import make_spec
from vllm_serving.smoke import checks
from vllm_serving.smoke.checks import CheckResult, run_checks
from vllm_serving.smoke.expectations import expectations_from_spec
from vllm_serving.smoke.kv_cache_check import kv_cache_detail
from vllm_serving.smoke.probe import CheckFailed

Handler = Callable[[httpx.Request], httpx.Response]


def _results(handler: Handler) -> dict[str, CheckResult]:
    results = run_checks("http://127.0.0.1:9/v1", EXPECTED, api_key=None, timeout=5,
                         transport=httpx.MockTransport(handler))
    return {r.name: r for r in results}


def _healthy_but(path: str, answer: Callable[[httpx.Request], httpx.Response]) -> Handler:
    """/health answers 200, `path` as `answer` says, everything else 404."""
    def handler(request: httpx.Request) -> httpx.Response:
        if request.url.path == "/health":
            return httpx.Response(200)
        return answer(request) if request.url.path == path else httpx.Response(404)
    return handler


def test_the_chat_check_sends_one_user_message_for_one_token() -> None:
    sent: list[dict[str, Any]] = []

    def chat(request: httpx.Request) -> httpx.Response:
        sent.append(json.loads(request.content))
        return httpx.Response(200, json={"choices": [{"message": {"role": "assistant", "content": "OK"}}]})

    assert _results(_healthy_but("/v1/chat/completions", chat))["chat"].detail == "answered 'OK'"
    first = sent[0]  # the chat check's (the reasoning and tool checks follow)
    # OpenAI's user message (vllm/entrypoints/chat_utils.py reads `role` and `content`)
    [message] = first["messages"]
    assert set(message) == {"role", "content"} and message["role"] == "user"
    assert isinstance(message["content"], str) and message["content"].strip()
    assert first["max_tokens"] == 1 and first["model"] == "qwen3.5-27b"
    # the tool check's question is such a message too
    [question] = next(body for body in sent if "tools" in body)["messages"]
    assert set(question) == {"role", "content"} and question["role"] == "user" and question["content"]


def test_a_tool_call_without_its_function_names_what_is_missing() -> None:
    def chat(request: httpx.Request) -> httpx.Response:
        message = {"role": "assistant", "content": None, "tool_calls": [{"id": "call-1", "type": "function"}]}
        return httpx.Response(200, json={"choices": [{"message": message}]})

    assert _results(_healthy_but("/v1/chat/completions", chat))["tool-call"].detail == (
        "tool_calls[0]: the answer has no function")


@pytest.mark.parametrize(("body", "shown"), [
    ('{"error": "the engine died"}', "the engine died"),  # vLLM's plain-string error
    ('{"error": {"message": "CUDA out of memory"}}', "CUDA out of memory"),
    ("Internal  Server\nError", "Internal Server Error"),  # not JSON: the text, on one line
])
def test_an_error_body_shows_the_servers_words(body: str, shown: str) -> None:
    failed = _results(_healthy_but("/v1/models", lambda _: httpx.Response(500, text=body)))["models"]
    assert failed.detail == f"/v1/models answered 500: {shown}"


def test_a_long_error_body_is_cut_to_fit_the_row() -> None:
    words = " ".join(f"word{i:03d}" for i in range(40))  # 319 characters
    failed = _results(_healthy_but("/v1/models", lambda _: httpx.Response(500, text=words)))["models"]
    assert failed.detail == f"/v1/models answered 500: {words[:100]}..."


def test_a_redirect_is_reported_not_followed() -> None:
    # a proxy sending the request elsewhere (a login page, another host) is not the server answering,
    # and the API key must not follow it there
    def handler(request: httpx.Request) -> httpx.Response:
        if request.url.host == "elsewhere":
            return httpx.Response(200, json={"data": [{"id": "qwen3.5-27b", "max_model_len": 8192}]})
        if request.url.path == "/v1/models":
            return httpx.Response(302, headers={"Location": "http://elsewhere/v1/models"})
        return httpx.Response(200 if request.url.path == "/health" else 404)

    assert _results(handler)["models"].detail == "/v1/models answered 302: "


def test_the_api_key_check_applies_when_the_stack_sets_the_secret() -> None:
    assert expectations_from_spec(make_spec("v100", secrets=("apiKey",))).api_key is True
    assert expectations_from_spec(make_spec("v100")).api_key is False


INFO = 'vllm:cache_config_info{{block_size="16",engine="{engine}",num_gpu_blocks="{blocks}"}} 1.0\n'


def test_several_engines_are_judged_by_the_least_and_one_engine_says_nothing_of_it() -> None:
    # 4,096 / 512 blocks a request = 8.00; 3,584 / 512 = 7.00, 10.4% below the planned 4,000
    one = kv_cache_detail(INFO.format(engine="0", blocks=4096), PLANNED)
    assert one.endswith("drift +2.4%")
    two = kv_cache_detail(INFO.format(engine="0", blocks=4096) + INFO.format(engine="1", blocks=3584), PLANNED)
    assert two.startswith("3,584 blocks x 16 = 57,344 tokens, 7.00 requests of 8,192 at once")
    assert two.endswith("drift -10.4%, engine 1 the least of 2")
    # whichever engine's label set comes first, the line names the one that holds least
    swapped = kv_cache_detail(INFO.format(engine="1", blocks=4096) + INFO.format(engine="0", blocks=3584), PLANNED)
    assert swapped.endswith("drift -10.4%, engine 0 the least of 2")


def test_cache_figures_without_labels_say_none_came() -> None:
    with pytest.raises(CheckFailed, match=r"^vllm:cache_config_info has no num_gpu_blocks and block_size "
                                          r"\(labels: none\)$"):
        kv_cache_detail("vllm:cache_config_info{} 1.0\n", PLANNED)


def test_the_overall_deadline_leaves_each_check_its_requests(monkeypatch: pytest.MonkeyPatch) -> None:
    # without --deadline: every check that applies may send as many requests as the tool-call check
    # sends (2: the call and the tool's answer), each within --timeout: 8 checks x 2 x 5 s = 80 s
    budgets: list[float] = []

    class Recording(checks.Probe):
        def __init__(self, base_url: str, api_key: str | None, timeout: float, deadline: float,
                     transport: httpx.BaseTransport | None = None) -> None:
            budgets.append(deadline - time.monotonic())
            super().__init__(base_url, api_key, timeout, deadline, transport)

    monkeypatch.setattr(checks, "Probe", Recording)
    run_checks("http://127.0.0.1:9/v1", replace(EXPECTED, api_key=True), api_key=None, timeout=5,
               transport=httpx.MockTransport(lambda _: httpx.Response(503)))
    assert budgets and 79 < budgets[0] <= 80


def test_a_cpu_target_skips_the_kv_cache_check_saying_why(start_server: StartServer) -> None:
    # a CPU target has no plan of GPU blocks (Expectations.kv_cache None): nothing to set beside vLLM's
    results = {r.name: r for r in run_checks(start_server(), replace(EXPECTED, kv_cache=None), api_key=None,
                                             timeout=5)}
    assert results["kv-cache"].skipped and results["kv-cache"].ok
    assert "VLLM_CPU_KVCACHE_SPACE" in results["kv-cache"].detail


def test_a_skipped_check_names_the_keys_that_would_enable_it(start_server: StartServer) -> None:
    # auto tool choice needs both settings (vLLM refuses tool_choice=auto without them); an api-key check
    # needs the apiKey secret
    results = {r.name: r for r in run_checks(start_server(auto_tools=False), replace(EXPECTED, tool_calling=False),
                                             api_key=None, timeout=5)}
    assert results["tool-call"].skipped and results["api-key"].skipped
    assert "engine.enableAutoToolChoice" in results["tool-call"].detail
    assert "engine.toolCallParser" in results["tool-call"].detail
    assert "apiKey" in results["api-key"].detail


def test_a_proxy_in_the_environment_is_not_used(start_server: StartServer, monkeypatch: pytest.MonkeyPatch) -> None:
    # a CI runner's HTTP(S)_PROXY would send requests for an internal host to the proxy (here: nothing
    # listens there); the smoke test talks to the server directly
    url = start_server()
    for name in ("HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy"):
        monkeypatch.setenv(name, "http://127.0.0.1:9")
    monkeypatch.delenv("NO_PROXY", raising=False)
    monkeypatch.delenv("no_proxy", raising=False)
    results = run_checks(url, EXPECTED, api_key=None, timeout=5)
    assert [r.name for r in results if not r.ok] == []


def test_exactly_min_concurrency_requests_is_enough() -> None:
    # 4,096 blocks / 512 a request = 8.00 requests at once: capacity.minConcurrency 8 is met
    detail = kv_cache_detail(INFO.format(engine="0", blocks=4096), replace(PLANNED, min_concurrency=8))
    assert detail.startswith("4,096 blocks x 16 = 65,536 tokens, 8.00 requests of 8,192 at once")
