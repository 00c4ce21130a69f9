"""The dockerd behaviours the day-2 fixes stand on, on this machine's engine (`make test-docker`).

- A volume created again under its name comes back as it is, labels and driver options included
  (the reason `RetainedVolume` ignores both; tests/docker/test_day2_adopted_volumes.py).
- A container that dockerd restarts counts as running while it publishes no port (moby
  daemon/container/state.go `SetRestarting`): what a refresh then reads into `ports`
  (tests/docker/test_day2_refresh_while_restarting.py).
"""

from __future__ import annotations

import time

import pytest

from tests.docker_engine.conftest import Engine
from tests.docker_engine.engine import TEST_LABEL, free_port

pytestmark = pytest.mark.docker_engine
RESTART_WAIT_SECONDS = 30


def test_a_volume_created_again_keeps_its_labels_and_driver_options(engine: Engine) -> None:
    name = f"vllm-serving-day2-{engine.run_id}"
    labels = {TEST_LABEL: engine.run_id, "com.docker.compose.project": "models"}
    options = {"type": "tmpfs", "device": "tmpfs", "o": "size=1m"}
    engine.client.volumes.create(name, driver="local", driver_opts=options, labels=labels)
    again = engine.client.volumes.create(name)  # what the provider sends: the name alone
    assert again.attrs["Labels"] == labels
    assert again.attrs["Options"] == options


def test_a_restarting_container_is_running_with_no_published_port(engine: Engine) -> None:
    container = engine.client.containers.run(
        engine.image, entrypoint=["/bin/sh", "-c", "exit 3"], detach=True,
        name=f"vllm-serving-day2-restart-{engine.run_id}", labels={TEST_LABEL: engine.run_id},
        restart_policy={"Name": "always"}, ports={"8000/tcp": ("127.0.0.1", free_port())})
    deadline = time.monotonic() + RESTART_WAIT_SECONDS
    while True:
        container.reload()
        state = container.attrs["State"]
        if state["Restarting"]:
            break
        assert time.monotonic() < deadline, f"never seen restarting: {state}"
        time.sleep(0.2)
    assert state["Running"]
    published = container.attrs["NetworkSettings"]["Ports"] or {}
    assert not any(bindings for bindings in published.values())  # nothing published meanwhile
