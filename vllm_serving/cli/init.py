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
file that is not a model's config.json, with the field it lacks; an existing file).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import re
import shlex
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

from vllm_serving.catalog.gpus import GpuSpec
from vllm_serving.catalog.hf_config import load_hf_config
from vllm_serving.catalog.models import ModelArchitecture
from vllm_serving.cli.check import check_stack, print_results
from vllm_serving.cli.exits import FINDINGS, OK, Unusable, print_error
from vllm_serving.cli.typed_names import UnusableName, gpu_named, model_named
from vllm_serving.cli.verbs import verb_help
from vllm_serving.findings import ConfigError, Finding, Severity
from vllm_serving.scaffold.engine_choice import MAX_GPUS, PINNED_TAG, DoesNotFit, Unworkable, choose_engine
from vllm_serving.scaffold.stack_text import DOCKER_HUB_REPOSITORY, NewStack, stack_text
from vllm_serving.stack_files.loader import stack_path
from vllm_serving.units import parse_human_int

# Pulumi's stack names: letters, digits, `-`, `_` and `.`.
_STACK_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,99}$")


def _whole(text: str, most: int, what: str) -> int:
    count = int(text) if text.isdigit() else 0
    if not 1 <= count <= most:
        raise argparse.ArgumentTypeError(f"{text!r}: give {what}, a whole number from 1 to {most}")
    return count


def _gpu_count(text: str) -> int:
    return _whole(text, MAX_GPUS, "the host's GPU count")


def _parallel_size(text: str) -> int:
    return _whole(text, MAX_GPUS, "a number of GPUs")


def _max_model_len(text: str) -> int:
    try:
        tokens = parse_human_int(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    if tokens < 1:
        raise argparse.ArgumentTypeError(f"{text!r}: the longest request is at least one token")
    return tokens


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
    parser.add_argument("--max-model-len", type=_max_model_len, metavar="TOKENS",
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


def _config_model(path: Path) -> ModelArchitecture:
    try:
        return load_hf_config(path)
    except ConfigError as exc:
        problem = exc.findings[0]
        raise Unusable(f"--model-config {problem.key}: {problem.message} - {problem.fix}") from None


def config_in_project(path: Path, project_dir: Path) -> Path:
    """Where the stack finds a config.json: the file itself inside the project, else its copy at
    models/<its folder>/config.json - the stack must name it relative to the project, so previews
    in CI and on colleagues' machines read the same file (model.configFile refuses absolute paths)."""
    resolved = path.resolve()
    if resolved.is_relative_to(project_dir.resolve()):
        return resolved
    folder = resolved.parent.name if resolved.name == "config.json" else resolved.stem.removesuffix(".config")
    return project_dir.resolve() / "models" / (folder or "model") / "config.json"


def _copy_config(source: Path, target: Path) -> bool:
    """Copies the config.json into the project; False when it is there already."""
    if source.resolve() == target:
        return False
    data = source.read_bytes()
    if target.exists():
        if target.read_bytes() == data:
            return False
        raise Unusable(f"--model-config: {target} already exists with other content; "
                       "copy the file into the project yourself and pass that path")
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(data)
    return True


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


def _model(args: argparse.Namespace, notes: list[str]) -> tuple[str | None, ModelArchitecture, str]:
    """(catalog name or None, the model, the weights' directory name)."""
    if args.model:
        name, model = model_named(args.model, notes)
        return name, model, name
    model = _config_model(args.model_config)
    return None, model, args.model_config.resolve().parent.name or model.model_type


def new_stack(args: argparse.Namespace, notes: list[str]) -> tuple[NewStack, GpuSpec]:
    """What to write, from the arguments, all checked; Unusable or DoesNotFit when there is nothing to."""
    project: Path = args.project_dir
    try:
        gpu = gpu_named(args.gpu, notes)
    except UnusableName as exc:
        raise Unusable(str(exc)) from None
    try:
        model_name, model, directory = _model(args, notes)
    except UnusableName as exc:
        raise Unusable(f"{exc}, or pass the model's config.json with --model-config") from None
    try:
        engine = choose_engine(model, gpu, args.count, args.tag, args.tp, args.dp, args.max_model_len)
    except Unworkable as exc:
        raise Unusable(str(exc)) from None
    config_file = None
    if args.model_config is not None:
        config_file = config_in_project(args.model_config, project).relative_to(project.resolve()).as_posix()
    registry, repository = split_registry(args.registry) if args.registry else (None, DOCKER_HUB_REPOSITORY)
    asked = frozenset(k for k in ("tp", "dp", "max_model_len") if getattr(args, k) is not None)
    return NewStack(
        name=args.name, command=_command(args, gpu.name, model_name), target=args.target, gpu=gpu,
        count=args.count, model=model, model_name=model_name, config_file=config_file,
        weights=args.weights or f"/models/{directory}", served_name=directory.lower(), registry=registry,
        repository=repository, tag=args.tag, engine=engine, asked=asked,
    ), gpu


def _check_unwritten(stack: NewStack, args: argparse.Namespace) -> list[Finding]:
    """`check`'s findings for a stack that is not written: in a copy of the project's Pulumi.yaml
    and the config.json, in a temporary directory."""
    project: Path = args.project_dir
    with tempfile.TemporaryDirectory(prefix="vllm-stack-init-") as scratch:
        mirror = Path(scratch)
        if (project / "Pulumi.yaml").is_file():
            shutil.copy(project / "Pulumi.yaml", mirror / "Pulumi.yaml")
        if stack.config_file is not None:
            (mirror / stack.config_file).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(args.model_config, mirror / stack.config_file)
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


def _write(stack: NewStack, path: Path, args: argparse.Namespace) -> Path | None:
    """Writes the config.json copy (if any) and the stack file; the copy's path when one was made."""
    copied = None
    if stack.config_file is not None:
        target = args.project_dir.resolve() / stack.config_file
        copied = target if _copy_config(args.model_config, target) else None
    try:
        with path.open("x", encoding="utf-8") as handle:  # "x": never replaces a file made meanwhile
            handle.write(stack_text(stack))
    except FileExistsError:
        raise Unusable(f"{path} already exists; refusing to overwrite it") from None
    return copied


def _prepare(args: argparse.Namespace, notes: list[str]) -> tuple[NewStack, Path]:
    if not _STACK_NAME.match(args.name):
        raise Unusable(f"{args.name!r} is not a stack name; use letters, digits, '-', '_' and '.'")
    path = stack_path(args.project_dir, args.name)
    if not args.stdout and (path.exists() or path.is_symlink()):
        raise Unusable(f"{path} already exists; refusing to overwrite it "
                       "(edit it, delete it first, pick another NAME, or print it with --stdout)")
    stack, _ = new_stack(args, notes)
    return stack, path


def run(args: argparse.Namespace) -> int:
    notes: list[str] = []
    try:
        stack, path = _prepare(args, notes)
    except DoesNotFit as exc:
        print_error("init", f"{exc}; nothing written", args.json)
        return FINDINGS
    if args.stdout:
        findings = _check_unwritten(stack, args)
        if args.json:
            print(_json(stack, None, None, notes, findings))
        else:
            sys.stdout.write(stack_text(stack))
            with contextlib.redirect_stdout(sys.stderr):  # stdout is the stack file
                print_results([(args.name, findings)], as_json=False)
        return FINDINGS if any(f.severity is Severity.ERROR for f in findings) else OK
    copied = _write(stack, path, args)
    findings = check_stack(args.name, path, args.project_dir)
    failed = any(f.severity is Severity.ERROR for f in findings)
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
