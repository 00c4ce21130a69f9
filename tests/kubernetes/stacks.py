"""Specs of the shipped stacks with overrides, for the Kubernetes and render tests."""

from __future__ import annotations

import copy
from typing import Any

from tests.paths import ROOT
from vllm_serving.settings.stack_config import parse_stack_config
from vllm_serving.spec import ServingSpec, resolve
from vllm_serving.stack_files.loader import read_stack_file, stack_path

PROJECT = "vllm-serving"
# A current release: kubernetes-validate 1.37 ships schemas for 1.25 to 1.37.
KUBERNETES_VERSION = "1.33.0"


def _merge(base: dict[str, Any], extra: dict[str, Any]) -> dict[str, Any]:
    out = copy.deepcopy(base)
    for key, value in extra.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = _merge(out[key], value)
        elif value is None:
            out.pop(key, None)
        else:
            out[key] = value
    return out


def stack_values(stack: str = "a100-k8s", **sections: Any) -> dict[str, Any]:
    """The stack file's values with sections merged in (a None value removes a key)."""
    values = dict(read_stack_file(stack_path(ROOT, stack), ROOT).values)
    for section, extra in sections.items():
        key = f"{PROJECT}:{section}"
        values[key] = _merge(values.get(key) or {}, extra)
    return values


def make_spec(stack: str = "a100-k8s", secrets: tuple[str, ...] = (), **sections: Any) -> ServingSpec:
    """A resolved spec; `secrets` names secret keys the stack is to set (values stay elsewhere)."""
    values = stack_values(stack, **sections)
    for key in secrets:
        values[f"{PROJECT}:{key}"] = "[secret]"
    settings = parse_stack_config(values, {f"{PROJECT}:{k}" for k in secrets})
    return resolve(settings, stack)
