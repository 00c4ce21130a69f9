"""The container around vLLM: privileges, shared memory, registry credentials."""

from __future__ import annotations

from ..findings import Severity, config_key
from ..units import GIB, MIB
from .base import Context, Facts, Rule

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


def _registry_password(ctx: Context) -> Facts | None:
    image = ctx.settings.image
    if image.username and "registryPassword" not in ctx.settings.secrets_set:
        return {"user": image.username, "registry": image.registry or "Docker Hub"}
    return None


RULES: tuple[Rule, ...] = (
    Rule("container-privileged", Severity.WARNING, config_key("container", "privileged"),
         "the container runs privileged: full access to the host's devices and kernel",
         "set container.privileged: false; the NVIDIA runtime exposes the GPUs without it",
         "container.privileged set.",
         "vLLM does not need it; a compromised server would own the host.",
         "Docker docs (--privileged); seed 000", _privileged),
    Rule("shm-too-small", Severity.ERROR, config_key("container", "shmSize"),
         "{gpus} GPUs share tensors through /dev/shm, which is {size} with ipcMode {ipc}",
         "set container.ipcMode: host, or container.shmSize to at least {need}",
         "Docker, multi-GPU without ipc=host: /dev/shm of at least 1 GiB per GPU (default 64 MiB).",
         "NCCL fails or hangs at startup (\"Error while creating shared memory segment\").",
         "vLLM docs, Using Docker (--ipc=host or --shm-size)", _shm),
    Rule("registry-password-missing", Severity.WARNING, config_key("registryPassword"),
         "image.username {user} is set for {registry} but the secret registryPassword is not",
         "run: pulumi config set --secret registryPassword",
         "A registry user without the registryPassword secret.",
         "The pull fails with an authentication error; the Pulumi program stops on it.",
         "this project (image settings)", _registry_password),
)
