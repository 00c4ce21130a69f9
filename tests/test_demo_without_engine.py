"""`make demo` on a machine without a Docker engine says what it needs, in one line, exit 2."""

from __future__ import annotations

import pytest

from tests.paths import PROJECT_DIR
from tools import demo


def test_no_engine_is_one_line_and_exit_2(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
                                          tmp_path) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("DOCKER_HOST", f"unix://{tmp_path}/no-such.sock")
    assert demo.main(["--project-dir", str(PROJECT_DIR)]) == 2
    out = capsys.readouterr().out
    assert out.startswith("demo: needs a Docker engine") and out.count("\n") == 1


def test_a_kubernetes_stack_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    assert demo.main(["--stack", "a100-k8s", "--project-dir", str(PROJECT_DIR)]) == 2
    assert "deploys to Kubernetes" in capsys.readouterr().out
