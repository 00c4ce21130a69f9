"""`vllm-stack plan STACK`: the deployment `pulumi up` would make, with no Pulumi at all."""

from __future__ import annotations

import argparse
import json
from typing import Any

from vllm_serving.findings import ConfigError, Severity
from vllm_serving.render.docker_run import flag_lines
from vllm_serving.rules import check
from vllm_serving.stack_files.loader import load_spec, stack_path
from vllm_serving.views.plan import deployment_plan


def register(sub: Any) -> None:
    parser = sub.add_parser("plan", help="print what `pulumi up -s STACK` would deploy")
    parser.add_argument("stack", help="stack name, read from Pulumi.STACK.yaml")
    parser.add_argument("--json", action="store_true", help="machine-readable output")
    parser.set_defaults(func=run)


def _port(port: dict[str, Any]) -> str:
    if "service" in port:
        return f"Service {port['service']} :{port['port']} -> {port['containerPort']}"
    return f"{port['bindAddress']}:{port['hostPort']} -> {port['containerPort']}"


def _text(plan: dict[str, Any]) -> str:
    g, m, c = plan["gpu"], plan["model"], plan["container"]
    lines = [
        f"Stack {plan['stack']}  ({plan['target']['kind']}: {plan['target']['where']})",
        f"  GPU        {g['name']} (CC {g['computeCapability']}, {g['memoryGib']} GiB), "
        f"host has {g['hostCount']}, container gets "
        + (f"all {g['hostCount']}" if g["given"] == "all" else g["given"]),
        f"  Model      {m['name']} ({m['architecture']}, {m['paramsBillion']}B params, "
        f"{m['weightsGib']} GiB weights{', ' + m['quantization'] if m['quantization'] else ''})",
        f"  Served as  {m['servedModelName']}",
        f"  Image      {plan['image']['reference']}"
        + (f"  (registry user {plan['image']['registryUser']})" if plan["image"]["registryUser"] else ""),
        "  Release    " + (f"promoted from {plan['release']['promotedFrom']}"
                             if plan["release"]["promotedFrom"] else "this stack's own sections")
        + f" (release flags {plan['release']['argvFingerprint'][:19]}...)",
        "  Secrets    " + ", ".join(f"{k}: {v}" for k, v in plan["secrets"].items()),
        "  Mounts",
        *[f"    {x['source']} -> {x['target']} ({'read-only' if x['readOnly'] else 'writable'}, {x['kind']})"
          for x in plan["mounts"]],
        "  Ports",
        *[f"    {_port(p)}" for p in plan["ports"]],
        "  Container  " + ", ".join(f"{k}={v}" for k, v in c.items()),
        "  Endpoints",
        *[f"    {k:<10} {v}" for k, v in plan["endpoints"].items()],
        "  vLLM argv",
        *[f"    {line}" for line in flag_lines(tuple(plan["vllmArgs"]))],
        "  Env",
        *[f"    {k}={v}" for k, v in plan["env"].items()],
        *[f"    {k}=<secret>" for k in plan["secretEnv"]],
    ]
    if plan.get("capacity"):
        lines.append("  Capacity")
        lines += [f"    {k:<34} {v}" for k, v in plan["capacity"].items()]
    if plan["findings"]:
        lines.append("  Findings")
        lines += [f"    {f['severity'].upper()} {f['code']} {f['key']}: {f['message']} - {f['fix']}"
                  for f in plan["findings"]]
    lines.append("  Resources `pulumi up` would create")
    lines += [f"    {r['type']:<42} {r['name']}" for r in plan["resources"]]
    lines.append("  Equivalent docker run" + (" (for comparison; this stack deploys to Kubernetes)"
                                              if plan["target"]["kind"] == "kubernetes" else ""))
    lines += ["    " + line for line in plan["dockerRunCommand"].splitlines()]
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    spec = load_spec(stack_path(args.project_dir, args.stack), args.stack, args.project_dir)
    findings = check(spec)
    errors = [f for f in findings if f.severity is Severity.ERROR]
    if errors:
        raise ConfigError(errors)
    plan = deployment_plan(spec, findings)
    print(json.dumps(plan, indent=2) if args.json else _text(plan))
    return 0
