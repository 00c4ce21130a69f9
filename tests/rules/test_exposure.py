"""exposure.py at its boundaries: what the API key covers and who reaches the API; the apiKey's value."""

from __future__ import annotations

import pytest

from tests.rules.boundary import Boundary, check_boundary, findings
from vllm_serving.findings import Severity, config_key
from vllm_serving.rules.exposure import MIN_API_KEY_LENGTH, api_key_findings
from vllm_serving.settings.kubernetes import ServiceSettings
from vllm_serving.settings.kubernetes_peers import AllowFrom

KEY = frozenset({"apiKey"})
NODE_PORT = ServiceSettings(type="NodePort")


def _cidrs(*cidrs: str) -> dict[str, object]:
    return {"kubernetes": {"allow_from": tuple(AllowFrom(cidr=c) for c in cidrs)}}


BOUNDARIES = [
    Boundary("api-open-on-network", "v100", {"network": {"bind_address": "0.0.0.0"}},
             {"network": {"bind_address": "127.0.0.1"}}, "0.0.0.0 -> 127.0.0.1"),
    Boundary("api-open-on-network", "v100", {"network": {"bind_address": "::"}},
             {"network": {"bind_address": "::"}, "secrets_set": KEY}, ":: -> :: with apiKey"),
    Boundary("api-open-outside-cluster", "a100-k8s", {"kubernetes": {"service": NODE_PORT}},
             {"kubernetes": {"service": ServiceSettings(type="ClusterIP")}}, "NodePort -> ClusterIP"),
    Boundary("api-open-outside-cluster", "a100-k8s", {"kubernetes": {"service": ServiceSettings(type="LoadBalancer")}},
             {"kubernetes": {"service": ServiceSettings(type="LoadBalancer")}, "secrets_set": KEY},
             "LoadBalancer -> with apiKey"),
    Boundary("api-open-on-network", "v100", {}, {"network": {"behind_proxy": True}},
             "0.0.0.0: no proxy -> behindProxy"),
    Boundary("api-key-covers-v1-only", "v100", {"secrets_set": KEY},
             {"secrets_set": KEY, "network": {"bind_address": "127.0.0.1"}}, "key on 0.0.0.0 -> on 127.0.0.1",
             says=("POST /invocations", "/tokenize", "/metrics", "port 30006 on 0.0.0.0", "behindProxy: true"),
             lacks=("/sleep",)),
    Boundary("api-key-covers-v1-only", "v100", {"secrets_set": KEY},
             {"secrets_set": KEY, "network": {"behind_proxy": True}}, "key on 0.0.0.0 -> behindProxy"),
    Boundary("api-key-covers-v1-only", "v100",
             {"secrets_set": KEY, "engine": {"env": {"VLLM_SERVER_DEV_MODE": "1"}}},
             {"secrets_set": KEY, "network": {"bind_address": "::1"}}, "dev mode adds its routes",
             says=("/sleep", "/collective_rpc")),
    Boundary("api-key-covers-v1-only", "a100-k8s", {"secrets_set": KEY, "kubernetes": {"service": NODE_PORT}},
             {"secrets_set": KEY}, "Kubernetes NodePort -> ClusterIP",
             key=config_key("kubernetes", "service", "type"), says=("the NodePort Service",)),
    Boundary("api-open-outside-cluster", "a100-k8s", {"kubernetes": {"service": NODE_PORT}},
             {"kubernetes": {"service": NODE_PORT}, "network": {"behind_proxy": True}}, "NodePort -> behindProxy"),
    Boundary("network-policy-drops-outside-clients", "a100-k8s", {"kubernetes": {"service": NODE_PORT}},
             {"kubernetes": {"service": NODE_PORT, "allow_from": (AllowFrom(cidr="10.20.0.0/16"),)}},
             "NodePort: no cidr -> a cidr in allowFrom"),
    Boundary("network-policy-drops-outside-clients", "a100-k8s", {"kubernetes": {"service": NODE_PORT}},
             {"kubernetes": {"service": NODE_PORT, "network_policy": False}}, "NodePort: policy -> none"),
    Boundary("network-policy-open", "a100-k8s", {"kubernetes": {"network_policy": False}},
             {"kubernetes": {"network_policy": True}}, "no key: networkPolicy false -> true",
             key=config_key("kubernetes", "networkPolicy"), says=("every pod of the cluster", "apiKey")),
    Boundary("network-policy-open", "a100-k8s", {"kubernetes": {"network_policy": False}},
             {"kubernetes": {"network_policy": False}, "secrets_set": KEY}, "networkPolicy false: no key -> a key",
             key=config_key("kubernetes", "networkPolicy")),
    *(Boundary("network-policy-open", "a100-k8s", _cidrs(*trip), _cidrs(*twin), f"no key: {' '.join(trip)} -> "
               f"{' '.join(twin)}", key=config_key("kubernetes", "allowFrom"), says=("every address",))
      for trip, twin in [
          (("0.0.0.0/0",), ("0.0.0.0/1",)), (("::/0",), ("::/3",)), (("10.1.2.3/0",), ("10.1.2.3/1",)),
          (("0.0.0.0/1", "128.0.0.0/1"), ("0.0.0.0/1", "128.0.0.0/2")),  # two halves are every address
          (("::ffff:0:0/96",), ("::ffff:0:0/97",)),  # every IPv4 address, written as IPv6
          (("0.0.0.0/1", "128.0.0.0/2", "192.0.0.0/3"), ("0.0.0.0/1", "128.0.0.0/2", "192.0.0.0/4")),  # all unicast
          (("2000::/3",), ("2001:db8::/32",)),  # every global IPv6 address
      ]),
    Boundary("network-policy-open", "a100-k8s",
             {"kubernetes": {"allow_from": (AllowFrom(namespace_selector={}),)}},
             {"kubernetes": {"allow_from": (AllowFrom(namespace="monitoring"),)}},
             "no key: namespaceSelector {} -> one namespace", says=("every pod of the cluster",)),
    Boundary("network-policy-open-keyed", "a100-k8s", {"kubernetes": {"network_policy": False}, "secrets_set": KEY},
             {"kubernetes": {"network_policy": True}, "secrets_set": KEY}, "key: networkPolicy false -> true",
             key=config_key("kubernetes", "networkPolicy"), says=("/invocations", "/metrics")),
    Boundary("network-policy-open-keyed", "a100-k8s", {**_cidrs("0.0.0.0/0"), "secrets_set": KEY},
             {**_cidrs("10.20.0.0/16"), "secrets_set": KEY}, "key: 0.0.0.0/0 -> 10.20.0.0/16",
             says=("/invocations",)),
]


@pytest.mark.parametrize("case", BOUNDARIES, ids=[c.id for c in BOUNDARIES])
def test_boundary(case: Boundary) -> None:
    check_boundary(case)


def test_a_key_on_loopback_warns_about_nothing() -> None:
    codes = {f.code for f in findings("v100", {"secrets_set": KEY, "network": {"bind_address": "127.0.0.1"}})}
    assert not codes & {"api-open-on-network", "api-key-covers-v1-only"}


@pytest.mark.parametrize(("value", "code"), [
    ("", "api-key-empty"),
    ("x" * (MIN_API_KEY_LENGTH - 1), "api-key-short"),
    ("k" * 40 + "\n", "api-key-whitespace"),
    (" " + "k" * 40, "api-key-whitespace"),
    ("k" * 20 + "\x00" + "k" * 20, "api-key-whitespace"),
    ("k" * 20 + "\x7f" + "k" * 20, "api-key-whitespace"),  # DEL (127), a control character too
])
def test_bad_api_key_values_are_errors_that_never_repeat_the_value(value: str, code: str) -> None:
    (finding,) = api_key_findings(value)
    assert (finding.code, finding.severity, finding.key) == (code, Severity.ERROR, config_key("apiKey"))
    assert "openssl rand" in finding.fix
    if value.strip():
        assert value.strip()[:8] not in finding.message + finding.fix


@pytest.mark.parametrize("value", ["k" * MIN_API_KEY_LENGTH, "a b" * 8, "0123456789abcdef" * 4])
def test_good_api_keys_pass(value: str) -> None:
    assert api_key_findings(value) == []


def test_an_open_policy_is_an_error_only_without_a_key() -> None:
    """The same open policy: an ERROR with no key, a WARNING (naming the unguarded paths) with one."""
    edits = {"kubernetes": {"network_policy": False}}
    unkeyed = {f.code: f.severity for f in findings("a100-k8s", edits)}
    keyed = {f.code: f.severity for f in findings("a100-k8s", {**edits, "secrets_set": KEY})}
    assert unkeyed.get("network-policy-open") is Severity.ERROR and "network-policy-open-keyed" not in unkeyed
    assert keyed.get("network-policy-open-keyed") is Severity.WARNING and "network-policy-open" not in keyed


def test_docker_stacks_have_no_network_policy_findings() -> None:
    codes = {f.code for f in findings("v100", {"kubernetes": {"network_policy": False}})}
    assert not codes & {"network-policy-open", "network-policy-open-keyed"}


NEW_KEY = "openssl rand -hex 32 | pulumi config set --secret apiKey"
UNGUARDED = ("POST /invocations, POST /tokenize, POST /detokenize, POST /scale_elastic_ep, GET /metrics, GET /health, "
             "GET /load, GET /version, /ping, GET /docs, /openapi.json")
# (edits, key, how the policy is open, who reaches the server, how to close it), as a user reads them
OPEN_POLICIES = [
    ({"kubernetes": {"network_policy": False}}, "vllm-serving:kubernetes.networkPolicy",
     "kubernetes.networkPolicy is false",
     "every pod of the cluster (and every client that reaches a node or load balancer)",
     "set kubernetes.networkPolicy: true and list the clients in kubernetes.allowFrom"),
    (_cidrs("0.0.0.0/0"), "vllm-serving:kubernetes.allowFrom", "kubernetes.allowFrom admits every address (0.0.0.0/0)",
     "anyone who reaches a node, the load balancer or a pod",
     "narrow kubernetes.allowFrom to the clients' address blocks, e.g. - cidr: 10.20.0.0/16"),
    ({"kubernetes": {"allow_from": (AllowFrom(namespace_selector={}),)}}, "vllm-serving:kubernetes.allowFrom",
     "kubernetes.allowFrom admits every pod of the cluster (an empty namespaceSelector)",
     "every pod of the cluster (any compromised workload)",
     "name the clients' namespaces in kubernetes.allowFrom (- namespace: NAME)"),
]


@pytest.mark.parametrize(("edits", "key", "how", "who", "close"), OPEN_POLICIES, ids=["policy off", "0.0.0.0/0", "{}"])
def test_an_open_policy_says_how_who_and_what_to_do_word_for_word(
        edits: dict[str, object], key: str, how: str, who: str, close: str) -> None:
    (unkeyed,) = [f for f in findings("a100-k8s", edits) if f.code == "network-policy-open"]
    assert (unkeyed.key, unkeyed.message, unkeyed.fix) == (
        key, f"{how}, and no API key is set: {who} can use the GPUs and every route of the server",
        f"{close}; and set a key: {NEW_KEY}")
    (keyed,) = [f for f in findings("a100-k8s", {**edits, "secrets_set": KEY}) if f.code == "network-policy-open-keyed"]
    assert (keyed.key, keyed.message, keyed.fix) == (
        key, f"{how}: the API key guards only paths under /v1, so {who} reaches these without it: {UNGUARDED}", close)
