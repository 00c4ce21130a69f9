"""Typed stack settings: one pydantic model per config section (`vllm-serving:<section>`).

Keys are camelCase in the stack YAML and snake_case here. Every field is typed, defaulted and
documented in one line; validation sits next to the field it guards. Cross-section facts (does
the GPU exist, does TP divide the heads) are the compatibility rules' job, not this module's.
"""

from __future__ import annotations

import ipaddress
import re
from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, field_validator, model_validator
from pydantic.alias_generators import to_camel
from pydantic_core import PydanticCustomError

from .model_catalog import ModelArchitecture
from .units import MIB, parse_duration, parse_size

# vLLM's own default port inside the container.
VLLM_PORT = 8000
# VLLM_CACHE_ROOT in the official image: compiled graphs live under torch_compile_cache/.
VLLM_CACHE_PATH = "/root/.cache/vllm"


def fix_error(message: str, fix: str, field: str | None = None) -> PydanticCustomError:
    """A validation error that carries the fix; `field` names the key when a model validator raises."""
    ctx = {"message": message, "fix": fix, "field": field}
    return PydanticCustomError("with_fix", "{message}", ctx)


def _size_bytes(value: Any) -> Any:
    if isinstance(value, (str, int)) and not isinstance(value, bool):
        try:
            return parse_size(value)
        except ValueError as exc:
            raise fix_error(str(exc), "write a size such as '32g' (GiB) or '512m' (MiB)") from exc
    return value


def _seconds(value: Any) -> Any:
    if isinstance(value, (str, int)) and not isinstance(value, bool):
        try:
            return parse_duration(value)
        except ValueError as exc:
            raise fix_error(str(exc), "write a duration such as '90s', '20m' or '1h30m'") from exc
    return value


SizeBytes = Annotated[int, BeforeValidator(_size_bytes)]
Seconds = Annotated[int, BeforeValidator(_seconds)]
EnvName = Annotated[str, Field(pattern=r"^[A-Za-z_][A-Za-z0-9_]*$")]


class Section(BaseModel):
    """Common behaviour of every config section: strict keys, camelCase aliases, immutable."""

    model_config = ConfigDict(
        frozen=True,
        extra="forbid",
        alias_generator=to_camel,
        populate_by_name=True,
        use_attribute_docstrings=True,
        validate_default=True,
    )


class TargetSettings(Section):
    """Where the deployment runs."""

    kind: Literal["docker", "kubernetes"] = "docker"
    """Backend: a Docker host (default) or a Kubernetes cluster."""
    docker_host: str | None = None
    """Docker endpoint: `unix:///var/run/docker.sock` (default), `ssh://user@host[:port]` or `tcp://host:port`."""
    ssh_opts: tuple[str, ...] = ()
    """Extra ssh options for an `ssh://` Docker host, e.g. `-o StrictHostKeyChecking=yes`."""

    @field_validator("docker_host")
    @classmethod
    def _docker_host_scheme(cls, value: str | None) -> str | None:
        if value is not None and not re.match(r"^(unix|ssh|tcp|npipe)://\S+$", value):
            raise fix_error(
                f"'{value}' is not a Docker endpoint",
                "write ssh://user@host (remote) or unix:///var/run/docker.sock (local)",
            )
        return value

    @property
    def docker_hostname(self) -> str | None:
        """The remote host's name for an ssh:// or tcp:// endpoint."""
        if self.docker_host is None:
            return None
        match = re.match(r"^(?:ssh|tcp)://(?:[^@/]+@)?(\[[^\]]+\]|[^:/]+)", self.docker_host)
        return match.group(1) if match else None


class HardwareSettings(Section):
    """The GPUs of the host."""

    gpu: str = Field(min_length=1)
    """GPU model from the catalog, e.g. `V100-32GB`, `A100-80GB` (see `vllm-stack plan`)."""
    count: int = Field(ge=1, le=64)
    """How many of these GPUs the host has."""
    device_ids: tuple[Annotated[int, Field(ge=0)], ...] | None = None
    """GPU indices to give the container (`--gpus device=6,7,8,9`); all GPUs when absent."""

    @field_validator("device_ids")
    @classmethod
    def _unique_ids(cls, value: tuple[int, ...] | None) -> tuple[int, ...] | None:
        if value is not None:
            if not value:
                raise fix_error("an empty device list gives the container no GPU",
                                "list GPU indices such as [6, 7, 8, 9], or remove the key for all GPUs")
            if len(set(value)) != len(value):
                raise fix_error(f"device ids repeat: {list(value)}", "list each GPU index once")
        return value

    @model_validator(mode="after")
    def _ids_within_count(self) -> HardwareSettings:
        if self.device_ids and max(self.device_ids) >= self.count:
            raise fix_error(
                f"device id {max(self.device_ids)} does not exist on a host with {self.count} GPUs "
                f"(ids 0-{self.count - 1})",
                "raise hardware.count to the host's GPU count or pick ids below it",
                field="deviceIds",
            )
        return self

    @property
    def gpus_given(self) -> int:
        """GPUs the container gets."""
        return len(self.device_ids) if self.device_ids else self.count


_REGISTRY = re.compile(r"^[A-Za-z0-9.-]+(:\d{1,5})?$")
_REPOSITORY = re.compile(r"^[a-z0-9]+(?:[._-][a-z0-9]+)*(?:/[a-z0-9]+(?:[._-][a-z0-9]+)*)*$")
_TAG = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$")
_DIGEST = re.compile(r"^sha256:[a-f0-9]{64}$")


class ImageSettings(Section):
    """The vLLM image and the registry it comes from."""

    registry: str | None = None
    """Registry host[:port], e.g. a Harbor at `192.168.122.156:30000`; Docker Hub when absent."""
    repository: str = "vllm/vllm-openai"
    """Repository inside the registry."""
    tag: str | None = None
    """Image tag, e.g. `v0.19.1`; pin a release, never `latest`."""
    digest: str | None = None
    """Content digest `sha256:...`; pins the exact image even if the tag moves."""
    username: str | None = None
    """Registry user; the password is the secret `vllm-serving:registryPassword`."""

    @field_validator("registry")
    @classmethod
    def _registry(cls, value: str | None) -> str | None:
        if value is not None and not _REGISTRY.match(value):
            raise fix_error(f"'{value}' is not a registry host",
                            "write host or host:port without a scheme or path, e.g. harbor.local:30000")
        return value

    @field_validator("repository")
    @classmethod
    def _repository(cls, value: str) -> str:
        if not _REPOSITORY.match(value):
            raise fix_error(f"'{value}' is not a repository name",
                            "use lower-case path segments such as vllm/vllm-openai, with no tag or registry")
        return value

    @field_validator("tag")
    @classmethod
    def _tag(cls, value: str | None) -> str | None:
        if value is not None and not _TAG.match(value):
            raise fix_error(f"'{value}' is not a valid image tag", "write a tag such as v0.19.1")
        return value

    @field_validator("digest")
    @classmethod
    def _digest(cls, value: str | None) -> str | None:
        if value is not None and not _DIGEST.match(value):
            raise fix_error(f"'{value}' is not an image digest",
                            "write sha256: followed by 64 hex digits, as `docker inspect` prints it")
        return value

    @model_validator(mode="after")
    def _pinned(self) -> ImageSettings:
        if self.tag is None and self.digest is None:
            raise fix_error("the image has neither tag nor digest",
                            "set image.tag to a release such as v0.19.1 (or image.digest)", field="tag")
        return self

    @property
    def reference(self) -> str:
        """`registry/repository:tag@digest` as docker pull takes it."""
        ref = f"{self.registry}/{self.repository}" if self.registry else self.repository
        if self.tag:
            ref += f":{self.tag}"
        if self.digest:
            ref += f"@{self.digest}"
        return ref


_ABSOLUTE_PATH = re.compile(r"^/[^\0]*$")
_VOLUME_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]+$")


def check_path(value: str | None, what: str) -> str | None:
    if value is not None and (not _ABSOLUTE_PATH.match(value) or ".." in value.split("/")):
        raise fix_error(f"{what} '{value}' is not an absolute path",
                        "write an absolute path such as /data/models/Qwen3.5-27B")
    return value


def _check_volume(value: str | None) -> str | None:
    if value is not None and not _VOLUME_NAME.match(value):
        raise fix_error(f"'{value}' is not a Docker volume name",
                        "use letters, digits, '_', '.' or '-', starting with a letter or digit")
    return value


class ModelSettings(Section):
    """The model: what it is and where its weights are."""

    name: str | None = None
    """Catalog entry, e.g. `Qwen3.5-27B`; or give `architecture` inline."""
    architecture: ModelArchitecture | None = None
    """Architecture facts for a model not in the catalog (same keys as a catalog entry)."""
    host_path: str | None = None
    """Directory of the weights on the host (bind-mounted read-only)."""
    volume_name: str | None = None
    """Existing named Docker volume holding the weights, instead of `hostPath`."""
    container_path: str | None = None
    """Where the weights appear in the container; `/models/<directory name>` when absent."""
    served_name: str | None = None
    """Name clients put in `model`; vLLM uses the container path when absent."""
    protect: bool = False
    """Also `protect` a named weights volume, so even an explicit delete is refused."""

    @field_validator("host_path", "container_path")
    @classmethod
    def _paths(cls, value: str | None) -> str | None:
        return check_path(value, "path")

    @field_validator("volume_name")
    @classmethod
    def _volume(cls, value: str | None) -> str | None:
        return _check_volume(value)

    @model_validator(mode="after")
    def _one_of_each(self) -> ModelSettings:
        if (self.name is None) == (self.architecture is None):
            raise fix_error("give exactly one of model.name and model.architecture",
                            "name a catalog model (e.g. Qwen3.5-27B) or describe it under architecture",
                            field="name")
        if (self.host_path is None) == (self.volume_name is None):
            raise fix_error("give exactly one of model.hostPath and model.volumeName",
                            "set hostPath to the weights directory, e.g. /data/models/Qwen3.5-27B",
                            field="hostPath")
        if self.container_path is None and self.host_path is None:
            raise fix_error("a volume needs an explicit container path",
                            "set model.containerPath, e.g. /models/Qwen3.5-27B", field="containerPath")
        return self

    @property
    def mount_path(self) -> str:
        """Path of the weights inside the container."""
        if self.container_path:
            return self.container_path
        assert self.host_path is not None  # guaranteed by _one_of_each
        return "/models/" + self.host_path.rstrip("/").rsplit("/", 1)[-1]


class CacheSettings(Section):
    """vLLM's compile cache (`/root/.cache/vllm`), kept so restarts skip torch.compile."""

    enabled: bool = True
    """Mount a persistent cache; turning it off makes every restart recompile."""
    host_path: str | None = None
    """Host directory for the cache."""
    volume_name: str | None = None
    """Named Docker volume for the cache; `<container name>-cache` when neither is given."""

    @field_validator("host_path")
    @classmethod
    def _path(cls, value: str | None) -> str | None:
        return check_path(value, "cache path")

    @field_validator("volume_name")
    @classmethod
    def _volume(cls, value: str | None) -> str | None:
        return _check_volume(value)

    @model_validator(mode="after")
    def _not_both(self) -> CacheSettings:
        if self.host_path is not None and self.volume_name is not None:
            raise fix_error("give one of cache.hostPath and cache.volumeName, not both",
                            "keep the one you want and remove the other", field="volumeName")
        return self


KvCacheDtype = Literal["auto", "bfloat16", "float16", "fp8", "fp8_e4m3", "fp8_e5m2"]
Dtype = Literal["auto", "half", "float16", "bfloat16", "float", "float32"]
Quantization = Literal[
    "awq", "awq_marlin", "gptq", "gptq_marlin", "marlin", "fp8", "compressed-tensors",
    "bitsandbytes", "gguf", "modelopt", "mxfp4", "experts_int8",
]
AttentionBackend = Literal["FLASH_ATTN", "FLASHINFER", "TRITON_ATTN", "FLEX_ATTENTION", "TREE_ATTN"]


class SpeculativeSettings(Section):
    """Speculative decoding (`--speculative-config`)."""

    method: str = Field(min_length=1)
    """Draft method: `mtp` for models with multi-token-prediction layers, `eagle`, `ngram`, ..."""
    num_speculative_tokens: int = Field(ge=1, le=16)
    """Tokens the draft proposes per step; more than the model's MTP layers lowers acceptance."""
    model: str | None = None
    """Draft model path for methods that need one (eagle, draft models)."""


class EngineSettings(Section):
    """vLLM engine flags. Unset flags are not rendered: vLLM's own default applies."""

    tensor_parallel_size: int | None = Field(default=None, ge=1, le=64)
    """GPUs one model replica is split across (`--tensor-parallel-size`)."""
    pipeline_parallel_size: int | None = Field(default=None, ge=1, le=64)
    """Pipeline stages (`--pipeline-parallel-size`); TP x PP GPUs in all."""
    dtype: Dtype | None = None
    """Compute dtype (`--dtype`); `half` on GPUs without bfloat16 (V100, T4)."""
    gpu_memory_utilization: float | None = Field(default=None, gt=0, le=1)
    """Share of each GPU's memory vLLM may use (`--gpu-memory-utilization`), in (0, 1]."""
    max_model_len: int | None = Field(default=None, ge=16)
    """Longest request in tokens, prompt plus output (`--max-model-len`)."""
    kv_cache_dtype: KvCacheDtype | None = None
    """KV cache dtype (`--kv-cache-dtype`); fp8 halves it where the GPU supports it."""
    quantization: Quantization | None = None
    """Force a quantization method (`--quantization`); vLLM reads it from the checkpoint otherwise."""
    enable_prefix_caching: bool | None = None
    """`--enable-prefix-caching` (true) or `--no-enable-prefix-caching` (false); on by default in V1."""
    attention_backend: AttentionBackend | None = None
    """Force an attention backend (`--attention-backend`), e.g. FLASHINFER for an FP8 KV cache on A100."""
    reasoning_parser: str | None = None
    """`--reasoning-parser`, e.g. `qwen3`."""
    tool_call_parser: str | None = None
    """`--tool-call-parser`, e.g. `qwen3_coder`; needs `enableAutoToolChoice`."""
    enable_auto_tool_choice: bool = False
    """`--enable-auto-tool-choice`: let the model decide to call tools."""
    speculative_config: SpeculativeSettings | None = None
    """`--speculative-config`, e.g. {method: mtp, numSpeculativeTokens: 1}."""
    max_num_seqs: int | None = Field(default=None, ge=1)
    """Most sequences in one batch (`--max-num-seqs`)."""
    max_num_batched_tokens: int | None = Field(default=None, ge=1)
    """Most tokens in one batch (`--max-num-batched-tokens`)."""
    trust_remote_code: bool = False
    """`--trust-remote-code`: run Python shipped with the weights; not needed for native architectures."""
    extra_args: tuple[str, ...] = ()
    """vLLM flags not modelled here, appended verbatim in order, e.g. [--enforce-eager]."""
    env: dict[EnvName, str] = {}
    """Extra environment variables for the container, rendered sorted by name."""

    @field_validator("env")
    @classmethod
    def _no_secrets_in_env(cls, value: dict[str, str]) -> dict[str, str]:
        from .vllm_command import SECRET_ENV  # the rendering owns the secret env names

        for name in value:
            if name in SECRET_ENV.values():
                key = next(k for k, v in SECRET_ENV.items() if v == name)
                raise fix_error(f"{name} would sit in plain text in the stack and the container spec",
                                f"remove it from engine.env and run: pulumi config set --secret {key}")
            if re.search(r"(TOKEN|PASSWORD|SECRET|API_KEY)", name.upper()):
                raise fix_error(f"{name} looks like a credential, which engine.env keeps in plain text",
                                "keep credentials out of engine.env; use the secrets "
                                + ", ".join(SECRET_ENV) + " (pulumi config set --secret)")
        return value

    @field_validator("extra_args")
    @classmethod
    def _no_modelled_flags(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        from .vllm_command import MODELLED_FLAGS  # the rendering owns the flag names

        for arg in value:
            flag = arg.split("=", 1)[0].replace("_", "-")
            if flag in MODELLED_FLAGS:
                raise fix_error(f"extraArgs repeats {flag}, which has its own key",
                                f"remove it from extraArgs and set {MODELLED_FLAGS[flag]} instead")
        return value

    @property
    def gpus_needed(self) -> int:
        return (self.tensor_parallel_size or 1) * (self.pipeline_parallel_size or 1)


class ContainerSettings(Section):
    """The Docker container itself."""

    name: str = Field(default="vllm", pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")
    """Container name (fixed, so a replacement deletes the old container first)."""
    runtime: str | None = None
    """Docker runtime, e.g. `nvidia` when the NVIDIA runtime is not the default."""
    ipc_mode: Literal["host", "private", "shareable"] = "host"
    """IPC namespace; `host` gives NCCL the host's shared memory (vLLM's recommendation)."""
    shm_size: SizeBytes | None = None
    """Size of /dev/shm with a private IPC namespace, Docker notation (`32g` = 32 GiB)."""
    privileged: bool = False
    """Run privileged; the NVIDIA runtime does not need it."""
    restart: Literal["no", "on-failure", "always", "unless-stopped"] = "unless-stopped"
    """Restart policy."""
    startup_timeout: Seconds | None = None
    """How long a model load may take before the container counts as failed; derived from the weights' size when absent."""
    log_max_size: str = Field(default="100m", pattern=r"^\d+[kmg]$")
    """Largest json-file log before rotation."""
    log_max_files: int = Field(default=3, ge=1, le=100)
    """Rotated log files kept."""

    @property
    def shm_size_mb(self) -> int | None:
        """shm size in MiB, the unit of the Docker provider's `shm_size`."""
        return None if self.shm_size is None else -(-self.shm_size // MIB)


class NetworkSettings(Section):
    """How clients reach the API."""

    host_port: int = Field(default=VLLM_PORT, ge=1, le=65535)
    """Port on the host (`-p HOSTPORT:8000`)."""
    bind_address: str = "0.0.0.0"
    """Host address the port is published on; 127.0.0.1 keeps the API local."""
    public_host: str | None = None
    """Host name clients use in URLs; the ssh host, the bind address or localhost when absent."""

    @field_validator("bind_address")
    @classmethod
    def _ip(cls, value: str) -> str:
        try:
            ipaddress.ip_address(value)
        except ValueError as exc:
            raise fix_error(f"'{value}' is not an IP address",
                            "write an address such as 0.0.0.0 (all interfaces) or 127.0.0.1") from exc
        return value


SECRET_KEYS = ("registryPassword", "apiKey", "hfToken")
"""Top-level config keys that must be Pulumi secrets (`pulumi config set --secret`)."""


class StackSettings(Section):
    """A whole stack: every section, plus which secrets are set (never their values)."""

    target: TargetSettings = Field(default_factory=TargetSettings)
    """Where it runs."""
    hardware: HardwareSettings
    """The GPUs."""
    image: ImageSettings
    """The vLLM image."""
    model: ModelSettings
    """The model and its weights."""
    cache: CacheSettings = Field(default_factory=CacheSettings)
    """The compile cache."""
    engine: EngineSettings = Field(default_factory=EngineSettings)
    """vLLM engine flags."""
    container: ContainerSettings = Field(default_factory=ContainerSettings)
    """The container."""
    network: NetworkSettings = Field(default_factory=NetworkSettings)
    """Ports and addresses."""
    kubernetes: _k8s.KubernetesSettings = Field(default_factory=lambda: _k8s.KubernetesSettings())
    """Cluster settings, used when target.kind is kubernetes."""
    release: _release.ReleaseSettings = Field(default_factory=lambda: _release.ReleaseSettings())
    """Where the release comes from: this stack's own sections, or another stack (promotion)."""
    secrets_set: frozenset[str] = frozenset()
    """Names of the secret keys present in the stack (values stay with Pulumi)."""

    @property
    def cache_volume_name(self) -> str | None:
        """Named volume for the cache, when the cache is not a host path."""
        if not self.cache.enabled or self.cache.host_path:
            return None
        return self.cache.volume_name or f"{self.container.name}-cache"


SECTIONS: tuple[str, ...] = tuple(
    name for name in StackSettings.model_fields if name != "secrets_set"
)

# Imported last: kubernetes_settings subclasses Section from this module. `from . import` also
# works when kubernetes_settings is imported first (partially initialized); pydantic resolves
# the annotation above when StackSettings is first used.
from . import kubernetes_settings as _k8s  # noqa: E402
from . import release_settings as _release  # noqa: E402
