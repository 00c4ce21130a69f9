"""CI cannot leak production: what the workflows promise in docs/ci-security.md, checked on the YAML.

Text checks read the raw files as well as the parsed YAML, because a pin's tag lives in a comment.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.paths import ROOT

WORKFLOWS = ROOT / ".github" / "workflows"
PREVIEW, PROMOTE = WORKFLOWS / "preview.yml", WORKFLOWS / "promote.yml"
ALL = sorted(WORKFLOWS.glob("*.y*ml"))
DOC = ROOT / "docs" / "ci-security.md"
# Which environment each workflow's secrets come from.
ENVIRONMENT = {PREVIEW: "staging", PROMOTE: "production"}
DEFAULT_BRANCH_ONLY = "github.ref == format('refs/heads/{0}', github.event.repository.default_branch)"
SECRET = re.compile(r"secrets\.(\w+)")
PIN = re.compile(r"^\s*(?:-\s+)?uses:\s+([\w.-]+/[\w./-]+)@([0-9a-f]{40}) # v\d+(?:\.\d+){0,2}\s*$")


def load(path: Path) -> dict[str, Any]:
    raw: dict[Any, Any] = yaml.safe_load(path.read_text(encoding="utf-8"))
    raw["on"] = raw.pop(True, raw.get("on"))  # YAML 1.1 reads the key `on` as True
    return raw


def jobs(path: Path) -> dict[str, dict[str, Any]]:
    found: dict[str, dict[str, Any]] = load(path)["jobs"]
    return found


def secrets_of(node: Any) -> set[str]:
    return set(SECRET.findall(json.dumps(node)))


def test_both_workflows_are_checked() -> None:
    assert set(ALL) == set(ENVIRONMENT)  # a new workflow needs its environment decided here


@pytest.mark.parametrize("path", ALL, ids=lambda p: p.name)
def test_every_action_is_pinned_to_a_commit_with_its_tag(path: Path) -> None:
    lines = [line for line in path.read_text(encoding="utf-8").splitlines()
             if re.match(r"^\s*(?:-\s+)?uses:", line)]
    uses = [step["uses"] for job in jobs(path).values() for step in job.get("steps", []) if "uses" in step]
    assert len(lines) == len(uses)  # no `uses` the line scan missed (flow style, reusable workflows)
    unpinned = [line.strip() for line in lines if not PIN.match(line)]
    assert not unpinned, unpinned


@pytest.mark.parametrize("path", ALL, ids=lambda p: p.name)
def test_secrets_only_in_jobs_of_the_workflow_environment(path: Path) -> None:
    workflow = load(path)
    assert not secrets_of({k: v for k, v in workflow.items() if k != "jobs"})  # no workflow-wide secret
    readers = {name: job for name, job in workflow["jobs"].items() if secrets_of(job)}
    assert readers
    for name, job in readers.items():
        assert job.get("environment") == ENVIRONMENT[path], name


def test_production_environment_only_in_promote() -> None:
    environments = {path: {job.get("environment") for job in jobs(path).values()} for path in ALL}
    assert environments[PREVIEW] == {None, "staging"}
    assert environments[PROMOTE] == {"production"}


def test_preview_runs_on_pull_request_only_and_skips_forks() -> None:
    workflow = load(PREVIEW)
    assert list(workflow["on"]) == ["pull_request"]  # never pull_request_target: a PR's code never meets base secrets
    for name, job in workflow["jobs"].items():
        if "environment" in job:
            assert "github.event.pull_request.head.repo.full_name == github.repository" in job["if"], name


def test_promote_runs_only_from_the_default_branch() -> None:
    workflow = load(PROMOTE)
    assert list(workflow["on"]) == ["workflow_dispatch"]
    for name, job in workflow["jobs"].items():
        assert job["if"] == DEFAULT_BRANCH_ONLY, name


@pytest.mark.parametrize("path", ALL, ids=lambda p: p.name)
def test_least_privilege(path: Path) -> None:
    workflow = load(path)
    assert workflow["permissions"] == {}
    for name, job in workflow["jobs"].items():
        writes = {scope for scope, level in job["permissions"].items() if level != "read"}
        allowed = {"pull-requests"} if path == PREVIEW and job.get("environment") else set()
        assert writes <= allowed, name
        for step in job["steps"]:
            if str(step.get("uses", "")).startswith("actions/checkout@"):
                assert step["with"]["persist-credentials"] is False, name


@pytest.mark.parametrize("path", ALL, ids=lambda p: p.name)
def test_no_expression_inside_run(path: Path) -> None:
    """Values reach scripts through env vars, so no input is ever spliced into shell code."""
    for name, job in jobs(path).items():
        for step in job["steps"]:
            assert "${{" not in str(step.get("run", "")), (name, step.get("name"))


def test_promote_installs_nothing_from_a_cache() -> None:
    for name, job in jobs(PROMOTE).items():
        for step in job["steps"]:
            if str(step.get("uses", "")).startswith("astral-sh/setup-uv@"):
                assert step["with"]["enable-cache"] is False, name


def test_the_doc_names_every_secret_each_environment_holds() -> None:
    text = DOC.read_text(encoding="utf-8")
    for path, environment in ENVIRONMENT.items():
        for name in secrets_of(load(path)["jobs"]):
            assert re.search(rf"`{environment}`.*`{name}`", text), (environment, name)


ZIZMOR = Path(sys.executable).parent / "zizmor"


def zizmor(*inputs: Path) -> list[dict[str, Any]]:
    """zizmor's findings, auditor persona, offline, with no config file or ignore comment honoured."""
    if not ZIZMOR.exists():
        pytest.skip(f"zizmor is not installed in this environment ({ZIZMOR}); `uv sync` installs it")
    done = subprocess.run([str(ZIZMOR), "--offline", "--persona", "auditor", "--no-config", "--no-ignores",
                           "--format", "json", *map(str, inputs)], capture_output=True, text=True)
    assert done.stdout, done.stderr
    findings: list[dict[str, Any]] = json.loads(done.stdout)
    return findings


def test_zizmor_finds_nothing() -> None:
    findings = zizmor(WORKFLOWS)
    assert findings == [], [(f["ident"], f["locations"][0]["concrete"]["feature"]) for f in findings]


def test_zizmor_reports_a_tag_pin_and_a_secret_outside_its_environment(tmp_path: Path) -> None:
    text = PROMOTE.read_text(encoding="utf-8")
    broken = re.sub(r"actions/checkout@[0-9a-f]{40} # (v[\d.]+)", r"actions/checkout@\1", text)
    broken = broken.replace("    environment: production\n", "", 1)
    assert broken.count("environment: production") == text.count("environment: production") - 1
    (tmp_path / "promote.yml").write_text(broken)
    assert {"unpinned-uses", "secrets-outside-env"} <= {f["ident"] for f in zizmor(tmp_path / "promote.yml")}
