"""Every spelling of a host path that the kernel (and Docker's path.Clean, and the kubelet) reads as
a refused path is refused: extra slashes, `.` segments, `x/..` detours, a trailing slash, and, for
Docker Desktop's case-insensitive hosts, any letter case. Refused means by the settings (a leading
`//`) or by an ERROR of the host-path rules naming the key."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.stack_builders import make_spec
from vllm_serving.findings import ConfigError, Severity, config_key
from vllm_serving.rules import host_paths
from vllm_serving.rules.base import Context
from vllm_serving.settings.kernel_paths import kernel_path, tidy_path
from vllm_serving.settings.text_checks import absolute_path

# What a container must never get, written out here rather than read from the rule table.
REFUSED_ANY_MOUNT = [
    "/", "/etc", "/etc/ssh", "/proc/1", "/sys/kernel", "/dev", "/boot", "/root", "/home", "/run/containerd",
    "/var/run", "/var/run/docker.sock", "/var/lib/docker/volumes", "/var/lib/kubelet/pods", "/var/lib/etcd",
    "/home/alice", "/Users/bob", "/mnt/c/Users/carol", "/c/Users/dave", "/System/Volumes/Data/Users/erin",
    "/srv/ops/.ssh", "/data/.aws/credentials", "/opt/x/.kube",
    "/srv/svc/.docker", "/srv/.cache/huggingface", "/srv/svc/.config/gcloud",
]
REFUSED_WRITABLE = [*REFUSED_ANY_MOUNT, "/usr/local/cache", "/root/.cache/vllm", "/lib/x", "/bin"]
REFUSING = {"host-path-system", "host-path-dotdot", "host-path-socket"}


def refused(section: str, key: str, path: str) -> bool:
    """Whether a Docker stack with `section.key: path` is refused for that key."""
    try:
        spec = make_spec("v100", **{section: {key: path}})
    except ConfigError as exc:
        return any(f.key == config_key(section, key) for f in exc.findings)
    found = [f for rule in host_paths.RULES for f in rule.run(Context(spec))]
    return any(f.code in REFUSING and f.severity is Severity.ERROR and f.key == config_key(section, key)
               for f in found)


@st.composite
def spelling(draw: st.DrawFn, path: str) -> str:
    """Another spelling of `path` that the kernel reads as the same directory."""
    parts = [p for p in path.split("/") if p]
    out = ""
    for part in parts:
        if draw(st.booleans()):
            part = "".join(c.upper() if draw(st.booleans()) else c.lower() for c in part)
        for _ in range(draw(st.integers(0, 2))):
            out += draw(st.sampled_from(["/.", "/x/..", "/./.", "/" + "y" * 3 + "/.."]))
        out += "/" * draw(st.integers(1, 3)) + part
    out += draw(st.sampled_from(["", "/", "/.", "//", "/./"]))
    return out or "/"


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_every_spelling_of_a_refused_cache_path_is_refused(data: st.DataObject) -> None:
    path = data.draw(st.sampled_from(REFUSED_WRITABLE))
    assert refused("cache", "hostPath", data.draw(spelling(path)))


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_every_spelling_of_a_refused_weights_path_is_refused(data: st.DataObject) -> None:
    path = data.draw(st.sampled_from(REFUSED_ANY_MOUNT))
    assert refused("model", "hostPath", data.draw(spelling(path)))


@pytest.mark.parametrize("path", ["//etc", "//var/run", "//var/lib/kubelet", "///", "//data/models"])
def test_a_leading_double_slash_is_refused_with_the_one_slash_spelling(path: str) -> None:
    with pytest.raises(ValueError) as refused_:
        absolute_path(path, "path")
    assert "'//'" in str(refused_.value)
    assert refused("cache", "hostPath", path)


@pytest.mark.parametrize(("written", "tidy", "kernel"), [
    ("/data//models/./q/", "/data/models/q", "/data/models/q"),
    ("/data/models/../etc", "/data/models/../etc", "/data/etc"),
    ("/../../etc", "/../../etc", "/etc"),
    ("/a/./././b//", "/a/b", "/a/b"),
])
def test_settings_hold_the_kernels_spelling(written: str, tidy: str, kernel: str) -> None:
    assert absolute_path(written, "path") == tidy_path(written) == tidy
    assert kernel_path(written) == kernel


def test_renders_mount_the_tidy_path() -> None:
    """What Docker mounts is what the rules checked: the settings' tidy spelling."""
    spec = make_spec("v100", model={"hostPath": "/data//models/./Qwen3.5-27B/", "containerPath": None},
                     cache={"hostPath": "/srv//cache/"})
    assert spec.settings.model.host_path == "/data/models/Qwen3.5-27B"
    assert spec.settings.model.mount_path == "/models/Qwen3.5-27B"  # not /models/. from a trailing '/.'
    assert spec.settings.cache.host_path == "/srv/cache"


@pytest.mark.parametrize("path", ["/data/models/Qwen3.5-27B", "/srv/vllm-cache", "/home/ops/models",
                                  "/Users/me/models/qwen", "/srv/.cache/huggingface/hub/models--Qwen"])
def test_ordinary_paths_pass(path: str) -> None:
    assert not refused("model", "hostPath", path)


@pytest.mark.parametrize("path", ["/var/lib/kubelet", "/var//lib/kubelet/pods", "/var/lib/./kubelet/",
                                  "/var/lib/x/../kubelet", "//var/lib/kubelet", "/VAR/lib/Kubelet", "/etc/kubernetes",
                                  "/var/lib/etcd/member"])
def test_a_node_path_into_the_kubelets_tree_is_refused_in_every_spelling(path: str) -> None:
    key = config_key("kubernetes", "weights", "hostPath")
    try:
        spec = make_spec("a100-k8s", kubernetes={"weights": {"hostPath": path, "existingClaim": None, "claim": None}})
    except ConfigError as exc:
        assert key in {f.key for f in exc.findings}
        return
    found = [f for rule in host_paths.RULES for f in rule.run(Context(spec))]
    assert any(f.code in REFUSING and f.key == key for f in found), found


@pytest.mark.parametrize(("key", "path"), [
    ("cache", "/var/spool/cron"),  # writable: a crontab the host runs as root
    ("cache", "/var/spool/cron/crontabs"),
    ("model", "/var/lib/containers/storage"),  # every Podman/CRI-O container's files
    ("model", "/var/snap/microk8s/current/credentials"),
    ("cache", "/var/snap/docker/common/var-lib-docker"),  # a snap Docker's data
    ("model", "/var/lib/k0s/pki"), ("model", "/var/lib/minikube/certs"), ("cache", "/var/lib/cni"),
    ("model", "/tmp"), ("model", "/TMP/"), ("cache", "/var/tmp"),  # every user's temp files, ssh-agent sockets
    ("cache", "/opt"), ("cache", "/opt/cni/bin"), ("cache", "/opt/containerd/lib"),  # programs root runs
    ("cache", "/nix/store"), ("cache", "/snap/bin"),
])
def test_cron_spools_container_stores_shared_temp_and_program_trees_are_refused(key: str, path: str) -> None:
    assert refused(key, "hostPath", path)


@pytest.mark.parametrize(("key", "path"), [
    ("cache", "/tmp/vllm-cache"), ("cache", "/opt/vllm/cache"), ("model", "/opt/models/Qwen3.5-27B"),
    ("model", "/opt/cni-models"), ("model", "/nix/store/abc-qwen"),  # read-only weights in a store: nothing to write
])
def test_a_folder_of_ones_own_under_tmp_or_opt_passes(key: str, path: str) -> None:
    assert not refused(key, "hostPath", path)


@pytest.mark.parametrize("path", ["/srv/" + "x" * 256, "/srv/" + "é" * 128, "/" + "a/" * 2048 + "b"])
def test_a_path_the_kernel_refuses_as_too_long_is_refused_by_the_settings(path: str) -> None:
    with pytest.raises(ValueError, match="ENAMETOOLONG"):
        absolute_path(path, "path")


def test_a_name_of_255_bytes_is_a_path_the_kernel_takes() -> None:
    assert absolute_path("/srv/" + "x" * 255, "path") == "/srv/" + "x" * 255
