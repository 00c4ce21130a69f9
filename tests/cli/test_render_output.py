"""`vllm-stack render --output FILE`: never through a symlink, always whole (temp file + rename),
0600 when secrets are revealed."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from tests.paths import PROJECT_DIR, stack_file
from vllm_serving.cli import main

SECRET = "SENTINEL-apikey-0d41"


def _render(capsys: pytest.CaptureFixture[str], output: Path, *extra: str) -> tuple[int, str]:
    code = main(["--project-dir", str(PROJECT_DIR), "render", "v100", "--format", "compose", "-o", str(output), *extra])
    captured = capsys.readouterr()
    return code, captured.out + captured.err


@pytest.fixture
def secret_project(tmp_path: Path) -> Path:
    """v100 with an apiKey held as a (well-formed, fake) ciphertext."""
    project = tmp_path / "project"
    project.mkdir()
    (project / "Pulumi.yaml").write_text((PROJECT_DIR / "Pulumi.yaml").read_text())
    (project / "Pulumi.v100.yaml").write_text(
        (stack_file("v100")).read_text()
        + "  vllm-serving:apiKey:\n    secure: v1:bm90LWEtbm9uY2Uh:bm90LWEtcmVhbC1jaXBoZXJ0ZXh0LW9yLXRhZw==\n")
    return project


@pytest.mark.parametrize("dangling", [False, True])
def test_refuses_to_write_through_a_symlink(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                            dangling: bool) -> None:
    target = tmp_path / "bashrc"
    if not dangling:
        target.write_text("original\n")
    link = tmp_path / "compose.yaml"
    link.symlink_to(target)
    code, text = _render(capsys, link)
    assert code == 2
    assert f"{link} is a symbolic link" in text and "Traceback" not in text
    assert link.is_symlink()
    assert (target.read_text() == "original\n") if not dangling else not target.exists()


def test_refuses_a_directory(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, text = _render(capsys, tmp_path)
    assert code == 2 and "is not a regular file" in text


def test_replaces_the_file_by_rename_and_leaves_no_temporary(tmp_path: Path,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    output = tmp_path / "compose.yaml"
    output.write_text("old\n")
    old_inode = output.stat().st_ino
    code, _ = _render(capsys, output)
    assert code == 0
    assert output.read_text().startswith("services:")
    assert output.stat().st_ino != old_inode  # a new file renamed over the old one, not rewritten in place
    assert sorted(p.name for p in tmp_path.iterdir()) == ["compose.yaml"]


def test_a_failed_write_keeps_the_old_file(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    output = tmp_path / "compose.yaml"
    output.write_text("old\n")

    def no_rename(src: str, dst: str) -> None:
        raise OSError("disk full")

    monkeypatch.setattr("os.replace", no_rename)
    code, text = _render(capsys, output)
    assert code == 2 and f"cannot write {output}: disk full" in text
    assert output.read_text() == "old\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["compose.yaml"]


def test_revealed_secrets_are_written_0600_even_over_a_readable_file(
        secret_project: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    output = tmp_path / "compose.yaml"
    output.write_text("old\n")
    output.chmod(0o644)
    monkeypatch.setenv("VLLM_SERVING_SECRET_APIKEY", SECRET)
    code = main(["--project-dir", str(secret_project), "render", "v100", "--format", "compose",
                 "--reveal-secrets", "-o", str(output)])
    capsys.readouterr()
    assert code == 0
    assert SECRET in output.read_text()
    assert stat.S_IMODE(output.stat().st_mode) == 0o600


def test_a_plain_render_keeps_the_usual_mode(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A new file gets 0666 less the umask, as any editor would write it; an existing one keeps its mode."""
    fresh, kept = tmp_path / "fresh.yaml", tmp_path / "kept.yaml"
    kept.write_text("old\n")
    kept.chmod(0o640)
    umask = os.umask(0o027)
    try:
        assert _render(capsys, fresh)[0] == 0
        assert _render(capsys, kept)[0] == 0
    finally:
        os.umask(umask)
    assert stat.S_IMODE(fresh.stat().st_mode) == 0o640
    assert stat.S_IMODE(kept.stat().st_mode) == 0o640
