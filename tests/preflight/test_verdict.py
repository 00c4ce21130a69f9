"""The preflight's result read back from its exit code and output, and the message that stops `pulumi up`."""

from __future__ import annotations

import pytest

from vllm_serving.preflight.verdict import failure_message, read_verdict


@pytest.mark.parametrize(("code", "output", "passed"), [
    (0, "ok    curl  /usr/bin/curl\npreflight: passed (1 checks)\n", True),
    (1, "FAIL  curl  no curl\n      fix: x\npreflight: FAILED (curl)\n", False),
    (0, "ok    curl  /usr/bin/curl\n", False),  # cut short: no verdict line
    (0, "", False),
    (None, "preflight: passed (1 checks)", False),  # no exit code reported
    (1, "preflight: passed (1 checks)", False),
    # the script's own verdict is its last such line: a vLLM log line echoing one earlier decides nothing
    (0, "preflight: FAILED (echoed by a log)\nok  engine\npreflight: passed (2 checks)\n", True),
    (0, "preflight: passed (echoed)\nFAIL  memory  GPU 0 short\npreflight: FAILED (memory)\n", False),
])
def test_only_exit_zero_with_the_passed_line_passes(code: int | None, output: str, passed: bool) -> None:
    assert read_verdict(code, output).passed is passed


def test_the_failure_message_says_what_failed_and_how_to_run_it_again() -> None:
    output = "FAIL  weights  /m is empty\n      fix: copy it\npreflight: FAILED (weights)\n"
    message = failure_message("on the Docker host", read_verdict(1, output), 1, "pulumi up --replace 'URN'")
    assert message.splitlines() == [
        "preflight failed on the Docker host (exit code 1); the running server was left as it is:",
        "  FAIL  weights  /m is empty",
        "        fix: copy it",
        "  preflight: FAILED (weights)",
        "once fixed, run it again: pulumi up --replace 'URN'",
        "(or skip it: vllm-serving:preflight.enabled false)",
    ]


def test_output_without_a_verdict_shows_its_tail() -> None:
    output = "\n".join(f"line {i}" for i in range(100)) + "\nexec: python3: not found\n"
    verdict = read_verdict(127, output)
    assert not verdict.passed and verdict.report[-1] == "exec: python3: not found" and len(verdict.report) == 40


@pytest.mark.parametrize("output", [None, "", "\n  \n"])
def test_a_preflight_that_printed_nothing_says_so(output: str | None) -> None:
    # e.g. the container was killed before python3 started: the message must not end at a bare colon
    verdict = read_verdict(137, output)
    assert not verdict.passed and verdict.report == ("(no output)",)
    assert "  (no output)" in failure_message("on the Docker host", verdict, 137, "pulumi up").splitlines()
