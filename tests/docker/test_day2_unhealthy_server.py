"""Day 2 on a Docker host: a server that failed its health wait is replaced by the next `pulumi up`.

The provider fails the create after the container exists, and the engine keeps it with an init
error. Without a replaceOnChanges path covering `#initerror`, the next `pulumi up` with nothing
changed is an empty update, which the provider answers at once (Update never waits for health):
`up` would succeed on an unhealthy server, and staging would export the new release as verified
for prod to promote. Sequence under the modelled engine (tests/scenario): first up, the failure,
the next up.
"""

from __future__ import annotations

from typing import Any

from tests.scenario.docker_host import Daemon, DockerProvider
from tests.scenario.engine import Engine
from tests.stack_builders import stack_values

SECRETS = {"registryPassword": "SENTINEL-day2-registry-pw"}
SERVER = "vllm-qwen35-27b-server"
NEW_DIGEST = "sha256:" + "5e" * 32


def _engine(stack: str, config: dict[str, Any]) -> tuple[Engine, Daemon]:
    docker = DockerProvider()
    return Engine({"docker": docker}, stack=stack), docker.daemon_of(config)


def _reference(config: dict[str, Any]) -> str:
    image = config["vllm-serving:image"]
    ref = f"{image['registry']}/{image['repository']}:{image['tag']}"
    return f"{ref}@{image['digest']}" if image.get("digest") else ref


def test_the_next_up_replaces_a_server_that_never_turned_healthy_and_waits_again() -> None:
    config = stack_values("v100")
    engine, daemon = _engine("v100", config)
    daemon.never_healthy.add(_reference(config))  # e.g. the host's GPU driver is too old for the image

    first = engine.up(config, SECRETS)
    assert not first.ok and "healthy" in first.error
    assert first.of(SERVER) == ["create-failed"] and engine.entry(SERVER).init_errors

    again = engine.up(config, SECRETS)  # nothing changed in the stack
    assert not again.ok, "pulumi up succeeded on a server that never answered /health"
    assert again.of(SERVER) == ["delete-replaced", "replace-failed"]

    daemon.never_healthy.clear()  # the operator fixed the host
    fixed = engine.up(config, SECRETS)
    assert fixed.ok and fixed.of(SERVER) == ["delete-replaced", "replace"]
    assert not engine.entry(SERVER).init_errors
    assert engine.up(config, SECRETS).of(SERVER) == ["same"]  # healthy now: left alone


def test_staging_keeps_exporting_the_release_it_verified_until_a_new_one_serves() -> None:
    verified = stack_values("v100-staging")
    engine, daemon = _engine("v100-staging", verified)
    assert engine.up(verified, SECRETS).ok
    exported = engine.outputs["release"]

    candidate = stack_values("v100-staging", image={"digest": NEW_DIGEST})
    daemon.never_healthy.add(_reference(candidate))
    assert not engine.up(candidate, SECRETS).ok
    retried = engine.up(candidate, SECRETS)  # the next run, still broken
    assert not retried.ok
    assert engine.outputs["release"] == exported  # prod would promote only what served on staging


def test_a_refresh_forgets_the_init_error_so_only_a_targeted_replace_waits_for_the_server_again() -> None:
    """The bridge's Read reports no init error and a refresh stores what Read returns (pulumi
    step.go `RefreshStep.Apply`): a server still running, unhealthy, is then left in place by the
    next `pulumi up`. docs/provider-behaviour.md gives the command that replaces it."""
    config = stack_values("v100")
    engine, daemon = _engine("v100", config)
    daemon.never_healthy.add(_reference(config))
    assert not engine.up(config, SECRETS).ok

    engine.refresh()  # `pulumi refresh` (or `pulumi up --refresh`) after the failed run
    assert not engine.entry(SERVER).init_errors
    assert engine.up(config, SECRETS).of(SERVER) == ["same"]  # the hazard the docs warn of

    server = engine.entry(SERVER).urn
    replaced = engine.up(config, SECRETS, replace=(server,))  # pulumi up --replace '<server urn>'
    assert not replaced.ok and replaced.of(SERVER) == ["delete-replaced", "replace-failed"]


def test_a_refresh_that_finds_the_failed_server_stopped_makes_the_next_up_replace_it_and_wait() -> None:
    """Read sets `must_run` false for a stopped container, and the provider's update would only start
    it, with no health wait. The same Read empties `ports` (ForceNew), which replaces the server with
    the provider read here; `mustRun` as a replaceOnChanges path keeps that so without the ports
    (tests/contracts/test_day2_options.py guards the option)."""
    config = stack_values("v100")
    engine, daemon = _engine("v100", config)
    daemon.never_healthy.add(_reference(config))
    assert not engine.up(config, SECRETS).ok
    stopped = daemon.by_name("vllm-qwen35-27b")
    assert stopped is not None
    stopped.status = "exited"  # vLLM gave up (or `docker stop`) before anyone refreshed

    engine.refresh()
    again = engine.up(config, SECRETS)
    assert not again.ok, "pulumi up started the stopped server and returned without a health check"
    assert again.of(SERVER) == ["delete-replaced", "replace-failed"]
