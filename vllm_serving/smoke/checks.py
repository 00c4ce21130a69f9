"""The smoke checks, in the order they run, as data: name, what each asserts, when it applies.

Each check talks to the server through a `Probe` and returns a one-line detail, or raises
`CheckFailed` with what is wrong. `run_checks` turns every outcome - including a hang, a closed
connection or malformed JSON - into a `CheckResult`; nothing escapes it.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import Any

import httpx
import msgspec

from vllm_serving.smoke.expectations import Expectations
from vllm_serving.smoke.kv_cache_check import METRIC, kv_cache_detail
from vllm_serving.smoke.probe import API_KEY_VARIABLE, CheckFailed, Probe, dig, snippet

# A question with a short answer, so the thinking is short too.
THINKING_PROMPT = "What is 17 + 25? Answer with the number only."
THINK_END = "</think>"
REASONING_FIELDS = ("reasoning", "reasoning_content")  # from v0.11.1, and before (engine/responses.py)
WEATHER_TOOL: dict[str, Any] = {"type": "function", "function": {
    "name": "get_weather",
    "description": "Current weather in a city.",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
}}
TOOL_PROMPT = "What is the weather in Paris right now? Call the get_weather tool."
# The names vLLM v1 exports; older releases (v0 engine) said gpu_cache_usage_perc.
METRICS = ("vllm:num_requests_running", "vllm:kv_cache_usage_perc")
NO_THINKING = {"chat_template_kwargs": {"enable_thinking": False}}

Run = Callable[[Probe, Expectations], str]


class Check(msgspec.Struct, frozen=True):
    name: str
    asserts: str
    applies: Callable[[Expectations], bool]
    skipped_because: str
    """Why the check does not apply to a stack, naming the config key."""
    run: Run


class CheckResult(msgspec.Struct, frozen=True):
    name: str
    ok: bool
    seconds: float
    detail: str
    skipped: bool = False


def _always(_: Expectations) -> bool:
    return True


HEALTH_TIMEOUT_SECONDS = 5.0
"""vLLM answers /health at once from the API process while the engine lives (vllm/entrypoints/
openai/api_server.py `health`), so a server that accepts the connection and says nothing for
this long is stuck: the checks stop there instead of waiting the full --timeout on each."""
NOT_RUN = "not run: the server does not answer /health"


def check_health(probe: Probe, _: Expectations) -> str:
    probe.get("/health", auth=False, timeout=HEALTH_TIMEOUT_SECONDS).expect_ok()
    return "200"


def check_models(probe: Probe, expected: Expectations) -> str:
    cards = dig(probe.get("/v1/models").expect_ok().json(), "data", where="/v1/models")
    if not isinstance(cards, list):
        raise CheckFailed("/v1/models: data is not a list")
    served = {card.get("id"): card for card in cards if isinstance(card, dict)}
    card = served.get(expected.served_name)
    if card is None:
        raise CheckFailed(f"/v1/models serves {sorted(map(str, served))}, not {expected.served_name!r} "
                          "(model.servedName)")
    if expected.max_model_len is None:
        return f"{expected.served_name}, max_model_len {card.get('max_model_len')} (the model's own)"
    if card.get("max_model_len") != expected.max_model_len:
        raise CheckFailed(f"max_model_len is {card.get('max_model_len')}, the stack sets "
                          f"{expected.max_model_len} (engine.maxModelLen)")
    return f"{expected.served_name}, max_model_len {expected.max_model_len}"


def check_chat(probe: Probe, expected: Expectations) -> str:
    message = probe.chat(expected, {"messages": [{"role": "user", "content": "Say OK."}], "max_tokens": 1,
                                    **NO_THINKING})
    # a model that thinks regardless of the switch spends its one token in the reasoning
    for name in ("content", *REASONING_FIELDS):
        if isinstance(message.get(name), str):
            return f"answered {message[name]!r}" + ("" if name == "content" else f" (in message.{name})")
    raise CheckFailed(f"a one-token completion came back empty: {snippet(json.dumps(message))}")


def check_reasoning(probe: Probe, expected: Expectations) -> str:
    message = probe.chat(expected, {"messages": [{"role": "user", "content": THINKING_PROMPT}],
                                    "max_tokens": 512,
                                    "chat_template_kwargs": {"enable_thinking": True}})
    content = message.get("content") or ""
    if isinstance(content, str) and THINK_END in content:
        raise CheckFailed(f"the thinking came back inside content ({THINK_END} in it): check "
                          "engine.reasoningParser names this model's parser")
    for name in REASONING_FIELDS:
        reasoning = message.get(name)
        if isinstance(reasoning, str) and reasoning.strip():
            return f"{len(reasoning)} chars in message.{name}, content apart"
    raise CheckFailed("no reasoning in message.reasoning or message.reasoning_content with "
                      "enable_thinking on: check engine.reasoningParser")


def check_tool_call(probe: Probe, expected: Expectations) -> str:
    question = {"role": "user", "content": TOOL_PROMPT}
    message = probe.chat(expected, {"messages": [question], "tools": [WEATHER_TOOL], "tool_choice": "auto",
                                    "max_tokens": 256, **NO_THINKING})
    calls = message.get("tool_calls")
    if not isinstance(calls, list) or not calls:
        raise CheckFailed("no tool_calls with tool_choice=auto: check engine.toolCallParser; content was "
                          f"{snippet(str(message.get('content')))!r}")
    function = dig(calls[0], "function", where="tool_calls[0]")
    name = dig(function, "name", where="tool_calls[0]")
    raw = dig(function, "arguments", where="tool_calls[0]")
    try:
        arguments = json.loads(raw) if isinstance(raw, str) else None
    except ValueError:
        arguments = None
    if not isinstance(arguments, dict):
        raise CheckFailed(f"tool call arguments are not a JSON object: {snippet(str(raw))!r} "
                          "(check engine.toolCallParser)")
    # the round trip's second half: the tool's answer goes back and the model must take it
    call = {"id": calls[0].get("id") or "call-0", "type": "function",
            "function": {"name": name, "arguments": raw}}
    probe.chat(expected, {"messages": [
        question,
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": call["id"], "content": json.dumps({"temperature_c": 21})},
    ], "tools": [WEATHER_TOOL], "max_tokens": 16, **NO_THINKING})
    return f"{name}({json.dumps(arguments)}) and back"


def check_api_key(probe: Probe, _: Expectations) -> str:
    bare = probe.get("/v1/models", auth=False)
    if bare.status != 401:
        raise CheckFailed(f"/v1/models answered {bare.status} without a key, not 401: is VLLM_API_KEY "
                          "reaching the server?")
    if probe.api_key is None:
        raise CheckFailed(f"refused without a key (good); set {API_KEY_VARIABLE} to check the key itself")
    probe.get("/v1/models").expect_ok()
    return "401 without the key, 200 with it"


def check_metrics(probe: Probe, _: Expectations) -> str:
    text = probe.get("/metrics", auth=False).expect_ok().text
    names = {line.split("{", 1)[0].split(" ", 1)[0] for line in text.splitlines() if not line.startswith("#")}
    missing = [name for name in METRICS if name not in names]
    if missing:
        raise CheckFailed(f"/metrics lacks {', '.join(missing)}")
    return ", ".join(METRICS)


def check_kv_cache(probe: Probe, expected: Expectations) -> str:
    assert expected.kv_cache is not None  # applies() keeps CPU targets out
    return kv_cache_detail(probe.get("/metrics", auth=False).expect_ok().text, expected.kv_cache)


CHECKS: tuple[Check, ...] = (
    Check("health", "/health answers 200", _always, "", check_health),
    Check("models", "/v1/models lists the served name with the configured max_model_len", _always, "",
          check_models),
    Check("chat", "a one-token chat completion for the served name", _always, "", check_chat),
    Check("reasoning", "with enable_thinking, reasoning comes back in message.reasoning "
          "(or reasoning_content), apart from the content",
          lambda e: e.reasoning, "engine.reasoningParser is not set", check_reasoning),
    Check("tool-call", "tool_choice=auto yields tool_calls with JSON arguments, and the tool's answer "
          "is taken back", lambda e: e.tool_calling,
          "engine.enableAutoToolChoice with engine.toolCallParser is not set", check_tool_call),
    Check("api-key", "/v1/models refuses a request without the key (401) and accepts it with the key",
          lambda e: e.api_key, "the stack sets no apiKey secret", check_api_key),
    Check("metrics", "/metrics exposes " + " and ".join(METRICS), _always, "", check_metrics),
    Check("kv-cache", f"{METRIC} on /metrics: the KV cache vLLM sized beside the plan's, with the drift; at least "
          "capacity.minConcurrency requests", lambda e: e.kv_cache is not None,
          "a CPU target's KV cache is VLLM_CPU_KVCACHE_SPACE, not sized by profiling", check_kv_cache),
)
REQUESTS_PER_CHECK = 2  # the most any check sends; sizes the default overall deadline


def _redacted(text: str, secret: str | None) -> str:
    return text.replace(secret, "********") if secret else text


def run_check(check: Check, probe: Probe, expected: Expectations) -> CheckResult:
    started = time.monotonic()
    try:
        detail, ok = check.run(probe, expected), True
    except CheckFailed as exc:
        detail, ok = str(exc), False
    except Exception as exc:  # a smoke test reports a broken server; it must not crash on one
        detail, ok = f"unexpected {exc.__class__.__name__}: {snippet(str(exc))}", False
    seconds = time.monotonic() - started
    return CheckResult(check.name, ok, seconds, _redacted(detail, probe.api_key))


def run_checks(base_url: str, expected: Expectations, *, api_key: str | None, timeout: float,
               deadline_seconds: float | None = None, transport: httpx.BaseTransport | None = None,
               on_result: Callable[[CheckResult], None] | None = None) -> list[CheckResult]:
    """Every check in order, each handed to `on_result` as it finishes; the ones that do not apply
    come back as skipped, with why. After a failed `health` the rest are not run (NOT_RUN)."""
    applicable = [c for c in CHECKS if c.applies(expected)]
    budget = deadline_seconds if deadline_seconds is not None else timeout * REQUESTS_PER_CHECK * len(applicable)
    probe = Probe(base_url, api_key, timeout, time.monotonic() + budget, transport)
    results: list[CheckResult] = []
    try:
        for check in CHECKS:
            if check not in applicable:
                result = CheckResult(check.name, True, 0.0, check.skipped_because, skipped=True)
            elif any(r.name == "health" and not r.ok for r in results):  # nothing else can answer either
                result = CheckResult(check.name, True, 0.0, NOT_RUN, skipped=True)
            else:
                result = run_check(check, probe, expected)
            results.append(result)
            if on_result is not None:
                on_result(result)
        return results
    finally:
        probe.close()
