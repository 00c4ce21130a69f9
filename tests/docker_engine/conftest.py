"""Fixtures of the Docker-engine suite (`make test-docker`; `make test` deselects it by marker).

Everything the suite creates - containers, volumes, the stand-in image - carries the label
`vllm-serving.test=<run id>` and is removed at the end of the session, whatever the outcome.
"""

from __future__ import annotations

import os
import secrets
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import NoReturn

import docker
import pytest
from docker.models.containers import Container

from tests.docker_engine import standin_image
from tests.docker_engine.engine import (
    API_TIMEOUT_SECONDS,
    TEST_LABEL,
    create,
    on_this_engine,
    remove_labelled,
    rendered_run_without_gpus,
    run_rendered,
)
from tests.paths import PROJECT_DIR, stack_file
from vllm_serving.render.docker_container import ContainerSpec, container_spec
from vllm_serving.spec import ServingSpec
from vllm_serving.stack_files.loader import list_stacks, load_spec

# set by .ci/run once it has an engine: then a suite that cannot run is a failure, not a skip
REQUIRE_VARIABLE = "VLLM_SERVING_REQUIRE_DOCKER"
# on an engine several checkouts share, a prefix of the run id (and so of every name and label) says whose run it is
RUN_PREFIX_VARIABLE = "VLLM_SERVING_TEST_RUN_PREFIX"


def docker_stacks() -> list[str]:
    """The stacks the tests cover (copies of the examples) that deploy to a Docker host."""
    return [s for s in list_stacks(PROJECT_DIR)
            if load_spec(stack_file(s), s, PROJECT_DIR).settings.target.kind == "docker"]


def shipped_spec(stack: str) -> ServingSpec:
    return load_spec(stack_file(stack), stack, PROJECT_DIR)


@dataclass(frozen=True)
class Engine:
    client: docker.DockerClient
    run_id: str
    image: str
    tmp: Path

    def secret_values(self, c: ContainerSpec) -> dict[str, str]:
        return {name: f"test-{name.lower()}-{self.run_id}" for name in c.secret_env}

    def adapt(self, spec: ServingSpec, suffix: str) -> ContainerSpec:
        return on_this_engine(self.client, container_spec(spec, image=self.image), image=self.image,
                              run_id=self.run_id, tmp=self.tmp, suffix=suffix)

    def create(self, c: ContainerSpec) -> Container:
        return create(self.client, c, self.secret_values(c))


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return text[:160] + ("..." if len(text) > 160 else "")


def _cannot_run(reason: str) -> NoReturn:
    if os.environ.get(REQUIRE_VARIABLE) == "1":
        pytest.fail(f"{reason} ({REQUIRE_VARIABLE}=1)", pytrace=False)
    pytest.skip(reason)


@pytest.fixture(scope="session")
def engine(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Engine]:
    try:
        client = docker.from_env(version="auto", timeout=API_TIMEOUT_SECONDS)
        client.ping()
    except Exception as exc:  # whatever the reason (no socket, refused, TLS), the suite cannot run
        _cannot_run(f"no Docker engine reachable: {_one_line(exc)}")
    run_id = f"{os.environ.get(RUN_PREFIX_VARIABLE, '')}{os.getpid()}-{secrets.token_hex(3)}"
    tmp = tmp_path_factory.mktemp("docker-engine")
    try:
        image = standin_image.build(client, tmp / "standin-rootfs.tar", f"vllm-serving-standin-{run_id}",
                                    {TEST_LABEL: run_id})
        yield Engine(client, run_id, image, tmp)
    except standin_image.CannotBuild as exc:
        _cannot_run(f"cannot build the stand-in image: {exc}")
    finally:
        remove_labelled(client, run_id, images=True)
        client.close()


@dataclass(frozen=True)
class Deployment:
    """One shipped stack, deployed twice: through the Docker API and by its rendered `docker run`."""

    stack: str
    spec: ServingSpec
    api: ContainerSpec
    api_container: Container
    run: ContainerSpec
    run_container: Container


@pytest.fixture(scope="session")
def deployments(engine: Engine) -> dict[str, Deployment]:
    """Every shipped Docker stack started at once, so their healthchecks' first interval is waited once."""
    started: dict[str, Deployment] = {}
    for stack in docker_stacks():
        spec = shipped_spec(stack)
        api = engine.adapt(spec, f"{stack}-api")
        run = engine.adapt(spec, f"{stack}-run")
        started[stack] = Deployment(stack, spec, api, engine.create(api), run,
                                    run_rendered(rendered_run_without_gpus(run, engine.secret_values(run)),
                                                 engine.client))
    return started
