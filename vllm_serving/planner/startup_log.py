"""What a vLLM start-up log says about memory, line by line, for every release read.

The lines are vLLM's own (paths inside the wheel): `Model loading took X GiB`
(v1/worker/gpu_model_runner.py, gpu/model_runner.py), `Available KV cache memory: X GiB`
(v1/worker/gpu_worker.py determine_available_memory), `GPU KV cache size: N tokens` and
`Maximum concurrency for N tokens per request: X.XXx` (v1/core/kv_cache_utils.py; one line from
v0.28), `Estimated CUDA graph memory: X GiB total` (v0.18 on), `Graph capturing finished in N
secs, took X GiB`, the breakdown `Free memory on device (F/T GiB) ... X GiB for weight, Y GiB
for peak activation, Z GiB for non-torch memory` (INFO in v0.10.2 and v0.34, DEBUG between),
its DEBUG form (`torch peak memory increase`, `non-torch forward increase memory`, the `worker
init memory snapshot` with the CUDA total), the sampler (`Using FlashInfer for top-p & top-k
sampling`, `FlashInfer is not available`), the multimodal encoder's dummy batch (`Encoder cache will
be initialized with a budget of N tokens, and profiled with K <modality> items`, v1/worker/
gpu_model_runner.py profile_run, gpu/mm/encoder_runner.py), the model runner (`Using V2 Model Runner`) and a warm
compile cache (`Directly load the compiled graph`). Lines may carry any prefix (process, timestamps).
Per-worker lines keep the worst GPU: the most weights, the least KV memory.
"""

from __future__ import annotations

import re

import msgspec

NUMBER = r"(-?[\d.]+)"
PATTERNS: dict[str, re.Pattern[str]] = {
    "version": re.compile(r"(?:version |V1 LLM engine \(v)(\d+\.\d+\.\d+[\w.+]*)"),
    "weights_gib": re.compile(rf"Model loading took {NUMBER} GiB"),
    "available_kv_gib": re.compile(rf"Available KV cache memory: {NUMBER} GiB"),
    "kv_tokens": re.compile(r"KV cache size: ([\d,]+) tokens"),
    "max_concurrency": re.compile(r"Maximum concurrency for ([\d,]+) tokens per request: ([\d.]+)x"),
    "cudagraph_estimate_gib": re.compile(rf"Estimated CUDA graph memory: {NUMBER} GiB"),
    "cudagraph_gib": re.compile(rf"Graph capturing finished in \d+ secs, took {NUMBER} GiB"),
    "gpu_total_gib": re.compile(rf"Free memory on device \({NUMBER}/{NUMBER} GiB\)"),
    "snapshot_total_gib": re.compile(rf"init memory snapshot: .*total_memory={NUMBER} ?GiB"),
    "activation_gib": re.compile(rf"{NUMBER} GiB for peak activation|torch peak memory increase: {NUMBER} ?GiB"),
    "non_torch_gib": re.compile(rf"{NUMBER} GiB for non-torch memory|non-torch forward increase memory: {NUMBER} ?GiB"),
    "batched_tokens": re.compile(r"max_num_batched_tokens=(\d+)"),
    "flashinfer_sampler": re.compile(r"Using FlashInfer for top-p & top-k sampling"),
    "no_flashinfer": re.compile(r"FlashInfer is not available"),
    "encoder_batch": re.compile(r"Encoder cache will be initialized with a budget of (\d+) tokens, "
                                r"and profiled with (\d+) (\w+) items"),
    "v2_runner": re.compile(r"Using V2 Model Runner"),
    "eager": re.compile(r"enforce_eager=True|'enforce_eager': True"),
    # compilation/backends.py, compilation/decorators.py: the compile cache held the graphs
    "warm_compile": re.compile(r"Directly load (?:the compiled graph|AOT compil)"),
}


class LoggedStartup(msgspec.Struct):
    """The figures a log printed; None where it printed none."""

    version: str | None = None
    weights_gib: float | None = None
    available_kv_gib: float | None = None
    kv_tokens: int | None = None
    max_concurrency: float | None = None
    concurrency_tokens: int | None = None
    cudagraph_estimate_gib: float | None = None
    cudagraph_gib: float | None = None
    gpu_total_gib: float | None = None
    activation_gib: float | None = None
    non_torch_gib: float | None = None
    max_num_batched_tokens: int | None = None
    sampler: str | None = None
    """`flashinfer` when the log says so; None: the release's choice."""
    flashinfer_installed: bool = True
    model_runner: str | None = None
    encoder_budget: int | None = None
    """The multimodal encoder cache's budget in tokens; None: no encoder was profiled."""
    encoder_items: int | None = None
    encoder_modality: str | None = None
    """`image` or `video`: what the encoder was profiled on."""
    enforce_eager: bool = False
    compile_cache_warm: bool = False
    """The log loads compiled graphs from torch.compile's cache instead of compiling them."""
    lines: list[str] = msgspec.field(default_factory=list)
    """Every line a figure was read from, verbatim (the corpus keeps them)."""


def _keep(found: LoggedStartup, name: str, value: float, worst: str = "first") -> None:
    current = getattr(found, name)
    if current is None or (worst == "max" and value > current) or (worst == "min" and value < current):
        setattr(found, name, value)


def _read(found: LoggedStartup, name: str, match: re.Match[str]) -> None:
    if name == "version":
        found.version = found.version or match.group(1)
    elif name in ("weights_gib", "activation_gib", "non_torch_gib", "cudagraph_estimate_gib", "cudagraph_gib"):
        _keep(found, name, float(next(group for group in match.groups() if group is not None)), "max")
    elif name == "available_kv_gib":
        _keep(found, name, float(match.group(1)), "min")
    elif name == "kv_tokens":
        _keep(found, name, int(match.group(1).replace(",", "")), "min")
    elif name == "max_concurrency":
        found.concurrency_tokens = int(match.group(1).replace(",", ""))
        _keep(found, name, float(match.group(2)), "min")
    elif name == "gpu_total_gib":
        found.gpu_total_gib = found.gpu_total_gib or float(match.group(2))
    elif name == "snapshot_total_gib":
        found.gpu_total_gib = found.gpu_total_gib or float(match.group(1))
    elif name == "batched_tokens":
        found.max_num_batched_tokens = found.max_num_batched_tokens or int(match.group(1))
    elif name == "flashinfer_sampler":
        found.sampler = "flashinfer"
    elif name == "no_flashinfer":
        found.flashinfer_installed = False
    elif name == "encoder_batch" and found.encoder_budget is None:
        found.encoder_budget, found.encoder_items = int(match.group(1)), int(match.group(2))
        found.encoder_modality = match.group(3)
    elif name == "v2_runner":
        found.model_runner = "v2"
    elif name == "eager":
        found.enforce_eager = True
    elif name == "warm_compile":
        found.compile_cache_warm = True


def parse_startup_log(text: str) -> LoggedStartup:
    """Every figure the log states; the lines they came from, in order, once each."""
    found = LoggedStartup()
    for line in text.splitlines():
        hits = [(name, match) for name, pattern in PATTERNS.items() if (match := pattern.search(line))]
        for name, match in hits:
            _read(found, name, match)
        if hits and line.strip() not in found.lines:
            found.lines.append(line.strip())
    return found
