"""Host paths: what the container may mount from the host (or a GPU node), and where.

Both backends mount the weights read-only and the compile cache writable. A bind mount hands the
container whatever sits at the path: `/` or `/etc` writable is the host's root, and the Docker
socket, even mounted read-only, lets the process drive the daemon (a read-only bind does not stop
connect(2) on a socket). Paths are compared as the kernel reads them (`settings/kernel_paths.py`:
slashes collapsed, `.` and `..` resolved) and folded for case-insensitive hosts; symlinks on the
host cannot be seen from here (docs/security.md says so).
"""

from __future__ import annotations

import posixpath

import msgspec

from vllm_serving.engine.defaults import VLLM_CACHE_PATH
from vllm_serving.finding_codes import HOST_PATHS
from vllm_serving.findings import Severity, config_key
from vllm_serving.rules.base import KEY, Context, Facts, Rule
from vllm_serving.rules.host_path_table import CREDENTIAL_NAMES, CREDENTIAL_PARENTS, SYSTEM_PATHS, SystemPath
from vllm_serving.settings.kernel_paths import folded, kernel_path, segments

# A file of a checkpoint rather than its directory; vLLM takes a directory holding config.json
# (a single .gguf file is the exception, so it is not listed).
WEIGHT_FILE_SUFFIXES = (".safetensors", ".bin", ".pt", ".pth", ".ckpt", ".h5", ".msgpack", ".json")
# Container paths a weights mount must not hide (or sit in): the image's own programs, Python
# (under /usr/local), vLLM's working directory, and the kernel's file systems.
CONTAINER_KEEP = ("/bin", "/etc", "/lib", "/lib64", "/sbin", "/usr", "/vllm-workspace", "/proc", "/sys", "/dev")
SOCKET_SUFFIXES = (".sock", ".socket")


class HostPath(msgspec.Struct, frozen=True):
    key: str
    path: str
    writable: bool


def host_paths(ctx: Context) -> list[HostPath]:
    """The host (or node) paths this stack's backend mounts, with the key that sets each."""
    s = ctx.settings
    found: list[HostPath] = []
    if s.target.kind == "kubernetes":
        weights = s.kubernetes.weights
        if weights is not None and weights.host_path is not None:
            found.append(HostPath(config_key("kubernetes", "weights", "hostPath"), weights.host_path, False))
        elif weights is None and s.model.host_path is not None:
            found.append(HostPath(config_key("model", "hostPath"), s.model.host_path, False))
        return found  # the cache is a claim there
    if s.model.host_path is not None:
        found.append(HostPath(config_key("model", "hostPath"), s.model.host_path, False))
    if s.cache.enabled and s.cache.host_path is not None:
        found.append(HostPath(config_key("cache", "hostPath"), s.cache.host_path, True))
    return found


def _paths_with_container(ctx: Context) -> list[HostPath]:
    explicit = ctx.settings.model.container_path is not None
    container = [HostPath(config_key("model", "containerPath"), ctx.settings.model.mount_path, False)]
    return host_paths(ctx) + (container if explicit else [])


def _within(path: list[str], root: list[str]) -> bool:
    """`path` is `root` or inside it (folded segments; `*` in `root` matches any one segment)."""
    return len(path) >= len(root) and all(r in ("*", path[i]) for i, r in enumerate(root))


def overlap(a: str, b: str) -> bool:
    """One path is the other, inside it, or contains it, as the kernel reads them."""
    sa, sb = segments(a), segments(b)
    return _within(sa, sb) or _within(sb, sa)


def _dotdot(ctx: Context) -> list[Facts] | None:
    found: list[Facts] = [{KEY: p.key, "path": p.path, "normal": kernel_path(p.path)}
             for p in _paths_with_container(ctx) if ".." in p.path.split("/")]
    return found or None


def _separator(ctx: Context) -> list[Facts] | None:
    found: list[Facts] = [{KEY: p.key, "path": p.path, "char": next(c for c in ":," if c in p.path)}
             for p in _paths_with_container(ctx) if ":" in p.path or "," in p.path]
    return found or None


def _socket(path: str) -> bool:
    return any(part.endswith(SOCKET_SUFFIXES) for part in segments(path))


def _sockets(ctx: Context) -> list[Facts] | None:
    found: list[Facts] = [{KEY: p.key, "path": p.path} for p in host_paths(ctx) if _socket(p.path)]
    return found or None


def system_path(path: str, writable: bool) -> SystemPath | None:
    """The system path `path` is, or sits under, for a mount of this kind; None when it is none."""
    normal = segments(path)
    for system in SYSTEM_PATHS:
        root = segments(system.path)
        hit = _within(normal, root) if system.subtree else len(normal) == len(root) and _within(normal, root)
        if hit and (writable or not system.writable_only):
            return system
    return None


def _credential_name(part: str) -> str:
    """A folded segment as Windows file sharing also matches it: trailing dots and spaces dropped."""
    return part.rstrip(". ") or part


def _credentials(path: str) -> str | None:
    """What a credentials directory anywhere in the path, or a directory whose children are
    credentials, holds."""
    parts = segments(path)
    name = next((_credential_name(p) for p in parts if _credential_name(p) in CREDENTIAL_NAMES), None)
    if name is not None:
        return CREDENTIAL_NAMES[name]
    tail = next((t for t in CREDENTIAL_PARENTS if tuple(parts[-len(t):]) == t), None)
    return None if tail is None else CREDENTIAL_PARENTS[tail]


def _holds(path: str, writable: bool) -> str | None:
    """What a mount of `path` would give the container: a system path's or a credentials directory's contents."""
    system = system_path(path, writable)
    return system.holds if system is not None else _credentials(path)


def _system(ctx: Context) -> list[Facts] | None:
    found: list[Facts] = []
    for p in host_paths(ctx):
        holds = None if _socket(p.path) else _holds(p.path, p.writable)
        if holds is not None:
            mode = "writable" if p.writable else "read-only"
            found.append({KEY: p.key, "path": p.path, "mode": mode, "holds": holds})
    return found or None


def host_path_problem(path: str, writable: bool) -> str | None:
    """Why a mount of `path` is refused, as the rules above judge it, or None: for a path given
    outside a stack file (`init --weights`), checked before anything is written."""
    if ".." in path.split("/"):
        return f"has a '..' segment; write it without: {kernel_path(path)}"
    char = next((c for c in ":," if c in path), None)
    if char is not None:
        return f"contains '{char}', which Docker's mount syntax splits at"
    if _socket(path):
        return "is a socket: a process that can connect to it controls the host"
    holds = _holds(path, writable)
    return None if holds is None else f"would give the container {holds}"


def _weights_file(ctx: Context) -> list[Facts] | None:
    found: list[Facts] = [{KEY: p.key, "path": p.path, "directory": posixpath.dirname(kernel_path(p.path))}
                          for p in host_paths(ctx) if not p.writable
                          and folded(kernel_path(p.path)).endswith(WEIGHT_FILE_SUFFIXES)]
    return found or None


def _cache_on_weights(ctx: Context) -> Facts | None:
    s = ctx.settings
    if s.target.kind != "docker" or not s.cache.enabled:
        return None
    if s.cache.host_path is not None and s.model.host_path is not None \
            and overlap(s.cache.host_path, s.model.host_path):
        return {"cache": s.cache.host_path, "weights": s.model.host_path}
    volume = s.cache_volume_name
    if volume is not None and volume == s.model.volume_name:
        return {KEY: config_key("cache", "volumeName"), "cache": f"volume {volume}",
                "weights": f"volume {volume}"}
    return None


def _container_path_collides(ctx: Context) -> Facts | None:
    path = ctx.settings.model.mount_path
    if overlap(path, VLLM_CACHE_PATH):
        return {"path": path, "what": f"vLLM's compile cache ({VLLM_CACHE_PATH})"}
    hidden = next((keep for keep in CONTAINER_KEEP if overlap(path, keep)), None)
    return None if hidden is None else {"path": path, "what": f"the image's {hidden}"}


FIX_HOST = "move the directory (or mount the data) under a path of its own, e.g. /data/models or /srv/vllm-cache"
RULES: tuple[Rule, ...] = (
    Rule("host-path-dotdot", Severity.ERROR, config_key("model", "hostPath"),
         "'{path}' has a '..' segment: what it names depends on symlinks and is not what it reads as",
         "write it without '..': {normal}",
         "A host or container path with a '..' segment.",
         "The mount is not where the reader thinks; path checks compare the wrong directory.",
         "this project (vllm_serving/rules/host_paths.py)", _dotdot, guards=HOST_PATHS),
    Rule("host-path-separator", Severity.ERROR, config_key("model", "hostPath"),
         "'{path}' contains '{char}', which Docker's mount syntax splits at (-v SRC:DST:ro, --mount a=b,c=d)",
         "rename or move the directory so its path has no ':' or ','",
         "A host or container path with ':' or ','.",
         "Docker reads part of the path as the target or the options: a different mount, or a refused one.",
         "Docker run reference (-v, --mount); this project", _separator, guards=HOST_PATHS),
    Rule("host-path-socket", Severity.ERROR, config_key("model", "hostPath"),
         "'{path}' is a socket: a process that can connect to the Docker (or containerd) socket controls the "
         "host, read-only mount or not",
         "point the key at the data directory, never at a socket",
         "A host path ending in .sock or .socket (any segment).",
         "A compromised or misconfigured server gets root on the host through the daemon.",
         "Docker docs, \"Protect the Docker daemon socket\"; this project", _sockets, guards=HOST_PATHS),
    Rule("host-path-system", Severity.ERROR, config_key("model", "hostPath"),
         "'{path}' would give the container {holds} ({mode})",
         FIX_HOST,
         "A host path that is, or is under, a system directory (/, /etc, /proc, /root, /run, /var/lib/docker, "
         "/var/lib/kubelet, /var/spool, /tmp itself...; /usr, /bin, /lib, /opt only for the writable cache), "
         "a home directory (/home/NAME, /Users/NAME, /mnt/c/Users/NAME) or the directory of all homes, in a "
         "credentials directory (.ssh, .aws, .kube, .docker, .pulumi, .config... in any letter case), or the "
         "directory holding the Hugging Face token (.cache, .cache/huggingface). Compared as the kernel reads "
         "the path.",
         "The container reads the host's secrets or, writable, rewrites the host.",
         "this project (vllm_serving/rules/host_path_table.py)", _system, guards=HOST_PATHS),
    Rule("weights-path-is-file", Severity.ERROR, config_key("model", "hostPath"),
         "'{path}' names a file of the checkpoint, not its directory",
         "point the key at the directory that holds config.json and the shards: {directory}",
         "The weights path names a checkpoint file (.safetensors, .bin, .pt, .json...); a .gguf file is allowed.",
         "vLLM exits at start-up: \"Invalid repository ID or local directory specified\" (no config.json "
         "beside a file).",
         "vllm/transformers_utils/config.py get_config (config.json or params.json in the directory; is_gguf "
         "for a single file)", _weights_file, guards=HOST_PATHS),
    Rule("cache-overlaps-weights", Severity.ERROR, config_key("cache", "hostPath"),
         "the compile cache ({cache}) and the weights ({weights}) overlap: the writable cache mount would "
         "make the weights writable",
         "give the cache a directory of its own outside the weights, e.g. /srv/vllm-cache (or another volume)",
         "Docker: cache.hostPath is, is inside, or contains model.hostPath; or both name one volume.",
         "A bug in the server (or an attacker in it) could damage the weights.",
         "this project (both mounts in vllm_serving/render/docker_container.py)", _cache_on_weights, guards=HOST_PATHS),
    Rule("model-container-path-collides", Severity.ERROR, config_key("model", "containerPath"),
         "the weights mounted at {path} would overlap {what}",
         "set model.containerPath to a directory of its own, e.g. /models/<name>",
         "model.containerPath is, is inside, or contains the compile-cache mount or an image system directory.",
         "The read-only weights hide the cache (vLLM cannot write its compiled graphs) or the image's own files.",
         "vllm/envs.py VLLM_CACHE_ROOT (~/.cache/vllm); this project", _container_path_collides, guards=HOST_PATHS),
)
