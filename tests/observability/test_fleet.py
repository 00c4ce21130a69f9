"""What watches a Docker fleet, per host: the scrape config has one target per host, labelled
with the host's id (`host`); the alerts fire per host; the dashboard has a `host` variable. A
one-server stack's renders carry no host label at all."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import yaml

from tests.fleet.fleet_stacks import IDS, fleet_spec
from tests.observability.helpers import needs_promtool, promtool
from tests.stack_builders import make_spec
from vllm_serving.engine.release_registry import load
from vllm_serving.observability.alerts import rule_groups
from vllm_serving.observability.dashboard import dashboard, variable_selectors
from vllm_serving.observability.queries import used_queries
from vllm_serving.observability.scrape import scrape_config, scrape_yaml
from vllm_serving.observability.series import unknown_series

JOB = "vllm-fleet"


def _rules(spec: Any = None) -> dict[str, dict[str, Any]]:
    return {r["alert"]: r for r in rule_groups(spec or fleet_spec())["groups"][0]["rules"]}


def test_one_target_per_host_labelled_with_its_id() -> None:
    spec = fleet_spec()
    (job,) = scrape_config(spec)["scrape_configs"]
    assert job["job_name"] == JOB
    # tests/fixtures/fleet/Pulumi.fleet.yaml: ids from the ssh host names, gpu03 named and reached at its
    # publicHost (its dockerHost is an address)
    assert job["static_configs"] == [
        {"targets": ["gpu01.example.internal:8000"], "labels": {"host": "gpu01"}},
        {"targets": ["gpu02.example.internal:8000"], "labels": {"host": "gpu02"}},
        {"targets": ["gpu03.example.internal:8000"], "labels": {"host": "gpu03"}}]
    text = scrape_yaml(spec)
    assert "# A Docker fleet: one target per host of target.hosts (gpu01, gpu02, gpu03), labelled host." in text


def test_a_one_server_stack_has_no_host_label() -> None:
    spec = make_spec("v100")
    (static,) = scrape_config(spec)["scrape_configs"][0]["static_configs"]
    assert "labels" not in static
    assert "host" not in json.dumps(rule_groups(spec)) + json.dumps(dashboard(spec)["templating"])
    assert "fleet" not in scrape_yaml(spec)


def test_per_server_alerts_group_by_host() -> None:
    rules = _rules()
    for name in ("VllmKvCacheAlmostFull", "VllmRequestsQueueing", "VllmPreempting", "VllmTimeToFirstTokenHigh"):
        assert re.search(r"by \(job, host[,)]", rules[name]["expr"]), name
    # the p95 of one host: its subject names the host beside the job
    assert rules["VllmTimeToFirstTokenHigh"]["annotations"]["description"].startswith(
        "{{ $labels.job }} host {{ $labels.host }}: p95")


def test_the_dashboard_picks_hosts() -> None:
    model = dashboard(fleet_spec())
    (host,) = [v for v in model["templating"]["list"] if v["name"] == "host"]
    # every host at once by default ("$__all" is Grafana's value for All), any set of them on demand
    assert (host["multi"], host["includeAll"], host["allValue"]) == (True, True, ".*")
    assert host["current"] == {"text": "All", "value": "$__all"}
    assert [v["name"] for v in model["templating"]["list"]] == ["datasource", "job", "host", "model_name"]
    assert dict(variable_selectors(model))["host"] == 'vllm:num_requests_running{job=~"$job"}'
    exprs = [t["expr"] for p in model["panels"] for t in p.get("targets", [])]
    assert exprs and all('host=~"$host"' in e for e in exprs)


def test_every_fleet_query_names_exported_metrics() -> None:
    names = [name for q in used_queries(fleet_spec()) for name in q.metrics]
    assert unknown_series(names, load("0.19.1")) == []


@needs_promtool
def test_promtool_accepts_the_fleet_scrape_config(tmp_path: Path) -> None:
    (tmp_path / "prometheus.yml").write_text(scrape_yaml(fleet_spec()))
    result = promtool("check", "config", "prometheus.yml", cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr


def _ttft(host: str, fast: int, slow: int) -> list[dict[str, str]]:
    """TTFT histogram of one host finishing `fast` requests under 1s and `slow` at 2.5-5s a minute."""
    labels = f'job="{JOB}",host="{host}",instance="{host}.example.internal:8000",model_name="m"'
    cumulative = {"1.0": fast, "2.5": fast, "5.0": fast + slow, "+Inf": fast + slow}
    return [{"series": f'vllm:time_to_first_token_seconds_bucket{{{labels},le="{le}"}}', "values": f"0+{n}x40"}
            for le, n in cumulative.items()]


@needs_promtool
def test_the_ttft_alert_fires_for_the_slow_host_only(tmp_path: Path) -> None:
    """gpu02 is slow, its two neighbours fast: summed over the fleet the p95 would hide it."""
    groups = rule_groups(fleet_spec())
    for rule in groups["groups"][0]["rules"]:
        rule.pop("annotations")
    (tmp_path / "alerts.yml").write_text(yaml.safe_dump(groups))
    series = [s for host in IDS for s in _ttft(host, *((1, 9) if host == "gpu02" else (100, 0)))]
    fired = [{"exp_labels": {"job": JOB, "host": "gpu02", "severity": "warning", "stack": "fleet"}}]
    test = {"rule_files": ["alerts.yml"], "evaluation_interval": "1m",
            "tests": [{"interval": "1m", "input_series": series, "alert_rule_test": [
                {"eval_time": "25m", "alertname": "VllmTimeToFirstTokenHigh", "exp_alerts": fired}]}]}
    (tmp_path / "test.yml").write_text(json.dumps(test))
    result = promtool("test", "rules", "test.yml", cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr


@needs_promtool
def test_promtool_parses_the_fleet_dashboard_queries(tmp_path: Path) -> None:
    model = dashboard(fleet_spec())
    values = {"$__rate_interval": "1m", "$job": JOB, "$host": ".*", "$model_name": ".*"}
    pattern = re.compile("|".join(re.escape(v) for v in sorted(values, key=len, reverse=True)))
    exprs = [t["expr"] for p in model["panels"] for t in p.get("targets", [])]
    exprs += [selector for _, selector in variable_selectors(model)]
    rules = [{"record": f"dashboard:query_{i}", "expr": pattern.sub(lambda m: values[m.group()], e)}
             for i, e in enumerate(exprs)]
    (tmp_path / "queries.yml").write_text(yaml.safe_dump({"groups": [{"name": "dashboard", "rules": rules}]}))
    result = promtool("check", "rules", "queries.yml", cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
