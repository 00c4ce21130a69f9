"""`vllm-stack plan STACK`: the deployment `pulumi up` would make, with no Pulumi at all."""

from __future__ import annotations

import argparse
import json
from typing import Any

from vllm_serving.cli.stacks import STACK_HELP, load_stack
from vllm_serving.cli.verbs import verb_help
from vllm_serving.findings import ConfigError, finding_line
from vllm_serving.fleet import fleet_hosts
from vllm_serving.planner.capacity import plan_capacity
from vllm_serving.render.docker_run import flag_lines
from vllm_serving.rules import check
from vllm_serving.views.capacity_summary import stack_question, summary_lines
from vllm_serving.views.fleet import fleet_plan, host_lines
from vllm_serving.views.plan import deployment_plan, set_values


def register(sub: Any) -> None:
    parser = sub.add_parser("plan", help=verb_help("plan"))
    parser.add_argument("stack", metavar="STACK", help=STACK_HELP)
    parser.add_argument("--json", action="store_true", help="machine-readable output")
    parser.set_defaults(func=run)


def _port(port: dict[str, Any]) -> str:
    if "service" in port:
        return f"Service {port['service']} :{port['port']} -> {port['containerPort']}"
    return f"{port['bindAddress']}:{port['hostPort']} -> {port['containerPort']}"


def _block(title: str, rows: list[str]) -> list[str]:
    """A titled block of rows; nothing at all when there are no rows."""
    return [f"  {title}", *[f"    {row}" for row in rows]] if rows else []


def _text(plan: dict[str, Any]) -> str:
    g, m = plan["gpu"], plan["model"]
    container = set_values(plan["container"])
    lines = [
        f"Stack {plan['stack']}  ({plan['target']['kind']}: {plan['target']['where']})",
        f"  GPU        {g['name']} (CC {g['computeCapability']}, {g['memoryGib']} GiB), "
        f"host has {g['hostCount']}, container gets "
        + (f"all {g['hostCount']}" if g["given"] == "all" else g["given"])
        if g["given"] is not None else "  Device     CPU: vLLM's CPU backend, no GPU",
        f"  Model      {m['name']} ({m['architecture']}, {m['paramsBillion']}B params, "
        f"{m['weightsGib']} GiB weights{', ' + m['quantization'] if m['quantization'] else ''})",
        f"  Served as  {m['servedModelName']}",
        f"  Image      {plan['image']['reference']}"
        + (f"  (registry user {plan['image']['registryUser']})" if plan["image"]["registryUser"] else ""),
        "  Release    " + (f"promoted from {plan['release']['promotedFrom']}"
                             if plan["release"]["promotedFrom"] else "this stack's own sections")
        + f" (release flags {plan['release']['argvFingerprint'][:19]}...)",
        "  Secrets    " + ", ".join(f"{k}: {v}" for k, v in plan["secrets"].items()),
        *_block("Mounts", [f"{x['source']} -> {x['target']} ({'read-only' if x['readOnly'] else 'writable'}, "
                           f"{x['kind']})" for x in plan["mounts"]]),
        *_block("Ports", [_port(p) for p in plan["ports"]]),
        *(["  Container  " + ", ".join(f"{k}={v}" for k, v in container.items())] if container else []),
        *_block("Endpoints", [f"{k:<10} {v}" for k, v in plan["endpoints"].items()]),
        *(_block("Hosts", host_lines(plan)) + [f"  Rollout    {plan['fleet']['rollout']}"] if "fleet" in plan else []),
        *_block("vLLM argv", list(flag_lines(tuple(plan["vllmArgs"])))),
        *_block("Env", [*[f"{k}={v}" for k, v in plan["env"].items()],
                        *[f"{k}=<secret>" for k in plan["secretEnv"]]]),
        *_block("Scale out", [f"{k:<34} {v}" for k, v in (plan.get("scaleOut") or {}).items()]),
        *_block("Findings", [finding_line(f) for f in plan["findings"]]),
        *_block("Resources `pulumi up` would create", [f"{r['type']:<42} {r['name']}" for r in plan["resources"]]),
        "  Equivalent docker run" + (" (for comparison; this stack deploys to Kubernetes)"
                                     if plan["target"]["kind"] == "kubernetes" else ""),
        *["    " + line for line in plan["dockerRunCommand"].splitlines()],
    ]
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    spec = load_stack(args.project_dir, args.stack)
    findings = check(spec)
    errors = [f for f in findings if f.blocks]
    if errors:
        raise ConfigError(errors)
    hosts = fleet_hosts(spec)
    plan = fleet_plan(spec, hosts, findings) if hosts else deployment_plan(spec, findings)
    if args.json:
        print(json.dumps(plan, indent=2))
        return 0
    # the capacity answer first, in the words `capacity` uses; its raw fields are in --json
    served = hosts[0].spec if hosts else spec
    capacity = plan_capacity(served)
    where = "each host: " if len(hosts) > 1 else ""
    print("\n".join(summary_lines(capacity, stack_question(served, capacity, where), findings)) + "\n")
    print(_text(plan))
    return 0
