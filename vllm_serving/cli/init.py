"""`vllm-stack init NAME --gpu GPU --count N (--model M | --model-config PATH)`: a new stack file.

Writes `Pulumi.NAME.yaml` in the project directory with an engine section that works on those
GPUs: tensorParallelSize from the GPU count and the model's heads, the dtype the GPU computes in,
the longest maxModelLen whose KV cache fits (the capacity planner) and the model's parsers; every
key with a comment. Then checks it as `vllm-stack check NAME` does and prints the findings.

Never overwrites a file. Exit status: 0 written and clean of errors; 1 refused (the file exists,
the model does not fit: the message says how many GPUs it needs) or written with errors; 2 for
an argument it cannot use (an unknown GPU or model, with the closest names; a file that is not a
model's config.json, with the field it lacks).
"""

from __future__ import annotations

import argparse
import shlex
import sys
from pathlib import Path
from typing import Any

from vllm_serving.catalog.gpus import GpuSpec, find_gpu, suggest_gpu
from vllm_serving.catalog.models import MODELS, ModelArchitecture, suggest_model
from vllm_serving.cli.check import check_stack, print_results
from vllm_serving.scaffold.engine_choice import MAX_GPUS, PINNED_TAG, DoesNotFit, choose_engine
from vllm_serving.scaffold.model_config_copy import (
    ConfigSource,
    ConfigUnusable,
    Created,
    read_config_source,
    remove_created,
    write_copy,
)
from vllm_serving.scaffold.stack_text import DOCKER_HUB_REPOSITORY, NewStack, stack_text
from vllm_serving.settings.text_checks import STACK_NAME_FIX, stack_name_problem
from vllm_serving.stack_files.loader import stack_path


class UnusableArgument(Exception):
    """An argument init cannot use; the message says why and what to give instead."""


def _gpu_count(text: str) -> int:
    count = int(text) if text.isdigit() else 0
    if not 1 <= count <= MAX_GPUS:
        raise argparse.ArgumentTypeError(f"{text!r}: give the host's GPU count, a whole number from 1 to {MAX_GPUS}")
    return count


def register(sub: Any) -> None:
    parser: argparse.ArgumentParser = sub.add_parser(
        "init", help="write a new stack file for your GPUs and model, then check it",
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("name", metavar="NAME", help="stack name: writes Pulumi.NAME.yaml")
    parser.add_argument("--gpu", required=True, help="GPU catalog name, e.g. A100-80GB (vllm-stack gpus)")
    parser.add_argument("--count", required=True, type=_gpu_count, metavar="N",
                        help=f"GPUs on the host (per node on Kubernetes), 1-{MAX_GPUS}")
    model = parser.add_mutually_exclusive_group(required=True)
    model.add_argument("--model", help="model catalog name, e.g. Qwen3.5-27B (vllm-stack models)")
    model.add_argument("--model-config", type=Path, metavar="PATH",
                       help="the model's Hugging Face config.json, for a model outside the catalog")
    parser.add_argument("--target", choices=("docker", "kubernetes"), default="docker",
                        help="deploy to a Docker host (default) or a Kubernetes cluster")
    parser.add_argument("--registry", metavar="HOST/REPO",
                        help="pull the image from your registry, e.g. harbor.local:30000/vllm/vllm-openai "
                             f"(default: {DOCKER_HUB_REPOSITORY} from Docker Hub)")
    parser.add_argument("--tag", default=PINNED_TAG, help=f"vLLM image tag (default: {PINNED_TAG})")
    parser.add_argument("--weights", metavar="DIR",
                        help="weights directory on the host (default: /models/<model directory name>)")
    parser.set_defaults(func=run)


def _gpu(name: str) -> GpuSpec:
    gpu = find_gpu(name)
    if gpu is None:
        close = suggest_gpu(name)
        hint = f"did you mean {', '.join(close)}? " if close else ""
        raise UnusableArgument(f"--gpu {name!r} is not in the GPU catalog; {hint}(vllm-stack gpus lists them)")
    return gpu


def _catalog_model(name: str) -> tuple[str, ModelArchitecture]:
    """(the catalog's spelling of the name, the model)."""
    found = next(((key, model) for key, model in MODELS.items() if key.lower() == name.lower()), None)
    if found is None:
        close = suggest_model(name)
        hint = f"did you mean {', '.join(close)}? " if close else ""
        raise UnusableArgument(f"--model {name!r} is not in the model catalog; {hint}(vllm-stack models lists "
                               "them), or pass the model's config.json with --model-config")
    return found


def _config_source(path: Path, project: Path) -> ConfigSource:
    try:
        return read_config_source(path, project)
    except ConfigUnusable as exc:
        raise UnusableArgument(str(exc)) from None


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


def _command(args: argparse.Namespace) -> str:
    words = ["vllm-stack", "init", args.name, "--gpu", args.gpu, "--count", str(args.count)]
    words += ["--model", args.model] if args.model else ["--model-config", str(args.model_config)]
    for option in ("target", "registry", "tag", "weights"):
        value = getattr(args, option)
        if value is not None and value != {"target": "docker", "tag": PINNED_TAG}.get(option):
            words += [f"--{option}", str(value)]
    return shlex.join(words)


def new_stack(args: argparse.Namespace, source: ConfigSource | None = None) -> NewStack:
    """What to write, from the arguments; UnusableArgument or DoesNotFit when there is nothing to.
    `source`: the --model-config file as read already (read here when not given)."""
    project: Path = args.project_dir
    gpu = _gpu(args.gpu)
    if args.model:
        model_name, model = _catalog_model(args.model)
        config_file, directory = None, model_name
    else:
        source = source or _config_source(args.model_config, project)
        model, model_name, config_file, directory = source.model, None, source.config_file, source.folder
    registry, repository = split_registry(args.registry) if args.registry else (None, DOCKER_HUB_REPOSITORY)
    return NewStack(
        name=args.name, command=_command(args), target=args.target, gpu=gpu, count=args.count, model=model,
        model_name=model_name, config_file=config_file, weights=args.weights or f"/models/{directory}",
        served_name=directory.lower(), registry=registry, repository=repository, tag=args.tag,
        engine=choose_engine(model, gpu, args.count, args.tag),
    )


def run(args: argparse.Namespace) -> int:
    project: Path = args.project_dir
    if stack_name_problem(args.name):
        print(f"vllm-stack init: {args.name[:60]!r} is not a stack name; {STACK_NAME_FIX}", file=sys.stderr)
        return 2
    path = stack_path(project, args.name)
    if path.exists() or path.is_symlink():
        print(f"vllm-stack init: {path} already exists; refusing to overwrite it "
              "(edit it, delete it first, or pick another NAME)", file=sys.stderr)
        return 1
    try:  # everything is read and decided before anything is written
        source = None if args.model_config is None else _config_source(args.model_config, project)
        stack = new_stack(args, source)
        text = stack_text(stack)
        created = Created() if source is None else write_copy(source, project)
    except (UnusableArgument, ConfigUnusable) as exc:
        print(f"vllm-stack init: {exc}", file=sys.stderr)
        return 2
    except DoesNotFit as exc:
        print(f"vllm-stack init: {exc}; nothing written", file=sys.stderr)
        return 1
    if source is not None and created.paths:
        print(f"copied {args.model_config} to {project / source.config_file} (model.configFile is read from "
              "the project)")
    try:
        with path.open("x", encoding="utf-8") as handle:  # "x": never replaces a file (or a link) made meanwhile
            handle.write(text)
    except OSError as exc:
        remove_created(created)
        why = "already exists" if isinstance(exc, FileExistsError) else f"cannot be written ({exc.strerror})"
        print(f"vllm-stack init: {path} {why}; refusing to overwrite it, nothing written", file=sys.stderr)
        return 1
    print(f"wrote {path}: TP {stack.engine.tp}, dtype {stack.engine.dtype}, maxModelLen "
          f"{stack.engine.max_model_len} ({'the model' if stack.engine.limited_by == 'model' else 'memory'} "
          "limits it); checking it:")
    failed = print_results([(args.name, check_stack(args.name, path, project))], as_json=False)
    if failed:
        print(f"vllm-stack init: {path.name} is written but has errors: change the keys above, then run "
              f"vllm-stack check {args.name}", file=sys.stderr)
    return 1 if failed else 0
