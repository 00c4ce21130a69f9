"""The smoke checks against a stand-in server: every misbehaviour fails its check with one clear line."""

from __future__ import annotations

import socket
import time

import httpx
import pytest
from msgspec.structs import replace

from tests.smoke.conftest import KEY, MAX_MODEL_LEN, SERVED, StartServer
from tests.stack_builders import make_spec
from vllm_serving.smoke import checks
from vllm_serving.smoke.checks import CHECKS, NOT_RUN, CheckResult, run_checks
from vllm_serving.smoke.expectations import Expectations, PlannedKv, expectations_from_spec

# the plan of a stack like the stand-in's: 4,000 blocks of 16 tokens, 512 blocks a full request
PLANNED = PlannedKv(num_gpu_blocks=4000, block_size=16, blocks_per_request=MAX_MODEL_LEN // 16,
                    max_model_len=MAX_MODEL_LEN, max_concurrency=4000 / 512, pessimistic_max_concurrency=7.6,
                    min_concurrency=None)
EXPECTED = Expectations(served_name=SERVED, max_model_len=MAX_MODEL_LEN, reasoning=True, tool_calling=True,
                        api_key=False, kv_cache=PLANNED)
ORDER = ["health", "models", "chat", "reasoning", "tool-call", "api-key", "metrics", "kv-cache"]


def _by_name(results: list[CheckResult]) -> dict[str, CheckResult]:
    return {r.name: r for r in results}


def _failed(results: list[CheckResult]) -> dict[str, str]:
    return {r.name: r.detail for r in results if not r.ok}


def test_a_server_configured_like_the_stack_passes_every_check_in_order(start_server: StartServer) -> None:
    url = start_server(api_key=KEY)
    results = run_checks(url, replace(EXPECTED, api_key=True), api_key=KEY, timeout=5)
    assert [r.name for r in results] == ORDER
    assert _failed(results) == {}
    assert not any(r.skipped for r in results)


def test_checks_that_do_not_apply_are_skipped_with_the_key_that_would_enable_them(
        start_server: StartServer) -> None:
    url = start_server(reasoning_parser=None, auto_tools=False)
    results = _by_name(run_checks(url, replace(EXPECTED, reasoning=False, tool_calling=False),
                                  api_key=None, timeout=5))
    assert {n for n, r in results.items() if r.skipped} == {"reasoning", "tool-call", "api-key"}
    assert "engine.reasoningParser" in results["reasoning"].detail
    assert all(r.ok for r in results.values())


def test_a_wrong_served_name_fails_models_and_chat(start_server: StartServer) -> None:
    url = start_server(served_names=["qwen35"])
    failed = _failed(run_checks(url, EXPECTED, api_key=None, timeout=5))
    assert "serves ['qwen35'], not 'qwen3.5-27b' (model.servedName)" in failed["models"]
    assert "404" in failed["chat"] and "does not exist" in failed["chat"]


def test_a_different_max_model_len_fails_models_naming_the_key(start_server: StartServer) -> None:
    url = start_server(max_model_len=4096)
    failed = _failed(run_checks(url, EXPECTED, api_key=None, timeout=5))
    assert failed == {"models": "max_model_len is 4096, the stack sets 8192 (engine.maxModelLen)"}


def test_api_key_refused_without_it_and_accepted_with_it(start_server: StartServer) -> None:
    url = start_server(api_key=KEY)
    results = _by_name(run_checks(url, replace(EXPECTED, api_key=True), api_key=KEY, timeout=5))
    assert results["api-key"].ok and results["api-key"].detail == "401 without the key, 200 with it"


def test_an_open_server_fails_the_api_key_check(start_server: StartServer) -> None:
    url = start_server(api_key=None)
    failed = _failed(run_checks(url, replace(EXPECTED, api_key=True), api_key=KEY, timeout=5))
    assert list(failed) == ["api-key"]
    assert "answered 200 without a key, not 401" in failed["api-key"]


def test_without_the_key_in_the_environment_the_v1_checks_say_which_variable_to_set(
        start_server: StartServer) -> None:
    url = start_server(api_key=KEY)
    failed = _failed(run_checks(url, replace(EXPECTED, api_key=True), api_key=None, timeout=5))
    assert set(failed) == {"models", "chat", "reasoning", "tool-call", "api-key"}
    assert all("VLLM_SERVING_SECRET_APIKEY" in detail for detail in failed.values())
    # no key was sent: the server wants one, nothing was refused
    assert failed["models"] == ("/v1/models answered 401 Unauthorized: the server wants an API key: "
                                "set VLLM_SERVING_SECRET_APIKEY")


def test_a_wrong_key_is_reported_as_refused_and_never_shown(start_server: StartServer) -> None:
    url = start_server(api_key=KEY)
    wrong = "sk-wrong-key-9876543210"
    results = run_checks(url, replace(EXPECTED, api_key=True), api_key=wrong, timeout=5)
    failed = _failed(results)
    assert "the key in VLLM_SERVING_SECRET_APIKEY was refused" in failed["models"]
    assert all(wrong not in r.detail for r in results)


def test_a_key_echoed_back_by_the_server_is_masked() -> None:
    def echo(request: httpx.Request) -> httpx.Response:
        if request.url.path == "/health":
            return httpx.Response(200)
        return httpx.Response(500, text=f"bad header {request.headers.get('Authorization')}")

    results = run_checks("http://127.0.0.1:9/v1", EXPECTED, api_key=KEY, timeout=5,
                         transport=httpx.MockTransport(echo))
    assert _failed(results)["models"] == "/v1/models answered 500: bad header Bearer ********"
    assert all(KEY not in r.detail for r in results)


@pytest.mark.parametrize("check, path", [("health", "/health"), ("models", "/v1/models"),
                                         ("chat", "/v1/chat/completions")])
def test_a_hanging_server_fails_the_check_within_the_timeout(
        start_server: StartServer, check: str, path: str) -> None:
    url = start_server(faults={path: "hang"})
    started = time.monotonic()
    results = _by_name(run_checks(url, EXPECTED, api_key=None, timeout=0.5))
    # bounded by the timeout, not by the stand-in's 600 s hang (margins for a loaded CI machine)
    assert time.monotonic() - started < 60
    assert not results[check].ok
    assert results[check].detail.endswith("no answer within 0.5s (timeout)")
    assert results[check].seconds < 0.5 + 5
    if check == "health":  # nothing else can answer: the rest is not run
        assert all(r.detail == NOT_RUN for n, r in results.items() if n not in ("health", "api-key"))
    else:
        assert results["metrics"].ok  # the other checks still ran


def test_health_has_its_own_short_timeout(start_server: StartServer, monkeypatch: pytest.MonkeyPatch) -> None:
    """A server that takes the connection and never answers /health is found out in seconds,
    not after --timeout (60 s by default), and nothing else is sent to it."""
    monkeypatch.setattr(checks, "HEALTH_TIMEOUT_SECONDS", 0.3)
    url = start_server(faults={"/health": "hang"})
    started = time.monotonic()
    results = run_checks(url, EXPECTED, api_key=None, timeout=60)
    assert time.monotonic() - started < 10
    assert _failed(results) == {"health": "GET /health: no answer within 0.3s (timeout)"}
    assert [r.name for r in results if r.detail == NOT_RUN] == ["models", "chat", "reasoning", "tool-call",
                                                               "metrics", "kv-cache"]


def test_the_overall_deadline_stops_sending(start_server: StartServer) -> None:
    url = start_server(faults={"/v1/models": "hang"})
    started = time.monotonic()
    # 3 s: /health must answer inside the deadline even on a loaded machine (at 0.5 s it did not
    # always, and then every other check is skipped as not run)
    failed = _failed(run_checks(url, EXPECTED, api_key=None, timeout=30, deadline_seconds=3))
    assert time.monotonic() - started < 20  # well under one 30 s request timeout
    assert "timeout" in failed["models"]
    assert set(failed) == set(ORDER) - {"api-key", "health"}
    assert failed["metrics"] == "/metrics: not sent, the overall deadline had passed"


def test_each_result_is_handed_over_as_its_check_finishes(start_server: StartServer) -> None:
    url = start_server(faults={"/v1/chat/completions": "hang"})
    seen: list[tuple[str, float]] = []
    started = time.monotonic()
    run_checks(url, EXPECTED, api_key=None, timeout=0.5,
               on_result=lambda r: seen.append((r.name, time.monotonic() - started)))
    assert [name for name, _ in seen] == ORDER
    when = dict(seen)
    assert when["models"] < when["chat"] - 0.4  # models was out before chat's 0.5 s wait ended


def test_malformed_json_fails_with_what_came_back(start_server: StartServer) -> None:
    url = start_server(faults={"/v1/models": "malformed-json"})
    failed = _failed(run_checks(url, EXPECTED, api_key=None, timeout=5))
    assert failed == {"models": '/v1/models answered 200 with malformed JSON: {"object": "list", "data": ['}


def test_a_closed_connection_fails_the_check(start_server: StartServer) -> None:
    url = start_server(faults={"/metrics": "close", "/v1/chat/completions": "close"})
    failed = _failed(run_checks(url, EXPECTED, api_key=None, timeout=5))
    assert set(failed) == {"chat", "reasoning", "tool-call", "metrics", "kv-cache"}
    assert failed["metrics"] == "/metrics: the server closed the connection without a complete answer"


def test_nothing_listening_fails_every_check_quickly() -> None:
    with socket.socket() as s:  # a port nobody listens on: bind, note it, close
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    started = time.monotonic()
    results = run_checks(f"http://127.0.0.1:{port}/v1", EXPECTED, api_key=None, timeout=30)
    assert time.monotonic() - started < 15  # refused at once: no check waits for its 30 s timeout
    assert _failed(results) == {"health": f"cannot connect to http://127.0.0.1:{port}: [Errno 111] Connection refused"}
    assert not any(r.ok and not r.skipped for r in results)


@pytest.mark.parametrize("field", ["reasoning", "reasoning_content"])
def test_reasoning_is_found_in_either_field(start_server: StartServer, field: str) -> None:
    url = start_server(reasoning_field=field)
    result = _by_name(run_checks(url, EXPECTED, api_key=None, timeout=5))["reasoning"]
    assert result.ok and f"in message.{field}, content apart" in result.detail


def test_no_reasoning_at_all_fails(start_server: StartServer) -> None:
    url = start_server(reasoning_parser=None)
    failed = _failed(run_checks(url, EXPECTED, api_key=None, timeout=5))
    assert list(failed) == ["reasoning"]
    assert failed["reasoning"].startswith("no reasoning in message.reasoning or message.reasoning_content")


@pytest.mark.parametrize("arguments", ['{"city": "Paris"', "city=Paris", '["Paris"]'])
def test_tool_call_arguments_that_are_not_a_json_object_fail(start_server: StartServer, arguments: str) -> None:
    url = start_server(tool_arguments=arguments)
    failed = _failed(run_checks(url, EXPECTED, api_key=None, timeout=5))
    assert failed == {"tool-call": f"tool call arguments are not a JSON object: {arguments!r} "
                                   "(check engine.toolCallParser)"}


def test_a_server_without_auto_tool_choice_fails_the_tool_call_check(start_server: StartServer) -> None:
    url = start_server(auto_tools=False)
    failed = _failed(run_checks(url, EXPECTED, api_key=None, timeout=5))
    assert list(failed) == ["tool-call"]
    assert "--enable-auto-tool-choice" in failed["tool-call"]


def test_metrics_missing_a_name_fail() -> None:
    def old_metrics(request: httpx.Request) -> httpx.Response:
        if request.url.path == "/metrics":
            return httpx.Response(200, text="vllm:num_requests_running 0\nvllm:gpu_cache_usage_perc 0\n")
        return httpx.Response(200 if request.url.path == "/health" else 404)

    failed = _failed(run_checks("http://127.0.0.1:9/v1", EXPECTED, api_key=None, timeout=5,
                                transport=httpx.MockTransport(old_metrics)))
    assert failed["metrics"] == "/metrics lacks vllm:kv_cache_usage_perc"


def test_an_unexpected_answer_shape_fails_instead_of_raising() -> None:
    def odd(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, json={"data": "not a list", "choices": [{"message": "hi"}]})

    results = _by_name(run_checks("http://127.0.0.1:9/v1", EXPECTED, api_key=None, timeout=5,
                                  transport=httpx.MockTransport(odd)))
    assert results["models"].detail == "/v1/models: data is not a list"
    assert results["chat"].detail == "/v1/chat/completions: choices[0].message is not an object"


def test_every_check_says_what_it_asserts() -> None:
    assert [c.name for c in CHECKS] == ORDER
    assert all(c.asserts for c in CHECKS)


def test_the_kv_cache_vllm_sized_is_set_beside_the_plan_with_the_drift(start_server: StartServer) -> None:
    """The stand-in reports 4,096 blocks of 16 (as v0.19.1's cache_config_info labels say them):
    4,096 / 512 blocks a request = 8.00 requests of 8,192, 2.4% above the planned 4,000."""
    detail = _by_name(run_checks(start_server(num_gpu_blocks=4096), EXPECTED, api_key=None, timeout=5))["kv-cache"]
    assert detail.ok
    assert detail.detail.startswith("4,096 blocks x 16 = 65,536 tokens, 8.00 requests of 8,192 at once")
    assert "plan 4,000 blocks, 7.81 (at worst 7.60): drift +2.4%" in detail.detail


def test_fewer_requests_than_min_concurrency_fail(start_server: StartServer) -> None:
    expected = replace(EXPECTED, kv_cache=replace(PLANNED, min_concurrency=10))
    failed = _failed(run_checks(start_server(num_gpu_blocks=4096), expected, api_key=None, timeout=5))
    assert list(failed) == ["kv-cache"] and failed["kv-cache"].endswith("fewer than capacity.minConcurrency 10")


def test_a_server_without_cache_config_info_fails_the_kv_check() -> None:
    def bare(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, text="vllm:num_requests_running 0\nvllm:kv_cache_usage_perc 0\n")

    failed = _failed(run_checks("http://127.0.0.1:9/v1", EXPECTED, api_key=None, timeout=5,
                                transport=httpx.MockTransport(bare)))
    assert failed["kv-cache"] == ("/metrics lacks vllm:cache_config_info: the server does not say how large its "
                                  "KV cache is")


def test_from_v0_26_vllms_own_concurrency_label_is_taken() -> None:
    """v0.26 adds kv_cache_size_tokens and kv_cache_max_concurrency to CacheConfig (its labels)."""
    line = ('vllm:cache_config_info{block_size="400",engine="0",kv_cache_max_concurrency="3.25",'
            'kv_cache_size_tokens="26624",num_gpu_blocks="1300"} 1.0\n')

    def v026(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, text="vllm:num_requests_running 0\nvllm:kv_cache_usage_perc 0\n" + line)

    results = _by_name(run_checks("http://127.0.0.1:9/v1", EXPECTED, api_key=None, timeout=5,
                                  transport=httpx.MockTransport(v026)))
    assert results["kv-cache"].detail.startswith("1,300 blocks x 400 (plan: block 16) = 26,624 tokens, 3.25 requests")


@pytest.mark.parametrize(("engine", "tool_calling"), [
    ({"toolCallParser": "qwen3_coder", "enableAutoToolChoice": True}, True),
    # vLLM answers tool_choice "auto" only with --enable-auto-tool-choice and a parser
    # (entrypoints/openai/chat_completion/serving.py, v0.19.1: `not self.enable_auto_tools or not
    # self.tool_parser`): a parser alone is not checked as tool calling
    ({"toolCallParser": "qwen3_coder", "enableAutoToolChoice": False}, False),
    ({"enableAutoToolChoice": False}, False),
])
def test_tool_calling_is_checked_only_where_vllm_calls_tools_on_its_own(engine: dict[str, object],
                                                                        tool_calling: bool) -> None:
    assert expectations_from_spec(make_spec("v100", engine=engine)).tool_calling is tool_calling
