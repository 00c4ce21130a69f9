"""HTTP for the smoke checks: each failure becomes a one-line `CheckFailed`, never a traceback.

Every request is bounded twice: httpx's timeout (per connect/read/write wait) and a wall clock
checked while the body arrives, so a server that trickles bytes is cut off too. The API key goes
only into the Authorization header; no message built here contains it.
"""

from __future__ import annotations

import json
import time
from typing import Any

import httpx
import msgspec

from vllm_serving.smoke.expectations import Expectations

API_KEY_VARIABLE = "VLLM_SERVING_SECRET_APIKEY"  # where `vllm-stack` reads the apiKey secret
MAX_BODY_BYTES = 4 * 1024 * 1024  # /metrics of a busy server is well under this
SNIPPET_CHARS = 100


class CheckFailed(Exception):
    """What the server did wrong, in one line."""


def snippet(text: str) -> str:
    """Whitespace-collapsed and shortened, so a reply fits on the table's row."""
    flat = " ".join(text.split())
    return flat if len(flat) <= SNIPPET_CHARS else flat[:SNIPPET_CHARS] + "..."


def origin_of(base_url: str) -> str:
    """`http://h:8000/v1/` -> `http://h:8000`: /health and /metrics live outside /v1."""
    url = base_url.rstrip("/")
    return url.removesuffix("/v1")


def _error_message(text: str) -> str:
    """vLLM's `{"error": {"message": ...}}` (or `{"error": "..."}`) as its message, else the text."""
    try:
        body = json.loads(text)
    except ValueError:
        return snippet(text)
    error = body.get("error") if isinstance(body, dict) else None
    if isinstance(error, dict) and isinstance(error.get("message"), str):
        return snippet(error["message"])
    return snippet(error if isinstance(error, str) else text)


class Reply(msgspec.Struct, frozen=True):
    path: str
    status: int
    text: str
    sent_key: bool

    def expect_ok(self) -> Reply:
        if self.status == 401:
            why = (f"the key in {API_KEY_VARIABLE} was refused" if self.sent_key
                   else f"the server wants an API key: set {API_KEY_VARIABLE}")
            raise CheckFailed(f"{self.path} answered 401 Unauthorized: {why}")
        if self.status != 200:
            raise CheckFailed(f"{self.path} answered {self.status}: {_error_message(self.text)}")
        return self

    def json(self) -> Any:
        try:
            return json.loads(self.text)
        except ValueError:
            raise CheckFailed(f"{self.path} answered {self.status} with malformed JSON: "
                              f"{snippet(self.text) or '(empty body)'}") from None


def dig(value: Any, *keys: str | int, where: str) -> Any:
    """`value[k1][k2]...`, or CheckFailed naming the missing part (`choices[0].message`)."""
    walked = ""
    for key in keys:
        walked += f"[{key}]" if isinstance(key, int) else (f".{key}" if walked else key)
        if isinstance(key, int):
            ok = isinstance(value, list) and key < len(value)  # indexes read here are 0 and up
        else:
            ok = isinstance(value, dict) and key in value
        if not ok:
            raise CheckFailed(f"{where}: the answer has no {walked}")
        value = value[key]
    return value


class Probe:
    """One server, one API key, one per-request timeout, one overall deadline."""

    def __init__(self, base_url: str, api_key: str | None, timeout: float, deadline: float,
                 transport: httpx.BaseTransport | None = None) -> None:
        self.origin = origin_of(base_url)
        self.api_key = api_key
        self.timeout = timeout
        self.deadline = deadline
        # no proxy from the environment: a CI runner's HTTP(S)_PROXY would misroute internal hosts
        self._client = httpx.Client(transport=transport, follow_redirects=False, trust_env=False)

    def close(self) -> None:
        self._client.close()

    def _budget(self, path: str, timeout: float | None = None) -> float:
        left = self.deadline - time.monotonic()
        if left <= 0:
            raise CheckFailed(f"{path}: not sent, the overall deadline had passed")
        return min(timeout or self.timeout, self.timeout, left)

    def get(self, path: str, *, auth: bool = True, timeout: float | None = None) -> Reply:
        """GET, within `timeout` seconds when given (never more than the probe's own timeout)."""
        return self.request("GET", path, auth=auth, timeout=timeout)

    def post(self, path: str, body: dict[str, Any]) -> Reply:
        return self.request("POST", path, body=body)

    def request(self, method: str, path: str, *, body: dict[str, Any] | None = None,
                auth: bool = True, timeout: float | None = None) -> Reply:
        budget = self._budget(path, timeout)
        send_key = auth and self.api_key is not None
        headers = {"Authorization": f"Bearer {self.api_key}"} if send_key else {}
        started = time.monotonic()
        try:
            with self._client.stream(method, self.origin + path, json=body, headers=headers,
                                     timeout=budget) as response:
                chunks: list[bytes] = []
                size = 0
                for chunk in response.iter_bytes():
                    chunks.append(chunk)
                    size += len(chunk)
                    if time.monotonic() - started > budget:
                        raise CheckFailed(f"{path}: the answer was still arriving after {budget:g}s (timeout)")
                    if size > MAX_BODY_BYTES:
                        raise CheckFailed(f"{path}: the answer is larger than {MAX_BODY_BYTES // 2**20} MiB")
                status = response.status_code
        except httpx.TimeoutException:
            raise CheckFailed(f"{method} {path}: no answer within {budget:g}s (timeout)") from None
        except httpx.ConnectError as exc:
            raise CheckFailed(f"cannot connect to {self.origin}: {snippet(str(exc))}") from None
        except httpx.RemoteProtocolError:
            raise CheckFailed(f"{path}: the server closed the connection without a complete answer") from None
        except httpx.HTTPError as exc:
            raise CheckFailed(f"{method} {path}: {exc.__class__.__name__}: {snippet(str(exc))}") from None
        return Reply(path, status, b"".join(chunks).decode("utf-8", "replace"), send_key)

    def chat(self, expected: Expectations, body: dict[str, Any]) -> dict[str, Any]:
        """POST a chat completion for the served model; its `choices[0].message`, checked."""
        answer = self.post("/v1/chat/completions", {"model": expected.served_name, **body}).expect_ok().json()
        message = dig(answer, "choices", 0, "message", where="/v1/chat/completions")
        if not isinstance(message, dict):
            raise CheckFailed("/v1/chat/completions: choices[0].message is not an object")
        return message
