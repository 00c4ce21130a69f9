"""Start-up budgets, probe counts and Pulumi timeouts: each figure worked out by hand from the
constants' documented meaning (timing.py's comments), so a changed formula or constant shows."""

from __future__ import annotations

import pytest

from vllm_serving import timing
from vllm_serving.timing import (
    docker_wait_seconds,
    image_pull_seconds,
    rollout_seconds,
    startup_budget_seconds,
    startup_probe_failures,
    whole_minutes,
)


@pytest.mark.parametrize(("weights_gib", "seconds"), [
    (0.0, 300),  # engine init and CUDA graphs alone: 5 min
    (4.0, 360),  # 300 + 15 x 4 = 360 s, already whole minutes: not rounded further
    (50.1, 1080),  # 300 + 15 x 50.1 = 1051.5 s -> 17.5 min -> 18 min
    (54.0, 1140),  # 300 + 15 x 54 = 1110 s -> 18.5 min -> 19 min
])
def test_a_model_load_is_budgeted_from_its_weights_in_whole_minutes(weights_gib: float, seconds: int) -> None:
    assert startup_budget_seconds(weights_gib) == seconds


def test_the_budget_reads_weights_at_a_slow_disks_pace() -> None:
    """The comment's promise: a slow local disk (~70 MB/s; 15 s per GiB is 71.6 MB/s) still finishes
    reading the weights inside the budget, on top of the 5 minutes of engine start."""
    for gib in (1, 16, 54, 140, 800):
        reading = gib * 1024**3 / 71.6e6
        assert startup_budget_seconds(gib) >= 300 + reading


def test_docker_waits_the_start_period_then_every_retry() -> None:
    # 1080 s start period + 30 s interval x (3 retries + the first check) = 1200 s
    assert docker_wait_seconds(1080) == 1200


@pytest.mark.parametrize(("image_gib", "seconds"), [
    (0.0, 120),  # the base alone
    (20.0, 2220),  # 120 + 20 x 1024 / 10 = 2168 s -> 36.1 min -> 37 min
    (10.0, 1200),  # 120 + 10 x 1024 / 10 = 1144 s -> 19.07 min -> 20 min
    (1800 / 1024, 300),  # 1800 MiB: 120 + 1800 / 10 = 300 s, already whole minutes: not rounded further
])
def test_an_image_pull_moves_10_mib_per_second(image_gib: float, seconds: int) -> None:
    assert image_pull_seconds(image_gib) == seconds


@pytest.mark.parametrize(("startup", "failures"), [(1080, 108), (1081, 109), (5, 1)])
def test_the_startup_probe_alone_covers_the_load(startup: int, failures: int) -> None:
    # failureThreshold x periodSeconds (10 s) >= the budget, by the fewest failures that do
    assert startup_probe_failures(startup) == failures
    assert failures * timing.STARTUP_PROBE_PERIOD_SECONDS >= startup
    assert (failures - 1) * timing.STARTUP_PROBE_PERIOD_SECONDS < startup


def test_a_rollout_adds_scheduling_and_the_image_pull_to_the_load() -> None:
    assert rollout_seconds(1080) == 1980  # 1080 + 900 s for a fresh node to pull a ~20 GB image


@pytest.mark.parametrize(("seconds", "text"), [(60, "1m"), (61, "2m"), (1200, "20m"), (1, "1m")])
def test_pulumi_timeouts_round_up_to_whole_minutes(seconds: int, text: str) -> None:
    assert whole_minutes(seconds) == text


def test_liveness_never_kills_a_server_the_readiness_probe_would_still_wait_for() -> None:
    """Kubernetes probes: liveness gives up no sooner than readiness (30 s x 3 vs 10 s x 3)."""
    live = timing.LIVENESS["periodSeconds"] * timing.LIVENESS["failureThreshold"]
    ready = timing.READINESS["periodSeconds"] * timing.READINESS["failureThreshold"]
    assert (live, ready) == (90, 30)
    for probe in (timing.LIVENESS, timing.READINESS):
        assert probe["timeoutSeconds"] < probe["periodSeconds"]


def test_pulumi_waits_longer_than_each_backend_so_the_backends_error_arrives_first() -> None:
    # v100: Docker's own wait is 1200 s (above); + 120 s for creating and starting the container
    assert whole_minutes(docker_wait_seconds(1080) + timing.DOCKER_TIMEOUT_MARGIN_SECONDS) == "22m"
    # a Kubernetes rollout of 1980 s (above) + 300 s, so ProgressDeadlineExceeded comes first
    assert whole_minutes(rollout_seconds(1080) + timing.KUBERNETES_TIMEOUT_MARGIN_SECONDS) == "38m"
