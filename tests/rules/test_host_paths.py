"""host_paths.py at its boundaries: system paths, sockets, '..', separators, overlaps, both backends."""

from __future__ import annotations

import pytest

from tests.rules.boundary import Boundary, check_boundary, findings
from vllm_serving.findings import config_key
from vllm_serving.rules.host_paths import host_path_problem, overlap, system_path
from vllm_serving.settings.kubernetes import WeightsSettings

MODEL = config_key("model", "hostPath")
CACHE = config_key("cache", "hostPath")
NODE = config_key("kubernetes", "weights", "hostPath")
K8S_NODE_PATH = {"kubernetes": {"weights": WeightsSettings(host_path="/etc/models")}}

BOUNDARIES = [
    Boundary("host-path-system", "v100", {"cache": {"host_path": "/"}}, {"cache": {"host_path": "/srv"}},
             "cache / -> /srv", key=CACHE, says=("the whole host file system", "writable")),
    Boundary("host-path-system", "v100", {"cache": {"host_path": "/etc"}},
             {"cache": {"host_path": "/etcetera"}}, "cache /etc -> /etcetera (a prefix, not a parent)", key=CACHE),
    Boundary("host-path-system", "v100", {"model": {"host_path": "/etc/ssl/models"}},
             {"model": {"host_path": "/data/ssl/models"}}, "weights under /etc -> under /data", key=MODEL,
             says=("read-only",)),
    Boundary("host-path-system", "v100", {"cache": {"host_path": "/usr/local/vllm-cache"}},
             {"model": {"host_path": "/usr/local/models"}}, "writable cache under /usr -> read-only weights there",
             key=CACHE),
    Boundary("host-path-system", "v100", {"model": {"host_path": "/root"}}, {"model": {"host_path": "/root/models"}},
             "weights /root -> /root/models (read-only, a directory of its own)", key=MODEL),
    Boundary("host-path-system", "v100", {"cache": {"host_path": "/root/vllm-cache"}},
             {"cache": {"host_path": "/srv/vllm-cache"}}, "writable cache under /root -> /srv", key=CACHE),
    Boundary("host-path-system", "v100", {"model": {"host_path": "/home/"}},
             {"model": {"host_path": "/home/ops/models"}}, "/home/ (normalised) -> a user's directory", key=MODEL),
    Boundary("host-path-system", "v100", {"cache": {"host_path": "/var/lib/docker/volumes/x"}},
             {"cache": {"host_path": "/var/lib/vllm/x"}}, "under /var/lib/docker -> /var/lib/vllm", key=CACHE),
    Boundary("host-path-system", "a100-k8s", K8S_NODE_PATH,
             {"kubernetes": {"weights": WeightsSettings(host_path="/data/models")}},
             "Kubernetes node path /etc/models -> /data/models", key=NODE),
    Boundary("host-path-system", "v100", {"cache": {"host_path": "/home/deploy/.ssh"}},
             {"cache": {"host_path": "/home/deploy/vllm-cache"}}, "cache on ~/.ssh -> beside it", key=CACHE,
             says=("authorized_keys", "writable")),
    Boundary("host-path-system", "v100", {"model": {"host_path": "/srv/ops/.kube/models"}},
             {"model": {"host_path": "/srv/ops/kube/models"}}, "weights inside a .kube -> a plain directory",
             key=MODEL, says=("kubeconfig", "read-only")),
    Boundary("host-path-system", "v100", {"cache": {"host_path": "/home/alice"}},
             {"cache": {"host_path": "/home/alice/vllm-cache"}}, "a whole home as the cache -> a folder in it",
             key=CACHE, says=("a user's home",)),
    Boundary("host-path-system", "v100", {"model": {"host_path": "/mnt/c/Users/bob"}},
             {"model": {"host_path": "/mnt/c/Users/bob/models"}}, "a Windows home under WSL -> a folder in it",
             key=MODEL),
    Boundary("host-path-system", "v100", {"cache": {"host_path": "/Users/Carol/.SSH/cache"}},
             {"cache": {"host_path": "/Users/Carol/ssh/cache"}}, ".SSH (case-insensitive host) -> ssh", key=CACHE,
             says=("authorized_keys",)),
    Boundary("host-path-system", "v100", {"model": {"host_path": "/srv/svc/.cache/huggingface"}},
             {"model": {"host_path": "/srv/svc/.cache/huggingface/hub/models--Qwen--Qwen3.5-27B"}},
             "the folder holding the HF token -> its hub/", key=MODEL, says=("Hugging Face token",)),
    Boundary("host-path-system", "v100", {"cache": {"host_path": "/var/lib/x/../kubelet"}},
             {"cache": {"host_path": "/var/lib/vllm-cache"}}, "'..' into /var/lib/kubelet -> a directory of its own",
             key=CACHE, says=("service-account tokens",)),
    Boundary("weights-path-is-file", "v100", {"model": {"host_path": "/u02/models/Qwen3.5-27B/model.safetensors"}},
             {"model": {"host_path": "/u02/models/Qwen3.5-27B"}}, "a shard -> its directory", key=MODEL,
             says=("/u02/models/Qwen3.5-27B",)),
    Boundary("weights-path-is-file", "v100", {"model": {"host_path": "/u02/models/Qwen3.5-27B/config.json"}},
             {"model": {"host_path": "/u02/models/Qwen3.5-27B-Q4_K_M.gguf"}}, "config.json -> a GGUF file",
             key=MODEL),
    Boundary("weights-path-is-file", "a100-k8s",
             {"kubernetes": {"weights": WeightsSettings(host_path="/data/models/x/pytorch_model.bin")}},
             {"kubernetes": {"weights": WeightsSettings(host_path="/data/models/x")}},
             "Kubernetes node path: a .bin file -> its directory", key=NODE),
    Boundary("host-path-socket", "v100", {"model": {"host_path": "/var/run/docker.sock"}},
             {"model": {"host_path": "/var/models"}}, "docker.sock -> a directory", key=MODEL,
             says=("controls the host", "read-only mount or not"), lacks=("password hashes",)),
    Boundary("host-path-socket", "v100", {"cache": {"host_path": "/home/ops/.docker/run/docker.sock"}},
             {"cache": {"host_path": "/home/ops/.docker/run/cache"}}, "rootless socket -> a directory", key=CACHE),
    Boundary("host-path-dotdot", "v100", {"model": {"host_path": "/data/models/../weights"}},
             {"model": {"host_path": "/data/weights"}}, "'..' -> normalised", key=MODEL,
             says=("'..' segment", "/data/weights"), lacks=("absolute",)),
    Boundary("host-path-dotdot", "v100", {"model": {"container_path": "/models/../x"}},
             {"model": {"container_path": "/models/x"}}, "container path with '..'",
             key=config_key("model", "containerPath")),
    Boundary("host-path-separator", "v100", {"model": {"host_path": "/data/a:b"}},
             {"model": {"host_path": "/data/a-b"}}, "':' -> '-'", key=MODEL, says=("':'",)),
    Boundary("host-path-separator", "v100", {"cache": {"host_path": "/data/a,b"}},
             {"cache": {"host_path": "/data/a-b"}}, "',' -> '-'", key=CACHE, says=("','",)),
    Boundary("cache-overlaps-weights", "v100", {"cache": {"host_path": "/u02/models"}},
             {"cache": {"host_path": "/u02/vllm-cache"}}, "cache above the weights -> beside them",
             says=("/u02/models", "writable")),
    Boundary("cache-overlaps-weights", "v100", {"cache": {"host_path": "/u02/models/Qwen3.5-27B/.cache"}},
             {"cache": {"host_path": "/u02/models/Qwen3.5-27B-cache"}}, "cache inside the weights -> a sibling"),
    Boundary("cache-overlaps-weights", "v100", {"cache": {"host_path": "/u02/models/Qwen3.5-27B/"}},
             {"cache": {"host_path": "/u02/models/data/vllm-cache"}}, "cache on the weights (trailing /)"),
    Boundary("cache-overlaps-weights", "a100",
             {"model": {"host_path": None, "volume_name": "vllm-cache", "container_path": "/m"}},
             {"model": {"host_path": None, "volume_name": "weights", "container_path": "/m"}},
             "one volume for both -> two", key=config_key("cache", "volumeName")),
    Boundary("model-container-path-collides", "v100", {"model": {"container_path": "/root/.cache/vllm/m"}},
             {"model": {"container_path": "/root/.cache/models"}}, "inside the compile cache -> beside it",
             says=("compile cache",)),
    Boundary("model-container-path-collides", "v100", {"model": {"container_path": "/root"}},
             {"model": {"container_path": "/models"}}, "containing the compile cache -> its own"),
    Boundary("model-container-path-collides", "a100", {"model": {"container_path": "/usr/local/models"}},
             {"model": {"container_path": "/opt/models"}}, "inside the image's /usr -> /opt", says=("/usr",)),
    Boundary("model-container-path-collides", "a100", {"model": {"container_path": "/"}},
             {"model": {"container_path": "/w"}}, "/ hides the whole image"),
]


@pytest.mark.parametrize("case", BOUNDARIES, ids=[c.id for c in BOUNDARIES])
def test_boundary(case: Boundary) -> None:
    check_boundary(case)


def test_every_bad_path_is_reported_at_once() -> None:
    found = findings("v100", {"model": {"host_path": "/etc/models"}, "cache": {"host_path": "/"}})
    assert {(f.code, f.key) for f in found if f.code == "host-path-system"} == {
        ("host-path-system", MODEL), ("host-path-system", CACHE)}


def test_cache_path_is_not_checked_where_the_cache_is_a_claim() -> None:
    """Kubernetes keeps the compile cache in a PVC: cache.hostPath mounts nothing there."""
    assert not [f for f in findings("a100-k8s", {"cache": {"host_path": "/"}}) if f.key == CACHE]


@pytest.mark.parametrize(("a", "b", "expected"), [
    ("/data/m", "/data/m/", True), ("/data", "/data/m", True), ("/data/m", "/data", True),
    ("/data/m", "/data/mm", False), ("/data/mm", "/data/m", False), ("/a/./b", "/a/b", True),
])
def test_overlap_is_by_path_segment(a: str, b: str, expected: bool) -> None:
    assert overlap(a, b) is expected


def test_read_only_weights_may_live_under_usr_but_never_under_etc() -> None:
    assert system_path("/usr/share/models", writable=False) is None
    assert system_path("/usr/share/models", writable=True) is not None
    assert system_path("/etc/models", writable=False) is not None


@pytest.mark.parametrize(("path", "why"), [
    ("/var/spool/cron", "cron"),                      # a crontab written here runs on the host as its owner
    ("/var/lib/cni/networks", "pod network"),        # IP allocations of every pod on the node
    ("/var/lib/etcd/member", "every Secret"),        # a control-plane node's whole cluster state
    ("/var/lib/rancher/k3s", "k3s"),                 # k3s/RKE2 server tokens and CA keys
    ("/var/lib/k0s/pki", "k0s"),
    ("/var/lib/minikube/certs", "certificates"),
    ("/var/lib/kubelet/pods", "service-account tokens"),
    ("/var/lib/containers/storage", "Podman"),
    ("/var/snap/docker/common", "snap"),             # a snap-installed Docker's containers
    ("/var/log/pods", "logs"),
    ("/var/run/docker.sock", "sockets"),             # the Docker socket: root on the host
    ("/run/containerd", "sockets"),
    ("/proc/1", "processes"), ("/sys/fs/cgroup", "kernel"), ("/dev/nvidia0", "devices"), ("/boot/efi", "boot"),
    ("/private/etc/hosts", "configuration"),         # macOS: /etc is /private/etc, which Docker Desktop shares
    ("/var/root/.ssh", "root's home"),               # macOS root's home
    ("/host_mnt/c/Users/dave", "a user's home"),     # Docker Desktop on Windows: C:\Users\dave
    ("/c/Users/gina", "a user's home"),              # Git Bash / Docker Toolbox drive paths
    ("/export/home/eve", "a user's home"), ("/var/home/frank", "a user's home"),  # Solaris, Fedora Atomic
    ("/System/Volumes/Data/Users/hal", "a user's home"),  # macOS's data volume
    ("/tmp", "temporary files"), ("/var/tmp", "temporary files"),
])
def test_host_trees_a_container_must_not_get(path: str, why: str) -> None:
    """Paths whose contents give a container the host (credentials, sockets, jobs the host runs),
    refused even read-only for the weights."""
    found = system_path(path, writable=False)
    assert found is not None and why in found.holds


@pytest.mark.parametrize("path", ["/tmp/models", "/var/lib/vllm", "/srv/models", "/data/hf", "/home/ops/models"])
def test_a_directory_of_its_own_is_no_system_path(path: str) -> None:
    assert system_path(path, writable=True) is None


# host_path_problem: what `vllm-stack init --weights` says of a path before it writes a stack file
# (the same judgement as the rules above, one reason per path, the first that applies)
@pytest.mark.parametrize(("path", "writable", "problem"), [
    ("/data/models/../weights", False, "has a '..' segment; write it without: /data/weights"),
    ("/data/a:b", False, "contains ':', which Docker's mount syntax splits at"),
    ("/data/a,b", False, "contains ',', which Docker's mount syntax splits at"),
    ("/var/run/docker.sock", False, "is a socket: a process that can connect to it controls the host"),
    ("/etc/models", False, "would give the container the host's configuration and password hashes"),
    ("/srv/ops/.ssh/models", False, "would give the container ssh keys and authorized_keys"),
    ("/srv/ops/.AWS./models", False, "would give the container AWS credentials"),  # Windows sharing drops the dot
    ("/srv/svc/.cache", False, "would give the container the Hugging Face token (.cache/huggingface/token)"),
    ("/srv/svc/.cache/huggingface", False, "would give the container the Hugging Face token (token, stored_tokens)"),
    ("/usr/share/models", True, "would give the container the host's installed programs"),
    ("/usr/share/models", False, None),  # read-only weights under /usr expose nothing
    ("/srv/svc/.cache/huggingface/hub", False, None),  # the hub's weights, beside the token
    ("/data/models/Qwen3.5-27B", False, None),
])
def test_a_path_given_outside_a_stack_file_gets_the_rules_reason(path: str, writable: bool,
                                                                 problem: str | None) -> None:
    assert host_path_problem(path, writable) == problem


def test_a_wildcard_segment_matches_any_one_name_and_no_more() -> None:
    """/home/* is a user's home (the directory itself): its folders are the user's own to mount."""
    assert system_path("/home/alice", writable=False) is not None
    assert system_path("/home/alice/models", writable=False) is None
    assert system_path("/mnt/d/Users/bob", writable=False) is not None  # /mnt/*/users/*: any drive
