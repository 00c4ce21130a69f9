"""Prometheus's own tool on what the stacks render: `promtool check rules` on the alerts (and on the
dashboard's queries, as recording rules), `promtool check config` on the scrape config, and
`promtool test rules`: each alert fires on the series a troubled server exports, and not on a
healthy one's. Skipped, with the reason, where promtool is not installed."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.observability.helpers import SEVERITY, needs_promtool, observed_spec, promtool
from vllm_serving.observability.alerts import rule_groups, rules_yaml
from vllm_serving.observability.dashboard import dashboard, variable_selectors
from vllm_serving.observability.scrape import TOKEN_DIRECTORY, scrape_yaml

pytestmark = needs_promtool
STACKS = ["a100-k8s", "v100"]
# Grafana's variables as Grafana substitutes them before the query reaches Prometheus
GRAFANA_VARIABLES = {"$__rate_interval": "1m", "$job": "vllm-v100", "$model_name": ".*"}


@pytest.mark.parametrize("stack", STACKS)
def test_promtool_checks_the_alert_rules(stack: str, tmp_path: Path) -> None:
    (tmp_path / "alerts.yml").write_text(rules_yaml(observed_spec(stack)))
    result = promtool("check", "rules", "alerts.yml", cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "SUCCESS: 6 rules found" in result.stdout


@pytest.mark.parametrize("stack", STACKS)
def test_promtool_parses_every_dashboard_query(stack: str, tmp_path: Path) -> None:
    model = dashboard(observed_spec(stack))
    exprs = [t["expr"] for p in model["panels"] for t in p.get("targets", [])]
    exprs += [selector for _, selector in variable_selectors(model)]
    pattern = re.compile("|".join(re.escape(v) for v in sorted(GRAFANA_VARIABLES, key=len, reverse=True)))
    rules = [{"record": f"dashboard:query_{i}", "expr": pattern.sub(lambda m: GRAFANA_VARIABLES[m.group()], e)}
             for i, e in enumerate(exprs)]
    (tmp_path / "queries.yml").write_text(yaml.safe_dump({"groups": [{"name": "dashboard", "rules": rules}]}))
    result = promtool("check", "rules", "queries.yml", cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.parametrize(("stack", "secrets"), [("v100", ("apiKey",)), ("v100", ()), ("a100-k8s", ())])
def test_promtool_checks_the_scrape_config(stack: str, secrets: tuple[str, ...], tmp_path: Path) -> None:
    text = scrape_yaml(observed_spec(stack, secrets))
    assert ("credentials_file" in text) is bool(secrets)
    # promtool opens the token file; the operator fills the real one
    text = text.replace(TOKEN_DIRECTORY, str(tmp_path))
    for token in re.findall(r"credentials_file: (\S+)", text):
        Path(token).write_text("not-the-key\n")
    (tmp_path / "prometheus.yml").write_text(text)
    result = promtool("check", "config", "prometheus.yml", cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr


SERIES = '{job="vllm-v100",instance="gpu01:30006",engine="0",model_name="/Qwen3.5-27B"}'
SCRAPED = {"job": "vllm-v100", "instance": "gpu01:30006"}


def _ttft(fast: int, slow: int) -> list[dict[str, str]]:
    """TTFT histogram series of a server finishing `fast` requests under 1s and `slow` at 2.5-5s a minute."""
    cumulative = {"1.0": fast, "2.5": fast, "5.0": fast + slow, "+Inf": fast + slow}
    labels = SERIES[:-1]
    return [{"series": f'vllm:time_to_first_token_seconds_bucket{labels},le="{le}"}}', "values": f"0+{n}x40"}
            for le, n in cumulative.items()]


# (alert, troubled server's series, healthy server's series, labels of the fired alert)
CASES: list[tuple[str, list[dict[str, str]], list[dict[str, str]], dict[str, str]]] = [
    ("VllmKvCacheAlmostFull", [{"series": f"vllm:kv_cache_usage_perc{SERIES}", "values": "0.95x40"}],
     [{"series": f"vllm:kv_cache_usage_perc{SERIES}", "values": "0.85x40"}], {**SCRAPED, "engine": "0"}),
    ("VllmRequestsQueueing", [{"series": f"vllm:num_requests_waiting{SERIES}", "values": "0+1x40"}],
     [{"series": f"vllm:num_requests_waiting{SERIES}", "values": "5x40"}], SCRAPED),
    ("VllmPreempting", [{"series": f"vllm:num_preemptions_total{SERIES}", "values": "0+2x40"}],
     [{"series": f"vllm:num_preemptions_total{SERIES}", "values": "3x40"}], SCRAPED),
    ("VllmTimeToFirstTokenHigh", _ttft(fast=1, slow=9), _ttft(fast=10, slow=0), {"job": "vllm-v100"}),
]


def _unit_test(tmp_path: Path, alert: str, series: list[dict[str, str]], eval_minutes: int,
               expected: list[dict[str, Any]]) -> None:
    """`promtool test rules` on the stack's rule group without annotations (they are prose)."""
    groups = rule_groups(observed_spec("v100"))
    for rule in groups["groups"][0]["rules"]:
        rule.pop("annotations")
    (tmp_path / "alerts.yml").write_text(yaml.safe_dump(groups))
    test = {"rule_files": ["alerts.yml"], "evaluation_interval": "1m",
            "tests": [{"interval": "1m", "input_series": series,
                       "alert_rule_test": [{"eval_time": f"{eval_minutes}m", "alertname": alert,
                                            "exp_alerts": expected}]}]}
    (tmp_path / "test.yml").write_text(json.dumps(test))
    result = promtool("test", "rules", "test.yml", cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr


def _fired(alert: str, labels: dict[str, str]) -> list[dict[str, Any]]:
    return [{"exp_labels": {**labels, "severity": SEVERITY[alert], "stack": "v100"}}]


@pytest.mark.parametrize(("alert", "troubled", "healthy", "labels"), CASES, ids=[c[0] for c in CASES])
def test_alert_fires_on_trouble_only(alert: str, troubled: list[dict[str, str]], healthy: list[dict[str, str]],
                                     labels: dict[str, str], tmp_path: Path) -> None:
    _unit_test(tmp_path, alert, troubled, 25, _fired(alert, labels))
    _unit_test(tmp_path, alert, healthy, 25, [])


def test_kv_cache_alert_waits_ten_minutes(tmp_path: Path) -> None:
    full = [{"series": f"vllm:kv_cache_usage_perc{SERIES}", "values": "0.5 0.95x40"}]
    _unit_test(tmp_path, "VllmKvCacheAlmostFull", full, 9, [])
    _unit_test(tmp_path, "VllmKvCacheAlmostFull", full, 12, _fired("VllmKvCacheAlmostFull", {**SCRAPED, "engine": "0"}))


DOWN_MINUTES = 18
"""v100's model load budget: 300 + 15 x 50.99 GiB = 1065 s -> 18 min (tests/observability/test_alerts.py)."""


def test_server_down_only_after_a_restart_could_have_finished(tmp_path: Path) -> None:
    """Down from minute 2: quiet while a model load could still be running, firing after."""
    down = DOWN_MINUTES
    series = [{"series": 'up{job="vllm-v100",instance="gpu01:30006"}', "values": f"1 1 0x{down + 10}"}]
    _unit_test(tmp_path, "VllmServerDown", series, down, [])
    _unit_test(tmp_path, "VllmServerDown", series, down + 3, _fired("VllmServerDown", SCRAPED))


def test_server_absent_when_nothing_is_scraped(tmp_path: Path) -> None:
    down = DOWN_MINUTES
    other = [{"series": 'up{job="node",instance="gpu01:9100"}', "values": f"1x{down + 10}"}]
    _unit_test(tmp_path, "VllmServerAbsent", other, down + 3, _fired("VllmServerAbsent", {"job": "vllm-v100"}))
    scraped = [{"series": 'up{job="vllm-v100",instance="gpu01:30006"}', "values": f"1x{down + 10}"}]
    _unit_test(tmp_path, "VllmServerAbsent", scraped, down + 3, [])
