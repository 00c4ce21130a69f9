"""What an exception in one of the engine check's steps means, and vLLM's words for it.

Only an exception vLLM raised about the argv is vLLM's judgement ("refused"). The others must not be
reported as "vLLM says":
- "broken": one of vLLM's own modules fails to import in this image - the server fails the same
  way, but the image is at fault, not the stack;
- "error": the exception comes from the check's own code (its innermost frame is in this package,
  e.g. a TypeError from calling an entry point with arguments this release does not take): a bug of
  the check, reported as a step not run, never blocking;
- "not-run": the Hugging Face Hub refused the request for want of a token - the server gets the
  stack's `hfToken`, the preflight never gets a secret, so what the server would see is unknown.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

MESSAGE_CHARS = 4000  # the result goes through a pipe the parent reads after the child exited
# huggingface_hub/errors.py: what it raises when the Hub answers 401/403 to a request without a token
HUB_AUTHORISATION = frozenset({"GatedRepoError", "RepositoryNotFoundError"})
HUB_STATUSES = frozenset({401, 403})


class NotRun(Exception):
    """This release has no entry point for the step (or what it needs did not run)."""


class Refused(Exception):
    """vLLM's own judgement, in its words."""


class Broken(Exception):
    """One of vLLM's own modules failed to import: the image cannot run `vllm serve` at all."""


def words(exc: BaseException) -> str:
    """vLLM's exception as a user should read it: the type and message, and for pydantic's
    ValidationError (vLLM's config dataclasses) the ValueError raised inside the config class."""
    errors = getattr(exc, "errors", None)
    if callable(errors):
        try:
            items = list(errors())
        except Exception:  # not pydantic's errors() after all
            items = []
        if items:
            inner = _inner(exc)
            kind = type(inner).__name__ if inner is not None else type(exc).__name__
            title = getattr(exc, "title", "")
            texts = [str(i.get("msg", "")).replace("Value error, ", "", 1) for i in items]
            return f"{kind}{' in ' + title if title else ''}: {'; '.join(texts)}"
    args: tuple[Any, ...] = exc.args
    text = args[0] if len(args) == 1 and isinstance(args[0], str) else str(exc)  # KeyError quotes str()
    return f"{type(exc).__name__}: {text}"


def _inner(exc: BaseException) -> BaseException | None:
    """The exception a pydantic ValidationError wraps (a config class's ValueError), which carries
    the cause the ValidationError itself drops."""
    errors = getattr(exc, "errors", None)
    try:
        items = list(errors()) if callable(errors) else []
    except Exception:  # not pydantic's errors() after all
        return None
    inner = (items[0].get("ctx") or {}).get("error") if items else None
    return inner if isinstance(inner, BaseException) else None


def _chain(exc: BaseException) -> Iterator[BaseException]:
    """The exception, what it wraps and what caused it, to the first."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        yield current
        current = _inner(current) or current.__cause__ or current.__context__


def _innermost_file(exc: BaseException) -> str:
    tb = exc.__traceback__
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    return tb.tb_frame.f_code.co_filename if tb is not None else ""


def _needs_a_token(exc: BaseException) -> bool:
    for link in _chain(exc):
        status = getattr(getattr(link, "response", None), "status_code", None)
        if type(link).__name__ in HUB_AUTHORISATION or (
                type(link).__module__.startswith("huggingface_hub") and status in HUB_STATUSES):
            return True
    return False


def outcome(exc: BaseException, own_directory: str) -> tuple[str, str]:
    """The status (`refused`, `broken`, `error` or `not-run`) and the words for a step's exception;
    `own_directory` is where the check's own code runs from."""
    if isinstance(exc, NotRun):
        return "not-run", str(exc)
    if isinstance(exc, (Refused, Broken)):
        return ("refused" if isinstance(exc, Refused) else "broken"), str(exc)
    if os.path.dirname(_innermost_file(exc)) == own_directory:
        return "error", f"the check's own error, not vLLM's: {words(exc)}"
    if _needs_a_token(exc) and not os.environ.get("HF_TOKEN"):
        return "not-run", (f"the Hugging Face Hub refused the request without a token (the preflight is not given "
                           f"the server's hfToken): {words(exc)}")
    return "refused", words(exc)
