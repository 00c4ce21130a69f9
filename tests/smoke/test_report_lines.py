"""What the smoke report says, line by line: the table's header, a fleet host's logs command in
the JSON, and a server's error body that is JSON but no object. Expected text written by hand."""

from __future__ import annotations

import json

import httpx

from tests.smoke.test_checks import EXPECTED
from vllm_serving.smoke.checks import NOT_RUN, CheckResult, run_checks
from vllm_serving.smoke.report import HostResults, fleet_json, table


def test_the_table_header_names_each_column() -> None:
    # the check column is as wide as the longest check name, `tool-call` (9 characters)
    lines = table("v100", "http://h:8000/v1", []).splitlines()
    assert lines[:2] == ["smoke v100 against http://h:8000/v1", "  check      result     time  detail"]


def test_a_fleet_host_whose_health_fails_names_its_logs_command() -> None:
    down = [CheckResult("health", False, 0.1, "GET /health: no answer within 5s (timeout)"),
            CheckResult("models", True, 0.0, NOT_RUN, skipped=True)]
    doc = json.loads(fleet_json("fleet", [HostResults("gpu-1", "http://gpu-1:8000/v1", down)],
                                {"gpu-1": "docker -H ssh://gpu-1 logs vllm"}))
    assert doc["ok"] is False
    assert doc["hosts"][0]["logsCommand"] == "docker -H ssh://gpu-1 logs vllm"


def test_an_error_body_that_is_a_json_list_is_shown_as_it_came() -> None:
    def listing(request: httpx.Request) -> httpx.Response:
        if request.url.path == "/health":
            return httpx.Response(200)
        return httpx.Response(500, text='["engine dead"]')

    results = {r.name: r for r in run_checks("http://127.0.0.1:9/v1", EXPECTED, api_key=None, timeout=5,
                                             transport=httpx.MockTransport(listing))}
    assert results["models"].detail == '/v1/models answered 500: ["engine dead"]'
