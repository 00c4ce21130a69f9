"""`vllm-stack init NAME --gpu GPU --count N (--model M | --model-config PATH)`: a new stack file.

Writes `Pulumi.NAME.yaml` in the project directory with an engine section that works on those
GPUs: tensorParallelSize from the GPU count and the model's heads - or, when the model fits one
GPU with room, several engines (dataParallelSize) -, the dtype the GPU computes in, the longest
maxModelLen whose KV cache fits (the capacity planner) and the model's parsers; every key with a
comment. `--tp`, `--dp` and `--max-model-len` (`32k` = 32000, `32K` = 32768, as vLLM reads them)
set those instead, checked the same way. Then checks it as `vllm-stack check NAME` does.

Every argument is checked before anything is written. `--stdout` writes nothing: it prints the
stack file (findings on stderr); `--json` prints what was chosen and found as JSON.

Never overwrites a file. Exit status: 0 written and clean of errors; 1 the model does not fit
(the message says how many GPUs it needs) or the stack has errors; 2 an argument it cannot use
(an unknown or ambiguous GPU or model, with the candidates; a TP that does not split the model; a
file that is not a model's config.json, with the field it lacks; a --weights path no stack may mount;
an existing file).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import shlex
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

from pydantic_core import PydanticCustomError

from vllm_serving.catalog.models import ModelArchitecture
from vllm_serving.cli.arg_types import tokens, whole
from vllm_serving.cli.check import check_stack, print_results
from vllm_serving.cli.exits import FINDINGS, OK, Unusable, print_error
from vllm_serving.cli.typed_names import UnusableName, gpu_named, model_named
from vllm_serving.cli.verbs import verb_help
from vllm_serving.findings import Finding
from vllm_serving.rules.host_paths import host_path_problem
from vllm_serving.scaffold.engine_choice import MAX_GPUS, PINNED_TAG, DoesNotFit, Unworkable, choose_engine
from vllm_serving.scaffold.model_config_copy import (
    ConfigSource,
    ConfigUnusable,
    Created,
    read_config_source,
    remove_created,
    write_copy,
)
from vllm_serving.scaffold.stack_text import DOCKER_HUB_REPOSITORY, NewStack, stack_text
from vllm_serving.settings.text_checks import STACK_NAME_FIX, absolute_path, stack_name_problem
from vllm_serving.stack_files.loader import stack_path


def _gpu_count(text: str) -> int:
    return whole(text, MAX_GPUS, "the host's GPU count")


def _parallel_size(text: str) -> int:
    return whole(text, MAX_GPUS, "a number of GPUs")


def register(sub: Any) -> None:
    parser: argparse.ArgumentParser = sub.add_parser(
        "init", help=verb_help("init"),
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("name", metavar="NAME", help="stack name: writes Pulumi.NAME.yaml")
    parser.add_argument("--gpu", required=True,
                        help="the GPU: its catalog name (vllm-stack gpus), nvidia-smi's name or the node label")
    parser.add_argument("--count", required=True, type=_gpu_count, metavar="N",
                        help=f"GPUs on the host (per node on Kubernetes), 1-{MAX_GPUS}")
    model = parser.add_mutually_exclusive_group(required=True)
    model.add_argument("--model", help="the model: its catalog name (vllm-stack models) or Hugging Face id")
    model.add_argument("--model-config", type=Path, metavar="PATH",
                       help="the model's Hugging Face config.json, for a model outside the catalog")
    parser.add_argument("--max-model-len", type=tokens, metavar="TOKENS",
                        help="longest request, prompt plus output: 32768, 32k (32000) or 32K (32768) "
                             "(default: the longest that fits)")
    parser.add_argument("--tp", type=_parallel_size, metavar="N",
                        help="tensorParallelSize: GPUs one copy of the model is split across (default: chosen)")
    parser.add_argument("--dp", type=_parallel_size, metavar="N",
                        help="dataParallelSize: copies of the model, each on --tp GPUs (default: chosen)")
    parser.add_argument("--target", choices=("docker", "kubernetes"), default="docker",
                        help="deploy to a Docker host (default) or a Kubernetes cluster")
    parser.add_argument("--registry", metavar="HOST/REPO",
                        help="pull the image from your registry, e.g. harbor.local:30000/vllm/vllm-openai "
                             f"(default: {DOCKER_HUB_REPOSITORY} from Docker Hub)")
    parser.add_argument("--tag", default=PINNED_TAG, help=f"vLLM image tag (default: {PINNED_TAG})")
    parser.add_argument("--weights", metavar="DIR",
                        help="weights directory on the host (default: /models/<model directory name>)")
    parser.add_argument("--stdout", action="store_true",
                        help="print the stack file instead of writing it (and copy no config.json)")
    parser.add_argument("--json", action="store_true", help="print what was chosen and found as JSON")
    parser.set_defaults(func=run)


def _config_source(path: Path, project: Path) -> ConfigSource:
    """The --model-config file read, checked and placed (models/<folder>/config.json unless it is in
    the project already); nothing is written yet (scaffold/model_config_copy.py)."""
    try:
        return read_config_source(path, project)
    except ConfigUnusable as exc:
        raise Unusable(str(exc)) from None


def split_registry(text: str) -> tuple[str | None, str]:
    """`harbor.local:30000/vllm/vllm-openai` -> (registry, repository). As Docker reads a
    reference, the first part is a registry only if it has a `.` or `:` or is `localhost`;
    `myorg/vllm` is a Docker Hub repository."""
    first, _, rest = text.partition("/")
    if rest and ("." in first or ":" in first or first == "localhost"):
        return first, rest
    if not rest and ("." in first or ":" in first or first == "localhost"):
        return first, DOCKER_HUB_REPOSITORY
    return None, text


_DEFAULTS = {"target": "docker", "tag": PINNED_TAG}
_QUOTED_OPTIONS = ("max_model_len", "tp", "dp", "target", "registry", "tag", "weights")


def _command(args: argparse.Namespace, gpu: str, model: str | None) -> str:
    """The command that writes this file again, with the catalog's names."""
    words = ["vllm-stack", "init", args.name, "--gpu", gpu, "--count", str(args.count)]
    words += ["--model", model] if model else ["--model-config", str(args.model_config)]
    for option in _QUOTED_OPTIONS:
        value = getattr(args, option)
        if value is not None and value != _DEFAULTS.get(option):
            words += [f"--{option.replace('_', '-')}", str(value)]
    return shlex.join(words)


def new_stack(args: argparse.Namespace, source: ConfigSource | None = None,
              notes: list[str] | None = None) -> NewStack:
    """What to write, from the arguments, all checked; Unusable or DoesNotFit when there is nothing to.
    `source`: the --model-config file as read already (read here when not given); `notes` collects
    how typed names were taken ("taken as ...")."""
    notes = [] if notes is None else notes
    try:
        gpu = gpu_named(args.gpu, notes)
    except UnusableName as exc:
        raise Unusable(str(exc)) from None
    model: ModelArchitecture
    if args.model:
        try:
            model_name, model = model_named(args.model, notes)
        except UnusableName as exc:
            raise Unusable(f"{exc}, or pass the model's config.json with --model-config") from None
        config_file, directory = None, model_name
    else:
        source = source or _config_source(args.model_config, args.project_dir)
        model, model_name, config_file, directory = source.model, None, source.config_file, source.folder
    try:
        engine = choose_engine(model, gpu, args.count, args.tag, args.tp, args.dp, args.max_model_len)
    except Unworkable as exc:
        raise Unusable(str(exc)) from None
    registry, repository = split_registry(args.registry) if args.registry else (None, DOCKER_HUB_REPOSITORY)
    asked = frozenset(k for k in ("tp", "dp", "max_model_len") if getattr(args, k) is not None)
    return NewStack(
        name=args.name, command=_command(args, gpu.name, model_name), target=args.target, gpu=gpu,
        count=args.count, model=model, model_name=model_name, config_file=config_file,
        weights=args.weights or f"/models/{directory}", served_name=directory.lower(), registry=registry,
        repository=repository, tag=args.tag, engine=engine, asked=asked,
    )


def _check_unwritten(stack: NewStack, args: argparse.Namespace, source: ConfigSource | None) -> list[Finding]:
    """`check`'s findings for a stack that is not written: in a copy of the project's Pulumi.yaml
    and the config.json, in a temporary directory."""
    project: Path = args.project_dir
    with tempfile.TemporaryDirectory(prefix="vllm-stack-init-") as scratch:
        mirror = Path(scratch)
        if (project / "Pulumi.yaml").is_file():
            shutil.copy(project / "Pulumi.yaml", mirror / "Pulumi.yaml")
        if source is not None:
            (mirror / source.config_file).parent.mkdir(parents=True, exist_ok=True)
            (mirror / source.config_file).write_bytes(source.data)  # as read and checked, never read again
        path = stack_path(mirror, stack.name)
        path.write_text(stack_text(stack), encoding="utf-8")
        return check_stack(stack.name, path, mirror)


def _summary(stack: NewStack) -> str:
    e = stack.engine
    engines = f" x DP {e.dp}" if e.dp > 1 else ""
    return (f"TP {e.tp}{engines}, dtype {e.dtype}, maxModelLen {e.max_model_len} "
            f"({'as asked' if 'max_model_len' in stack.asked else e.limited_by + ' limits it'})")


def _json(stack: NewStack, written: Path | None, copied: Path | None, notes: list[str],
          findings: list[Finding]) -> str:
    e = stack.engine
    return json.dumps({
        "stack": stack.name, "file": str(written) if written else None, "written": written is not None,
        "configCopiedTo": str(copied) if copied else None, "notes": notes,
        "gpu": stack.gpu.name, "count": stack.count, "model": stack.model_name or stack.config_file,
        "engine": {"tensorParallelSize": e.tp, "dataParallelSize": e.dp, "dtype": e.dtype,
                   "maxModelLen": e.max_model_len, "limitedBy": "asked" if "max_model_len" in stack.asked
                   else e.limited_by, "concurrency": round(e.concurrency, 2),
                   "weightsGibPerGpu": round(e.weights_gib_per_gpu, 2), "reasoningParser": e.reasoning_parser,
                   "toolCallParser": e.tool_call_parser},
        "findings": [f.as_dict() for f in findings],
        **({"text": stack_text(stack)} if written is None else {}),
    }, indent=2)


def _write(stack: NewStack, path: Path, source: ConfigSource | None, project: Path) -> Path | None:
    """Writes the config.json copy (if any, only under models/) and the stack file; the copy's path
    when one was made. A stack file that cannot be created takes the copy back: nothing is left."""
    text = stack_text(stack)
    created = Created() if source is None else write_copy(source, project)
    try:
        with path.open("x", encoding="utf-8") as handle:  # "x": never replaces a file (or a link) made meanwhile
            handle.write(text)
    except OSError as exc:
        remove_created(created)
        why = "already exists" if isinstance(exc, FileExistsError) else f"cannot be written ({exc.strerror})"
        raise Unusable(f"{path} {why}; refusing to overwrite it, nothing written") from None
    return project / source.config_file if source is not None and created.paths else None


def _prepare(args: argparse.Namespace, notes: list[str]) -> tuple[NewStack, Path, ConfigSource | None]:
    """Every argument checked, the stack decided: nothing is written before this returns."""
    if stack_name_problem(args.name):
        raise Unusable(f"{args.name[:60]!r} is not a stack name; {STACK_NAME_FIX}")
    path = stack_path(args.project_dir, args.name)
    if not args.stdout and (path.exists() or path.is_symlink()):
        raise Unusable(f"{path} already exists; refusing to overwrite it "
                       "(edit it, delete it first, pick another NAME, or print it with --stdout)")
    if args.weights is not None:
        _check_weights(args.weights)
    source = None if args.model_config is None else _config_source(args.model_config, args.project_dir)
    return new_stack(args, source, notes), path, source


def _check_weights(weights: str) -> None:
    """--weights as model.hostPath takes it and the host-path rules judge it: a path no stack may
    mount is an argument init cannot use, never a stack file written with an error in it."""
    try:
        tidy = absolute_path(weights, "--weights")
    except PydanticCustomError as exc:
        # settings/base.py's errors: the message is the whole text ("{message}"), the fix in the context
        raise Unusable(f"{exc}; {exc.context['fix'] if exc.context else ''}") from None
    assert tidy is not None
    problem = host_path_problem(tidy, writable=False)
    if problem is not None:
        raise Unusable(f"--weights {tidy[:60]!r} {problem}; give the weights' own directory, e.g. /data/models/NAME")


def run(args: argparse.Namespace) -> int:
    notes: list[str] = []
    try:
        stack, path, source = _prepare(args, notes)
    except DoesNotFit as exc:
        print_error("init", f"{exc}; nothing written", args.json)
        return FINDINGS
    if args.stdout:
        findings = _check_unwritten(stack, args, source)
        if args.json:
            print(_json(stack, None, None, notes, findings))
        else:
            sys.stdout.write(stack_text(stack))
            with contextlib.redirect_stdout(sys.stderr):  # stdout is the stack file
                print_results([(args.name, findings)], as_json=False)
        return FINDINGS if any(f.blocks for f in findings) else OK
    copied = _write(stack, path, source, args.project_dir)
    findings = check_stack(args.name, path, args.project_dir)
    failed = any(f.blocks for f in findings)
    if args.json:
        print(_json(stack, path, copied, notes, findings))
        return FINDINGS if failed else OK
    if copied is not None:
        print(f"copied {args.model_config} to {copied} (model.configFile is read from the project)")
    print(f"wrote {path}: {_summary(stack)}; checking it:")
    print_results([(args.name, findings)], as_json=False)
    if failed:
        print(f"vllm-stack init: {path.name} is written but has errors: change the keys above, then run "
              f"vllm-stack check {args.name}", file=sys.stderr)
    return FINDINGS if failed else OK
