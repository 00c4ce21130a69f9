"""Which read release's memory accounting a stack's image tag is planned with.

The releases read (memory_accounting.json, one per minor's latest patch plus a few earlier
patches): 0.10.1.1, 0.10.2, 0.11.0, 0.11.2, 0.12.0, ..., 0.19.0, 0.19.1, 0.20.0, 0.20.2, 0.21.0,
0.22.1, ..., 0.34.0. A user reads the chosen release in `vllm-stack capacity` ("accounting of
vLLM X"), and whether it is the tag's own release decides the "not read: nearest" caveat.
"""

from __future__ import annotations

import pytest

from vllm_serving.planner.release_accounting import resolve_release


@pytest.mark.parametrize(("tag", "release", "exact"), [
    ("v0.19.1", (0, 19, 1), True),
    ("0.19.0", (0, 19, 0), True),
    ("v0.19.5", (0, 19, 1), False),      # a later patch of a read minor: its newest read patch
    ("v0.11.1", (0, 11, 0), False),      # between two read patches: the one below
    ("v0.20.1-cu129", (0, 20, 0), False),
    ("v0.22.0", (0, 22, 1), False),      # below every read patch of its minor: that minor's first
    ("v0.10.1", (0, 10, 1, 1), False),
    ("v0.35.0", (0, 34, 0), False),      # newer than every read release: the newest
    ("v1.2.0", (0, 34, 0), False),
    ("latest", (0, 34, 0), False),       # a moving tag: the newest
    ("nightly-2026", (0, 34, 0), False),
])
def test_a_tag_is_planned_with_the_nearest_read_release(tag: str, release: tuple[int, ...], exact: bool) -> None:
    chosen, is_exact = resolve_release(tag)
    assert (chosen.version, is_exact) == (release, exact)
    assert chosen.name == ".".join(map(str, release))


def test_a_release_older_than_every_read_one_is_refused_with_the_key_and_the_oldest() -> None:
    with pytest.raises(ValueError) as refused:
        resolve_release("v0.9.2")
    message = str(refused.value)
    assert message.startswith("vLLM v0.9.2 predates the oldest release")
    assert "vllm-serving:image.tag must name v0.10.1.1 or newer" in message
