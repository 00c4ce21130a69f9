"""A registry in the first format (schema 1: names only, none of the facts the rules read since
schema 2), as the generator wrote v0.11.0 before the facts were extracted; kept so the rules are
tested on a registry that states nothing beyond names, as a file of an older generator would."""

from __future__ import annotations

import json
from pathlib import Path

from vllm_serving.engine.release_registry import VllmRelease, release_from_json

SCHEMA_1 = Path(__file__).parent / "fixtures" / "v0.11.0-schema-1.json"


def schema_1_release() -> VllmRelease:
    return release_from_json(json.loads(SCHEMA_1.read_text(encoding="utf-8")))
