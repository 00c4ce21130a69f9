"""The fake vLLM (a stand-in for v0.19.1) ready to import, and a model directory, for the engine
check's tests."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.preflight.fake_site import fake_site
from tests.preflight.program import model_dir


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return fake_site(tmp_path_factory.mktemp("site"))


@pytest.fixture(scope="module")
def model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return model_dir(tmp_path_factory.mktemp("weights") / "Qwen3.5-27B")
