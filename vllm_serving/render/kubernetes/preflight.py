"""The preflight as the pod's init container: the server's image, GPUs and weights mount, checked first.

A failed check keeps vLLM from starting: the pod stays in `Init:CrashLoopBackOff` and
`kubectl logs POD -c preflight` shows what failed and the fix; the kubelet re-runs it with
back-off, so a fix on the node (weights copied in) is picked up without a new rollout. Unlike on
Docker it cannot keep the old server: a Recreate rollout (or maxSurge 0) has stopped an old pod
before the new one's init container runs, because GPUs cannot be held twice.
"""

from __future__ import annotations

from vllm_serving.findings import config_key
from vllm_serving.preflight.command import preflight_command
from vllm_serving.render.kubernetes.parts import Obj, names, weights_source
from vllm_serving.spec import ServingSpec

PREFLIGHT_CONTAINER = "preflight"


def weights_description(spec: ServingSpec) -> str:
    """Where the pod's weights come from, with the key that says so, for the fix line."""
    source = weights_source(spec)
    if spec.settings.kubernetes.weights is not None:
        key = config_key("kubernetes", "weights")
    else:
        key = config_key("model", "hostPath" if source.host_path is not None else "volumeName")
    if source.host_path is not None:
        return f"the node directory {source.host_path} ({key})"
    return f"the PersistentVolumeClaim {source.existing_claim or names(spec).weights_claim} ({key})"


def plain_env(server: Obj) -> list[Obj]:
    """The server's environment without its secrets: values and pod fields (the node's IP), never a
    Secret's key - no check reads one."""
    return [e for e in server.get("env", []) if "secretKeyRef" not in e.get("valueFrom", {})]


def preflight_init_containers(spec: ServingSpec, server: Obj, gpus: int) -> list[Obj]:
    """The preflight init container for the pod of `server` (the vLLM container, as finally
    rendered: its argv is checked byte for byte), which gets `gpus` GPUs (a multi-node server's
    pod: its share); none when disabled.

    It asks for the server's resources: the device plugin gives an init container's GPUs to the
    app container after it, so it checks the very GPUs vLLM will get.
    """
    command = preflight_command(spec, "kubernetes", weights_description(spec), gpus=gpus)
    if command is None:
        return []
    command = command.for_server(server["args"])
    weights = [m for m in server["volumeMounts"] if m["mountPath"] == spec.settings.model.mount_path]
    env = plain_env(server)
    return [{
        "name": PREFLIGHT_CONTAINER,
        "image": server["image"],
        "imagePullPolicy": server["imagePullPolicy"],
        "command": list(command.entrypoint),
        "args": list(command.args),
        **({"env": env} if env else {}),
        "resources": server["resources"],
        "volumeMounts": weights,
        "securityContext": server["securityContext"],
    }]
