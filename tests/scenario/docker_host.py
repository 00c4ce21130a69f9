"""Docker hosts and pulumi-docker, as their source behaves, for the scenario engine (engine.py).

pulumi-docker 5.x bridges terraform-provider-docker (v4.5.0 read here; `internal/provider/`
`resource_docker_container_funcs.go` and `resource_docker_volume.go` did not change up to the newest
commit stored). What matters after the first `pulumi up`:
- Container create starts the container and, with `wait`, polls its health; a container that is not
  healthy in time fails the create *after* `d.SetId` (funcs.go lines 460, 590-627): the bridge
  returns the partial state as an `initializationError` (pulumi-terraform-bridge
  pkg/tfbridge/provider.go `Create`). A create that succeeds ends with Read (line 673).
- Read (lines 750-981) sets `log_opts` to the daemon's whole map when the state has any
  (`containerLogOptsForState`), `ports` from the running container (empty while it restarts) when
  running or `must_run`, and `must_run` false and `exit_code` for a stopped container.
- Update (lines 991-1076) applies restart policy and resource limits and starts a container whose
  `must_run` went back to true; it neither waits for health nor reads: the state is the plan.
- Volume create on an existing name returns that volume unchanged (moby's VolumeCreate), and Read
  stores its labels, driver and options (volume.go lines 278-312).
- The diff is Terraform's: a field the config leaves unset but the state holds differs unless the
  field is computed; it forces a replacement when the published schema says `willReplaceOnChanges`
  (tests/contracts/schemas, the bridge's ForceNew). pulumi-docker replaces containers delete-first
  (provider/resources.go `DeleteBeforeReplace: true`).
- ignoreChanges reaches the bridge as Terraform attribute keys (pkg/tfbridge/diff.go
  `computeIgnoreChanges`): an ignored attribute drops its own diff and every `key.`-prefixed one
  (pkg/tfshim/sdk-v2/instance_diff.go `processIgnoreChanges`), but an ignored map *key* leaves the
  map's count diff (`log_opts.%`, ForceNew like the map: terraform-plugin-sdk helper/schema/
  schema.go `diffMap`). That count changes nothing in the planned state, so alone it is cleared
  (pkg/tfshim/sdk-v2/provider2.go: a plan equal to the prior state has no diff); beside any other
  change it stays, and the bridge turns its RequiresNew into a replacement (pkg/tfbridge/provider.go
  `replaceDecision`, detailed_diff.go `__meta`).
dockerd merges daemon.json's log options into a container's (moby daemon/logs.go
`mergeAndVerifyLogConfig`): every key of the default driver's, and the `cache-*` keys for any driver.
"""

from __future__ import annotations

import copy
import hashlib
from dataclasses import dataclass, field
from typing import Any

from tests.contracts.provider_schema import load_docker_schema
from tests.pulumi_harness import ONE_SHOT_RESULT
from tests.scenario.state import Diff, Entry, Goal, InitError, StepFailed

CONTAINER = "docker:index/container:Container"
VOLUME = "docker:index/volume:Volume"
IMAGE = "docker:index/remoteImage:RemoteImage"
LOCAL = "unix:///var/run/docker.sock"
# Optional+Computed in the Terraform schema (resource_docker_container.go, resource_docker_volume.go):
# an unset input keeps what the state holds, without a diff.
COMPUTED = {
    CONTAINER: {"hostname", "command", "entrypoints", "securityOpts", "runtime", "platform", "stopSignal",
                "stopTimeout", "envs", "labels", "shmSize", "logDriver", "healthcheck", "ipcMode", "init", "name"},
    VOLUME: {"name", "driver"},
    IMAGE: set(),
}
META = "__meta"
"""The key the bridge reports a replacement under when no property's own diff says so."""
OUTPUTS_ONLY = {"exitCode", "containerLogs", "bridge", "networkDatas", "mountpoint", "imageId", "repoDigest"}
_REPLACING = {token: {name for name, spec in load_docker_schema().resource(token).properties.items()
                      if spec.get("willReplaceOnChanges")} for token in (CONTAINER, VOLUME, IMAGE)}


@dataclass
class Container:
    id: str
    name: str
    image: str
    log_driver: str
    log_opts: dict[str, str]
    ports: list[dict[str, Any]]
    status: str = "running"  # running | restarting | exited
    exit_code: int = 0


@dataclass
class Volume:
    name: str
    labels: dict[str, str] = field(default_factory=dict)
    driver: str = "local"
    options: dict[str, str] = field(default_factory=dict)
    data: str = ""
    """What is in it (model weights take hours to copy): a deleted volume loses it."""


@dataclass
class Daemon:
    """One Docker host: daemon.json's log settings, its containers, volumes and images."""

    log_driver: str = "json-file"
    log_opts: dict[str, str] = field(default_factory=dict)
    containers: dict[str, Container] = field(default_factory=dict)
    volumes: dict[str, Volume] = field(default_factory=dict)
    images: dict[str, str] = field(default_factory=dict)
    never_healthy: set[str] = field(default_factory=set)
    """References of images whose server never answers its health check on this host."""
    created: int = 0

    def merged_log_opts(self, driver: str, opts: dict[str, str]) -> dict[str, str]:
        """moby daemon/logs.go `mergeAndVerifyLogConfig` with cache/validate.go `MergeDefaultLogConfig`."""
        merged = dict(opts)
        for key, value in self.log_opts.items():
            if driver == self.log_driver or key.startswith("cache-"):
                merged.setdefault(key, value)
        return merged

    def by_name(self, name: str) -> Container | None:
        return next((c for c in self.containers.values() if c.name == name), None)

    def restart_loop(self, name: str) -> None:
        """The server crashed and dockerd restarts it: running, restarting, no published ports."""
        container = self.by_name(name)
        assert container is not None
        container.status = "restarting"


def _same(token: str, key: str, old: Any, new: Any) -> bool:
    if old in (None, {}, []) and new in (None, {}, []):
        return True
    if isinstance(old, list) and isinstance(new, list) and key in ("ports", "labels", "volumes"):
        # sets in the Terraform schema, or compared as sets (ports' DiffSuppressFunc)
        return sorted(map(repr, old)) == sorted(map(repr, new))
    return bool(old == new)


def _count_differs(old: Any, new: Any) -> bool:
    """Terraform's `key.%` diff: both maps given, of different sizes (schema.go `diffMap`)."""
    return isinstance(old, dict) and isinstance(new, dict) and len(old) != len(new)


def _drop_ignored(value: Any, key: str, ignored: tuple[str, ...]) -> Any:
    """The bridge drops the attribute diffs of ignored paths (pkg/tfbridge/diff.go `computeIgnoreChanges`)."""
    if isinstance(value, dict):
        return {k: v for k, v in value.items() if f"{key}.{k}" not in ignored}
    return value


class DockerProvider:
    """pulumi-docker over hosts by the provider's `host` (a fleet's providers reach different hosts)."""

    def __init__(self) -> None:
        self.hosts: dict[str, Daemon] = {}

    def daemon(self, config: dict[str, Any]) -> Daemon:
        """The host a provider's config reaches (`host`, else the local socket), as it is now."""
        return self.hosts.setdefault(config.get("host") or LOCAL, Daemon())

    def daemon_of(self, values: dict[str, Any]) -> Daemon:
        """The host a stack's config deploys to (`target.dockerHost`)."""
        return self.daemon({"host": (values.get("vllm-serving:target") or {}).get("dockerHost")})

    # --- Terraform's diff -------------------------------------------------------------------
    def diff(self, old: Entry, goal: Goal) -> Diff:
        found = Diff(delete_before_replace=goal.type == CONTAINER)
        counts = []  # ForceNew maps whose ignored keys leave only a count diff
        for key in sorted(set(goal.inputs) | set(old.outputs)):
            if key in OUTPUTS_ONLY or key in goal.ignore_changes or key.startswith("__"):
                continue
            new = goal.inputs.get(key)
            if new is None and key in COMPUTED[goal.type]:
                continue
            before = _drop_ignored(old.outputs.get(key), key, goal.ignore_changes)
            if not _same(goal.type, key, before, _drop_ignored(new, key, goal.ignore_changes)):
                found.changed.append(key)
                if key in _REPLACING[goal.type]:
                    found.replace.append(key)
            elif key in _REPLACING[goal.type] and _count_differs(old.outputs.get(key), new):
                counts.append(key)
        if found.changed and counts:  # the plan differs: the count's RequiresNew replaces
            found.changed.append(META)
            found.replace.append(META)
        return found

    def config_replaces(self, old: dict[str, Any], new: dict[str, Any]) -> bool:
        return old.get("host") != new.get("host")

    # --- CRUD --------------------------------------------------------------------------------
    def create(self, goal: Goal, config: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        daemon, inputs = self.daemon(config), goal.inputs
        if goal.type == IMAGE:
            ref = inputs["name"]
            digest = hashlib.sha256(ref.encode()).hexdigest()
            daemon.images[f"sha256:{digest}"] = ref
            named = ref.split("@")[0]
            repo = named.rsplit(":", 1)[0] if ":" in named.rsplit("/", 1)[-1] else named  # without the tag
            return digest, {**inputs, "imageId": f"sha256:{digest}", "repoDigest": f"{repo}@sha256:{digest}"}
        if goal.type == VOLUME:
            name = inputs.get("name") or goal.name
            volume = daemon.volumes.setdefault(name, Volume(name, _labels(inputs), inputs.get("driver") or "local",
                                                            dict(inputs.get("driverOpts") or {})))
            return volume.name, self._read_volume(volume, inputs)
        return self._create_container(daemon, goal)

    def _create_container(self, daemon: Daemon, goal: Goal) -> tuple[str, dict[str, Any]]:
        inputs = goal.inputs
        name = inputs.get("name") or f"{goal.name}-{daemon.created}"  # the bridge auto-names
        if daemon.by_name(name) is not None:
            raise StepFailed(f'Unable to create container: Conflict. The container name "/{name}" is already in use')
        if inputs["image"] not in daemon.images:
            raise StepFailed(f"Unable to create container with image {inputs['image']}: No such image")
        daemon.created += 1
        driver = inputs.get("logDriver") or daemon.log_driver
        container = Container(f"c{daemon.created}", name, inputs["image"], driver,
                              daemon.merged_log_opts(driver, dict(inputs.get("logOpts") or {})),
                              [dict(p) for p in inputs.get("ports") or []])
        daemon.containers[container.id] = container
        state = {**inputs, "name": name}
        if inputs.get("attach"):
            container.status = "exited"
            container.exit_code, state["containerLogs"] = ONE_SHOT_RESULT
        elif inputs.get("wait") and daemon.images[container.image] in daemon.never_healthy:
            # the health wait timed out after d.SetId: the partial state is what the config said
            raise InitError("container failed to be in healthy state", container.id, state)
        return container.id, self._read_container(container, state)

    def update(self, old: Entry, goal: Goal, config: dict[str, Any]) -> dict[str, Any]:
        container = self.daemon(config).containers[old.id]
        if goal.inputs.get("mustRun", True) and not old.outputs.get("mustRun", True):
            container.status = "running"
        # no Read: the planned state, in which an ignored attribute keeps what the state held
        return {**old.outputs, **{k: v for k, v in goal.inputs.items() if k not in goal.ignore_changes}}

    def delete(self, entry: Entry, config: dict[str, Any]) -> None:
        daemon = self.daemon(config)
        if entry.type == CONTAINER:
            daemon.containers.pop(entry.id, None)
        elif entry.type == VOLUME:
            daemon.volumes.pop(entry.id, None)

    def read(self, entry: Entry, config: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]] | None:
        """A refresh; the bridge's new inputs are the read values of the inputs it had (schema.go
        `ExtractInputsFromOutputs`, isRefresh)."""
        daemon = self.daemon(config)
        if entry.type == CONTAINER:
            container = daemon.containers.get(entry.id)
            outputs = None if container is None else self._read_container(container, entry.outputs)
        elif entry.type == VOLUME:
            volume = daemon.volumes.get(entry.id)
            outputs = None if volume is None else self._read_volume(volume, entry.outputs)
        else:
            outputs = dict(entry.outputs)
        if outputs is None:
            return None
        return outputs, {key: copy.deepcopy(outputs.get(key)) for key in entry.inputs}

    def get(self, type_: str, ident: str, config: dict[str, Any]) -> dict[str, Any]:
        raise StepFailed(f"no read of {type_} {ident} is modelled")

    # --- Read ---------------------------------------------------------------------------------
    def _read_container(self, container: Container, state: dict[str, Any]) -> dict[str, Any]:
        out = copy.deepcopy(state)
        out["name"], out["logDriver"] = container.name, container.log_driver
        if state.get("logOpts"):
            out["logOpts"] = dict(container.log_opts)
        running = container.status in ("running", "restarting")  # moby: Running stays true while restarting
        if (running or state.get("mustRun", True)) and state.get("ports"):
            out["ports"] = [dict(p) for p in container.ports] if container.status == "running" else []
        if not running:
            out["exitCode"] = container.exit_code
            if state.get("mustRun", True):
                out["mustRun"] = False
        return out

    def _read_volume(self, volume: Volume, state: dict[str, Any]) -> dict[str, Any]:
        return {**state, "name": volume.name, "driver": volume.driver,
                "mountpoint": f"/var/lib/docker/volumes/{volume.name}",
                "labels": [{"label": k, "value": v} for k, v in sorted(volume.labels.items())],
                "driverOpts": dict(volume.options)}


def _labels(inputs: dict[str, Any]) -> dict[str, str]:
    return {item["label"]: item["value"] for item in inputs.get("labels") or []}
