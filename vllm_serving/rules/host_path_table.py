"""The host paths no mount may use, as data: system trees, homes, credential names.

Patterns are compared with `kernel_paths.segments` (slashes collapsed, `.` and `..` resolved,
case and Unicode form folded), so every spelling the kernel or a case-insensitive Docker Desktop
host reads as one of these is one of these. A `*` segment matches any one segment (a user name).
"""

from __future__ import annotations

import msgspec


class SystemPath(msgspec.Struct, frozen=True):
    """A host path no mount may use."""

    path: str
    """Lower case; `*` matches any one segment."""
    subtree: bool
    """True: the path and everything under it; False: the directory itself (it holds system trees,
    or homes: the directory, not a folder of one's own below it)."""
    writable_only: bool
    """Refused only for the writable cache mount (read-only weights under it expose nothing)."""
    holds: str
    """What the container would get, for the message."""


# Where homes live: Linux, Fedora Atomic (/var/home), Solaris-style (/export/home), macOS (/Users,
# and through the data volume's firmlink), Windows drives as WSL and Docker Desktop name them
# (/mnt/c/Users, /host_mnt/c/Users, /c/Users).
HOME_ROOTS = ("/home", "/var/home", "/export/home", "/users", "/system/volumes/data/users", "/mnt/*/users",
              "/host_mnt/*/users", *(f"/{drive}/users" for drive in "abcdefghijklmnopqrstuvwxyz"))
_HOME = "a user's home: ssh keys and credentials"
_HOMES = "every user's home: ssh keys and credentials"
_SOCKETS = "runtime sockets (Docker, containerd)"
SYSTEM_PATHS: tuple[SystemPath, ...] = (
    SystemPath("/", False, False, "the whole host file system"),
    SystemPath("/etc", True, False, "the host's configuration and password hashes"),
    SystemPath("/proc", True, False, "the host's kernel and processes"),
    SystemPath("/sys", True, False, "the host's kernel and devices"),
    SystemPath("/dev", True, False, "the host's devices"),
    SystemPath("/boot", True, False, "the host's kernel and boot loader"),
    SystemPath("/root", False, False, "root's home: ssh keys and credentials"),
    SystemPath("/root", True, True, "root's home: ssh keys and credentials"),
    SystemPath("/run", True, False, _SOCKETS),
    SystemPath("/var/run", True, False, _SOCKETS),
    SystemPath("/var", False, False, "the Docker daemon's data and sockets"),
    SystemPath("/var/lib", False, False, "the Docker daemon's data"),
    SystemPath("/var/lib/docker", True, False, "every container's files and secrets"),
    SystemPath("/var/lib/containerd", True, False, "every container's files"),
    SystemPath("/var/lib/kubelet", True, False, "pod volumes and service-account tokens"),
    SystemPath("/var/lib/etcd", True, False, "the cluster's state, every Secret among it"),
    SystemPath("/var/lib/rancher", True, False, "k3s/RKE2's state, tokens and certificates"),
    SystemPath("/var/log", True, False, "the host's and every pod's logs"),
    SystemPath("/var/spool", True, False, "cron and at jobs, which the host runs as their owners (root's too)"),
    SystemPath("/var/lib/containers", True, False, "every Podman/CRI-O container's files"),
    SystemPath("/var/snap", True, False, "snap services' data: a snap Docker's containers, MicroK8s credentials"),
    SystemPath("/var/lib/k0s", True, False, "k0s's state, tokens and certificates"),
    SystemPath("/var/lib/minikube", True, False, "the cluster's certificates"),
    SystemPath("/var/lib/cni", True, False, "the node's pod network state"),
    # shared temporary directories: every user's temp files and the ssh-agent sockets in them
    # (/tmp/ssh-XXXX/agent.N: a socket works through a bind mount, read-only or not)
    SystemPath("/tmp", False, False, "every user's temporary files and ssh-agent sockets"),
    SystemPath("/var/tmp", False, False, "every user's temporary files"),
    # homes, and the directories holding them
    *(SystemPath(root, False, False, _HOMES) for root in HOME_ROOTS),
    *(SystemPath(f"{root}/*", False, False, _HOME) for root in HOME_ROOTS),
    SystemPath("/var/root", True, False, "root's home (macOS): ssh keys and credentials"),
    # macOS: /etc, /var are links into /private, which Docker Desktop shares
    SystemPath("/private/etc", True, False, "the host's configuration"),
    SystemPath("/private/var/run", True, False, _SOCKETS),
    SystemPath("/private/var/root", True, False, "root's home (macOS): ssh keys and credentials"),
    *(SystemPath(p, True, True, "the host's installed programs")
      for p in ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/snap", "/nix")),
    # programs root runs: CNI plugins (the kubelet), containerd's plugins; /opt of every package
    *(SystemPath(p, True, True, "programs the host runs as root") for p in ("/opt/cni", "/opt/containerd")),
    SystemPath("/opt", False, True, "the host's optional packages (programs)"),
)
# Names that hold credentials wherever they sit (a user's home, a service account's), compared
# folded: ssh keys and authorized_keys, cloud, cluster, registry, Pulumi and package credentials.
CREDENTIAL_NAMES: dict[str, str] = {
    ".ssh": "ssh keys and authorized_keys", ".gnupg": "GPG private keys", ".aws": "AWS credentials",
    ".azure": "Azure credentials", ".kube": "cluster credentials (kubeconfig)",
    ".docker": "registry credentials (config.json)", ".pulumi": "Pulumi credentials and state",
    ".config": "application credentials (gcloud, gh, ...)", ".oci": "Oracle Cloud keys",
    ".minikube": "cluster client keys", ".terraform.d": "Terraform Cloud tokens",
    ".password-store": "encrypted passwords (pass)", ".netrc": "passwords for hosts",
    ".git-credentials": "git passwords and tokens", ".pgpass": "PostgreSQL passwords",
    ".vault-token": "a Vault token", ".npmrc": "npm registry tokens", ".pypirc": "PyPI tokens",
}
# Directories whose children are credentials, so the directory itself may not be mounted (its
# subdirectories may: the Hugging Face cache's hub/ holds weights, its parent the token).
CREDENTIAL_PARENTS: dict[tuple[str, ...], str] = {
    (".cache",): "the Hugging Face token (.cache/huggingface/token)",
    (".cache", "huggingface"): "the Hugging Face token (token, stored_tokens)",
}
