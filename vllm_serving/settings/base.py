"""What every config section shares.

Strict camelCase keys, errors that carry their fix, typed sizes, durations and paths.
"""

from __future__ import annotations

import ast
import functools
import inspect
import textwrap
import threading
from typing import Annotated, Any

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, model_validator
from pydantic.alias_generators import to_camel

from vllm_serving.catalog.fixable_errors import fix_error as fix_error
from vllm_serving.catalog.fixable_errors import no_boolean_for_a_number
from vllm_serving.units import parse_duration, parse_size


def _size_bytes(value: Any) -> Any:
    if isinstance(value, (str, int)) and not isinstance(value, bool):
        try:
            return parse_size(value)
        except ValueError as exc:
            raise fix_error(str(exc), "write a size such as '32g' (GiB) or '512m' (MiB)") from exc
    return value


def _seconds(value: Any) -> Any:
    if isinstance(value, (str, int)) and not isinstance(value, bool):
        try:
            return parse_duration(value)
        except ValueError as exc:
            raise fix_error(str(exc), "write a duration such as '90s', '20m' or '1h30m'") from exc
    return value


SizeBytes = Annotated[int, BeforeValidator(_size_bytes)]
Seconds = Annotated[int, BeforeValidator(_seconds)]
EnvName = Annotated[str, Field(pattern=r"^[A-Za-z_][A-Za-z0-9_]*$")]


class Section(BaseModel):
    """Common behaviour of every config section: strict keys, camelCase aliases, immutable.

    Each key's docstring documents it (and is quoted in its errors: `attribute_docs`); pydantic's
    use_attribute_docstrings would parse every section's source at start-up (a third of `plan`'s).
    A section's validator is built when first used (`defer_build`): StackSettings' holds them all,
    so a verb does not also build one per section at import."""

    model_config = ConfigDict(
        frozen=True,
        extra="forbid",
        alias_generator=to_camel,
        populate_by_name=True,
        validate_default=True,
        defer_build=True,
    )

    @model_validator(mode="before")
    @classmethod
    def _no_boolean_for_a_number(cls, data: Any) -> Any:
        return no_boolean_for_a_number(cls, data)


def _parsed(source: str) -> ast.Module:
    """`ast.parse`, retried in a thread of its own when CPython 3.11 refuses it in this one: after a
    RecursionError (a hostile file's nesting) its AST constructor fails with 'recursion depth
    mismatch' for the rest of the thread, which turned a config error's message into a crash."""
    try:
        return ast.parse(source)
    except SystemError:
        outcome: list[ast.Module | Exception] = []

        def parse() -> None:
            try:
                outcome.append(ast.parse(source))
            except Exception as exc:  # raised again in the caller's thread
                outcome.append(exc)

        worker = threading.Thread(target=parse)
        worker.start()
        worker.join()
        if isinstance(outcome[0], Exception):
            raise outcome[0] from None
        return outcome[0]


@functools.cache
def attribute_docs(cls: type) -> dict[str, str]:
    """The docstring under each annotated attribute of a class and its bases (`x: int` then
    `\"\"\"...\"\"\"`), read from the source only when an error quotes one."""
    docs: dict[str, str] = {}
    for klass in reversed(cls.__mro__):
        try:
            tree = _parsed(textwrap.dedent(inspect.getsource(klass)))
        except (OSError, TypeError, SyntaxError):  # builtins, classes made at run time
            continue
        body = tree.body[0].body if tree.body and isinstance(tree.body[0], ast.ClassDef) else []
        for node, after in zip(body, body[1:], strict=False):
            if (isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name)
                    and isinstance(after, ast.Expr) and isinstance(after.value, ast.Constant)
                    and isinstance(after.value.value, str)):
                docs[node.target.id] = inspect.cleandoc(after.value.value)
    return docs
