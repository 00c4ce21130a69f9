"""The Pulumi engine across runs, as its source decides each step: a model for scenario tests.

Pulumi's mock engine answers every registration on its own and forgets it. `Engine` keeps the state a
run leaves (the checkpoint) and turns each registration of the next run into the step pulumi
v3.259.0's step generator would (pkg/resource/deploy/step_generator.go), for what this program uses:

- ignoreChanges: the ignored paths of the new inputs take the old inputs' values for the diff and
  an update (`processIgnoreChanges`, line 3028); a replacement is created from the program's own
  values, checked again without the old inputs (lines 2004-2023, "we need to recompute the default
  values"), so an ignored value the stack changed applies when something else replaces the resource.
- the provider's diff, then replaceOnChanges: a changed path under one of its paths replaces; an
  old state with init errors counts as a change of `#initerror` (`applyReplaceOnChanges`, 3122).
- no diff but init errors: an empty update, "to continue awaiting initialization" (line 2180).
- a protected resource is never replaced (line 1959); a replacement deletes first when the resource
  says so, else the provider's default decides; create-first deletes the old one after the run.
- a provider reference that changed replaces only if the new provider's DiffConfig says so
  (`providerChanged`, line 2798).
- a refresh stores what the provider's Read returns, init errors included, so a Read that reports
  none (the Terraform bridge's never does) clears them (pkg/resource/deploy/step.go
  `RefreshStep.Apply`, lines 1579-1642).
- at the end of a run, what the program no longer registers is deleted (`GenerateDeletes`, 2326);
  a delete of a retainOnDelete resource only drops it from the state, of a protected one fails
  (pkg/resource/deploy/step.go `DeleteStep.Apply`, lines 626-661).
A failed step fails the run at once; the state keeps what was done, and an object that exists but
did not initialise (the provider's `initializationError`) is kept with its init error.
The providers are modelled in docker_host.py and cluster.py from their own source.
"""

from __future__ import annotations

import threading
from dataclasses import replace
from typing import Any

from google.protobuf import json_format
from pulumi.runtime import rpc
from pulumi.runtime.mocks import _sync_await
from pulumi.runtime.proto import resource_pb2

from tests.pulumi_harness import ProgramFailed, _Mocks, _Monitor, as_manifest, run_program
from tests.scenario.state import (
    PROVIDERS,
    Diff,
    Entry,
    Goal,
    InitError,
    Outcome,
    Provider,
    Step,
    StepFailed,
    apply_replace_on_changes,
    reset_ignored,
)


class Engine:
    """The state of one stack and the steps of each run; `providers` by package (`docker`, `kubernetes`)."""

    def __init__(self, providers: dict[str, Provider], stack: str = "test") -> None:
        self.providers = providers
        self.stack = stack
        self.state: dict[str, Entry] = {}
        self.outputs: dict[str, Any] = {}
        self._lock = threading.Lock()
        self._steps: list[Step] = []
        self._seen: set[str] = set()
        self._targeted: set[str] = set()

    # --- runs -------------------------------------------------------------------------------
    def up(self, config: dict[str, Any], secrets: dict[str, str] | None = None,
           replace: tuple[str, ...] = ()) -> Outcome:
        """`pulumi up [--replace URN]`: the stack's exports change only when the run succeeds."""
        self._steps, self._seen, self._targeted = [], set(), set(replace)
        olds = dict(self.state)
        try:
            run = run_program(config, stack=self.stack, secrets=secrets, monitor_type=self._monitor)
        except ProgramFailed as failed:
            return Outcome(False, str(failed.error), self._steps, {})
        try:
            for urn in reversed(list(olds)):
                if urn not in self._seen and urn in self.state:
                    self._delete(self.state[urn], "delete")
        except StepFailed as exc:
            return Outcome(False, str(exc), self._steps, {})
        self.outputs = run.outputs
        return Outcome(True, "", self._steps, run.outputs)

    def destroy(self) -> Outcome:
        self._steps = []
        try:
            for entry in reversed(list(self.state.values())):
                self._delete(entry, "delete")
        except StepFailed as exc:
            return Outcome(False, str(exc), self._steps, {})
        self.outputs = {}
        return Outcome(True, "", self._steps, {})

    def refresh(self, exclude: tuple[str, ...] = ()) -> Outcome:
        """`pulumi refresh [--exclude URN]`: each resource read back; the provider's inputs replace
        the state's (step.go `RefreshStep.Apply`: "If the provider specified new inputs ... pick them up")."""
        self._steps = []
        for urn, entry in list(self.state.items()):
            if entry.external or entry.type.startswith(PROVIDERS) or urn in exclude:
                continue
            read = self._provider(entry.type).read(entry, self._config(entry.provider))
            if read is None:
                del self.state[urn]
                self._steps.append(Step("refresh-deleted", entry.name, entry.type))
            else:  # the bridge's Read reports no init error: the refreshed state has none
                self.state[urn] = replace(entry, outputs=read[0], inputs=read[1], init_errors=())
                self._steps.append(Step("refresh", entry.name, entry.type))
        return Outcome(True, "", self._steps, {})

    def entry(self, name: str) -> Entry:
        (found,) = [e for e in self.state.values() if e.name == name]
        return found

    # --- registrations ----------------------------------------------------------------------
    def _monitor(self, mocks: _Mocks) -> _Monitor:
        return _EngineMonitor(mocks, self)

    def _provider(self, type_: str) -> Provider:
        return self.providers[type_.split(":", 1)[0]]

    def _config(self, reference: str) -> dict[str, Any]:
        """The inputs of the provider resource a reference names (`urn::id`); {} for a default provider."""
        urn = reference.rsplit("::", 1)[0] if reference else ""
        entry = self.state.get(urn)
        return dict(entry.inputs) if entry is not None else {}

    def register(self, goal: Goal) -> tuple[str, dict[str, Any]]:
        with self._lock:
            self._seen.add(goal.urn)
            old = self.state.get(goal.urn)
            if goal.type.startswith(PROVIDERS):
                ident = old.id if old is not None else f"{goal.name}-provider"
                self.state[goal.urn] = Entry(goal.urn, goal.type, goal.name, ident, goal.inputs, goal.inputs)
                return ident, goal.inputs
            if old is None:
                return self._create(goal, "create")
            program = goal
            goal = replace(goal, inputs=reset_ignored(goal.inputs, old.inputs, goal.ignore_changes))
            provider = self._provider(goal.type)
            if old.provider != goal.provider and provider.config_replaces(
                    self._config(old.provider), self._config(goal.provider)):
                diff = Diff(["provider"], ["provider"])
            else:
                diff = provider.diff(old, goal)
            diff = apply_replace_on_changes(diff, goal.replace_on_changes, bool(old.init_errors))
            if goal.urn in self._targeted:  # `--replace`: a replacement whatever the diff (isTargetedReplace)
                diff = Diff([*diff.changed, "--replace"], [*diff.replace, "--replace"], diff.delete_before_replace)
            if diff.replace:  # created from the program's values, ignoreChanges notwithstanding
                return self._replace(old, program, diff)
            if diff.changed or old.init_errors:  # an empty update retries an init-errored resource
                return self._update(old, goal)
            self._steps.append(Step("same", goal.name, goal.type))
            self.state[goal.urn] = replace(old, inputs=goal.inputs, provider=goal.provider, protect=goal.protect,
                                           retain_on_delete=goal.retain_on_delete)
            return old.id, old.outputs

    def read_resource(self, urn: str, type_: str, name: str, ident: str, provider: str) -> dict[str, Any]:
        with self._lock:
            self._seen.add(urn)
            outputs = self._provider(type_).get(type_, ident, self._config(provider))
            self.state[urn] = Entry(urn, type_, name, ident, {}, outputs, provider, external=True)
            self._steps.append(Step("read", name, type_))
            return outputs

    def _replace(self, old: Entry, goal: Goal, diff: Diff) -> tuple[str, dict[str, Any]]:
        if goal.protect and old.protect:
            raise StepFailed(f"unable to replace resource {goal.urn!r} as it is currently marked for protection")
        first = goal.delete_before_replace if goal.delete_before_replace is not None else diff.delete_before_replace
        if first:
            self._delete(old, "delete-replaced")
            return self._create(goal, "replace")
        result = self._create(goal, "replace")
        self._delete(old, "delete-replaced")  # after the run in the engine; nothing here depends on when
        return result

    def _create(self, goal: Goal, op: str) -> tuple[str, dict[str, Any]]:
        try:
            ident, outputs = self._provider(goal.type).create(goal, self._config(goal.provider))
        except InitError as exc:
            self._keep(goal, exc.ident, exc.outputs, (str(exc),))
            self._steps.append(Step(f"{op}-failed", goal.name, goal.type))
            raise
        except StepFailed:
            self._steps.append(Step(f"{op}-failed", goal.name, goal.type))
            raise
        self._keep(goal, ident, outputs, ())
        self._steps.append(Step(op, goal.name, goal.type))
        return ident, outputs

    def _update(self, old: Entry, goal: Goal) -> tuple[str, dict[str, Any]]:
        try:
            outputs = self._provider(goal.type).update(old, goal, self._config(goal.provider))
        except InitError as exc:
            self._keep(goal, old.id, exc.outputs, (str(exc),))
            self._steps.append(Step("update-failed", goal.name, goal.type))
            raise
        except StepFailed:
            self._steps.append(Step("update-failed", goal.name, goal.type))
            raise
        self._keep(goal, old.id, outputs, ())
        self._steps.append(Step("update", goal.name, goal.type))
        return old.id, outputs

    def _keep(self, goal: Goal, ident: str, outputs: dict[str, Any], errors: tuple[str, ...]) -> None:
        self.state[goal.urn] = Entry(goal.urn, goal.type, goal.name, ident, goal.inputs, outputs, goal.provider,
                                     goal.protect, goal.retain_on_delete, errors)

    def _delete(self, entry: Entry, op: str) -> None:
        if entry.external or entry.type.startswith(PROVIDERS):
            self._forget(entry)
            return
        if op == "delete" and entry.protect:
            raise StepFailed(f"unable to delete resource {entry.urn!r}: it is protected")
        if entry.retain_on_delete:
            self._steps.append(Step(f"{op}-retained", entry.name, entry.type))
        else:
            self._provider(entry.type).delete(entry, self._config(entry.provider))
            self._steps.append(Step(op, entry.name, entry.type))
        self._forget(entry)

    def _forget(self, entry: Entry) -> None:
        if self.state.get(entry.urn) is entry:  # not the create-first replacement under the same URN
            del self.state[entry.urn]


class _EngineMonitor(_Monitor):
    """The mock monitor, answering each registration with the engine's step instead of an echo."""

    def __init__(self, mocks: _Mocks, engine: Engine) -> None:
        super().__init__(mocks)
        self.engine = engine

    def RegisterResource(self, request: Any) -> Any:  # noqa: N802 - gRPC name
        urn = self.make_urn(request.parent, request.type, request.name)
        if request.type == "pulumi:pulumi:Stack":
            return resource_pb2.RegisterResourceResponse(urn=urn)
        self.record(request)
        if not request.custom:
            return resource_pb2.RegisterResourceResponse(urn=urn)
        inputs = as_manifest(json_format.MessageToDict(request.object))
        ident, outputs = self.engine.register(Goal(
            urn, request.type, request.name, inputs, request.provider, request.protect, request.retainOnDelete,
            request.deleteBeforeReplace if request.deleteBeforeReplaceDefined else None,
            tuple(request.ignoreChanges), tuple(request.replaceOnChanges)))
        obj = _sync_await(rpc.serialize_properties(outputs, {}))
        return resource_pb2.RegisterResourceResponse(urn=urn, id=ident, object=obj)

    def ReadResource(self, request: Any) -> Any:  # noqa: N802 - gRPC name
        self.reads.append((request.type, request.name, request.id))
        urn = self.make_urn(request.parent, request.type, request.name)
        outputs = self.engine.read_resource(urn, request.type, request.name, request.id, request.provider)
        obj = _sync_await(rpc.serialize_properties(outputs, {}))
        return resource_pb2.ReadResourceResponse(urn=urn, properties=obj)
