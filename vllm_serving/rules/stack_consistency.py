"""Keys that must agree with what the rest of the stack says: the GPU a Kubernetes node selector
asks for, and a start-up timeout against the load time the weights need."""

from __future__ import annotations

from vllm_serving.catalog.gpus import GPUS
from vllm_serving.findings import Severity, config_key
from vllm_serving.rules.base import Context, Facts, Rule
from vllm_serving.timing import startup_budget_seconds

PRODUCT_LABEL = "nvidia.com/gpu.product"
"""The node label NVIDIA's GPU feature discovery sets; the default node selector uses it."""
STARTUP_FLOOR = 0.5
"""A start-up timeout below this share of the derived budget is refused: the budget already assumes
a slow disk, but half of it is less than the engine's own start (CUDA graphs, compile) on a 27B model."""


def _selected_product(ctx: Context) -> str | None:
    s = ctx.settings
    if s.target.kind != "kubernetes" or not s.hardware.uses_gpus:
        return None
    return (s.kubernetes.node_selector or {}).get(PRODUCT_LABEL)


def _other_gpu(ctx: Context) -> Facts | None:
    product = _selected_product(ctx)
    if product is None or product == ctx.gpu.product_label:
        return None
    other = next((g.name for g in GPUS.values() if g.product_label == product), None)
    if other is None:
        return None
    return {"product": product, "other": other, "gpu": ctx.gpu.name, "label": ctx.gpu.product_label}


def _unknown_product(ctx: Context) -> Facts | None:
    product = _selected_product(ctx)
    if product is None or product == ctx.gpu.product_label:
        return None
    if any(g.product_label == product for g in GPUS.values()):
        return None  # another catalog GPU: the error above
    return {"product": product, "gpu": ctx.gpu.name, "label": ctx.gpu.product_label}


def _startup_too_short(ctx: Context) -> Facts | None:
    timeout = ctx.settings.container.startup_timeout
    if timeout is None:
        return None
    budget = startup_budget_seconds(ctx.model.total_weights_gib)
    if timeout >= budget * STARTUP_FLOOR:
        return None
    return {"timeout": timeout, "budget": budget, "weights": f"{ctx.model.total_weights_gib:.0f}",
            "floor": int(budget * STARTUP_FLOOR)}


RULES: tuple[Rule, ...] = (
    Rule("node-selector-other-gpu", Severity.ERROR, config_key("kubernetes", "nodeSelector"),
         f"{PRODUCT_LABEL}: {{product}} selects {{other}} nodes, but hardware.gpu is {{gpu}}: every "
         "capacity and precision check was made for the wrong GPU",
         f"set {PRODUCT_LABEL} to {{label}} (or remove it: that is the default), or set hardware.gpu: {{other}}",
         "Kubernetes: the nodeSelector's GPU product label names another catalog GPU than hardware.gpu.",
         "The pod lands on GPUs the plan was not made for: out of memory, or dtypes they cannot run.",
         "NVIDIA GPU feature discovery (nvidia.com/gpu.product); vllm_serving/catalog/gpus.py",
         _other_gpu),
    Rule("node-selector-gpu-unverified", Severity.WARNING, config_key("kubernetes", "nodeSelector"),
         f"{PRODUCT_LABEL}: {{product}} is not the catalog's label for {{gpu}} ({{label}}); nothing checks "
         "that it is the same GPU",
         "make sure the nodes carry {gpu} GPUs (kubectl get nodes -L nvidia.com/gpu.product), or remove the "
         "key to select {label}",
         "Kubernetes: the nodeSelector's GPU product label is no catalog GPU's (another form factor?).",
         "A different GPU than hardware.gpu invalidates the capacity plan.",
         "NVIDIA GPU feature discovery (nvidia.com/gpu.product); vllm_serving/catalog/gpus.py",
         _unknown_product),
    Rule("startup-timeout-short", Severity.ERROR, config_key("container", "startupTimeout"),
         "{timeout} s is less than half the {budget} s a load of {weights} GiB of weights is given: the "
         "server would be declared failed (and restarted) while it is still loading",
         "remove container.startupTimeout (the budget is derived from the weights) or set it to at least "
         "{floor} s",
         "container.startupTimeout below half the start-up budget derived from the weights.",
         "Docker marks the container unhealthy and Pulumi fails the update; Kubernetes kills the pod "
         "mid-load, over and over.",
         "vllm_serving/timing.py startup_budget_seconds", _startup_too_short),
)
