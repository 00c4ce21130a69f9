"""Who can reach the API, and what vLLM's API key really protects.

vLLM v0.19.1 checks the key only on paths that start with /v1 (`AuthenticationMiddleware` in
vllm/entrypoints/openai/server_utils.py, added by `build_app` in
vllm/entrypoints/openai/api_server.py only when the key is non-empty). Every other route the
server attaches answers without it, among them `/invocations`, which runs chat and completion
requests. So a key alone never makes a port on the network safe: the network (bind address,
firewall, NetworkPolicy) or an authenticating proxy in front has to.
"""

from __future__ import annotations

import ipaddress

from vllm_serving.finding_codes import EXPOSURE
from vllm_serving.findings import Finding, Severity, config_key
from vllm_serving.rules.base import KEY, Context, Facts, Rule

SERVER = "vllm/entrypoints/openai/api_server.py build_app"
MIDDLEWARE = "vllm/entrypoints/openai/server_utils.py AuthenticationMiddleware (only paths starting with /v1)"
# Routes outside /v1 a generative model's server attaches in v0.19.1 (build_app), and where.
UNGUARDED: tuple[tuple[str, str], ...] = (
    ("POST /invocations", "vllm/entrypoints/sagemaker/api_router.py (chat and completion requests)"),
    ("POST /tokenize", "vllm/entrypoints/serve/tokenize/api_router.py"),
    ("POST /detokenize", "vllm/entrypoints/serve/tokenize/api_router.py"),
    ("POST /scale_elastic_ep", "vllm/entrypoints/serve/elastic_ep/api_router.py"),
    ("GET /metrics", "vllm/entrypoints/serve/instrumentator/metrics.py"),
    ("GET /health", "vllm/entrypoints/serve/instrumentator/health.py"),
    ("GET /load", "vllm/entrypoints/serve/instrumentator/basic.py"),
    ("GET /version", "vllm/entrypoints/serve/instrumentator/basic.py"),
    ("/ping", "vllm/entrypoints/sagemaker/api_router.py"),
    ("GET /docs, /openapi.json", "FastAPI's own, unless --disable-fastapi-docs"),
)
# With VLLM_SERVER_DEV_MODE=1 (vllm/envs.py) these attach too (serve/{sleep,rpc,cache,rlhf}).
DEV_MODE_ENV = "VLLM_SERVER_DEV_MODE"
UNGUARDED_DEV: tuple[str, ...] = (
    "/sleep", "/wake_up", "/collective_rpc", "/reset_prefix_cache", "/pause", "/resume", "/update_weights",
)
MIN_API_KEY_LENGTH = 16
"""Shorter keys fall to guessing; `openssl rand -hex 32` gives 64 characters."""
NEW_KEY = "run: openssl rand -hex 32 | pulumi config set --secret apiKey"


def unguarded_paths(ctx: Context) -> str:
    """The routes that answer without the key, for this stack's environment."""
    paths = [path for path, _ in UNGUARDED]
    if ctx.engine.env.get(DEV_MODE_ENV, "0") not in ("", "0"):
        paths += list(UNGUARDED_DEV)
    return ", ".join(paths)


def _docker_beyond_loopback(ctx: Context) -> str | None:
    """The bind address of a Docker stack whose API port is reachable from the network."""
    network = ctx.settings.network
    if ctx.settings.target.kind != "docker" or network.behind_proxy:
        return None
    return None if ipaddress.ip_address(network.bind_address).is_loopback else network.bind_address


def _outside_cluster(ctx: Context) -> str | None:
    """The Service type of a Kubernetes stack reachable from outside the cluster."""
    service = ctx.settings.kubernetes.service.type
    if ctx.settings.target.kind != "kubernetes" or ctx.settings.network.behind_proxy:
        return None
    return None if service == "ClusterIP" else service


def _keyed(ctx: Context) -> bool:
    return "apiKey" in ctx.settings.secrets_set


def _open_on_network(ctx: Context) -> Facts | None:
    address = _docker_beyond_loopback(ctx)
    return None if address is None or _keyed(ctx) else {"address": address}


def _open_outside_cluster(ctx: Context) -> Facts | None:
    service = _outside_cluster(ctx)
    return None if service is None or _keyed(ctx) else {"type": service}


def _key_covers_v1_only(ctx: Context) -> Facts | None:
    if not _keyed(ctx):
        return None
    address = _docker_beyond_loopback(ctx)
    if address is not None:
        return {"where": f"port {ctx.settings.network.host_port} on {address}", "paths": unguarded_paths(ctx)}
    service = _outside_cluster(ctx)
    if service is not None:
        return {KEY: config_key("kubernetes", "service", "type"), "where": f"the {service} Service",
                "paths": unguarded_paths(ctx)}
    return None


def _policy_drops_outside_clients(ctx: Context) -> Facts | None:
    k = ctx.settings.kubernetes
    if ctx.settings.target.kind != "kubernetes" or not k.network_policy or k.service.type == "ClusterIP":
        return None
    if any(peer.cidr is not None for peer in k.allow_from or ()):
        return None
    return {"type": k.service.type}


# Every address that routes: IPv4 unicast (all but 224.0.0.0/3, multicast and reserved) and IPv6
# global unicast (2000::/3); a list covering these admits the whole internet.
_EVERY_V4 = tuple(ipaddress.IPv4Network(n) for n in ("0.0.0.0/1", "128.0.0.0/2", "192.0.0.0/3"))
_EVERY_V6 = (ipaddress.IPv6Network("2000::/3"),)
_MAPPED = ipaddress.IPv6Network("::ffff:0:0/96")  # IPv4 as IPv6 (::ffff:a.b.c.d)
Network = ipaddress.IPv4Network | ipaddress.IPv6Network


def _as_v4(net: Network) -> Network:
    """An IPv4-mapped IPv6 block as the IPv4 block it is."""
    if isinstance(net, ipaddress.IPv6Network) and net.prefixlen >= _MAPPED.prefixlen and net.subnet_of(_MAPPED):
        return ipaddress.IPv4Network((int(net.network_address) & 0xFFFFFFFF, net.prefixlen - 96))
    return net


def covers_every_address(cidrs: list[str]) -> bool:
    """Whether the blocks together admit every routable IPv4 or IPv6 address: `0.0.0.0/0`, `::/0`,
    `1.2.3.4/0` (host bits are ignored, by Kubernetes too), halves that add up, a mapped
    `::ffff:0:0/96`, all of IPv4 unicast or 2000::/3."""
    nets = [_as_v4(ipaddress.ip_network(c, strict=False)) for c in cidrs]
    v4 = list(ipaddress.collapse_addresses(n for n in nets if isinstance(n, ipaddress.IPv4Network)))
    v6 = list(ipaddress.collapse_addresses(n for n in nets if isinstance(n, ipaddress.IPv6Network)))
    return (all(any(need.subnet_of(n) for n in v4) for need in _EVERY_V4)
            or all(any(need.subnet_of(n) for n in v6) for need in _EVERY_V6))


def _open_policy(ctx: Context) -> Facts | None:
    """A Kubernetes stack whose API port any pod, or any address, reaches: how, and how to close it."""
    k = ctx.settings.kubernetes
    if ctx.settings.target.kind != "kubernetes":
        return None
    if not k.network_policy:
        return {KEY: config_key("kubernetes", "networkPolicy"), "how": "kubernetes.networkPolicy is false",
                "who": "every pod of the cluster (and every client that reaches a node or load balancer)",
                "close": "set kubernetes.networkPolicy: true and list the clients in kubernetes.allowFrom"}
    peers = k.allow_from or ()
    cidrs = [p.cidr for p in peers if p.cidr is not None]
    if cidrs and covers_every_address(cidrs):
        return {"how": f"kubernetes.allowFrom admits every address ({', '.join(cidrs)[:80]})",
                "who": "anyone who reaches a node, the load balancer or a pod",
                "close": "narrow kubernetes.allowFrom to the clients' address blocks, e.g. - cidr: 10.20.0.0/16"}
    if any(p.namespace_selector == {} and not p.pod_selector for p in peers):
        return {"how": "kubernetes.allowFrom admits every pod of the cluster (an empty namespaceSelector)",
                "who": "every pod of the cluster (any compromised workload)",
                "close": "name the clients' namespaces in kubernetes.allowFrom (- namespace: NAME)"}
    return None


def _open_policy_unkeyed(ctx: Context) -> Facts | None:
    return None if _keyed(ctx) else _open_policy(ctx)


def _open_policy_keyed(ctx: Context) -> Facts | None:
    facts = _open_policy(ctx) if _keyed(ctx) else None
    return None if facts is None else {**facts, "paths": unguarded_paths(ctx)}


RULES: tuple[Rule, ...] = (
    Rule("api-open-on-network", Severity.WARNING, config_key("network", "bindAddress"),
         "the OpenAI API is published on {address} with no API key: anyone who reaches the host "
         "can use the GPUs",
         "run: pulumi config set --secret apiKey, or set network.bindAddress: 127.0.0.1",
         "Docker: API bound beyond loopback without the apiKey secret (and not network.behindProxy).",
         "vLLM serves every path unauthenticated by default (both seeds do).",
         f"{MIDDLEWARE}; docs/security.md", _open_on_network, guards=EXPOSURE),
    Rule("api-open-outside-cluster", Severity.WARNING, config_key("kubernetes", "service", "type"),
         "a {type} Service exposes the OpenAI API outside the cluster with no API key",
         "run: pulumi config set --secret apiKey, or set kubernetes.service.type: ClusterIP",
         "Kubernetes: NodePort or LoadBalancer Service without the apiKey secret (and not network.behindProxy).",
         "Anyone who reaches a node or the load balancer can use the GPUs.",
         f"{MIDDLEWARE}; docs/security.md", _open_outside_cluster, guards=EXPOSURE),
    Rule("api-key-covers-v1-only", Severity.WARNING, config_key("network", "bindAddress"),
         "the API key guards only paths under /v1; on {where} these answer without it: {paths}",
         "keep the port private (network.bindAddress: 127.0.0.1, a firewall or a ClusterIP Service) behind a "
         "proxy that authenticates every path, then set network.behindProxy: true",
         "API reachable from the network with an apiKey, and not network.behindProxy.",
         "POST /invocations runs chat and completion requests without the key; /tokenize, /metrics, "
         "/version and the rest answer anyone.",
         f"{MIDDLEWARE}; {SERVER}; vllm/entrypoints/sagemaker/api_router.py", _key_covers_v1_only,
         guards=EXPOSURE),
    Rule("network-policy-drops-outside-clients", Severity.WARNING, config_key("kubernetes", "allowFrom"),
         "the {type} Service takes clients from outside the cluster, but the NetworkPolicy admits only "
         "kubernetes.allowFrom (by default the release's own namespace): their requests are dropped",
         "add the clients' address block to kubernetes.allowFrom (- cidr: 10.20.0.0/16)",
         "Kubernetes: NodePort or LoadBalancer Service with a NetworkPolicy that lists no cidr.",
         "A NetworkPolicy with only pod and namespace sources drops traffic from outside the cluster.",
         "Kubernetes NetworkPolicy (networking.k8s.io/v1 ipBlock); vllm_serving/render/kubernetes/network_policy.py",
         _policy_drops_outside_clients, guards=EXPOSURE),
    Rule("network-policy-open", Severity.ERROR, config_key("kubernetes", "allowFrom"),
         "{how}, and no API key is set: {who} can use the GPUs and every route of the server",
         "{close}; and set a key: " + NEW_KEY.removeprefix("run: "),
         "Kubernetes without the apiKey secret: networkPolicy false, an allowFrom whose cidr entries cover every "
         "routable IPv4 or IPv6 address (0.0.0.0/0, ::/0, 2000::/3, blocks that add up), or a namespaceSelector: {} "
         "entry.",
         "Any compromised pod, or anyone on the network, runs requests on the GPUs and reads the model list.",
         f"{MIDDLEWARE}; vllm_serving/render/kubernetes/network_policy.py", _open_policy_unkeyed, guards=EXPOSURE),
    Rule("network-policy-open-keyed", Severity.WARNING, config_key("kubernetes", "allowFrom"),
         "{how}: the API key guards only paths under /v1, so {who} reaches these without it: {paths}",
         "{close}",
         "Kubernetes with the apiKey secret and networkPolicy false, or an allowFrom admitting every address or pod.",
         "POST /invocations runs chat and completion requests without the key; /metrics, /tokenize and the rest "
         "answer anyone the policy admits.",
         f"{MIDDLEWARE}; {SERVER}", _open_policy_keyed, guards=EXPOSURE),
)


# Checked where the program resolves the secret (components/program.py); never offline, where
# `secure:` values stay encrypted. No finding ever carries the value or a part of it.
API_KEY_KEY = config_key("apiKey")
API_KEY_CODES: dict[str, str] = {
    "api-key-empty": "the apiKey secret is empty: vLLM then adds no authentication at all "
                     "(build_app skips AuthenticationMiddleware for an empty key)",
    "api-key-short": f"the apiKey secret is shorter than {MIN_API_KEY_LENGTH} characters: it can be guessed",
    "api-key-whitespace": "the apiKey secret starts or ends with white space or holds a control character "
                          "(a line break from echo?): HTTP trims the Authorization header and forbids line "
                          "breaks, so no client could present it",
}


def api_key_findings(value: str) -> list[Finding]:
    """What is wrong with the API key's value, if anything; the value itself is never repeated."""
    if value == "":
        code = "api-key-empty"
    elif value != value.strip() or any(ord(c) < 32 or ord(c) == 127 for c in value):
        code = "api-key-whitespace"
    elif len(value) < MIN_API_KEY_LENGTH:
        code = "api-key-short"
    else:
        return []
    return [Finding(code, Severity.ERROR, API_KEY_KEY, API_KEY_CODES[code], NEW_KEY)]
