"""How tests build stacks, in one place: two ways, each for its purpose.

- As a user writes them: `stack_values` / `make_spec` merge camelCase sections into a shipped
  stack's raw config, then validate and resolve it exactly as the program does.
- As a boundary twin needs them: `shipped_settings` / `edit` / `spec_of` copy validated settings
  with snake_case fields replaced, without validation, so a rule can be tested one step past a
  value the settings would refuse.
"""

from __future__ import annotations

import copy
from typing import Any

from tests.paths import PROJECT_DIR, stack_file
from vllm_serving.settings import StackSettings
from vllm_serving.settings.stack_config import parse_stack_config
from vllm_serving.spec import ServingSpec, resolve
from vllm_serving.stack_files.loader import load_settings, read_stack_file

PROJECT = "vllm-serving"


def shipped_settings(stack: str) -> StackSettings:
    return load_settings(read_stack_file(stack_file(stack), PROJECT_DIR))


def edit(settings: StackSettings, **sections: Any) -> StackSettings:
    """`edit(s, engine={"dtype": "bfloat16"})`: a copy with fields of sections replaced."""
    update: dict[str, Any] = {}
    for name, fields in sections.items():
        if name == "secrets_set":
            update[name] = fields
        else:
            update[name] = getattr(settings, name).model_copy(update=fields)
    return settings.model_copy(update=update)


def spec_of(settings: StackSettings, stack: str = "test") -> ServingSpec:
    return resolve(settings, stack)


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
    values = dict(read_stack_file(stack_file(stack), PROJECT_DIR).values)
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
