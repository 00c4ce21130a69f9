"""The fleet test stack (tests/fixtures/fleet/Pulumi.fleet.yaml) and variants of it."""

from __future__ import annotations

import copy
from typing import Any

from tests.paths import FIXTURES, PROJECT, PROJECT_DIR
from tests.pulumi_harness import stack_config
from vllm_serving.settings.stack_config import parse_stack_config
from vllm_serving.spec import ServingSpec, resolve

FLEET_FILE = FIXTURES / "fleet" / "Pulumi.fleet.yaml"
TARGET = f"{PROJECT}:target"
IDS = ("gpu01", "gpu02", "gpu03")


def fleet_config(hosts: list[dict[str, Any]] | None = None, **sections: dict[str, Any]) -> dict[str, Any]:
    """The fleet stack's config; `hosts` replaces target.hosts, `sections` replace whole keys of
    a section (a None value removes the key)."""
    config = copy.deepcopy(stack_config(FLEET_FILE))
    if hosts is not None:
        config[TARGET]["hosts"] = hosts
    for section, keys in sections.items():
        values = config.setdefault(f"{PROJECT}:{section}", {})
        for key, value in keys.items():
            if value is None:
                values.pop(key, None)
            else:
                values[key] = value
    return config


def fleet_hosts_config() -> list[dict[str, Any]]:
    """target.hosts as the file has them."""
    return copy.deepcopy(stack_config(FLEET_FILE)[TARGET]["hosts"])


def fleet_spec(hosts: list[dict[str, Any]] | None = None, stack: str = "fleet",
               **sections: dict[str, Any]) -> ServingSpec:
    return resolve(parse_stack_config(fleet_config(hosts, **sections)), stack, project_dir=PROJECT_DIR)
