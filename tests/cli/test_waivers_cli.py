"""Waivers in every verb: `check`, `plan`, `diff` (and `capacity`) show a waived finding with its
reason; a waived error does not fail them, an unwaived one does; a promoting stack does not
inherit its source's waivers."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.paths import PROJECT_DIR, stack_file
from tests.stack_builders import stack_values
from vllm_serving.cli import main

PATCHED = "our image carries a bf16 patch for sm_70 (OPS-1234)"
WAIVER = {"code": "dtype-bf16-unsupported", "reason": PATCHED}
WAIVED_LINE = ("WAIVED ERROR dtype-bf16-unsupported vllm-serving:engine.dtype: bfloat16 needs compute capability "
               "8.0; V100-32GB has 7.0 - set engine.dtype: half (float16) [waived: " + PATCHED + "]")


def write_stack(project: Path, name: str, waivers: list[dict[str, Any]] | None, base: str = "v100",
                **sections: Any) -> None:
    """Pulumi.NAME.yaml: a shipped stack with sections merged in and the given waivers."""
    values = stack_values(base, **sections)
    if waivers is not None:
        values["vllm-serving:waivers"] = waivers
    (project / f"Pulumi.{name}.yaml").write_text(yaml.safe_dump({"config": values}), encoding="utf-8")


def run(project: Path, capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(["--project-dir", str(project), *args])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def bf16(project: Path) -> Path:
    """`waived` runs bfloat16 on the V100 with a waiver; `blocked` the same without one."""
    write_stack(project, "waived", [WAIVER], engine={"dtype": "bfloat16"})
    write_stack(project, "blocked", None, engine={"dtype": "bfloat16"})
    return project


def test_check_shows_the_waived_error_with_its_reason_and_passes(
        bf16: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(bf16, capsys, "check", "waived")
    assert code == 0
    assert WAIVED_LINE in out.splitlines()
    assert out.splitlines()[-2] == WAIVED_LINE  # after the warnings: what still needs a look comes first
    assert "1 stack(s): 0 error(s), 3 warning(s), 1 waived" in out


def test_check_fails_on_the_same_error_without_a_waiver(bf16: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(bf16, capsys, "check", "blocked")
    assert code == 1
    assert any(line.startswith("ERROR dtype-bf16-unsupported vllm-serving:engine.dtype: ") for line in out.splitlines())
    assert "WAIVED" not in out
    assert "1 stack(s): 1 error(s), 3 warning(s)\n" in out


def test_check_json_carries_the_reason(bf16: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(bf16, capsys, "check", "waived", "--json")
    assert code == 0
    [finding] = [f for f in json.loads(out)[0]["findings"] if f["code"] == "dtype-bf16-unsupported"]
    assert finding["severity"] == "error" and finding["waived"] == PATCHED


def test_check_fails_on_a_stale_waiver(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write_stack(project, "stale", [WAIVER])  # the shipped v100 runs half: nothing to waive
    code, out, _ = run(project, capsys, "check", "stale")
    assert code == 1
    assert ("ERROR waiver-stale vllm-serving:waivers[0]: waives dtype-bf16-unsupported, but the stack raises no "
            "such finding") in out
    assert "- remove vllm-serving:waivers[0] from the stack file" in out


def test_check_refuses_an_unwaivable_code(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write_stack(project, "open", [{"code": "api-open-on-network", "reason": "firewalled"}])
    code, out, _ = run(project, capsys, "check", "open")
    assert code == 1
    assert "ERROR waiver-not-waivable vllm-serving:waivers[0].code: api-open-on-network cannot be waived: " in out
    assert "WARNING api-open-on-network vllm-serving:network.bindAddress: " in out  # still shown, not waived


def test_a_bad_waiver_and_a_bad_key_elsewhere_are_reported_together(
        project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # the waiver without a reason waives nothing: the error it aimed at shows, so do the other keys'
    write_stack(project, "two", [{"code": "dtype-bf16-unsupported"}], engine={"dtype": "bfloat16"},
                network={"hostPort": "eighty"})
    code, out, _ = run(project, capsys, "check", "two")
    assert code == 1
    assert "ERROR config-missing vllm-serving:waivers[0].reason: is required" in out
    assert "ERROR config-type vllm-serving:network.hostPort: " in out
    assert "ERROR dtype-bf16-unsupported vllm-serving:engine.dtype: " in out
    assert "waiver-stale" not in out


def test_plan_lists_the_waived_error_and_plans(bf16: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(bf16, capsys, "plan", "waived")
    assert code == 0
    findings = out.split("  Findings\n", 1)[1].split("\n  Resources", 1)[0].splitlines()
    assert findings[-1] == f"    {WAIVED_LINE}"
    assert "--dtype bfloat16" in out


def test_plan_json_carries_the_reason(bf16: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(bf16, capsys, "plan", "waived", "--json")
    assert code == 0
    assert [f["waived"] for f in json.loads(out)["findings"] if "waived" in f] == [PATCHED]


def test_plan_refuses_without_the_waiver(bf16: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(bf16, capsys, "plan", "blocked")
    assert code != 0 and out == ""
    assert "vllm-serving:engine.dtype" in err


def test_capacity_counts_the_waived_error_apart(bf16: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(bf16, capsys, "capacity", "waived")
    assert code == 0
    assert "0 error(s), 3 warning(s), 1 waived" in out and f"  {WAIVED_LINE}" in out


def test_diff_shows_a_waiver_added(bf16: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(bf16, capsys, "diff", "blocked", "waived")
    assert code == 1
    assert out.splitlines() == [
        "blocked -> waived", "  waivers",
        f"    dtype-bf16-unsupported  (unset) -> {PATCHED} (sets aside error at vllm-serving:engine.dtype)"]


def test_diff_shows_a_waiver_removed_and_its_key(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write_stack(project, "keyed", [{**WAIVER, "key": "engine.dtype"}], engine={"dtype": "bfloat16"})
    write_stack(project, "plain", None, engine={"dtype": "bfloat16"})
    code, out, _ = run(project, capsys, "diff", "keyed", "plain", "--json")
    assert code == 1
    assert json.loads(out)["changes"] == [{
        "section": "waivers", "key": "dtype-bf16-unsupported [vllm-serving:engine.dtype]",
        "a": f"{PATCHED} (sets aside error at vllm-serving:engine.dtype)", "b": None, "kind": "removed"}]


def test_diff_of_the_same_waivers_is_identical(bf16: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # boundary twin: the waiver on both sides is no difference
    shutil.copy(bf16 / "Pulumi.waived.yaml", bf16 / "Pulumi.twin.yaml")
    code, out, _ = run(bf16, capsys, "diff", "waived", "twin")
    assert (code, out) == (0, "waived and twin resolve to the same deployment\n")


@pytest.fixture
def promotion(tmp_path: Path) -> Path:
    """staging runs bfloat16 on its V100s with a waiver; prod promotes from it."""
    shutil.copy(PROJECT_DIR / "Pulumi.yaml", tmp_path)
    shutil.copy(stack_file("v100-prod"), tmp_path)
    write_stack(tmp_path, "v100-staging", [WAIVER], base="v100-staging", engine={"dtype": "bfloat16"})
    return tmp_path


def test_a_promoting_stack_does_not_inherit_its_sources_waivers(
        promotion: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run(promotion, capsys, "check", "v100-staging")[0] == 0
    code, out, _ = run(promotion, capsys, "check", "v100-prod")
    assert code == 1
    assert "ERROR dtype-bf16-unsupported vllm-serving:engine.dtype: " in out
    assert "engine.dtype is in the release of v100-staging, promoted into v100-prod" in out


def test_a_promoting_stack_passes_with_a_waiver_of_its_own(
        promotion: Path, capsys: pytest.CaptureFixture[str]) -> None:
    prod = yaml.safe_load((promotion / "Pulumi.v100-prod.yaml").read_text(encoding="utf-8"))
    prod["config"]["vllm-serving:waivers"] = [{**WAIVER, "reason": "prod runs the patched image too (OPS-1234)"}]
    (promotion / "Pulumi.v100-prod.yaml").write_text(yaml.safe_dump(prod), encoding="utf-8")
    code, out, _ = run(promotion, capsys, "check", "v100-prod")
    assert code == 0
    assert "[waived: prod runs the patched image too (OPS-1234)]" in out
    # and the promotion's reviewer sees each stack's own reason
    code, out, _ = run(promotion, capsys, "diff", "v100-staging", "v100-prod")
    assert f"dtype-bf16-unsupported  {PATCHED} (sets aside error at vllm-serving:engine.dtype) -> prod runs" in out
