"""The tool-call check's round trip, read off the wire: what goes back to the server after the model
called the tool must be a conversation vLLM accepts and renders, and a model that did not call the
tool is shown with what it said instead.

The message shapes are OpenAI's chat API as vLLM v0.19.1 reads it (vllm/entrypoints/chat_utils.py
`_parse_chat_message_content`: an assistant message's `tool_calls` are kept as sent, a tool
message's `tool_call_id` ties its answer to the call; `_postprocess_messages` then `json.loads` each
call's `function.arguments`, so they go back as the JSON text the model produced). Expected values
are written by hand from the server's scripted answers below."""

from __future__ import annotations

import json
from typing import Any

import httpx

from tests.smoke.conftest import StartServer
from tests.smoke.test_checks import EXPECTED
from vllm_serving.smoke.checks import CheckResult, run_checks

ARGUMENTS = '{"city": "Paris", "unit": "celsius"}'  # as a model writes them: spaces, an extra key
CALL = {"id": "chatcmpl-tool-7f3a", "type": "function", "function": {"name": "get_weather", "arguments": ARGUMENTS}}
ROUND_TRIP_TOKENS = 16
"""The answer after the tool's result is not read, only that the server takes it: a few tokens keep the
check within seconds on a slow GPU (a 27B model on V100s decodes ~20-40 tokens/s)."""


def _answer(message: dict[str, Any]) -> httpx.Response:
    return httpx.Response(200, json={"choices": [{"index": 0, "message": message, "finish_reason": "stop"}]})


def _tool_check(first_message: dict[str, Any]) -> tuple[CheckResult, list[dict[str, Any]]]:
    """The tool-call check against a server whose first chat answer is `first_message` (every later
    one a plain reply); its result and the chat bodies it sent, in order."""
    bodies: list[dict[str, Any]] = []

    def server(request: httpx.Request) -> httpx.Response:
        if request.url.path != "/v1/chat/completions":
            return httpx.Response(200, text="")
        body = json.loads(request.content)
        if "tools" not in body:  # the chat and reasoning checks' requests
            return _answer({"role": "assistant", "content": "OK", "reasoning": "thinking"})
        bodies.append(body)
        return _answer(first_message if len(bodies) == 1 else {"role": "assistant", "content": "21 C in Paris."})

    results = run_checks("http://127.0.0.1:9/v1", EXPECTED, api_key=None, timeout=5,
                         transport=httpx.MockTransport(server))
    return next(r for r in results if r.name == "tool-call"), bodies


def test_the_tools_answer_goes_back_tied_to_the_call_the_model_made() -> None:
    result, bodies = _tool_check({"role": "assistant", "content": None, "tool_calls": [CALL]})
    assert result.ok, result.detail
    assert result.detail == 'get_weather({"city": "Paris", "unit": "celsius"}) and back'
    asked, answered = bodies
    question, call, tool = answered["messages"]
    assert question == asked["messages"][0] and question["role"] == "user"
    # the model's call as it came: same id, the function's name, its arguments as the JSON text it wrote
    assert call == {"role": "assistant", "content": None, "tool_calls": [
        {"id": "chatcmpl-tool-7f3a", "type": "function",
         "function": {"name": "get_weather", "arguments": '{"city": "Paris", "unit": "celsius"}'}}]}
    assert tool["role"] == "tool" and tool["tool_call_id"] == "chatcmpl-tool-7f3a"
    assert set(tool) == {"role", "tool_call_id", "content"}
    assert isinstance(json.loads(tool["content"]), dict)  # a tool's result, as JSON text
    # the same tool offered again (a template renders the call against it), for the same served model
    assert answered["tools"] == asked["tools"] and answered["model"] == asked["model"] == "qwen3.5-27b"
    assert 0 < answered["max_tokens"] <= ROUND_TRIP_TOKENS
    assert answered["chat_template_kwargs"] == {"enable_thinking": False}


def test_a_call_without_an_id_gets_one_that_ties_the_answer_to_it() -> None:
    # some parsers leave the id out; the tool message must still name the call it answers
    result, bodies = _tool_check({"role": "assistant", "content": None, "tool_calls": [
        {"type": "function", "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'}}]})
    assert result.ok, result.detail
    _, call, tool = bodies[1]["messages"]
    sent_id = call["tool_calls"][0]["id"]
    assert isinstance(sent_id, str) and sent_id and tool["tool_call_id"] == sent_id


def test_a_model_that_answers_in_words_is_shown_with_what_it_said() -> None:
    # no tool parser on the server: the call comes back as text in `content`, which names the cause
    said = '<tool_call>{"name": "get_weather", "arguments": {"city": "Paris"}}</tool_call>'
    result, bodies = _tool_check({"role": "assistant", "content": said, "tool_calls": []})
    assert not result.ok and len(bodies) == 1  # nothing goes back when nothing was called
    assert result.detail == ("no tool_calls with tool_choice=auto: check engine.toolCallParser; content was "
                             "'<tool_call>{\"name\": \"get_weather\", "
                             "\"arguments\": {\"city\": \"Paris\"}}</tool_call>'")


def test_the_tool_offered_asks_for_the_city_the_question_names(start_server: StartServer) -> None:
    # the stand-in answers as a model that fills the tool's required parameters (tests/docker_engine/
    # standin/server.py `_tool_call`): the row shows the call with the city it was asked about
    results = run_checks(start_server(), EXPECTED, api_key=None, timeout=5)
    assert next(r for r in results if r.name == "tool-call").detail == 'get_weather({"city": "Paris"}) and back'
