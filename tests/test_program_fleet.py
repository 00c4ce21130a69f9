"""The program for a Docker fleet (target.hosts), under the mock engine: what it exports for
every host, and the same exports when the fleet promotes a release (they are named before the
source's release resolves, so they must be the fleet's, not one server's)."""

from __future__ import annotations

from typing import Any

from components.program import EXPORTS, FLEET
from tests.fleet.fleet_stacks import IDS, fleet_config
from tests.safety.helpers import SENTINELS

SOURCE = "organization/vllm-serving/fleet-staging"
# tests/fixtures/fleet/Pulumi.fleet.yaml: each host's address (gpu03's publicHost) and hostPort 8000
BASE_URLS = {"gpu01": "http://gpu01.example.internal:8000/v1", "gpu02": "http://gpu02.example.internal:8000/v1",
             "gpu03": "http://gpu03.example.internal:8000/v1"}


def test_a_fleet_and_a_fleet_promoting_its_release_export_every_hosts_endpoints(program: Any) -> None:
    staging = program(fleet_config(), stack="fleet-staging", secrets=SENTINELS).outputs
    assert set(staging) == set(EXPORTS[FLEET])
    assert sorted(staging["endpoints"]) == sorted(BASE_URLS.values())
    assert {host: staging["hosts"][host]["baseUrl"] for host in IDS} == BASE_URLS
    assert staging["release"]["stack"] == "fleet-staging"
    # the release carries the model and maxModelLen: the promoting fleet leaves them to it
    prod = fleet_config(release={"promoteFrom": SOURCE}, model={"name": None}, engine={"maxModelLen": None})
    run = program(prod, stack="fleet-prod", secrets=SENTINELS, stack_outputs={SOURCE: staging})
    assert set(run.outputs) == set(EXPORTS[FLEET])
    assert run.outputs["release"]["promotedFrom"] == SOURCE
    assert {host: run.outputs["hosts"][host]["baseUrl"] for host in IDS} == BASE_URLS
