"""Runs the real program (`__main__.py`) under Pulumi's mock engine and records everything.

Recorded per resource: type, name, parent, inputs (secrets unwrapped), the raw wire form (where
secrets keep their secret marker) and the resource options that protect data and replacements; per
read, its parent; per log line, the resource it is printed beside (`pulumi up` shows it in that
resource's row), which Pulumi's own mock engine drops.
"""

from __future__ import annotations

import asyncio
import json
import logging
import runpy
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pulumi
from google.protobuf import json_format
from pulumi.runtime import mocks as pulumi_mocks
from pulumi.runtime import rpc, settings
from pulumi.runtime.config import set_all_config
from pulumi.runtime.proto import engine_pb2

from tests.crd_schema import read_crd
from tests.paths import PROJECT, PROJECT_DIR, ROOT, stack_file
from vllm_serving.preflight.in_image.report import PASSED as PREFLIGHT_PASSED

# What a one-shot container (`attach`, the preflight) reports once it exited: exit code, output.
ONE_SHOT_RESULT: tuple[int, str] = (0, f"{PREFLIGHT_PASSED} (mock engine)")
CRD_TYPE = "kubernetes:apiextensions.k8s.io/v1:CustomResourceDefinition"
SECRET_SIG = rpc._special_sig_key  # "4dabf18193072939515e22adb298388d"
SECRET_VALUE = rpc._special_secret_sig


@dataclass
class Registered:
    """One resource registration as the engine would receive it."""

    type: str
    name: str
    parent: str
    custom: bool
    inputs: dict[str, Any]
    raw: dict[str, Any]
    protect: bool
    delete_before_replace: bool
    retain_on_delete: bool
    custom_timeouts: dict[str, str]
    provider: str
    dependencies: tuple[str, ...] = ()
    """URNs of every resource it waits for (its inputs' and depends_on)."""
    delete_before_replace_defined: bool = False
    """The option was set, true or false: false then overrides the provider's delete-first default."""
    ignore_changes: tuple[str, ...] = ()
    replace_on_changes: tuple[str, ...] = ()
    additional_secret_outputs: tuple[str, ...] = ()
    """Outputs the engine stores as secrets whatever the provider answers."""


@dataclass(frozen=True)
class Logged:
    """One diagnostic line as the engine received it."""

    level: str  # "info", "warning", ...
    message: str
    urn: str
    """The resource it is printed beside; "" for none (a line at the top of the output)."""


class _RecordingEngine(pulumi_mocks.MockEngine):
    """Pulumi's mock engine, which logs the message alone, also keeping the resource's URN."""

    def __init__(self, logger: logging.Logger | None, logged: list[Logged]) -> None:
        super().__init__(logger)
        self.logged = logged

    def Log(self, request: Any) -> None:  # noqa: N802 - gRPC name
        level = engine_pb2.LogSeverity.Name(request.severity).lower()
        self.logged.append(Logged(level, request.message, request.urn))
        super().Log(request)


class _Mocks(pulumi.runtime.Mocks):
    """Echo inputs back as outputs, plus what the providers would compute; stack references
    answer with the outputs given for that stack, or fail as the engine does for a stack
    that does not exist."""

    def __init__(self, stack_outputs: Mapping[str, Mapping[str, Any]] | None = None) -> None:
        self.stack_outputs = dict(stack_outputs or {})

    def new_resource(self, args: pulumi.runtime.MockResourceArgs) -> tuple[str, dict[str, Any]]:
        outputs = dict(args.inputs)
        if args.typ == "pulumi:pulumi:StackReference":
            name = args.inputs["name"]
            if name not in self.stack_outputs:
                raise LookupError(f"unknown stack {name!r}: no outputs were given for it")
            return name, {"name": name, "outputs": dict(self.stack_outputs[name]),
                          "secretOutputNames": []}
        if args.typ == CRD_TYPE and args.resource_id:
            # `CustomResourceDefinition.get`: the cluster has the vendored CRD
            return args.resource_id, read_crd(args.resource_id)
        if args.typ == "docker:index/remoteImage:RemoteImage":
            ref = args.inputs["name"]
            repo = ref.split("@")[0].rsplit(":", 1)[0] if ":" in ref.rsplit("/", 1)[-1] else ref
            outputs["repoDigest"] = f"{repo}@sha256:{'ab' * 32}"
            outputs["imageId"] = f"sha256:{'cd' * 32}"
        if args.typ == "docker:index/container:Container" and args.inputs.get("attach"):
            outputs["exitCode"], outputs["containerLogs"] = ONE_SHOT_RESULT
        if args.typ.startswith("kubernetes:"):
            meta = dict(outputs.get("metadata") or {})
            meta.setdefault("name", args.name)
            outputs["metadata"] = meta
        return f"{args.name}-id", outputs

    def call(self, args: pulumi.runtime.MockCallArgs) -> dict[str, Any]:
        return {}


class _Monitor(pulumi_mocks.MockMonitor):
    def __init__(self, mocks: _Mocks) -> None:
        super().__init__(mocks)
        self.registered: list[Registered] = []
        self.reads: list[tuple[str, str, str]] = []  # (type, name, id): stack references
        self.read_parents: dict[str, str] = {}  # read's name -> its parent's URN ("" for none)
        self.logged: list[Logged] = []

    def ReadResource(self, request: Any) -> Any:  # noqa: N802 - gRPC name
        self.reads.append((request.type, request.name, request.id))
        self.read_parents[request.name] = request.parent
        return super().ReadResource(request)

    def RegisterResource(self, request: Any) -> Any:  # noqa: N802 - gRPC name
        response = super().RegisterResource(request)
        if request.type != "pulumi:pulumi:Stack":
            self.record(request)
        return response

    def record(self, request: Any) -> None:
        """Keep one registration as the engine received it."""
        timeouts = request.customTimeouts
        self.registered.append(Registered(
            type=request.type,
            name=request.name,
            parent=request.parent,
            custom=request.custom,
            inputs=rpc.deserialize_properties(request.object),
            raw=json_format.MessageToDict(request.object),
            protect=request.protect,
            delete_before_replace=request.deleteBeforeReplace,
            retain_on_delete=request.retainOnDelete,
            custom_timeouts={k: getattr(timeouts, k) for k in ("create", "update", "delete")
                             if getattr(timeouts, k)},
            provider=request.provider,
            dependencies=tuple(request.dependencies),
            delete_before_replace_defined=request.deleteBeforeReplaceDefined,
            ignore_changes=tuple(request.ignoreChanges),
            replace_on_changes=tuple(request.replaceOnChanges),
            additional_secret_outputs=tuple(request.additionalSecretOutputs),
        ))


class _Collect(logging.Handler):
    def __init__(self) -> None:
        super().__init__()
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


class ProgramFailed(Exception):
    """The program raised; `resources` holds whatever was registered before it did."""

    def __init__(self, error: BaseException, resources: list[Registered],
                 reads: list[tuple[str, str, str]] | None = None) -> None:
        super().__init__(str(error))
        self.error = error
        self.resources = resources
        self.reads = reads or []


@dataclass
class ProgramRun:
    resources: list[Registered]
    outputs: dict[str, Any]
    secret_outputs: set[str]
    warnings: list[str] = field(default_factory=list)
    reads: list[tuple[str, str, str]] = field(default_factory=list)
    infos: list[str] = field(default_factory=list)
    read_parents: dict[str, str] = field(default_factory=dict)
    """Each read's name -> its parent's URN."""
    logged: list[Logged] = field(default_factory=list)
    """Every diagnostic line with the resource it is printed beside."""

    def of_type(self, suffix: str) -> list[Registered]:
        """Resources of that type; one-shot containers (the preflight) only through `one_shot`."""
        return [r for r in self.resources if r.type.endswith(suffix) and not r.inputs.get("attach")]

    def one_shot(self) -> list[Registered]:
        """Containers run once to completion (`attach`): the preflight."""
        return [r for r in self.resources if r.type == "docker:index/container:Container" and r.inputs.get("attach")]

    def applied(self) -> list[tuple[str, str]]:
        """(type, object name) of what the run applies: components and objects, not the providers
        that apply them (`vllm-stack plan` lists the same)."""
        return sorted((r.type, r.inputs.get("metadata", {}).get("name", r.name)) for r in self.resources
                      if not r.type.startswith("pulumi:providers:"))

    def one(self, suffix: str) -> Registered:
        found = self.of_type(suffix)
        assert len(found) == 1, f"expected one {suffix}, got {[r.name for r in found]}"
        return found[0]


def recording_mocks(
    stack: str, preview: bool = False, logger: logging.Logger | None = None,
    stack_outputs: Mapping[str, Mapping[str, Any]] | None = None,
    monitor_type: Callable[[_Mocks], _Monitor] | None = None,
) -> _Monitor:
    """Install fresh mocks that record every registration; returns the recording monitor
    (`monitor_type` answers the registrations instead of the echoing mocks: tests/scenario)."""
    mocks = _Mocks(stack_outputs)
    monitor = (monitor_type or _Monitor)(mocks)
    settings.ROOT.set(None)  # a fresh root stack per run
    pulumi.runtime.set_mocks(mocks, project=PROJECT, stack=stack, preview=preview,
                             logger=logger, monitor=monitor)
    settings.SETTINGS.engine = _RecordingEngine(logger, monitor.logged)
    return monitor


def as_manifest(value: Any) -> Any:
    """Inputs as a manifest: secrets unwrapped, numbers (floats over the wire) whole again."""
    if isinstance(value, dict) and value.get(SECRET_SIG) == SECRET_VALUE:
        return as_manifest(value["value"])
    if isinstance(value, dict):
        return {k: as_manifest(v) for k, v in value.items()}
    if isinstance(value, list):
        return [as_manifest(v) for v in value]
    return int(value) if isinstance(value, float) and value.is_integer() else value


def secret_paths(raw: Any, path: str = "") -> Iterator[str]:
    """Paths inside a wire-form value that are marked secret."""
    if isinstance(raw, dict):
        if raw.get(SECRET_SIG) == SECRET_VALUE:
            yield path
            return
        for k, v in raw.items():
            yield from secret_paths(v, f"{path}.{k}")
    elif isinstance(raw, list):
        for i, v in enumerate(raw):
            yield from secret_paths(v, f"{path}[{i}]")


def plain_text(raw: Any) -> str:
    """Everything in a wire-form value that is NOT under a secret marker, as one string."""
    if isinstance(raw, dict):
        if raw.get(SECRET_SIG) == SECRET_VALUE:
            return ""
        return " ".join(f"{k} {plain_text(v)}" for k, v in raw.items())
    if isinstance(raw, list):
        return " ".join(plain_text(v) for v in raw)
    return json.dumps(raw)


def stack_config(path: Path) -> dict[str, Any]:
    """The config the engine would pass for a stack file: its `config:` over the project
    defaults of Pulumi.yaml, secure values dropped (tests pass secrets explicitly)."""
    from vllm_serving.stack_files.loader import read_stack_file

    stack_file = read_stack_file(path, PROJECT_DIR)
    return {k: v for k, v in stack_file.values.items() if k not in stack_file.secret_keys}


def _report_without_traceback(loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
    """A failed registration leaves futures whose exception nobody retrieves (the run already
    raised it as ProgramFailed). asyncio's default handler formats their traceback when the
    collector finalizes them, and CPython 3.11's traceback calls ast.parse for its carets: inside
    any ast.parse the collector interrupted, whose shared depth counter then fails with "AST
    constructor recursion depth mismatch" - in whichever test of the worker came next."""
    logging.getLogger("asyncio").error("%s: %r", context.get("message"), context.get("exception"))


def run_program(
    config: Mapping[str, Any],
    stack: str = "test",
    secrets: Mapping[str, str] | None = None,
    preview: bool = False,
    stack_outputs: Mapping[str, Mapping[str, Any]] | None = None,
    monitor_type: Callable[[_Mocks], _Monitor] | None = None,
) -> ProgramRun:
    """Run `__main__.py` for one stack's config; `secrets` are set as Pulumi secrets.

    `stack_outputs` answers StackReferences (`ORG/vllm-serving/STACK` -> outputs). A promotion
    from a shipped stack that is not given there is answered with that stack's own outputs,
    from running the program for it first, as the engine would read them after its deployment.
    """
    full = {(k if ":" in k else f"{PROJECT}:{k}"): v for k, v in config.items()}
    stack_outputs = dict(stack_outputs or {})
    release = full.get(f"{PROJECT}:release")
    source = str(release.get("promoteFrom")) if isinstance(release, dict) else "None"  # a bad section: none
    from vllm_serving.settings.release import bare_stack

    shipped = stack_file(bare_stack(source))
    qualified = source.count("/") == 2 and source.split("/")[1] == PROJECT
    if qualified and source not in stack_outputs and shipped.exists():
        stack_outputs[source] = run_program(
            stack_config(shipped), stack=bare_stack(source), secrets=secrets).outputs
    values = {k: v if isinstance(v, str) else json.dumps(v) for k, v in full.items()}
    secret_keys = []
    for key, value in (secrets or {}).items():
        full_key = key if ":" in key else f"{PROJECT}:{key}"  # a provider's (`kubernetes:kubeconfig`) as is
        values[full_key] = value
        secret_keys.append(full_key)
    set_all_config(values, secret_keys)

    collect = _Collect()
    logger = logging.getLogger(f"pulumi-mock-{id(collect)}")
    logger.addHandler(collect)
    logger.propagate = False
    logger.setLevel(logging.INFO)  # info diagnostics are what an operator reads next to a resource
    monitor = recording_mocks(stack, preview, logger, stack_outputs, monitor_type)
    resolved: dict[str, Any] = {}
    secret_outputs: set[str] = set()

    @pulumi.runtime.test
    def program() -> pulumi.Output[Any]:
        asyncio.get_running_loop().set_exception_handler(_report_without_traceback)
        runpy.run_path(str(ROOT / "__main__.py"), run_name="__main__")
        root = settings.get_root_resource()
        exported: dict[str, Any] = dict(root.outputs) if root is not None else {}  # type: ignore[attr-defined]

        async def _secretness() -> None:
            for name, value in exported.items():
                out = pulumi.Output.from_input(value)
                if await out.is_secret():
                    secret_outputs.add(name)

        def _store(values: dict[str, Any]) -> None:
            resolved.update(values)

        checked = pulumi.Output.from_input(_secretness())
        return pulumi.Output.all(checked, pulumi.Output.all(**exported).apply(_store))

    try:
        program()
    except Exception as exc:
        raise ProgramFailed(exc, monitor.registered, monitor.reads) from exc
    finally:
        set_all_config({}, [])
    warnings = [r.getMessage() for r in collect.records if r.levelno == logging.WARNING]
    infos = [r.getMessage() for r in collect.records if r.levelno == logging.INFO]
    return ProgramRun(monitor.registered, resolved, secret_outputs, warnings, monitor.reads, infos,
                      monitor.read_parents, monitor.logged)
