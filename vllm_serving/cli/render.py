"""`vllm-stack render STACK --format {k8s,docker-run,compose}`: what would be deployed, offline.

Any stack renders in any format (the spec is the same): a Docker stack as Kubernetes manifests,
a Kubernetes stack as a `docker run`. Secret values are masked as `********`.

Stack files hold secrets only encrypted (`secure:`), and this tool never decrypts them, so
`--reveal-secrets` reveals what the operator hands it through the environment:
`VLLM_SERVING_SECRET_APIKEY`, `VLLM_SERVING_SECRET_HFTOKEN`, `VLLM_SERVING_SECRET_REGISTRYPASSWORD`
(e.g. `VLLM_SERVING_SECRET_APIKEY=$(pulumi config get apiKey) vllm-stack render ...`). Only secrets
the stack sets are rendered; one without its variable stays masked, with a note on stderr.
A file written with revealed secrets is created readable by its owner only.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from vllm_serving.engine.flags import SECRET_ENV
from vllm_serving.render.compose_file import compose_yaml
from vllm_serving.render.docker_container import container_spec
from vllm_serving.render.docker_run import docker_run_command
from vllm_serving.render.kubernetes.objects import kubernetes_objects, manifests_yaml
from vllm_serving.settings import SECRET_KEYS
from vllm_serving.spec import ServingSpec
from vllm_serving.stack_files.loader import load_spec, stack_path

FORMATS = ("k8s", "docker-run", "compose")
ENV_PREFIX = "VLLM_SERVING_SECRET_"


def secret_variable(key: str) -> str:
    """`apiKey` -> `VLLM_SERVING_SECRET_APIKEY`."""
    return ENV_PREFIX + key.upper()


def revealed_secrets(spec: ServingSpec, environ: Mapping[str, str]) -> dict[str, str]:
    """Secret config key -> value, for the secrets the stack sets and the environment gives."""
    found: dict[str, str] = {}
    for key in SECRET_KEYS:
        if key not in spec.settings.secrets_set:
            continue
        value = environ.get(secret_variable(key))
        if value is None:
            print(f"vllm-stack: {key} stays masked: set {secret_variable(key)} to reveal it",
                  file=sys.stderr)
        else:
            found[key] = value
    return found


def render(spec: ServingSpec, fmt: str, secrets: Mapping[str, str] | None = None) -> str:
    """The stack in one format; `secrets` maps secret config keys to values (masked when absent)."""
    by_env = {SECRET_ENV[k]: v for k, v in (secrets or {}).items() if k in SECRET_ENV}
    if fmt == "k8s":
        return manifests_yaml(kubernetes_objects(spec, secrets))
    if fmt == "docker-run":
        return docker_run_command(container_spec(spec), by_env) + "\n"
    if fmt == "compose":
        return compose_yaml(container_spec(spec), by_env)
    raise ValueError(f"unknown format {fmt!r}; use one of {', '.join(FORMATS)}")


def _write(path: Path, text: str, private: bool) -> None:
    if private:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        os.fchmod(fd, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
    else:
        path.write_text(text, encoding="utf-8")


def run(args: argparse.Namespace) -> int:
    project_dir = Path(args.project_dir)
    spec = load_spec(stack_path(project_dir, args.stack), args.stack, project_dir)
    secrets = revealed_secrets(spec, os.environ) if args.reveal_secrets else {}
    text = render(spec, args.format, secrets)
    if args.output is None:
        sys.stdout.write(text)
    else:
        _write(Path(args.output), text, private=bool(secrets))
        print(f"wrote {args.output} ({args.format})", file=sys.stderr)
    return 0


def register(subparsers: Any) -> None:
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "render", help="print what a stack would deploy: k8s manifests, docker run or Compose",
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("stack", help="stack name (Pulumi.STACK.yaml)")
    parser.add_argument("--format", choices=FORMATS, default="k8s",
                        help="k8s: multi-document YAML; docker-run: the command; compose: a Compose file")
    parser.add_argument("--reveal-secrets", action="store_true",
                        help=f"print secret values given as {ENV_PREFIX}<KEY> variables instead of ********")
    parser.add_argument("--output", "-o", type=Path, default=None, help="write to FILE instead of stdout")
    parser.set_defaults(func=run)
