"""`vllm-stack capacity`: the KV-cache planner on its own, for a stack or for ad-hoc flags.

Either way the flags become a stack's settings, so the figures are `plan`'s (`plan_capacity`)
and the findings `check`'s (`rules.check`); `views/capacity_summary.py` words the answer.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any, get_args

from vllm_serving import rules
from vllm_serving.catalog.gpus import GpuSpec
from vllm_serving.catalog.hf_config import load_hf_config
from vllm_serving.catalog.models import ModelArchitecture
from vllm_serving.cli.arg_types import non_negative_int, positive_float, positive_int, tokens
from vllm_serving.cli.capacity_tp import choose_tp
from vllm_serving.cli.exits import Unusable
from vllm_serving.cli.stacks import stack_target
from vllm_serving.cli.typed_names import UnusableName, gpu_named, model_named
from vllm_serving.cli.verbs import verb_help
from vllm_serving.findings import PROJECT, ConfigError, Finding
from vllm_serving.planner.capacity import (
    PINNED_VLLM_VERSION,
    CapacityInputs,
    CapacityPlan,
    parse_vllm_version,
    plan,
    spec_inputs,
)
from vllm_serving.settings import Dtype, KvCacheDtype
from vllm_serving.settings.stack_config import parse_stack_config
from vllm_serving.spec import ServingSpec, resolve
from vllm_serving.stack_files.loader import load_spec, project_defaults
from vllm_serving.views.capacity_summary import Question, capacity_text

# The JSON keys scripts rely on first, then the rest of the plan.
MAIN_KEYS = ("weights_gib_per_gpu", "kv_bytes_per_token_per_gpu", "available_kv_gib",
             "kv_cache_tokens", "max_concurrency")
# Flags that describe a deployment ad hoc: not combined with a stack, which has its own.
AD_HOC = ("model", "model_config", "gpu", "gpus", "tp", "pp", "dtype", "kv_cache_dtype", "gpu_memory_utilization",
          "max_model_len", "max_num_batched_tokens", "max_num_seqs", "optimization_level",
          "enable_prefix_caching", "num_speculative_tokens", "speculative_method", "vllm_version")
# The config key each ad-hoc flag sets: findings name the flag beside it.
FLAG_OF_KEY = {
    "engine.tensorParallelSize": "--tp", "engine.pipelineParallelSize": "--pp", "engine.dtype": "--dtype",
    "engine.gpuMemoryUtilization": "--gpu-memory-utilization", "engine.maxModelLen": "--max-model-len",
    "engine.kvCacheDtype": "--kv-cache-dtype", "engine.enablePrefixCaching": "--enable-prefix-caching",
    "engine.speculativeConfig": "--num-speculative-tokens/--speculative-method",
    "engine.maxNumSeqs": "--max-num-seqs", "engine.maxNumBatchedTokens": "--max-num-batched-tokens",
    "engine.extraArgs": "--enforce-eager/--optimization-level", "hardware.gpu": "--gpu",
    "hardware.count": "--gpus", "model.name": "--model", "model.architecture": "--model-config",
    "image.tag": "--vllm-version",
}
# Sections ad-hoc flags describe; rules on the others (container, network, target...) are skipped.
AD_HOC_SECTIONS = ("engine", "hardware", "model", "image")


def _pinned_tag(project_dir: Path) -> tuple[str, str]:
    """(tag, where from): the project's image.tag (Pulumi.yaml), else the planner's pin."""
    try:
        image = project_defaults(project_dir).get(f"{PROJECT}:image")
    except ConfigError:
        image = None
    tag = image.get("tag") if isinstance(image, dict) else None
    if isinstance(tag, str) and parse_vllm_version(tag) is not None:
        return tag, f"Pulumi.yaml image.tag {tag}"
    pinned = "v" + ".".join(map(str, PINNED_VLLM_VERSION))
    return pinned, f"the planner's pinned {pinned}"


def register(subparsers: Any) -> None:
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "capacity", help=verb_help("capacity"),
        description="Whether a model fits, its longest context and concurrency, and each amount vLLM "
                    "subtracts before sizing the KV cache (with the vLLM file it comes from), for a stack "
                    "or for the flags below; then the findings `check` would print.")
    parser.add_argument("stack", nargs="?", metavar="STACK",
                        help="a stack name (Pulumi.<STACK>.yaml) or a stack file's path; or give the flags")
    source = parser.add_mutually_exclusive_group()
    source.add_argument("--model", help="catalog model, e.g. Qwen3.5-27B")
    source.add_argument("--model-config", type=Path, metavar="PATH",
                        help="a Hugging Face config.json as published")
    parser.add_argument("--gpu", help="catalog GPU, e.g. A100-80GB")
    parser.add_argument("--gpus", "--count", type=positive_int, metavar="N",
                        help="GPUs available, as init's --count (default: TP x PP)")
    parser.add_argument("--tp", type=int, metavar="N", help="tensor parallel size (default: the smallest that fits)")
    parser.add_argument("--pp", type=int, metavar="N", help="pipeline parallel size (default 1)")
    parser.add_argument("--dtype", choices=get_args(Dtype), help="--dtype (default auto)")
    parser.add_argument("--kv-cache-dtype", choices=get_args(KvCacheDtype), help="default auto")
    parser.add_argument("--gpu-memory-utilization", type=positive_float, metavar="SHARE",
                        help="share of each GPU's memory (default: the release's, 0.9; 0.92 from v0.20)")
    parser.add_argument("--max-model-len", type=tokens, metavar="TOKENS",
                        help="32768, 32k (32000) or 32K (32768), as vLLM reads it (default: the model's "
                             "max_position_embeddings)")
    parser.add_argument("--max-num-batched-tokens", type=positive_int, metavar="N",
                        help="tokens per step: the profiling run's size (default: the release's for the GPU)")
    parser.add_argument("--max-num-seqs", type=positive_int, metavar="N",
                        help="sequences per step: sampler rows and CUDA graph sizes (default: the release's)")
    parser.add_argument("--enforce-eager", action="store_true", help="no CUDA graphs (vLLM's flag)")
    parser.add_argument("--optimization-level", choices=("0", "1", "2", "3"), metavar="{0,1,2,3}",
                        help="vLLM's -O: 0 no CUDA graphs, 1 piecewise, 2 and 3 full and piecewise (default 2)")
    parser.add_argument("--available-kv-gib", type=positive_float, metavar="GIB",
                        help="KV memory vLLM logged ('Available KV cache memory'); skips the estimate")
    parser.add_argument("--enable-prefix-caching", action=argparse.BooleanOptionalAction,
                        help="as vLLM's flag (default: vLLM's for the model, off for hybrids); "
                             "on, hybrid models keep 2 state blocks per request ('align' mode)")
    parser.add_argument("--num-speculative-tokens", type=non_negative_int, metavar="N",
                        help="speculative tokens per step (default 0)")
    parser.add_argument("--speculative-method", metavar="METHOD",
                        help="draft method of --num-speculative-tokens (default mtp: the model's "
                             "MTP layers join the KV cache and their weights the budget)")
    parser.add_argument("--vllm-version", metavar="VERSION",
                        help="image's vLLM version, e.g. v0.19.1 (default: the project's image.tag "
                             "in Pulumi.yaml, else v0.19.1)")
    parser.add_argument("--for-context", type=tokens, metavar="TOKENS",
                        help="how many concurrent requests of TOKENS (32768, 32k, 32K) the KV cache holds")
    parser.add_argument("--json", action="store_true", help="print JSON instead of text")
    parser.set_defaults(func=run)


def _error(message: str) -> int:
    raise Unusable(message)  # a bad argument: exit 2, as JSON under --json (cli/exits.py)


def _config_errors(findings: list[Finding]) -> int:
    raise ConfigError(findings)  # exit 1 (2 for an unreadable stack), as JSON under --json


def _model(args: argparse.Namespace) -> ModelArchitecture | str:
    """The model, or an error message with suggestions."""
    if args.model_config is not None:
        return load_hf_config(args.model_config)  # ConfigError -> finding lines, exit 1
    try:
        args.model, model = model_named(args.model)  # the catalog's spelling from here on
        return model
    except UnusableName as exc:
        return f"{exc} (or use --model-config PATH)"


def _ad_hoc_problem(args: argparse.Namespace) -> str | None:
    if args.model is None and args.model_config is None:
        return "give a STACK, or --model (or --model-config) and --gpu"
    if args.gpu is None:
        return "--gpu is needed with --model / --model-config"
    tp, pp = args.tp or 1, args.pp or 1
    if tp < 1 or pp < 1:
        return "--tp and --pp must be at least 1"
    if args.gpus is not None and tp * pp > args.gpus:
        return f"TP {tp} x PP {pp} needs {tp * pp} GPUs; --gpus is {args.gpus}"
    if args.gpu_memory_utilization is not None and args.gpu_memory_utilization > 1:
        return "--gpu-memory-utilization must be in (0, 1]"
    if args.vllm_version and parse_vllm_version(args.vllm_version) is None:
        return f"'{args.vllm_version}' is not a version such as v0.19.1"
    return None


def _engine_values(args: argparse.Namespace) -> dict[str, Any]:
    """The engine section the flags describe (camelCase keys, only those given)."""
    extra = (["--enforce-eager"] if args.enforce_eager else []) + (
        [f"-O{args.optimization_level}"] if args.optimization_level is not None else [])
    engine: dict[str, Any] = {
        "tensorParallelSize": args.tp, "pipelineParallelSize": args.pp, "dtype": args.dtype,
        "kvCacheDtype": args.kv_cache_dtype, "gpuMemoryUtilization": args.gpu_memory_utilization,
        "maxModelLen": args.max_model_len, "maxNumBatchedTokens": args.max_num_batched_tokens,
        "maxNumSeqs": args.max_num_seqs, "enablePrefixCaching": args.enable_prefix_caching,
        "extraArgs": extra or None,
    }
    if args.num_speculative_tokens:
        engine["speculativeConfig"] = {"method": args.speculative_method or "mtp",
                                       "numSpeculativeTokens": args.num_speculative_tokens}
    return {key: value for key, value in engine.items() if value is not None}


def _ad_hoc_spec(args: argparse.Namespace, model: ModelArchitecture, gpu: GpuSpec) -> tuple[ServingSpec, str]:
    """A stack made of the flags (ConfigError naming the flags), and where its version came from."""
    tag, version_source = (args.vllm_version, f"--vllm-version {args.vllm_version}") if args.vllm_version else (
        _pinned_tag(args.project_dir))
    model_section: dict[str, Any] = {"name": args.model} if args.model else {"architecture": model}
    values = {
        f"{PROJECT}:hardware": {"gpu": gpu.name, "count": args.gpus or (args.tp or 1) * (args.pp or 1)},
        f"{PROJECT}:image": {"tag": tag},
        f"{PROJECT}:model": model_section | {"hostPath": "/models/model"},
        f"{PROJECT}:engine": _engine_values(args),
    }
    try:
        return resolve(parse_stack_config(values, frozenset()), "capacity"), version_source
    except ConfigError as exc:
        raise ConfigError([_name_flag(f) for f in exc.findings]) from None


def _name_flag(finding: Finding) -> Finding:
    """The finding with the flag behind its key, for a reader who typed flags, not YAML."""
    key = finding.key.removeprefix(f"{PROJECT}:")
    flag = next((f for k, f in FLAG_OF_KEY.items() if key == k or key.startswith((k + ".", k + "["))), None)
    if flag is None:
        return finding
    return Finding(finding.code, finding.severity, f"{finding.key} ({flag})", finding.message, finding.fix)


def _stack_spec(args: argparse.Namespace) -> ServingSpec:
    """The STACK argument read as every verb reads it (cli/stacks.py)."""
    stack, path = stack_target(args.project_dir, args.stack)
    return load_spec(path, stack, args.project_dir)


def _label(args: argparse.Namespace, spec: ServingSpec) -> str:
    engine = spec.settings.engine
    name = spec.settings.model.name or (str(args.model_config) if args.model_config else spec.model.architecture)
    tp, pp = engine.tensor_parallel_size or 1, engine.pipeline_parallel_size or 1
    where = f"stack {spec.stack}: " if args.stack else ""
    return f"{where}{name} on {tp * pp} x {spec.gpu.name} (TP {tp}" + (f", PP {pp})" if pp > 1 else ")")


def _answer(args: argparse.Namespace) -> tuple[ServingSpec, CapacityInputs, list[Finding], str] | int:
    """The spec, planner inputs, findings and their scope; or an exit code after an error."""
    if args.stack is not None:
        given = [f"--{name.replace('_', '-')}" for name in AD_HOC if getattr(args, name) not in (None, False)]
        if given or args.enforce_eager:
            return _error(f"a stack carries its own settings; drop {', '.join(given or ['--enforce-eager'])} "
                          "or the stack")
        try:
            spec = _stack_spec(args)
        except ConfigError as exc:
            return _config_errors(exc.findings)
        return spec, spec_inputs(spec), rules.check(spec), f"stack {spec.stack}"
    problem = _ad_hoc_problem(args)
    if problem is not None:
        return _error(problem)
    model = _model(args)
    if isinstance(model, str):
        return _error(model)
    try:
        gpu = gpu_named(args.gpu)
    except UnusableName as exc:
        return _error(str(exc))
    try:
        spec, version_source = _ad_hoc_spec(args, model, gpu)
        if args.tp is None:  # the smallest TP that fits, said in the summary
            spec, args.tp_choice = choose_tp(args, model, lambda a: _ad_hoc_spec(a, model, gpu)[0])
    except ConfigError as exc:
        return _config_errors(exc.findings)
    findings = [_name_flag(f) for f in rules.check(spec)
                if f.key.removeprefix(f"{PROJECT}:").split(".")[0].split("[")[0] in AD_HOC_SECTIONS]
    inputs = spec_inputs(spec).model_copy(update={"vllm_version_source": version_source})
    return spec, inputs, findings, "ad-hoc flags; container and network rules skipped"


def _json(result: CapacityPlan, findings: list[Finding], for_context: dict[str, object] | None) -> str:
    data = result.as_dict()
    ordered: dict[str, object] = {key: data[key] for key in MAIN_KEYS} | data
    ordered["memory_terms"] = result.memory_breakdown()
    if for_context is not None:
        ordered["for_context"] = for_context
    ordered["findings"] = [f.as_dict() for f in findings]
    return json.dumps(ordered, indent=2)


def run(args: argparse.Namespace) -> int:
    answer = _answer(args)
    if isinstance(answer, int):
        return answer
    spec, inputs, findings, scope = answer
    if args.available_kv_gib is not None:
        inputs = inputs.model_copy(update={"available_kv_gib": args.available_kv_gib})
    result = plan(inputs)
    asked = args.for_context or result.max_model_len
    at_asked = result if asked == result.max_model_len else plan(inputs.model_copy(update={"max_model_len": asked}))
    for_context = None if args.for_context is None else {
        "tokens": asked, "max_concurrency": round(at_asked.max_concurrency, 2),
        "pessimistic_max_concurrency": round(at_asked.pessimistic_max_concurrency, 2),
        "within_max_model_len": asked <= result.max_model_len}
    if args.json:
        print(_json(result, findings, for_context))
    else:
        question = Question(label=_label(args, spec), asked_tokens=asked, asked_concurrency=at_asked.max_concurrency,
                            max_position_embeddings=spec.model.max_position_embeddings,
                            asked_pessimistic_concurrency=at_asked.pessimistic_max_concurrency,
                            tp_choice=getattr(args, "tp_choice", None))
        print(capacity_text(result, question, findings, scope))
    # the answer is no: it does not fit, or the server would refuse the length asked about
    failed = not (result.weights_fit and result.fits_one_request) or max(asked, result.max_model_len) > (
        spec.model.max_position_embeddings) or asked > result.max_model_len
    return 1 if failed or any(f.blocks for f in findings) else 0
