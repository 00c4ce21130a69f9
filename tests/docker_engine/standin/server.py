"""A stand-in for vLLM's OpenAI-compatible server: standard library only, no model, no GPU.

It runs as the entrypoint of the stand-in image (`python3 server.py <vLLM's argv>`) and in-process
in the smoke tests (`serve(config)`). It answers like vLLM v0.19.1 where `vllm-stack smoke` looks:
`/health`, `/v1/models` (served names, `max_model_len`), `/v1/chat/completions` (reasoning split
out when a reasoning parser is set, tool calls when auto tool choice is on), `/metrics`, and a 401
on `/v1/*` without the key when `VLLM_API_KEY` (or `--api-key`) is set. It takes vLLM's argv as
the project renders it and ignores the flags it has no use for.

Test knobs (never vLLM flags): `--standin-fault PATH=KIND` makes PATH hang, answer malformed JSON
or close the connection; the `ServerConfig` fields below do the rest in-process.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import sys
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

FAULT_KINDS = ("hang", "malformed-json", "close")
REASONING = "The user wants a short answer; 17 + 25 is 42."


@dataclass
class ServerConfig:
    served_names: list[str]
    model_path: str
    max_model_len: int
    reasoning_parser: str | None = None
    auto_tools: bool = False
    api_key: str | None = None
    # where reasoning goes when a parser is set: vLLM >= 0.10 uses `reasoning`; None = left in content
    reasoning_field: str | None = "reasoning"
    # raw `function.arguments` of the tool call; None = valid JSON built from the tool's schema
    tool_arguments: str | None = None
    faults: dict[str, str] = field(default_factory=dict)
    # vllm:cache_config_info's figures: the KV cache a real server would have sized
    num_gpu_blocks: int = 4096
    block_size: int = 16


def parse_argv(argv: list[str], environ: dict[str, str]) -> tuple[ServerConfig, str, int]:
    """vLLM's argv (`--model`, `--served-model-name`, ...) -> config, host, port; the rest ignored."""
    # no abbreviations: one of vLLM's many flags must never be taken for a prefix of one of these
    parser = argparse.ArgumentParser(prog="standin", allow_abbrev=False)
    parser.add_argument("--model")
    parser.add_argument("--served-model-name", nargs="+")
    parser.add_argument("--max-model-len", type=int, default=4096)
    parser.add_argument("--reasoning-parser")
    parser.add_argument("--enable-auto-tool-choice", action="store_true")
    parser.add_argument("--tool-call-parser")
    parser.add_argument("--api-key")
    parser.add_argument("--host", default="0.0.0.0")
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("--standin-fault", action="append", default=[])
    parser.add_argument("--num-gpu-blocks-override", type=int, default=4096)
    parser.add_argument("--block-size", type=int, default=16)
    args, _ignored = parser.parse_known_args(argv)
    model = args.model or "facebook/opt-125m"  # vLLM's default model
    faults = dict(item.split("=", 1) for item in args.standin_fault)
    config = ServerConfig(
        served_names=args.served_model_name or [model],
        model_path=model,
        max_model_len=args.max_model_len,
        reasoning_parser=args.reasoning_parser,
        auto_tools=bool(args.enable_auto_tool_choice and args.tool_call_parser),
        api_key=args.api_key or environ.get("VLLM_API_KEY") or None,
        faults=faults,
        num_gpu_blocks=args.num_gpu_blocks_override,
        block_size=args.block_size,
    )
    return config, args.host, args.port


def _tool_call(config: ServerConfig, tool: dict[str, Any]) -> dict[str, Any]:
    function = tool.get("function", {})
    required = function.get("parameters", {}).get("required", [])
    arguments = config.tool_arguments
    if arguments is None:
        arguments = json.dumps({name: "Paris" for name in required})
    return {"id": "chatcmpl-tool-1", "type": "function",
            "function": {"name": function.get("name", ""), "arguments": arguments}}


def chat_reply(config: ServerConfig, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    """What vLLM would answer to a chat completion request, shaped as v0.19.1 shapes it."""
    model = body.get("model")
    if model not in config.served_names:
        return 404, {"error": {"message": f"The model `{model}` does not exist.", "type": "NotFoundError",
                               "param": "model", "code": 404}}
    tools = body.get("tools") or []
    tool_choice = body.get("tool_choice")
    if tool_choice == "auto" and not config.auto_tools:
        return 400, {"error": {"message": '"auto" tool choice requires --enable-auto-tool-choice and '
                                          "--tool-call-parser to be set", "type": "BadRequestError",
                               "param": None, "code": 400}}
    message: dict[str, Any] = {"role": "assistant", "content": "42", "tool_calls": []}
    finish = "stop"
    answered_tool = any(m.get("role") == "tool" for m in body.get("messages", []))
    if tools and config.auto_tools and tool_choice in (None, "auto") and not answered_tool:
        message["content"] = None
        message["tool_calls"] = [_tool_call(config, tools[0])]
        finish = "tool_calls"
    elif config.reasoning_parser and (body.get("chat_template_kwargs") or {}).get("enable_thinking", True):
        if config.reasoning_field is None:
            message["content"] = f"{REASONING}\n</think>\n\n42"
        else:
            message[config.reasoning_field] = REASONING
    max_tokens = body.get("max_tokens") or body.get("max_completion_tokens")
    if max_tokens == 1 and finish == "stop":
        message["content"], finish = "4", "length"
    completion_tokens = 1 if max_tokens == 1 else 12
    return 200, {
        "id": "chatcmpl-standin", "object": "chat.completion", "created": int(time.time()), "model": model,
        "choices": [{"index": 0, "message": message, "finish_reason": finish, "logprobs": None}],
        "usage": {"prompt_tokens": 10, "completion_tokens": completion_tokens,
                  "total_tokens": 10 + completion_tokens},
    }


def models_reply(config: ServerConfig) -> dict[str, Any]:
    return {"object": "list", "data": [
        {"id": name, "object": "model", "created": int(time.time()), "owned_by": "vllm",
         "root": config.model_path, "parent": None, "max_model_len": config.max_model_len, "permission": []}
        for name in config.served_names]}


def metrics_text(config: ServerConfig) -> str:
    labels = f'engine="0",model_name="{config.served_names[0]}"'
    return (
        "# HELP vllm:num_requests_running Number of requests in model execution batches.\n"
        "# TYPE vllm:num_requests_running gauge\n"
        f"vllm:num_requests_running{{{labels}}} 0.0\n"
        "# HELP vllm:kv_cache_usage_perc KV-cache usage. 1 means 100 percent usage.\n"
        "# TYPE vllm:kv_cache_usage_perc gauge\n"
        f"vllm:kv_cache_usage_perc{{{labels}}} 0.0\n"
        # v0.19.1 exports every CacheConfig field as a label (v1/metrics/loggers.py log_metrics_info)
        "# HELP vllm:cache_config_info Information of the LLMEngine CacheConfig\n"
        "# TYPE vllm:cache_config_info gauge\n"
        f'vllm:cache_config_info{{block_size="{config.block_size}",cache_dtype="auto",enable_prefix_caching="True",'
        f'engine="0",gpu_memory_utilization="0.9",num_cpu_blocks="None",num_gpu_blocks="{config.num_gpu_blocks}",'
        'num_gpu_blocks_override="None",swap_space="4"} 1.0\n'
    )


class StandinServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, address: tuple[str, int], config: ServerConfig) -> None:
        super().__init__(address, Handler)
        self.config = config
        self.stopping = threading.Event()  # releases hanging handlers at shutdown

    def stop(self) -> None:
        self.stopping.set()
        self.shutdown()
        self.server_close()


class Handler(BaseHTTPRequestHandler):
    server: StandinServer
    protocol_version = "HTTP/1.1"

    def setup(self) -> None:
        super().setup()
        # headers and body go out in two writes; without this, delayed ACKs add 40 ms to each
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def log_message(self, format: str, *args: Any) -> None:
        sys.stderr.write(f"standin: {self.command} {self.path} {args[1] if len(args) > 1 else ''}\n")

    def _send(self, status: int, payload: bytes, content_type: str = "application/json") -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def _json(self, status: int, body: Any) -> None:
        self._send(status, json.dumps(body).encode())

    def _faulted(self, path: str) -> bool:
        kind = self.server.config.faults.get(path)
        if kind == "hang":
            self.server.stopping.wait(600)
            self.close_connection = True
        elif kind == "malformed-json":
            self._send(200, b'{"object": "list", "data": [')
        elif kind == "close":
            self.close_connection = True  # no status line at all: the client sees the socket close
        return kind is not None

    def _authorized(self, path: str) -> bool:
        key = self.server.config.api_key
        if key is None or not path.startswith("/v1"):
            return True
        if self.headers.get("Authorization", "") == f"Bearer {key}":
            return True
        self._json(401, {"error": "Unauthorized"})
        return False

    def do_GET(self) -> None:
        path = self.path.split("?", 1)[0]
        if self._faulted(path) or not self._authorized(path):
            return
        config = self.server.config
        if path == "/health":
            self._send(200, b"", "text/plain")
        elif path == "/v1/models":
            self._json(200, models_reply(config))
        elif path == "/metrics":
            self._send(200, metrics_text(config).encode(), "text/plain; version=0.0.4")
        else:
            self._json(404, {"detail": "Not Found"})

    def do_POST(self) -> None:
        path = self.path.split("?", 1)[0]
        raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        if self._faulted(path) or not self._authorized(path):
            return
        if path != "/v1/chat/completions":
            self._json(404, {"detail": "Not Found"})
            return
        try:
            body = json.loads(raw)
        except ValueError:
            self._json(400, {"error": {"message": "invalid JSON body", "code": 400}})
            return
        self._json(*chat_reply(self.server.config, body))


def serve(config: ServerConfig, host: str = "127.0.0.1", port: int = 0) -> StandinServer:
    """Start serving in a background thread; `server.server_address` has the port, `stop()` ends it."""
    server = StandinServer((host, port), config)
    threading.Thread(target=server.serve_forever, args=(0.05,), name="standin", daemon=True).start()
    return server


def main(argv: list[str]) -> int:
    config, host, port = parse_argv(argv, dict(os.environ))
    # like vLLM, refuse a local weights directory without a config.json (an empty mount)
    if config.model_path.startswith("/") and not (Path(config.model_path) / "config.json").is_file():
        print(f"standin: no config.json in {config.model_path}", file=sys.stderr)
        return 1
    server = StandinServer((host, port), config)
    print(f"standin: serving {config.served_names} on {host}:{port}", file=sys.stderr, flush=True)
    server.serve_forever()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
