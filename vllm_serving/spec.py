"""One resolved deployment: the settings joined with the catalogs and the rendered vLLM command.

Every backend (Docker, Kubernetes) and every offline view (plan, render, check)
starts from a `ServingSpec`, so the flags exist once.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import msgspec

from vllm_serving.catalog.gpus import CPU, GpuSpec, find_gpu, suggest_gpu
from vllm_serving.catalog.hf_config import load_hf_config
from vllm_serving.catalog.models import ModelArchitecture, find_model, suggest_model
from vllm_serving.command.vllm_argv import secret_env_names, vllm_args, vllm_env
from vllm_serving.findings import ConfigError, Finding, Severity, config_key
from vllm_serving.release.promotion import Promotion, promote_values
from vllm_serving.settings import VLLM_PORT, StackSettings
from vllm_serving.settings.stack_config import parse_stack_config
from vllm_serving.settings.text_checks import STACK_NAME_FIX, stack_name_problem
from vllm_serving.timing import startup_budget_seconds


class ServingSpec(msgspec.Struct, frozen=True):
    """Everything a backend needs, resolved and validated."""

    stack: str
    settings: StackSettings
    gpu: GpuSpec
    model: ModelArchitecture
    args: tuple[str, ...]
    env: tuple[tuple[str, str], ...]
    secret_env: tuple[str, ...]
    startup_seconds: int
    promotion: Promotion | None = None
    """Set when the image, model and release flags came from another stack's release."""

    @property
    def name(self) -> str:
        """Logical and container name of the deployment."""
        return self.settings.container.name

    @property
    def served_model_name(self) -> str:
        return self.settings.model.served_name or self.settings.model.mount_path

    @property
    def public_host(self) -> str:
        net = self.settings.network
        if net.public_host:
            return net.public_host
        # a specific bind address is the only one that answers, on a remote host too
        if net.bind_address not in ("0.0.0.0", "::"):
            return f"[{net.bind_address}]" if ":" in net.bind_address else net.bind_address
        if self.settings.target.docker_hostname:
            return self.settings.target.docker_hostname
        return "localhost"

    @property
    def origin(self) -> str:
        """Where clients reach the API: the host port, or the Service's in-cluster DNS name."""
        if self.settings.target.kind == "kubernetes":
            k = self.settings.kubernetes
            return f"http://{self.name}.{k.namespace}.svc.cluster.local:{k.service.port}"
        return f"http://{self.public_host}:{self.settings.network.host_port}"

    @property
    def container_port(self) -> int:
        return VLLM_PORT

    def endpoints(self) -> dict[str, str]:
        """The stack's URL outputs."""
        return {
            "baseUrl": f"{self.origin}/v1",
            "healthUrl": f"{self.origin}/health",
            "modelsUrl": f"{self.origin}/v1/models",
            "metricsUrl": f"{self.origin}/metrics",
        }


def resolve(settings: StackSettings, stack: str, promotion: Promotion | None = None,
            project_dir: Path | None = None) -> ServingSpec:
    """Join settings with the catalogs; unknown catalog names are errors with suggestions.

    `project_dir` (default: the working directory, where Pulumi runs the program) is what a
    relative `model.configFile` is read from.
    """
    findings: list[Finding] = [] if (bad := stack_name_problem(stack)) is None else [
        Finding("stack-name-invalid", Severity.ERROR, "stack", bad, STACK_NAME_FIX)]
    gpu = find_gpu(settings.hardware.gpu) if settings.hardware.uses_gpus else CPU
    if gpu is None:
        close = suggest_gpu(settings.hardware.gpu)
        findings.append(Finding(
            "gpu-unknown", Severity.ERROR, config_key("hardware", "gpu"),
            f"'{settings.hardware.gpu}' is not in the GPU catalog",
            (f"did you mean {', '.join(close)}?" if close else "use a catalog name")
            + " (vllm-stack gpus lists them)"))
    model = settings.model.architecture
    if settings.model.config_file is not None:
        # A config.json is the model's own catalog entry, so it is read here, where catalog names
        # are looked up: the program and every CLI verb resolve the same architecture from it.
        path = (project_dir or Path.cwd()) / settings.model.config_file
        try:
            model = load_hf_config(path, config_key("model", "configFile"))
        except ConfigError as exc:
            findings += exc.findings
    elif model is None:
        assert settings.model.name is not None
        model = find_model(settings.model.name)
        if model is None:
            close = suggest_model(settings.model.name)
            findings.append(Finding(
                "model-unknown", Severity.ERROR, config_key("model", "name"),
                f"'{settings.model.name}' is not in the model catalog",
                (f"did you mean {', '.join(close)}?" if close else "name a catalog model")
                + " (vllm-stack models lists them), or point model.configFile at the model's config.json"
                  " or describe it under model.architecture"))
    if findings:
        raise ConfigError(findings)
    assert gpu is not None and model is not None
    startup = settings.container.startup_timeout or startup_budget_seconds(model.total_weights_gib)
    return ServingSpec(
        stack=stack,
        settings=settings,
        gpu=gpu,
        model=model,
        args=vllm_args(settings),
        env=vllm_env(settings),
        secret_env=secret_env_names(settings),
        startup_seconds=startup,
        promotion=promotion,
    )


def promoted_spec(
    values: Mapping[str, Any], secret_keys: frozenset[str] | set[str], promotion: Promotion,
    project_defaults: Mapping[str, Any], project_dir: Path | None = None,
) -> ServingSpec:
    """Merge, validate and resolve a promoting stack; `check(spec)` then names both stacks."""
    try:
        settings = parse_stack_config(promote_values(values, promotion, project_defaults), secret_keys)
        return resolve(settings, promotion.target, promotion, project_dir)
    except ConfigError as exc:
        raise ConfigError([promotion.attribute(f) for f in exc.findings]) from None
