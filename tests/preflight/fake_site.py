"""The fake vLLM (tests/preflight/fake_vllm/vllm, a stand-in for v0.19.1) ready to import: copied
with its `release.json`, the project's registry of v0.19.1, beside it; `without` leaves modules
out, as a release that lacks them."""

from __future__ import annotations

import shutil
from pathlib import Path

from tests.paths import ROOT

FAKE_VLLM = Path(__file__).parent / "fake_vllm" / "vllm"
REGISTRY = ROOT / "vllm_serving" / "engine" / "releases" / "v0.19.1.json"


def fake_site(into: Path, without: tuple[str, ...] = ()) -> Path:
    """A directory for PYTHONPATH holding the fake `vllm` package; `without` names files under it
    (e.g. `v1/attention/selector.py`) to leave out."""
    package = into / "vllm"
    shutil.copytree(FAKE_VLLM, package, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copyfile(REGISTRY, package / "release.json")
    for name in without:
        (package / name).unlink()
    return into
