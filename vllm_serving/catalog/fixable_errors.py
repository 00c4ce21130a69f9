"""Validation errors that carry their fix, for the catalog's facts and the settings alike; and the
one coercion of pydantic's lax mode no stack or config.json means: a boolean read as a number."""

from __future__ import annotations

from typing import Annotated, Any, Literal, get_args, get_origin

from pydantic import BaseModel
from pydantic_core import PydanticCustomError


def fix_error(message: str, fix: str, field: str | int | None = None) -> PydanticCustomError:
    """A validation error that carries the fix; `field` names the key (or a list's index) when a
    model or list validator raises."""
    ctx = {"message": message, "fix": fix, "field": field}
    return PydanticCustomError("with_fix", "{message}", ctx)


def holds_numbers(annotation: Any) -> bool:
    """Whether a field holds numbers (int, float, `X | None`, a tuple of them), not booleans."""
    if annotation in (int, float):
        return True
    origin, args = get_origin(annotation), get_args(annotation)
    if origin is Annotated:
        return holds_numbers(args[0])
    if annotation is bool or origin is Literal:
        return False
    return any(holds_numbers(a) for a in args) and bool not in args


def no_boolean_for_a_number(model: type[BaseModel], data: Any) -> Any:
    """`data` for `model`, refused when a key of numbers holds a boolean. pydantic's lax mode takes
    True as 1: `tensorParallelSize: yes` or `shmSize: on` would deploy with 1 (GPU, byte) and no
    finding, and a YAML boolean is never a number here."""
    if isinstance(data, dict):
        for name, field in model.model_fields.items():
            key = field.alias or name
            value = data.get(key)
            boolean = next((v for v in (value if isinstance(value, list) else [value]) if isinstance(v, bool)), None)
            if boolean is not None and holds_numbers(field.annotation):
                raise fix_error(f"expects a number, got the boolean {str(boolean).lower()}",
                                "write the number meant: unquoted, YAML reads yes/on/y/true and no/off/n/false "
                                "as booleans, which would pass as 1 and 0", field=key)
    return data
