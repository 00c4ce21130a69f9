"""`make demo`: a stack's server on this machine's Docker engine, with a stand-in for vLLM, then
`vllm-stack smoke` against it - what `pulumi up -s local` and the first check look like, in under
a minute, with no Pulumi, GPU, model download or registry.

The stand-in image is built here from this machine's Python and curl (tests/docker_engine/
standin_image.py; nothing is pulled) and answers like vLLM v0.19.1 where smoke looks. The
container is the stack's own (`container_spec`: argv, env, ports, mounts, healthcheck), less the
GPU request, with its host paths under a temporary directory (tests/docker_engine/engine.py, as
the Docker-engine tests run it). The image is kept for the next run; the container and its
volumes are removed (`--keep` leaves the server running).

    python tools/demo.py [--stack local] [--name vllm-serving-demo] [--keep] [--project-dir DIR]
"""

from __future__ import annotations

import argparse
import hashlib
import os
import secrets
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

if __package__ in (None, ""):  # run as a script: the repository root holds tests/ and vllm_serving/
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import docker  # noqa: E402

from tests.docker_engine import standin_image  # noqa: E402
from tests.docker_engine.engine import create, on_this_engine, remove_labelled  # noqa: E402
from vllm_serving.cli import main as vllm_stack  # noqa: E402
from vllm_serving.render.docker_container import container_spec  # noqa: E402
from vllm_serving.smoke.probe import API_KEY_VARIABLE  # noqa: E402
from vllm_serving.stack_files.loader import load_spec, stack_path  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
SOURCE_LABEL = "vllm-serving.standin-source"
"""The image's label: the stand-in server's digest, so an image of an older stand-in is rebuilt."""
HEALTH_WAIT_SECONDS = 30


def say(message: str) -> None:
    print(f"demo: {message}", flush=True)


def _standin_image(client: docker.DockerClient, name: str, scratch: Path) -> str:
    digest = hashlib.sha256(standin_image.SERVER.read_bytes()).hexdigest()[:16]
    for image in client.images.list(name=f"{name}-standin", filters={"label": f"{SOURCE_LABEL}={digest}"}):
        say(f"stand-in vLLM image {name}-standin (built before)")
        return str(image.id)
    say(f"building the stand-in vLLM image {name}-standin from this machine's Python and curl "
        "(~10 s, once; nothing is pulled)")
    return standin_image.build(client, scratch / "standin-rootfs.tar", f"{name}-standin", {SOURCE_LABEL: digest})


def _wait_for_health(url: str) -> bool:
    deadline = time.monotonic() + HEALTH_WAIT_SECONDS
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(url, timeout=2) as answer:  # noqa: S310 - a loopback URL we made
                if answer.status == 200:
                    return True
        except OSError:
            time.sleep(0.3)
    return False


def demo(stack: str, name: str, keep: bool, project: Path = ROOT) -> int:
    spec = load_spec(stack_path(project, stack), stack, project)
    if spec.settings.target.kind != "docker":
        say(f"stack {stack} deploys to Kubernetes; the demo runs a Docker stack (--stack local)")
        return 2
    try:
        client = docker.from_env(version="auto", timeout=60)
        client.ping()
    except Exception as exc:  # no socket, refused, TLS: the demo needs an engine, nothing else
        say(f"needs a Docker engine (Docker Desktop or Engine), and none answers: {' '.join(str(exc).split())[:160]}")
        return 2
    run_id = secrets.token_hex(3)
    with tempfile.TemporaryDirectory(prefix="vllm-serving-demo-") as scratch:
        image = _standin_image(client, name, Path(scratch))
        c = on_this_engine(client, container_spec(spec, image=image), image=image, run_id=run_id,
                           tmp=Path(scratch), suffix=name)
        secret_values = {variable: secrets.token_urlsafe(24) for variable in c.secret_env}
        try:
            say(f"starting container {c.name}: stack {stack}'s own argv, env, mounts and healthcheck, "
                f"without the GPU request, on 127.0.0.1:{c.host_port}")
            create(client, c, secret_values)
            base = f"http://127.0.0.1:{c.host_port}"
            say(f"waiting for {base}/health (up to {HEALTH_WAIT_SECONDS} s)")
            if not _wait_for_health(f"{base}/health"):
                say(f"the server did not answer; its log: docker logs {c.name}")
                return 1
            say(f"vllm-stack smoke {stack} --base-url {base}/v1")
            if "VLLM_API_KEY" in secret_values:  # the key the stack's apiKey secret stands for
                os.environ[API_KEY_VARIABLE] = secret_values["VLLM_API_KEY"]
            code = vllm_stack(["--project-dir", str(project), "smoke", stack, "--base-url", f"{base}/v1"])
            if keep:
                say(f"left running: {base}/v1 (docker rm -f {c.name} removes it)")
            return code
        finally:
            if not keep:
                remove_labelled(client, run_id, images=False)
                say(f"removed container {c.name} (the image stays for the next run)")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="make demo", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--stack", default="local", help="a Docker stack of the project (default: local)")
    parser.add_argument("--name", default="vllm-serving-demo", help="prefix of the image and container names")
    parser.add_argument("--keep", action="store_true", help="leave the server running afterwards")
    parser.add_argument("--project-dir", type=Path, default=ROOT, help="where the stack files are (default: here)")
    args = parser.parse_args(argv)
    return demo(args.stack, args.name, args.keep, args.project_dir)


if __name__ == "__main__":
    sys.exit(main())
