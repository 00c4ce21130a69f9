"""Every start-up budget, probe period and Pulumi timeout margin, in one place.

The budget for a model load is derived from the weights' size; each backend waits for it with its
own probes, and gives Pulumi a margin over that wait so the engine's own error (unhealthy,
ProgressDeadlineExceeded) arrives before Pulumi's generic timeout.
"""

from __future__ import annotations

import math

# A model load: engine init and CUDA graphs (~5 min for a 27B model on a cold compile cache, per
# vLLM's logs), plus reading the weights at a conservative ~70 MB/s from local disk.
STARTUP_BASE_SECONDS = 300
STARTUP_SECONDS_PER_WEIGHT_GIB = 15

# Docker healthcheck on /health.
HEALTH_INTERVAL_SECONDS = 30
HEALTH_TIMEOUT_SECONDS = 10
HEALTH_RETRIES = 3

# Kubernetes probes: the startup probe alone covers the model load, so liveness never kills a
# loading model.
STARTUP_PROBE_PERIOD_SECONDS = 10
STARTUP_PROBE_TIMEOUT_SECONDS = 5
READINESS = {"periodSeconds": 10, "timeoutSeconds": 5, "failureThreshold": 3}
LIVENESS = {"periodSeconds": 30, "timeoutSeconds": 10, "failureThreshold": 3}
# On top of the model load: scheduling and pulling a ~20 GB image onto a fresh node.
IMAGE_PULL_ALLOWANCE_SECONDS = 900

# Image pulls (the RemoteImage, not the container): an internal registry over a busy 100 Mbit/s
# link moves ~10 MiB/s; the sizes per image class are in engine/defaults.py.
PULL_MIB_PER_SECOND = 10
PULL_BASE_SECONDS = 120

# Pulumi's margin over each backend's own wait.
DOCKER_TIMEOUT_MARGIN_SECONDS = 120
"""Docker: over the healthcheck wait, for creating and starting the container (the image is
already on the host: the pull is the RemoteImage's, with its own timeout)."""
KUBERNETES_TIMEOUT_MARGIN_SECONDS = 300
"""Kubernetes: beyond the rollout deadline, so Kubernetes reports ProgressDeadlineExceeded first."""


def startup_budget_seconds(weights_gib: float) -> int:
    """How long a load may take, rounded up to whole minutes (canonical durations diff less)."""
    raw = STARTUP_BASE_SECONDS + STARTUP_SECONDS_PER_WEIGHT_GIB * weights_gib
    return int(math.ceil(raw / 60) * 60)


def docker_wait_seconds(startup_seconds: int) -> int:
    """How long Docker's `wait` polls for healthy: the start period, then every retry."""
    return startup_seconds + HEALTH_INTERVAL_SECONDS * (HEALTH_RETRIES + 1)


def image_pull_seconds(image_gib: float) -> int:
    """How long pulling an image of `image_gib` may take, in whole minutes."""
    raw = PULL_BASE_SECONDS + image_gib * 1024 / PULL_MIB_PER_SECOND
    return int(math.ceil(raw / 60) * 60)


def startup_probe_failures(startup_seconds: int) -> int:
    """Startup probe failures allowed: failureThreshold x period covers the budget."""
    return math.ceil(startup_seconds / STARTUP_PROBE_PERIOD_SECONDS)


def rollout_seconds(startup_seconds: int) -> int:
    """How long a Kubernetes rollout may take: the model load plus pulling the image onto a node."""
    return startup_seconds + IMAGE_PULL_ALLOWANCE_SECONDS


def whole_minutes(seconds: int) -> str:
    """A Pulumi custom timeout, rounded up to whole minutes."""
    return f"{math.ceil(seconds / 60)}m"
