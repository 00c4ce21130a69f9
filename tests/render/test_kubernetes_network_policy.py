"""The NetworkPolicy admits the API port only from `kubernetes.allowFrom`: by default the release's
own namespace, never every pod of the cluster (vLLM's key covers only /v1 paths)."""

from __future__ import annotations

from typing import Any

import kubernetes_validate
import pytest

from tests.kubernetes.cluster_version import KUBERNETES_VERSION
from tests.stack_builders import make_spec
from vllm_serving.render.kubernetes.objects import render_objects

HTTP = [{"port": "http", "protocol": "TCP"}]


def _policy(**kubernetes: Any) -> dict[str, Any]:
    policy = render_objects(make_spec(kubernetes=kubernetes)).network_policy
    assert policy is not None
    kubernetes_validate.validate(policy, KUBERNETES_VERSION, strict=True)
    return policy


def test_default_admits_only_the_releases_own_namespace() -> None:
    (rule,) = _policy()["spec"]["ingress"]
    # a peer with only an empty podSelector selects the pods of the policy's own namespace
    assert rule == {"from": [{"podSelector": {}}], "ports": HTTP}


@pytest.mark.parametrize(("entry", "peer"), [
    ({"namespace": "monitoring"},
     {"namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "monitoring"}}}),
    ({"namespace": "apps", "podSelector": {"app": "gateway"}},
     {"namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "apps"}},
      "podSelector": {"matchLabels": {"app": "gateway"}}}),
    ({"namespaceSelector": {"team": "ml"}}, {"namespaceSelector": {"matchLabels": {"team": "ml"}}}),
    ({"namespaceSelector": {}}, {"namespaceSelector": {}}),
    ({"podSelector": {"role": "client"}}, {"podSelector": {"matchLabels": {"role": "client"}}}),
    ({"cidr": "10.20.0.0/16"}, {"ipBlock": {"cidr": "10.20.0.0/16"}}),
])
def test_each_allow_from_entry_is_one_peer(entry: dict[str, Any], peer: dict[str, Any]) -> None:
    (rule,) = _policy(allowFrom=[entry])["spec"]["ingress"]
    assert rule == {"from": [peer], "ports": HTTP}


def test_entries_keep_their_order() -> None:
    (rule,) = _policy(allowFrom=[{"namespace": "b"}, {"cidr": "10.0.0.0/8"}, {"namespace": "a"}])["spec"]["ingress"]
    assert [list(p.values())[0] for p in rule["from"]] == [
        {"matchLabels": {"kubernetes.io/metadata.name": "b"}}, {"cidr": "10.0.0.0/8"},
        {"matchLabels": {"kubernetes.io/metadata.name": "a"}}]


def test_no_rule_ever_lacks_a_from() -> None:
    """An ingress rule without `from` admits every source."""
    for kubernetes in ({}, {"allowFrom": [{"namespaceSelector": {}}]}):
        assert all(rule.get("from") for rule in _policy(**kubernetes)["spec"]["ingress"])
