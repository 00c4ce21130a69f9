"""A CPU target (`hardware.device: cpu`): vLLM's CPU image, and what its CPU backend refuses or ignores.

Facts from vLLM v0.19.1 (paths under `vllm/` of the wheel) unless cited otherwise. The rules that
read a GPU's compute capability or memory do not apply to a CPU target (`GPU_ONLY`, skipped by
`check`); the rules below say what replaces them.
"""

from __future__ import annotations

from collections.abc import Iterable

from vllm_serving.engine.defaults import image_size_class
from vllm_serving.findings import Severity, config_key
from vllm_serving.planner.cpu_kv_space import KV_SPACE_ENV, kv_space_gib
from vllm_serving.rules.base import FP8_KV, Context, Facts, Rule, version_text

# Rules whose facts are a GPU's (compute capability, device memory, CUDA builds), each replaced
# on a CPU target: dtypes by CpuPlatform.supported_dtypes (bf16, fp16, fp32 on x86 and aarch64,
# whatever the ISA), FP8 weights by torch kernels (model_executor/kernels/linear/__init__.py
# _POSSIBLE_FP8_KERNELS[CPU]), the KV cache and backends by the cpu-* rules below, and the
# memory budget by VLLM_CPU_KVCACHE_SPACE (cpu_worker.py determine_available_memory).
GPU_ONLY: frozenset[str] = frozenset({
    "dtype-bf16-unsupported", "dtype-auto-falls-back-to-half", "fp8-weights-unsupported",
    "fp8-weights-weight-only", "fp8-kv-cache-unsupported", "fp8-kv-cache-backend",
    "attention-backend-unsupported", "quantization-cc-too-low", "image-cuda13-volta",
    "image-volta-unverified", "hybrid-triton-below-cc80", "weights-exceed-budget",
    "gpu-memory-utilization-high",
})
CPU_IMAGE = "vllm/vllm-openai-cpu"
GPU_IMAGE = "vllm/vllm-openai"
# extraArgs that only CUDA reads: CpuPlatform.check_and_update_config empties the CUDA graph
# capture sizes, custom all-reduce is a CUDA kernel (CPU ranks talk through CpuCommunicator),
# FlashInfer is CUDA-only.
GPU_ONLY_FLAGS: tuple[str, ...] = (
    "--cudagraph-capture-sizes", "--max-cudagraph-capture-size", "--disable-custom-all-reduce",
    "--enable-flashinfer-autotune",
)
# Before v0.17.0 the x86 CPU image carried one kernel build for AVX512 (with BF16 and VNNI);
# from v0.17.0 it carries AVX2 and AVX512 builds and picks one at start (platforms/cpu.py
# CpuPlatform.import_kernels: _C, _C_AVX512, _C_AVX2; absent from v0.13.0's).
AVX2_KERNELS_FROM = (0, 17, 0)
SRC_PLATFORM = "vllm/platforms/cpu.py CpuPlatform"


def applicable(rules: Iterable[Rule], ctx: Context) -> list[Rule]:
    """The rules that apply to this stack's device: on a CPU target, none of `GPU_ONLY`."""
    cpu = not ctx.settings.hardware.uses_gpus
    return [rule for rule in rules if not (cpu and rule.code in GPU_ONLY)]


def _cpu(ctx: Context) -> bool:
    return not ctx.settings.hardware.uses_gpus


def _image_build(ctx: Context) -> Facts | None:
    image = ctx.settings.image
    build = image_size_class(image.repository, image.tag)
    wanted = "cpu" if _cpu(ctx) else "cuda"
    if build == wanted:
        return None
    if _cpu(ctx):
        return {"device": "cpu", "image": image.reference, "build": "CUDA",
                "fix": f"set image.repository: {CPU_IMAGE} (vLLM's CPU image, same release tags)",
                "then": "finds no GPU and exits (\"Failed to infer device type\")"}
    return {"device": "gpu", "image": image.reference, "build": "CPU",
            "fix": f"set image.repository: {GPU_IMAGE}, or hardware.device: cpu",
            "then": "runs on the host's CPU and leaves the GPUs idle"}


def _kv_space(ctx: Context) -> Facts | None:
    if not _cpu(ctx):
        return None
    given = ctx.engine.env.get(KV_SPACE_ENV)
    size = kv_space_gib(ctx.engine.env)
    if size is not None and size >= 1:
        return None
    state = "unset" if given is None else f"{given!r}, not a whole number of GiB above 0"
    return {"state": state}


def _gpu_memory_utilization(ctx: Context) -> Facts | None:
    util = ctx.engine.gpu_memory_utilization
    return {"util": util} if _cpu(ctx) and util is not None else None


def _attention_backend(ctx: Context) -> Facts | None:
    backend = ctx.engine.attention_backend
    return {"backend": backend} if _cpu(ctx) and backend is not None else None


def _fp8_kv(ctx: Context) -> Facts | None:
    kv = ctx.engine.kv_cache_dtype
    return {"kv": kv} if _cpu(ctx) and kv in FP8_KV else None


def _speculative(ctx: Context) -> Facts | None:
    spec = ctx.engine.speculative_config
    return {"method": spec.method} if _cpu(ctx) and spec is not None else None


def _gpu_flags(ctx: Context) -> Facts | None:
    if not _cpu(ctx):
        return None
    found = [flag for flag in GPU_ONLY_FLAGS if ctx.extra_values(flag)]
    return {"flags": ", ".join(found)} if found else None


def _nvidia_runtime(ctx: Context) -> Facts | None:
    runtime = ctx.settings.container.runtime
    return {"runtime": runtime} if _cpu(ctx) and runtime == "nvidia" else None


def _mla(ctx: Context) -> Facts | None:
    return {"arch": ctx.model.architecture} if _cpu(ctx) and ctx.model.mla is not None else None


def _avx512_only(ctx: Context) -> Facts | None:
    version = ctx.vllm_version
    if _cpu(ctx) and version is not None and version < AVX2_KERNELS_FROM:
        return {"version": version_text(version), "from": version_text(AVX2_KERNELS_FROM)}
    return None


ENV_KEY = config_key("engine", "env", KV_SPACE_ENV)

RULES: tuple[Rule, ...] = (
    Rule("image-device-mismatch", Severity.ERROR, config_key("image", "repository"),
         "a {device} target runs {image}, vLLM's {build} build, which {then}",
         "{fix}",
         "The image's build (CPU: a repository or tag with `cpu`) matches hardware.device.",
         "vLLM's CUDA image on a host without a GPU exits at startup; its CPU image on a GPU host "
         "serves from the CPU, many times slower, with the GPUs unused.",
         "vllm/config/device.py DeviceConfig.__post_init__; vllm/platforms/__init__.py "
         "cpu_platform_plugin (the CPU platform only in a `+cpu` build)", _image_build),
    Rule("cpu-kv-cache-space", Severity.ERROR, ENV_KEY,
         "the CPU KV cache size (VLLM_CPU_KVCACHE_SPACE, GiB) is {state}",
         "set engine.env.VLLM_CPU_KVCACHE_SPACE to whole GiB as a string, e.g. \"4\"; "
         "`vllm-stack plan` shows the tokens it holds",
         "A CPU target says how much memory its KV cache takes.",
         "Unset, vLLM takes half the host's memory (per NUMA node) and the plan cannot size the "
         "cache; a value `int()` cannot read stops vLLM at startup, 0 leaves no cache.",
         "vllm/envs.py VLLM_CPU_KVCACHE_SPACE; " + SRC_PLATFORM + ".get_device_total_memory; "
         "vllm/v1/worker/cpu_worker.py CPUWorker.determine_available_memory", _kv_space),
    Rule("cpu-gpu-memory-utilization", Severity.ERROR, config_key("engine", "gpuMemoryUtilization"),
         "gpuMemoryUtilization {util} has no effect on a CPU target",
         "remove engine.gpuMemoryUtilization; size the cache with engine.env.VLLM_CPU_KVCACHE_SPACE",
         "`gpuMemoryUtilization` with hardware.device cpu.",
         "The CPU worker's KV memory is VLLM_CPU_KVCACHE_SPACE alone; the flag reads as a budget "
         "nobody applies.",
         "vllm/v1/worker/cpu_worker.py CPUWorker.determine_available_memory", _gpu_memory_utilization),
    Rule("cpu-attention-backend", Severity.ERROR, config_key("engine", "attentionBackend"),
         "{backend} is a GPU attention backend; vLLM's CPU backend ignores it and runs CPU_ATTN",
         "remove engine.attentionBackend",
         "A forced attention backend with hardware.device cpu.",
         "vLLM logs \"Cannot use ... backend on CPU\" and runs CPU_ATTN: the stack says what does not run.",
         SRC_PLATFORM + ".get_attn_backend_cls", _attention_backend),
    Rule("cpu-fp8-kv-cache", Severity.ERROR, config_key("engine", "kvCacheDtype"),
         "vLLM's CPU backend has no {kv} KV cache",
         "remove engine.kvCacheDtype (the cache takes the model's dtype) and size it with "
         "VLLM_CPU_KVCACHE_SPACE",
         "An FP8 KV cache with hardware.device cpu.",
         "With chunked prefill or prefix caching (both on by default) vLLM exits: \"Chunked-prefill "
         "and prefix-cache on the CPU backend is not compatible with FP8 KV cache\"; otherwise it "
         "falls back to auto.",
         SRC_PLATFORM + ".check_and_update_config; vllm/v1/attention/backends/cpu_attn.py", _fp8_kv),
    Rule("cpu-speculative-unsupported", Severity.ERROR, config_key("engine", "speculativeConfig"),
         "speculative decoding ({method}) does not run on vLLM's CPU backend",
         "remove engine.speculativeConfig",
         "`speculativeConfig` with hardware.device cpu.",
         "The CPU model runner asserts \"spec decode is not supported.\" at startup.",
         "vllm/v1/worker/cpu_model_runner.py CPUModelRunner.__init__", _speculative),
    Rule("cpu-gpu-only-extra-arg", Severity.ERROR, config_key("engine", "extraArgs"),
         "engine.extraArgs pass GPU-only flags on a CPU target: {flags}",
         "remove them from engine.extraArgs",
         "CUDA-graph, custom all-reduce and FlashInfer flags in extraArgs with hardware.device cpu.",
         "The CPU backend empties the CUDA graph sizes and has neither custom all-reduce nor "
         "FlashInfer: the flags read as tuning that does not happen.",
         SRC_PLATFORM + ".check_and_update_config (cudagraph_capture_sizes = []); "
         "vllm/distributed/device_communicators/cpu_communicator.py", _gpu_flags),
    Rule("cpu-nvidia-runtime", Severity.ERROR, config_key("container", "runtime"),
         "container.runtime {runtime} on a CPU target",
         "remove container.runtime (the default runtime runs the CPU image)",
         "The NVIDIA runtime with hardware.device cpu.",
         "Docker refuses to start the container where the NVIDIA Container Toolkit is not "
         "installed (\"unknown or invalid runtime name: nvidia\"), as on most laptops.",
         "Docker's --runtime (dockerd refuses a runtime it has not registered), which "
         "vllm_serving/render/docker_container.py passes container.runtime to", _nvidia_runtime),
    Rule("cpu-mla-unsupported", Severity.ERROR, config_key("model", "name"),
         "{arch} uses multi-head latent attention, which vLLM's CPU backend does not run",
         "serve a model without MLA on a CPU target (e.g. Qwen3-0.6B), or use hardware.device: gpu",
         "An MLA model (DeepSeek-V2/V3 and their kin) with hardware.device cpu.",
         "vLLM exits while choosing the attention backend: \"MLA is not supported on CPU.\"",
         SRC_PLATFORM + ".get_attn_backend_cls", _mla),
    Rule("cpu-image-avx512-only", Severity.WARNING, config_key("image", "tag"),
         "vLLM's x86 CPU image {version} is built for AVX512 (avx512f, avx512_bf16, avx512_vnni) "
         "only; a CPU without them stops with \"Illegal instruction\"",
         "check the host (`lscpu | grep -o 'avx512[a-z_0-9]*'`), or use image.tag {from} or later, "
         "which picks AVX2 or AVX512 kernels at start",
         "A CPU image older than v0.17.0.",
         "Most laptop CPUs lack AVX512; the older images crash on them at the first kernel.",
         SRC_PLATFORM + ".import_kernels (v0.19.1: _C, _C_AVX512, _C_AVX2; v0.13.0 none); "
         "docs/getting_started/installation/cpu.x86.inc.md (pre-built images need avx512f, "
         "avx512_bf16, avx512_vnni; AVX512/AVX2 builds since 0.17.0)", _avx512_only),
)
