"""The provider for the objects the stack keeps on `destroy`, the Namespace and the claims: the next
`pulumi up` adopts them instead of failing.

`retain_on_delete` leaves them in the cluster (and the weights in them). Since pulumi-kubernetes
v4.29 a create is a plain Create unless the provider sets `upsertExistingObjects`
(provider/pkg/await/await.go `Creation`), so after `pulumi destroy` the next `pulumi up` would stop at
AlreadyExists on the kept namespace. With it, the create is a server-side apply, which takes the
kept object over as it is (`pulumi.com/patchForce` on every object lets the new field manager win).
Upsert's risk, a renamed resource's create then delete removing the object, cannot touch these:
they are never deleted. Every other object stays on the default provider.

The default provider takes its settings from the stack's `kubernetes:` config; an explicit provider
does not, so they are passed through here (both read the same environment variables). The cluster
then reads the same, and a stack first deployed without this provider moves its objects onto it
without a replacement: the engine asks the new provider's DiffConfig (pulumi
pkg/resource/deploy/step_generator.go `providerChanged`), and pulumi-kubernetes' replaces only for
another cluster (a changed clusterIdentifier, or another active cluster in the kubeconfig).
"""

from __future__ import annotations

from collections.abc import Callable

import pulumi
import pulumi_kubernetes as k8s

# `kubernetes:` config key -> (the Provider's argument, how the key is read): pulumi-kubernetes'
# provider inputs (provider/pkg/gen/schema.go), as the default provider reads them from the stack's
# config. kubeconfig may hold a token: read as a secret, it stays one in the state.
PASSED_THROUGH: dict[str, tuple[str, str]] = {
    "kubeconfig": ("kubeconfig", "secret"),
    "context": ("context", "string"),
    "cluster": ("cluster", "string"),
    "clusterIdentifier": ("cluster_identifier", "string"),
    "namespace": ("namespace", "string"),
    "enableServerSideApply": ("enable_server_side_apply", "bool"),
    "enablePatchForce": ("enable_patch_force", "bool"),
    "enableConfigMapMutable": ("enable_config_map_mutable", "bool"),
    "enableSecretMutable": ("enable_secret_mutable", "bool"),
    "deleteUnreachable": ("delete_unreachable", "bool"),
    "skipUpdateUnreachable": ("skip_update_unreachable", "bool"),
    "renderYamlToDirectory": ("render_yaml_to_directory", "string"),
    "alwaysRender": ("always_render", "bool"),
    "suppressDeprecationWarnings": ("suppress_deprecation_warnings", "bool"),
    "suppressHelmHookWarnings": ("suppress_helm_hook_warnings", "bool"),
    # the client's timeout, qps and burst: the same API-server limits as every other object's
    "kubeClientSettings": ("kube_client_settings", "object"),
}
# The provider inputs not passed through: this provider's own, and Helm's (it creates no release).
NOT_PASSED_THROUGH = ("upsertExistingObjects", "helmReleaseSettings")


def _stack_settings() -> dict[str, object]:
    config = pulumi.Config("kubernetes")
    read: dict[str, Callable[[str], object]] = {
        "secret": config.get_secret, "string": config.get, "bool": config.get_bool, "object": config.get_object}
    found = {argument: read[kind](key) for key, (argument, kind) in PASSED_THROUGH.items()}
    return {name: value for name, value in found.items() if value is not None}


def adopting_provider(name: str, parent: pulumi.Resource) -> k8s.Provider:
    """A provider like the default one, that adopts an object it is asked to create if it exists."""
    settings = _stack_settings()
    if settings.get("enable_server_side_apply") is False:
        # the upsert is a server-side apply (await.go `Creation`); a client-side create cannot adopt
        pulumi.log.warn("kubernetes:enableServerSideApply is false: after `pulumi destroy`, the next `pulumi up` "
                        "fails with AlreadyExists on the namespace and claims the stack kept; remove the key "
                        "(server-side apply is the default) to let it adopt them", resource=parent)
    args = k8s.ProviderArgs(upsert_existing_objects=True)
    for argument, value in settings.items():
        setattr(args, argument, value)
    return k8s.Provider(f"{name}-adopting", args, pulumi.ResourceOptions(parent=parent))
