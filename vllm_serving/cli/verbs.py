"""Every verb, the module that defines it and its line in `vllm-stack --help`, as data: `main`
imports only the module of the verb it runs (a verb loads only what it needs), and lists the rest."""

from __future__ import annotations

# verb -> (module in vllm_serving.cli that registers it, one-line help)
VERBS: dict[str, tuple[str, str]] = {
    "init": ("init", "write a new stack file for your GPUs and model, then check it"),
    "plan": ("plan", "print what `pulumi up -s STACK` would deploy"),
    "check": ("check", "check stacks against the hardware and engine rules (exit 1 on errors, 2 unreadable)"),
    "capacity": ("capacity", "KV-cache size and concurrency for a stack, or a model on a GPU"),
    "render": ("render", "print what a stack would deploy (k8s manifests, docker run or Compose) or what watches it"),
    "gpus": ("catalogs", "list the GPU catalog (names for hardware.gpu)"),
    "models": ("catalogs", "list the model catalog (names for model.name)"),
    "diff": ("diff", "what differs between two stacks' deployments (exit 1 if anything does)"),
    "affected": ("affected", "stacks whose `pulumi preview` the changes since a git ref can alter"),
    "smoke": ("smoke", "check a deployed server answers as its stack says (after pulumi up)"),
    "calibrate": ("calibrate", "compare a vLLM start-up log with the plan, term by term (and grow the corpus)"),
}


def verb_help(verb: str) -> str:
    return VERBS[verb][1]
