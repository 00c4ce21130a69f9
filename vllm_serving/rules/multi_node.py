"""A server across nodes (`kubernetes.nodes` > 1): the layout, the release, the launcher flags.

The layout: one pod per node, each with every GPU of its node (hardware.count describes one
node; all nodes carry the same GPU, hardware.gpu). One engine spans the nodes: TP within a node,
PP across them, TP x PP = hardware.count x nodes; data parallelism stays within one node
(more engines across nodes: raise kubernetes.replicas). The capacity planner's per-GPU figures
hold for every node of the group. vLLM's own launcher starts the pods (`--nnodes`,
`--node-rank`, `--master-addr`, `--headless`; render/kubernetes/leader_worker_set.py).
"""

from __future__ import annotations

from vllm_serving.engine.release_registry import known_versions, load
from vllm_serving.findings import Severity, config_key
from vllm_serving.render.kubernetes.pod_names import HOST_IP_ENV, is_multi_node, longest_pod_name
from vllm_serving.rules.base import Context, Facts, Rule

NODES = config_key("kubernetes", "nodes")
# The flags the LeaderWorkerSet sets per pod; `--distributed-executor-backend ray` would also
# refuse nnodes > 1 (vllm/config/parallel.py ParallelConfig.__post_init__).
LAUNCHER_FLAGS = ("--nnodes", "--node-rank", "--master-addr", "--headless", "--distributed-executor-backend")
MULTI_NODE_FLAG = "--nnodes"
POD_NAME_LIMIT = 63  # a pod's name is its hostname: one DNS label


def _nodes(ctx: Context) -> int:
    return ctx.settings.kubernetes.nodes


def _spans(ctx: Context) -> bool:
    return is_multi_node(ctx.spec)


def _on_docker(ctx: Context) -> Facts | None:
    if _nodes(ctx) > 1 and ctx.settings.target.kind == "docker":
        return {"nodes": _nodes(ctx)}
    return None


def _release(ctx: Context) -> Facts | None:
    if not _spans(ctx) or ctx.release.flag(MULTI_NODE_FLAG) is not None:
        return None
    first = next(v for v in known_versions() if load(v).flag(MULTI_NODE_FLAG) is not None)
    return {"version": ctx.release.tag, "first": f"v{first}"}


def _tp_across_nodes(ctx: Context) -> Facts | None:
    count = ctx.settings.hardware.count
    if _spans(ctx) and ctx.tp > count:
        return {"tp": ctx.tp, "count": count, "pp": ctx.tp * ctx.pp // count or 1}
    return None


def _indivisible(ctx: Context) -> Facts | None:
    need = ctx.tp * ctx.pp
    if _spans(ctx) and need % _nodes(ctx):
        return {"need": need, "tp": ctx.tp, "pp": ctx.pp, "nodes": _nodes(ctx)}
    return None


def _layout_advice(ctx: Context) -> str:
    """The nearest layout that fills each node: fewer or more nodes, else another PP size."""
    count, need, have = ctx.settings.hardware.count, ctx.tp * ctx.pp, ctx.settings.hardware.count * _nodes(ctx)
    if need <= count:
        return "set kubernetes.nodes: 1 (the model fits one node)"
    if need % count == 0:
        return f"set kubernetes.nodes: {need // count}"
    if have % ctx.tp == 0:
        return f"set engine.pipelineParallelSize: {have // ctx.tp}"
    return "make TP x PP a multiple of hardware.count"


def _mismatch(ctx: Context) -> Facts | None:
    count, need = ctx.settings.hardware.count, ctx.tp * ctx.pp
    if not _spans(ctx) or need % _nodes(ctx) or need // _nodes(ctx) == count:
        return None
    return {"tp": ctx.tp, "pp": ctx.pp, "need": need, "nodes": _nodes(ctx), "count": count,
            "share": need // _nodes(ctx), "advice": _layout_advice(ctx)}


def _data_parallel(ctx: Context) -> Facts | None:
    dp = ctx.engine.data_parallel_size or 1
    if _spans(ctx) and dp > 1:
        return {"dp": dp, "nodes": _nodes(ctx)}
    return None


def _launcher_args(ctx: Context) -> Facts | None:
    if not _spans(ctx):
        return None
    found = [arg for arg in ctx.engine.extra_args
             if (m := ctx.release.match(arg)) is not None and m.flag.name in LAUNCHER_FLAGS]
    return {"args": " ".join(found)} if found else None


def _env_conflict(ctx: Context) -> Facts | None:
    if not _spans(ctx):
        return None
    rdma = ctx.settings.kubernetes.rdma
    per_pod = {HOST_IP_ENV["name"], *(rdma.nccl_env if rdma is not None else ())}
    both = sorted(per_pod & set(ctx.engine.env))
    return {"names": ", ".join(both)} if both else None


def _pod_name(ctx: Context) -> Facts | None:
    if not _spans(ctx):
        return None
    name = longest_pod_name(ctx.spec)
    if len(name) > POD_NAME_LIMIT:
        return {"pod": name, "length": len(name), "most": len(ctx.spec.name) - (len(name) - POD_NAME_LIMIT)}
    return None


def _no_gpu_selector(ctx: Context) -> Facts | None:
    if _spans(ctx) and ctx.settings.kubernetes.node_selector == {}:
        return {"gpu": ctx.gpu.name, "label": ctx.gpu.product_label}
    return None


LAUNCH_SRC = ("vllm/engine/arg_utils.py EngineArgs.create_engine_config (nnodes, node_rank); "
              "vllm/entrypoints/cli/serve.py run_headless")

RULES: tuple[Rule, ...] = (
    Rule("multi-node-on-docker", Severity.ERROR, NODES,
         "kubernetes.nodes is {nodes}, but the Docker backend runs one server on one host",
         "set target.kind: kubernetes (a LeaderWorkerSet spans nodes), or remove kubernetes.nodes",
         "kubernetes.nodes > 1 only with target.kind kubernetes.",
         "The Docker backend would start one container with a world size its host cannot hold.",
         "vllm_serving/render/kubernetes/leader_worker_set.py; components/program.py (one backend per stack)",
         _on_docker),
    Rule("multi-node-release-unsupported", Severity.ERROR, config_key("image", "tag"),
         "vLLM {version} has no --nnodes: its multiprocessing launcher cannot span nodes",
         "use vLLM {first} or newer (image.tag; the first release with --nnodes this project has data for)",
         "A server across nodes runs a release with --nnodes, --node-rank, --master-addr and --headless.",
         "vLLM exits at argument parsing: \"unrecognized arguments: --nnodes\".",
         LAUNCH_SRC, _release),
    Rule("multi-node-tp-across-nodes", Severity.ERROR, config_key("engine", "tensorParallelSize"),
         "tensor parallel size {tp} spans nodes of {count} GPUs",
         "keep TP within a node and span the nodes with pipeline stages: tensorParallelSize {count}, "
         "pipelineParallelSize {pp}",
         "Across nodes, TP fits one node (TP <= hardware.count); PP spans the nodes.",
         "TP all-reduces every layer: across nodes over the network instead of NVLink, and vLLM turns "
         "its custom all-reduce off with nnodes > 1; the throughput collapses.",
         "vllm/config/parallel.py ParallelConfig._verify_args (disable_custom_all_reduce when nnodes > 1)",
         _tp_across_nodes),
    Rule("multi-node-indivisible", Severity.ERROR, NODES,
         "TP {tp} x PP {pp} = {need} GPUs cannot be split evenly over {nodes} nodes",
         "set kubernetes.nodes to a divisor of {need}, or change the TP/PP sizes",
         "TP x PP divides by kubernetes.nodes.",
         "vLLM asserts \"world_size=N must be divisible by nnodes=K\" and exits.",
         LAUNCH_SRC, _indivisible),
    Rule("multi-node-gpus-mismatch", Severity.ERROR, NODES,
         "TP {tp} x PP {pp} = {need} GPUs over {nodes} nodes is {share} per node, but each node "
         "(hardware.count) has {count}",
         "{advice}",
         "TP x PP = hardware.count x kubernetes.nodes: one pod per node, with every GPU of it.",
         "vLLM starts TP x PP / nnodes ranks on each node: fewer leave GPUs idle on every node, more "
         "ask a pod for GPUs no node has (the group stays Pending).",
         "vllm/config/parallel.py ParallelConfig.local_world_size; vllm/v1/executor/multiproc_executor.py",
         _mismatch),
    Rule("multi-node-data-parallel", Severity.ERROR, config_key("engine", "dataParallelSize"),
         "dataParallelSize {dp} with a server across {nodes} nodes",
         "serve more traffic with kubernetes.replicas (one engine per group), or set kubernetes.nodes: 1",
         "Data parallelism only within one node; one engine spans the nodes.",
         "Multi-node data parallelism is a different launch (per-node --data-parallel-size-local, "
         "--data-parallel-address and rpc port) that the LeaderWorkerSet's argv does not give.",
         LAUNCH_SRC, _data_parallel),
    Rule("multi-node-launcher-in-extra-args", Severity.ERROR, config_key("engine", "extraArgs"),
         "engine.extraArgs sets {args}, which the LeaderWorkerSet sets per pod",
         "remove them from engine.extraArgs; kubernetes.nodes sets --nnodes, --node-rank, --master-addr "
         "and --headless",
         "With kubernetes.nodes > 1, extraArgs leave the launcher flags alone.",
         "argparse keeps the last value, so every pod would take the same rank or the same role; "
         "--distributed-executor-backend ray refuses nnodes > 1.",
         "vllm/config/parallel.py ParallelConfig.__post_init__; vllm_serving/render/kubernetes/leader_worker_set.py",
         _launcher_args),
    Rule("multi-node-env-conflict", Severity.ERROR, config_key("engine", "env"),
         "engine.env sets {names}, which each pod of a multi-node server sets itself",
         "remove them from engine.env (NCCL variables go in kubernetes.rdma.ncclEnv)",
         "engine.env does not set VLLM_HOST_IP or a kubernetes.rdma.ncclEnv variable.",
         "Two values for one variable: the pod takes the later one, so one of the settings silently "
         "does nothing; VLLM_HOST_IP must be each pod's own IP.",
         "vllm/utils/network_utils.py get_ip (VLLM_HOST_IP); vllm_serving/render/kubernetes/leader_worker_set.py",
         _env_conflict),
    Rule("multi-node-name-too-long", Severity.ERROR, config_key("container", "name"),
         "pod {pod} would be {length} characters, over the 63 a pod name (its hostname) may have",
         "shorten container.name to at most {most} characters",
         "The LeaderWorkerSet's longest pod name, <name>-group-<replica>-<node>, fits a DNS label.",
         "The StatefulSet controller cannot create the pod; the group never starts.",
         "vllm_serving/render/kubernetes/pod_names.py longest_pod_name", _pod_name),
    Rule("multi-node-no-gpu-selector", Severity.WARNING, config_key("kubernetes", "nodeSelector"),
         "kubernetes.nodeSelector is empty, so the nodes of a server may carry different GPUs",
         "remove kubernetes.nodeSelector to require {label} ({gpu}) on every node, or select nodes of "
         "one GPU model",
         "A server across nodes selects nodes of one GPU model.",
         "The plan sizes every node as hardware.gpu; a smaller GPU in the group runs out of memory "
         "or is slowest for every request.",
         "vllm_serving/planner/scale_out.py; vllm_serving/render/kubernetes/workload.py pod_spec",
         _no_gpu_selector),
)
