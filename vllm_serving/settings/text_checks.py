"""Checks for free strings: whole-value matches, paths, host names, Kubernetes labels.

Every pattern here is applied with `re.fullmatch`: `re.match("^...$")` lets a value that ends in
a newline through (`$` matches before a final newline), and such a value then reaches an image
reference, a mount or a command line. Pydantic's own `pattern=` uses Rust's regex, whose `$` is
the end of the text, so `Field(pattern=...)` fields are safe as they are.
"""

from __future__ import annotations

import ipaddress
import re

from vllm_serving.settings.base import fix_error
from vllm_serving.settings.kernel_paths import kernel_path, tidy_path
from vllm_serving.settings.shown import shown

PATH_MAX, NAME_MAX = 4096, 255
"""Linux's limits (include/uapi/linux/limits.h): a path with its NUL, one name, in bytes."""
CONTROL = re.compile(r"[\x00-\x1f\x7f]")
"""Characters no config value reaching a mount, label or command line may contain."""
_HOST_LABEL = r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?"
HOSTNAME = re.compile(rf"{_HOST_LABEL}(?:\.{_HOST_LABEL})*\.?")
"""An RFC 1123 host name (which includes a dotted IPv4 address)."""
VOLUME_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]+")
"""Docker's own rule for volume names."""
_LABEL_NAME = r"[A-Za-z0-9](?:[-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?"
LABEL_KEY = re.compile(rf"(?:[a-z0-9](?:[-a-z0-9.]{{0,251}}[a-z0-9])?/)?{_LABEL_NAME}")
"""A Kubernetes label key: optional DNS-subdomain prefix and '/', then a name of at most 63."""
LABEL_VALUE = re.compile(rf"(?:{_LABEL_NAME})?")
"""A Kubernetes label value: empty, or at most 63 of letters, digits, '-', '_', '.'."""
STACK_NAME = re.compile(r"[A-Za-z0-9_.-]{1,100}")
"""A stack name as Pulumi validates it (pulumi/pulumi pkg/backend: `^[A-Za-z0-9_.-]{1,100}$`, Go's `$`
being the end of the text). The name reaches file names, labels, PromQL matchers and the comments
and values of the Prometheus and alert renders, so nothing else may enter."""
STACK_NAME_FIX = ("name the stack with at most 100 letters, digits, '-', '_' and '.' (as Pulumi does), "
                  "in a file named Pulumi.<stack>.yaml")


def stack_name_problem(name: str) -> str | None:
    """Why `name` is not a stack name, or None."""
    if STACK_NAME.fullmatch(name):
        return None
    return f"{shown(name)!r} is not a Pulumi stack name"


def check_text(value: str, pattern: re.Pattern[str], message: str, fix: str) -> str:
    """`value` when the whole of it matches `pattern`; an error with `fix` otherwise."""
    if pattern.fullmatch(value) is None:
        raise fix_error(message, fix)
    return value


def no_control(value: str, what: str) -> str:
    """Refuse control characters (newline, tab, NUL...) in a value that is otherwise free text."""
    if CONTROL.search(value):
        raise fix_error(f"{what} contains a control character (a newline, tab or NUL)",
                        "write it on one line, without control characters")
    return value


# Paths as a shell or a laptop would take them, which reach Docker and Kubernetes verbatim: no
# shell runs between the stack file and the mount, so nothing is expanded. (pattern, what, fix).
_UNEXPANDED_PATHS: tuple[tuple[re.Pattern[str], str, str], ...] = (
    (re.compile(r"\$"), "holds a '$': no shell or Pulumi expands variables in config values, so the "
     "mount would name a directory literally called so", "write the path out in full, e.g. /data/models/Qwen3.5-27B"),
    (re.compile(r"^~"), "starts from '~', which only a shell expands (and to the home of whoever runs it)",
     "write the home directory out, e.g. /home/deploy/models/Qwen3.5-27B"),
    (re.compile(r"^[A-Za-z]:[\\/]|\\"), "is a Windows path; the path is read on the Docker host or the "
     "node, which run Linux", "write the Linux path on that machine, e.g. /data/models/Qwen3.5-27B "
     "(Docker Desktop: /mnt/c/models/...)"),
)


def absolute_path(value: str | None, what: str) -> str | None:
    """An absolute path with no control characters, as the kernel spells it (`tidy_path`: one
    slash between segments, no `.` segment or trailing slash), so every rule, render and component
    sees the directory the mount gets; a leading `//` is refused outright. The host-path policy
    (system paths, `..`, ':' and ',', sockets, overlaps) is the rules' (vllm_serving/rules/host_paths.py)."""
    if value is None:
        return None
    no_control(value, f"{what} {shown(value.strip())!r}")
    for pattern, problem, fix in _UNEXPANDED_PATHS:
        if pattern.search(value):
            raise fix_error(f"{what} {shown(value)!r} {problem}", fix)
    if not value.startswith("/"):
        raise fix_error(f"{what} {shown(value)!r} is not an absolute path",
                        "write an absolute path such as /data/models/Qwen3.5-27B")
    if value.startswith("//"):
        raise fix_error(f"{what} {shown(value)!r} starts with '//': the kernel, Docker and the kubelet read it as "
                        f"{shown(kernel_path(value))!r}, which a reader of the stack may not see",
                        f"write it with one leading slash: {shown(tidy_path(value))}")
    tidy = tidy_path(value)
    too_long = next((part for part in tidy.split("/") if len(part.encode()) > NAME_MAX), None)
    if len(tidy.encode()) >= PATH_MAX or too_long is not None:
        what_is = f"a name of {len(too_long.encode())} bytes" if too_long is not None else f"{len(tidy.encode())} bytes"
        raise fix_error(f"{what} {shown(value)!r}... has {what_is}: the kernel refuses it (ENAMETOOLONG), so the "
                        "mount fails only when the container starts",
                        f"use a path under {PATH_MAX} bytes with names of at most {NAME_MAX} bytes")
    return tidy


def volume_name(value: str | None) -> str | None:
    if value is None:
        return None
    return check_text(value, VOLUME_NAME, f"{value!r} is not a Docker volume name",
                      "use letters, digits, '_', '.' or '-', starting with a letter or digit")


def _is_ipv6(value: str) -> bool:
    try:
        return isinstance(ipaddress.ip_address(value), ipaddress.IPv6Address)
    except ValueError:
        return False


def host_name(value: str) -> str:
    """A host for a URL: a DNS name, an IPv4 address or a bracketed IPv6 address; no scheme, port
    or path, each refused with the key that holds it instead."""
    if "://" in value:
        raise fix_error(f"{value!r} has a scheme", "write the host alone, e.g. gpu01.example.com; "
                        "the URLs are always http:// (vLLM serves plain HTTP)")
    if value.startswith("[") and value.endswith("]"):
        try:
            ipaddress.IPv6Address(value[1:-1])
        except ValueError as exc:
            raise fix_error(f"{value!r} is not an IPv6 address", "write it as [2001:db8::1]") from exc
        return value
    if _is_ipv6(value):
        raise fix_error(f"{value!r} is an IPv6 address without brackets",
                        f"write it as [{value}] so the port stays separate in the URLs")
    if re.fullmatch(r"(?:[^:\[\]]+|\[[^\]]*\]):\d+", value):  # host:port or [v6]:port; not a half-bracketed v6
        raise fix_error(f"{value!r} has a port", "write the host alone and put the port in network.hostPort")
    return check_text(value, HOSTNAME, f"{value!r} is not a host name",
                      "write a host name or address such as gpu01.example.com or 10.0.0.5, with no path")


def label_pair(key: str, value: str, what: str) -> None:
    """A Kubernetes label key and value, as a selector or a node label needs them."""
    check_text(key, LABEL_KEY, f"{what} key {key!r} is not a Kubernetes label key",
               "write prefix/name such as nvidia.com/gpu.product (name: at most 63 letters, digits, '-_.')")
    check_text(value, LABEL_VALUE, f"{what} value {value!r} for {key} is not a Kubernetes label value",
               "use at most 63 letters, digits, '-', '_' or '.', starting and ending with a letter or digit")


def label_pairs(value: dict[str, str] | None, what: str) -> dict[str, str] | None:
    """Every key and value of a label mapping (a selector, node labels)."""
    for key, label in (value or {}).items():
        label_pair(key, label, what)
    return value
