"""The container around vLLM: privileges, shared memory and credentials (exposure: rules/exposure.py)."""

from __future__ import annotations

from vllm_serving.finding_codes import EXPOSURE, SECRETS
from vllm_serving.findings import Severity, config_key
from vllm_serving.rules.base import Context, Facts, Rule
from vllm_serving.units import GIB, MIB

DOCKER_DEFAULT_SHM = 64 * MIB
# NCCL moves tensors between GPUs of one host through /dev/shm; vLLM's docs ask for
# --ipc=host or a large --shm-size. 1 GiB per GPU is our floor, well above NCCL's buffers.
SHM_PER_GPU = 1 * GIB


def _privileged(ctx: Context) -> Facts | None:
    return {} if ctx.settings.container.privileged else None


def _shm(ctx: Context) -> Facts | None:
    container = ctx.settings.container
    gpus = ctx.tp * ctx.pp
    # Docker only: a Kubernetes pod gets /dev/shm as a memory emptyDir sized by its own settings.
    if ctx.settings.target.kind != "docker" or gpus < 2 or container.ipc_mode == "host":
        return None
    size = container.shm_size or DOCKER_DEFAULT_SHM
    need = gpus * SHM_PER_GPU
    if size < need:
        return {"size": f"{size // MIB} MiB", "gpus": gpus, "need": f"{need // GIB}g",
                "ipc": container.ipc_mode}
    return None


def _shm_ignored(ctx: Context) -> Facts | None:
    """Docker: with the host's IPC namespace the container uses the host's /dev/shm."""
    container = ctx.settings.container
    if ctx.settings.target.kind != "docker" or container.ipc_mode != "host" or container.shm_size is None:
        return None
    return {"size": f"{container.shm_size // MIB} MiB"}


def _registry_password(ctx: Context) -> Facts | None:
    image = ctx.settings.image
    if image.username and "registryPassword" not in ctx.settings.secrets_set:
        return {"user": image.username, "registry": image.registry or "Docker Hub"}
    return None


def _registry_user(ctx: Context) -> Facts | None:
    """Both backends log in only with a user and the password (components/docker `registry_auth`,
    render/kubernetes/parts.py `registry_secret`): a password alone is never used."""
    image = ctx.settings.image
    if not image.username and "registryPassword" in ctx.settings.secrets_set:
        return {"registry": image.registry or "Docker Hub"}
    return None


# Keys only the Docker backend reads (container.shmSize is the pod's /dev/shm fallback, so not here).
DOCKER_ONLY = {
    "target": ("docker_host", "ssh_opts"),
    "hardware": ("device_ids",),
    "container": ("runtime", "ipc_mode", "privileged", "restart", "log_max_size", "log_max_files"),
    "network": ("host_port", "bind_address", "public_host"),
}


def _docker_keys_on_kubernetes(ctx: Context) -> Facts | None:
    if ctx.settings.target.kind != "kubernetes":
        return None
    ignored = []
    for section, fields in DOCKER_ONLY.items():
        model = getattr(ctx.settings, section)
        ignored += [f"{section}.{type(model).model_fields[f].alias}" for f in fields if f in model.model_fields_set]
    return {"keys": ", ".join(ignored)} if ignored else None


RULES: tuple[Rule, ...] = (
    Rule("container-privileged", Severity.WARNING, config_key("container", "privileged"),
         "the container runs privileged: full access to the host's devices and kernel",
         "set container.privileged: false; the NVIDIA runtime exposes the GPUs without it",
         "container.privileged set.",
         "vLLM does not need it; a compromised server would own the host.",
         "this project (components/docker: GPUs through device requests); "
         "tests/fixtures/seeds/000_58edd0417058a508.txt", _privileged, guards=EXPOSURE),
    Rule("shm-too-small", Severity.ERROR, config_key("container", "shmSize"),
         "{gpus} GPUs share tensors through /dev/shm, which is {size} with ipcMode {ipc}",
         "set container.ipcMode: host, or container.shmSize to at least {need}",
         "Docker, multi-GPU without ipc=host: /dev/shm of at least 1 GiB per GPU (default 64 MiB).",
         "NCCL fails or hangs at startup (\"Error while creating shared memory segment\").",
         "vllm/distributed/device_communicators/shm_broadcast.py MessageQueue (SharedMemory, i.e. /dev/shm); "
         "NCCL's shared-memory transport", _shm),
    Rule("shm-size-ignored", Severity.WARNING, config_key("container", "shmSize"),
         "container.shmSize ({size}) has no effect with container.ipcMode: host; the container "
         "uses the host's /dev/shm, so the program leaves it out",
         "remove container.shmSize, or set container.ipcMode: private to give the container its own "
         "/dev/shm of that size",
         "Docker: shmSize set together with ipcMode host.",
         "Docker ignores --shm-size in the host's IPC namespace; the value reads as a limit that is not there.",
         "this project (vllm_serving/render/docker_container.py drops shm_size with ipc host); "
         "Docker's run reference: --ipc=host shares the host's /dev/shm", _shm_ignored),
    Rule("registry-password-missing", Severity.WARNING, config_key("registryPassword"),
         "image.username {user} is set for {registry} but the secret registryPassword is not",
         "run: pulumi config set --secret registryPassword",
         "A registry user without the registryPassword secret.",
         "The pull fails with an authentication error; the Pulumi program stops on it.",
         "this project (image settings)", _registry_password, guards=SECRETS),
    Rule("registry-user-missing", Severity.WARNING, config_key("image", "username"),
         "the secret registryPassword is set but image.username is not, so {registry} is pulled from "
         "without logging in",
         "set image.username to the account the password belongs to (a Harbor robot account: robot$name), "
         "or remove the secret: pulumi config rm registryPassword",
         "The registryPassword secret without image.username.",
         "The password is never used: a private repository refuses the anonymous pull (Docker: the Pulumi "
         "program stops on it; Kubernetes: ImagePullBackOff after the rollout starts).",
         "this project (components/docker/vllm_deployment.py docker_provider registry_auth; "
         "vllm_serving/render/kubernetes/parts.py registry_secret)", _registry_user, guards=SECRETS),
    Rule("docker-keys-on-kubernetes", Severity.WARNING, config_key("target", "kind"),
         "{keys} only apply to a Docker host and are ignored on Kubernetes",
         "remove them, or use the kubernetes section (service, runtimeClassName, scheduling)",
         "Docker-only keys set on a Kubernetes stack.",
         "The operator expects an effect (a device list, a host port) that the cluster never sees.",
         "this project (backends)", _docker_keys_on_kubernetes),
)
