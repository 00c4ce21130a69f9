"""`vllm-stack smoke STACK`: does the deployed server answer the way the stack says it should?

Run it after `pulumi up`. Against the stack's `baseUrl` (or `--base-url`), in order, one row per
check with the time it took: /health; /v1/models lists the served name and the configured
max_model_len; a one-token chat completion; reasoning apart from the content (when a reasoning
parser is set); a tool-call round trip with JSON arguments (when auto tool choice is on); 401
without the API key and 200 with it (when the stack sets apiKey; the key is read from
VLLM_SERVING_SECRET_APIKEY, e.g. `VLLM_SERVING_SECRET_APIKEY=$(pulumi config get apiKey)`, and
never printed); /metrics exposes vllm:num_requests_running and vllm:kv_cache_usage_perc; the KV
cache vLLM sized (vllm:cache_config_info) beside the plan's, with the drift, and at least
capacity.minConcurrency requests of maxModelLen.
Each row is printed as its check finishes. /health gets a few seconds, not --timeout (vLLM
answers it at once while the engine lives); when it fails, nothing else is sent and the last line
is the command that shows the server's log (`docker logs ...` or `kubectl logs ...`).

A Docker fleet (target.hosts): every host, each against its own baseUrl, one block of rows per
host and a line naming the hosts that failed; `--host ID` checks one host (at `--base-url`, if
given). `--base-url` alone checks that one URL instead (e.g. the fleet's load balancer).

Exit status: 0 when every check passes (on every host), 1 when one fails (or the stack has
errors), 2 when the stack cannot be read or `--host` names no host of it.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import Any

from vllm_serving.cli.arg_types import positive_float
from vllm_serving.cli.exits import Unusable
from vllm_serving.cli.render import secret_variable
from vllm_serving.cli.stacks import STACK_HELP, load_stack
from vllm_serving.cli.verbs import verb_help
from vllm_serving.fleet import fleet_hosts
from vllm_serving.render.rollout_hints import server_logs_command
from vllm_serving.views.fleet import select_hosts

DEFAULT_TIMEOUT_SECONDS = 60.0


def _base_url(text: str) -> str:
    if not text.startswith(("http://", "https://")):
        raise argparse.ArgumentTypeError(f"{text!r}: give a URL such as http://gpu-host:8000/v1")
    return text


def _seconds(text: str) -> float:
    return positive_float(text, "a positive number of seconds")


def register(sub: Any) -> None:
    parser: argparse.ArgumentParser = sub.add_parser(
        "smoke", help=verb_help("smoke"),
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("stack", metavar="STACK", help=STACK_HELP)
    parser.add_argument("--base-url", type=_base_url, default=None, metavar="URL",
                        help="the API to check, e.g. http://localhost:8000/v1 (default: the stack's baseUrl)")
    parser.add_argument("--timeout", type=_seconds, default=DEFAULT_TIMEOUT_SECONDS, metavar="SECONDS",
                        help=f"seconds each request may take (default {DEFAULT_TIMEOUT_SECONDS:g})")
    parser.add_argument("--host", metavar="ID", default=None,
                        help="a Docker fleet (target.hosts): check only this host (default: every host)")
    parser.add_argument("--json", action="store_true", help="machine-readable output")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    project_dir = Path(args.project_dir)
    spec = load_stack(project_dir, args.stack)  # ConfigError: exit 2 unreadable, 1 with errors (cli/exits.py)
    hosts = fleet_hosts(spec)
    try:
        if args.host is not None and not hosts:
            raise ValueError(f"--host {args.host}: stack {spec.stack} has no target.hosts (it is one server)")
        chosen = select_hosts(hosts, args.host)
    except ValueError as exc:
        raise Unusable(str(exc)) from None
    # httpx takes ~0.25 s to import: only this verb pays for it, not every `vllm-stack` start
    from vllm_serving.smoke.report import smoke_fleet, smoke_stack  # noqa: PLC0415

    api_key = os.environ.get(secret_variable("apiKey")) or None
    # a fleet's hosts each at their own URL; one host at --base-url (a tunnel to it, say) with --host
    if chosen and (args.base_url is None or args.host is not None):
        urls = [(h.id, args.base_url or h.spec.endpoints()["baseUrl"]) for h in chosen]
        ok, text = smoke_fleet(spec, urls, api_key=api_key, timeout=args.timeout, json_output=args.json,
                               logs={h.id: server_logs_command(h.spec) for h in chosen})
        print(text)
    else:
        ok = smoke_stack(spec, base_url=args.base_url or spec.endpoints()["baseUrl"], api_key=api_key,
                         timeout=args.timeout, json_output=args.json, emit=_emit)
    return 0 if ok else 1


def _emit(line: str) -> None:
    print(line, flush=True)  # each row as its check finishes, even into a pipe
