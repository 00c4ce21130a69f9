"""What the smoke report says, line by line: the table's header, a fleet host's logs command in
the JSON, and a server's error body that is JSON but no object. Expected text written by hand."""

from __future__ import annotations

import json

import httpx

from tests.smoke.test_checks import EXPECTED
from vllm_serving.smoke.checks import NOT_RUN, CheckResult, run_checks
from vllm_serving.smoke.report import HostResults, as_json, fleet_json, table


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


RAN = [CheckResult("health", True, 0.01, "200"), CheckResult("models", False, 0.02, "/v1/models answered 500: x"),
       CheckResult("reasoning", True, 0.0, "engine.reasoningParser is not set", skipped=True),
       CheckResult("chat", True, 0.5, "answered 'OK'")]


def test_the_footer_counts_the_checks_that_ran() -> None:
    # 3 ran (the skipped one is not counted), 1 of them failed
    assert table("v100", "http://h:8000/v1", RAN).splitlines()[-1] == "  2/3 passed, 1 failed"


def test_the_json_gives_each_check_its_status_and_the_stack() -> None:
    doc = json.loads(as_json("v100", "http://h:8000/v1", RAN))
    assert (doc["stack"], doc["baseUrl"], doc["ok"]) == ("v100", "http://h:8000/v1", False)
    assert doc["checks"][1] == {"name": "models", "status": "fail", "ok": False, "seconds": 0.02,
                                "detail": "/v1/models answered 500: x"}
    assert [(c["status"], c["ok"]) for c in doc["checks"]] == [("pass", True), ("fail", False), ("skip", True),
                                                              ("pass", True)]
    fleet = json.loads(fleet_json("fleet", [HostResults("gpu-1", "http://gpu-1:8000/v1", RAN)], {}))
    assert fleet["stack"] == "fleet" and fleet["ok"] is False
    assert fleet["hosts"][0]["host"] == "gpu-1" and "stack" not in fleet["hosts"][0]
