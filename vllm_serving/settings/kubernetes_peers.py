"""`vllm-serving:kubernetes.allowFrom`: who the NetworkPolicy admits to the API port.

Each entry is one NetworkPolicy peer. A release with no entries admits the pods of its own
namespace only: vLLM's API key covers only /v1 paths, so the network decides who reaches the rest.
"""

from __future__ import annotations

import ipaddress
import re

from pydantic import ValidationInfo, field_validator, model_validator

from vllm_serving.settings.base import Section, fix_error
from vllm_serving.settings.text_checks import label_pairs

_DNS_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?")


class AllowFrom(Section):
    """One source the NetworkPolicy admits to the API port (a NetworkPolicy peer)."""

    namespace: str | None = None
    """A namespace by name (its `kubernetes.io/metadata.name` label), e.g. `monitoring`."""
    namespace_selector: dict[str, str] | None = None
    """Namespaces whose labels match all of these; `{}` is every namespace of the cluster."""
    pod_selector: dict[str, str] | None = None
    """Pods whose labels match all of these, in the namespace(s) above or else the release's own."""
    cidr: str | None = None
    """Clients outside the cluster (a NodePort or LoadBalancer Service), e.g. `10.20.0.0/16`."""

    @field_validator("namespace")
    @classmethod
    def _namespace(cls, value: str | None) -> str | None:
        if value is not None and not _DNS_LABEL.fullmatch(value):
            raise fix_error(f"{value!r} is not a namespace name", "write a namespace such as monitoring")
        return value

    @field_validator("namespace_selector", "pod_selector")
    @classmethod
    def _selector(cls, value: dict[str, str] | None, info: ValidationInfo) -> dict[str, str] | None:
        return label_pairs(value, f"allowFrom {info.field_name}")

    @field_validator("cidr")
    @classmethod
    def _cidr(cls, value: str | None) -> str | None:
        try:
            if value is not None:
                ipaddress.ip_network(value, strict=False)
        except ValueError as exc:
            raise fix_error(f"{value!r} is not an address block", "write it as 10.20.0.0/16") from exc
        if value is not None and "/" not in value:
            raise fix_error(f"{value!r} has no prefix length", f"write it as {value}/32 for one address")
        return value

    @model_validator(mode="after")
    def _one_peer(self) -> AllowFrom:
        if self.namespace is not None and self.namespace_selector is not None:
            raise fix_error("give namespace or namespaceSelector, not both",
                            "keep one of them", field="namespaceSelector")
        given = [v for v in (self.namespace, self.namespace_selector, self.pod_selector) if v is not None]
        if self.cidr is not None and given:
            raise fix_error("an address block cannot be combined with selectors in one entry",
                            "make the cidr an allowFrom entry of its own", field="cidr")
        if self.cidr is None and not given:
            raise fix_error("an allowFrom entry names no source",
                            "give namespace, namespaceSelector, podSelector or cidr", field="namespace")
        return self
