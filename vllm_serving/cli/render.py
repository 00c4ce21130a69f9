"""`vllm-stack render STACK --format {k8s,docker-run,compose}`: what would be deployed, offline.
With `--format prometheus|alerts|grafana`: the scrape config, the alert rules and the dashboard.

Any stack renders in any format (the spec is the same): a Docker stack as Kubernetes manifests,
a Kubernetes stack as a `docker run`; without `--format`, as what it deploys (`docker-run` for a
Docker stack, `k8s` for a Kubernetes one). Secret values are masked as `********`.

Stack files hold secrets only encrypted (`secure:`), and this tool never decrypts them, so
`--reveal-secrets` reveals what the operator hands it through the environment:
`VLLM_SERVING_SECRET_APIKEY`, `VLLM_SERVING_SECRET_HFTOKEN`, `VLLM_SERVING_SECRET_REGISTRYPASSWORD`
(e.g. `VLLM_SERVING_SECRET_APIKEY=$(pulumi config get apiKey) vllm-stack render ...`). Only secrets
the stack sets are rendered; one without its variable stays masked, with a note on stderr.
`--output` replaces the file atomically (a temporary file in the same directory, then a rename),
so a reader never sees half a render, and refuses a symbolic link rather than write through it.
A file written with revealed secrets is created readable by its owner only.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import tempfile
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from vllm_serving.cli.exits import Unusable
from vllm_serving.cli.stacks import STACK_HELP, load_stack
from vllm_serving.cli.verbs import verb_help
from vllm_serving.engine.flags import SECRET_ENV
from vllm_serving.fleet import fleet_hosts
from vllm_serving.observability.alerts import rules_yaml
from vllm_serving.observability.dashboard import dashboard_json
from vllm_serving.observability.scrape import scrape_yaml
from vllm_serving.render.compose_file import compose_yaml
from vllm_serving.render.docker_container import ContainerSpec, container_spec
from vllm_serving.render.docker_run import docker_run_command
from vllm_serving.render.kubernetes.objects import kubernetes_objects, manifests_yaml
from vllm_serving.settings import SECRET_KEYS
from vllm_serving.spec import ServingSpec
from vllm_serving.views.fleet import per_host, select_hosts

FORMATS = ("k8s", "docker-run", "compose")
# What watches the stack once it runs, the same for either target (vllm_serving.observability);
# they never carry a secret value (a scrape job names a token file, never the key).
OBSERVABILITY_FORMATS = {"prometheus": scrape_yaml, "alerts": rules_yaml, "grafana": dashboard_json}
# Without --format a stack renders as what its own target deploys.
FORMAT_BY_TARGET = {"docker": "docker-run", "kubernetes": "k8s"}
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


def _per_host(spec: ServingSpec, render_one: Callable[[ContainerSpec], str], separator: str,
              host: str | None) -> str:
    """One server's render; a Docker fleet's, each host's (or only `host`'s) under a
    `# host ID (dockerHost)` line, as each host gets its own command or Compose file."""
    hosts = fleet_hosts(spec)
    if hosts:
        return per_host(select_hosts(hosts, host), render_one, separator)
    if host is not None:
        raise ValueError(f"--host {host}: stack {spec.stack} has no target.hosts (it is one server)")
    return render_one(container_spec(spec))


def render(spec: ServingSpec, fmt: str, secrets: Mapping[str, str] | None = None, host: str | None = None) -> str:
    """The stack in one format; `secrets` maps secret config keys to values (masked when absent).
    A fleet's docker run commands stand a blank line apart, its Compose files as YAML documents
    (`---`); as k8s, it is the one server every host runs."""
    by_env = {SECRET_ENV[k]: v for k, v in (secrets or {}).items() if k in SECRET_ENV}
    if fmt == "k8s":
        return manifests_yaml(kubernetes_objects(spec, secrets))
    if fmt == "docker-run":
        return _per_host(spec, lambda c: docker_run_command(c, by_env) + "\n", "\n", host)
    if fmt == "compose":
        return _per_host(spec, lambda c: compose_yaml(c, by_env), "---\n", host)
    if fmt in OBSERVABILITY_FORMATS:
        return OBSERVABILITY_FORMATS[fmt](spec)
    raise ValueError(f"unknown format {fmt!r}; use one of {', '.join(FORMATS)}")


def output_problem(path: Path) -> str | None:
    """Why `path` must not be written, or None: a symlink could point anywhere (`~/.bashrc`)."""
    if path.is_symlink():
        return f"{path} is a symbolic link; refusing to write through it"
    if path.exists() and not path.is_file():
        return f"{path} exists and is not a regular file"
    return None


def _new_file_mode(path: Path) -> int:
    """What a plain open() would leave: the existing file's mode, else 0666 less the umask."""
    if path.exists():
        return path.stat().st_mode & 0o777
    umask = os.umask(0o022)
    os.umask(umask)
    return 0o666 & ~umask


def write_atomically(path: Path, text: str, private: bool) -> None:
    """Write a temporary file next to `path`, then rename it over `path`: the rename replaces
    a symlink that appeared meanwhile instead of following it, and readers see old or new."""
    mode = 0o600 if private else _new_file_mode(path)
    fd, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        os.fchmod(fd, mode)
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temporary)
        raise


def run(args: argparse.Namespace) -> int:
    project_dir = Path(args.project_dir)
    if args.output is not None and (problem := output_problem(Path(args.output))):
        raise Unusable(f"{problem}; name a regular file (or remove the link) and run again")
    spec = load_stack(project_dir, args.stack)
    if args.format is None:
        args.format = FORMAT_BY_TARGET[spec.settings.target.kind]
        print(f"vllm-stack: rendering as {args.format}, what this {spec.settings.target.kind} stack deploys "
              f"(--format {'|'.join(FORMATS)} picks another)", file=sys.stderr)
    secrets = revealed_secrets(spec, os.environ) if args.reveal_secrets else {}
    try:
        text = render(spec, args.format, secrets, args.host)
    except ValueError as exc:  # --host names no host of the fleet
        raise Unusable(str(exc)) from None
    if args.output is None:
        sys.stdout.write(text)
    else:
        try:
            write_atomically(Path(args.output), text, private=bool(secrets))
        except OSError as exc:
            raise Unusable(f"cannot write {args.output}: {exc.strerror or exc}") from None
        print(f"wrote {args.output} ({args.format})", file=sys.stderr)
    return 0


def register(subparsers: Any) -> None:
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "render", help=verb_help("render"),
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("stack", metavar="STACK", help=STACK_HELP)
    parser.add_argument("--format", choices=(*FORMATS, *OBSERVABILITY_FORMATS), default=None,
                        help="k8s: multi-document YAML; docker-run: the command; compose: a Compose file; "
                             "prometheus: a scrape config; alerts: a rule file; grafana: the dashboard JSON "
                             "(default: the stack's own target: docker-run for docker, k8s for kubernetes)")
    parser.add_argument("--reveal-secrets", action="store_true",
                        help=f"print secret values given as {ENV_PREFIX}<KEY> variables instead of ********")
    parser.add_argument("--host", metavar="ID", default=None,
                        help="a Docker fleet (target.hosts): render only this host (one Compose file)")
    parser.add_argument("--output", "-o", type=Path, default=None, metavar="FILE",
                        help="write to FILE instead of stdout (replaced atomically; a symlink is refused)")
    parser.set_defaults(func=run)
