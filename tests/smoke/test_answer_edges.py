"""What the smoke checks ask for and how they take an answer at its edges: the reasoning question's
body and the line when its thinking comes back in the content, a base URL with a trailing slash, an
answer of exactly the size cap and one byte more, bytes that are not UTF-8, an empty body, an answer
without `choices`, and a server so broken that a check trips over it. Every expected line is written
by hand."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import Any

import httpx
import pytest

from tests.smoke.conftest import MAX_MODEL_LEN, StartServer
from tests.smoke.test_checks import EXPECTED, PLANNED
from vllm_serving.smoke.checks import THINKING_PROMPT, CheckResult, run_checks
from vllm_serving.smoke.kv_cache_check import cache_config_labels, kv_cache_detail
from vllm_serving.smoke.probe import MAX_BODY_BYTES, CheckFailed, Probe, origin_of

Handler = Callable[[httpx.Request], httpx.Response]


def _results(handler: Handler, base_url: str = "http://127.0.0.1:9/v1") -> dict[str, CheckResult]:
    results = run_checks(base_url, EXPECTED, api_key=None, timeout=5, transport=httpx.MockTransport(handler))
    return {r.name: r for r in results}


def _probe(handler: Handler) -> Probe:
    return Probe("http://127.0.0.1:9/v1", None, 5, time.monotonic() + 30, httpx.MockTransport(handler))


def test_the_reasoning_question_is_asked_with_thinking_on_and_a_bounded_answer() -> None:
    # Without max_tokens vLLM lets the answer run to the end of the context (vllm/entrypoints/utils.py
    # `get_max_tokens`: max_model_len minus the prompt), which a thinking model may fill for minutes.
    sent: list[dict[str, Any]] = []

    def chat(request: httpx.Request) -> httpx.Response:
        if request.url.path != "/v1/chat/completions":
            return httpx.Response(200 if request.url.path == "/health" else 404)
        sent.append(json.loads(request.content))
        return httpx.Response(200, json={"choices": [{"message": {"content": "42", "reasoning": "17 + 25"}}]})

    assert _results(chat)["reasoning"].detail == "7 chars in message.reasoning, content apart"
    [asked] = [body for body in sent if body.get("chat_template_kwargs") == {"enable_thinking": True}]
    assert asked["messages"] == [{"role": "user", "content": THINKING_PROMPT}]
    assert isinstance(asked["max_tokens"], int) and 256 <= asked["max_tokens"] < MAX_MODEL_LEN
    assert asked["model"] == "qwen3.5-27b"


def test_reasoning_left_in_the_content_names_the_key_to_change(start_server: StartServer) -> None:
    failed = {r.name: r.detail for r in run_checks(start_server(reasoning_field=None), EXPECTED, api_key=None,
                                                  timeout=5) if not r.ok}
    assert failed == {"reasoning": "the thinking came back inside content (</think> in it): check "
                                   "engine.reasoningParser names this model's parser"}


@pytest.mark.parametrize("base_url", ["http://h:8000/v1/", "http://h:8000/v1", "http://h:8000/", "http://h:8000"])
def test_health_and_metrics_are_asked_at_the_servers_root_however_the_url_ends(base_url: str) -> None:
    assert origin_of(base_url) == "http://h:8000"
    asked: list[str] = []

    def server(request: httpx.Request) -> httpx.Response:
        asked.append(request.url.raw_path.decode())
        return httpx.Response(404)

    _results(server, base_url)
    assert asked == ["/health"]  # a failed /health stops the rest


def test_an_answer_of_exactly_the_cap_is_read_and_one_byte_more_is_refused() -> None:
    whole = _probe(lambda _: httpx.Response(200, content=b"x" * MAX_BODY_BYTES)).get("/metrics")
    assert len(whole.text) == MAX_BODY_BYTES
    with pytest.raises(CheckFailed) as refused:
        _probe(lambda _: httpx.Response(200, content=b"x" * (MAX_BODY_BYTES + 1))).get("/metrics")
    assert str(refused.value) == "/metrics: the answer is larger than 4 MiB"


def test_bytes_that_are_not_utf8_are_shown_not_fatal() -> None:
    def models(request: httpx.Request) -> httpx.Response:
        if request.url.path == "/v1/models":
            return httpx.Response(500, content=b"engine \xff\xfe failed")
        return httpx.Response(200 if request.url.path == "/health" else 404)

    assert _results(models)["models"].detail == "/v1/models answered 500: engine \ufffd\ufffd failed"


def test_an_empty_body_where_json_was_due_says_so() -> None:
    def models(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, content=b"")

    assert _results(models)["models"].detail == "/v1/models answered 200 with malformed JSON: (empty body)"


@pytest.mark.parametrize(("answer", "missing"), [
    ({"object": "chat.completion"}, "choices"),
    ({"object": "chat.completion", "choices": []}, "choices[0]"),  # a server that generated nothing
    ({"choices": [{"index": 0}]}, "choices[0].message"),
])
def test_a_chat_answer_without_its_message_names_the_endpoint_and_the_part(answer: dict[str, Any],
                                                                           missing: str) -> None:
    def server(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, json=answer)

    assert _results(server)["chat"].detail == f"/v1/chat/completions: the answer has no {missing}"


def test_a_check_tripped_by_an_odd_answer_says_what_tripped_it() -> None:
    # a model card whose id is a list cannot be looked up by name: a broken proxy, not vLLM; the
    # check still ends in one row saying what went wrong, and the checks after it run
    def server(request: httpx.Request) -> httpx.Response:
        if request.url.path == "/v1/models":
            return httpx.Response(200, json={"data": [{"id": ["qwen3.5-27b"]}]})
        return httpx.Response(200)

    results = _results(server)
    assert results["models"].detail == "unexpected TypeError: unhashable type: 'list'"
    assert not results["models"].ok and results["chat"].detail != "not run: the server does not answer /health"


def test_cache_figures_without_blocks_list_the_labels_that_came() -> None:
    with pytest.raises(CheckFailed) as failed:
        kv_cache_detail('vllm:cache_config_info{engine="0",block_size="16",cache_dtype="auto"} 1.0\n', PLANNED)
    assert str(failed.value) == ("vllm:cache_config_info has no num_gpu_blocks and block_size "
                                 "(labels: block_size, cache_dtype, engine)")


def test_label_values_are_read_as_prometheus_escapes_them() -> None:
    # the text format escapes a label value's backslash and double quote (and newline) with a backslash
    line = r'vllm:cache_config_info{engine="0",path="C:\\m \"q\"",num_gpu_blocks="7"} 1.0'
    assert cache_config_labels(line + "\n") == [{"engine": "0", "path": 'C:\\m "q"', "num_gpu_blocks": "7"}]


def test_several_engines_without_their_label_still_get_their_row() -> None:
    # vLLM always labels the engine (log_metrics_info); a proxy that drops it must not crash the row
    info = 'vllm:cache_config_info{{block_size="16",num_gpu_blocks="{blocks}"}} 1.0\n'
    detail = kv_cache_detail(info.format(blocks=4096) + info.format(blocks=3584), PLANNED)
    assert detail.endswith("drift -10.4%, engine ? the least of 2")
