"""How one engine's capacity plan multiplies when a stack scales out.

The capacity plan is per GPU of one engine: one TP x PP group, holding the whole model once.
A server runs `engine.dataParallelSize` such engines (`--data-parallel-size`; vLLM's world size
is DP x PP x TP, vllm/engine/arg_utils.py `create_engine_config`), each loading the weights and
sizing its own KV cache (vllm/v1/engine/core.py `DPEngineCoreProc`: one engine core per rank).
A multi-node server (`kubernetes.nodes`) spreads one engine's TP x PP GPUs over that many pods;
`kubernetes.replicas` servers run side by side behind one Service.

KV caches never pool: a request runs on one engine, so the longest request is one engine's
limit and prefix-cache hits stay on the engine that saw the prefix; only the totals add up.
"""

from __future__ import annotations

import msgspec

from vllm_serving.planner.capacity_plan import CapacityPlan
from vllm_serving.settings import StackSettings


class ScaleOut(msgspec.Struct, frozen=True):
    """The parallel layout of a stack, from one engine to the whole deployment."""

    tp: int
    pp: int
    dp: int
    """Engines per server (`--data-parallel-size`)."""
    nodes: int
    """Pods (nodes) one server spans (`kubernetes.nodes`)."""
    replicas: int
    """Servers (`kubernetes.replicas`); one on a Docker host."""

    @property
    def engine_gpus(self) -> int:
        """GPUs of one engine: TP x PP."""
        return self.tp * self.pp

    @property
    def server_gpus(self) -> int:
        """GPUs of one server: TP x PP x DP."""
        return self.engine_gpus * self.dp

    @property
    def pod_gpus(self) -> int:
        """GPUs of one pod: a server's GPUs shared out over its nodes (the rules check the split)."""
        return self.server_gpus // self.nodes

    @property
    def engines(self) -> int:
        """Independent KV caches in all."""
        return self.dp * self.replicas

    @property
    def pods(self) -> int:
        return self.nodes * self.replicas

    @property
    def total_gpus(self) -> int:
        return self.server_gpus * self.replicas

    @property
    def scaled(self) -> bool:
        """More than one engine, or one engine over several nodes."""
        return self.engines > 1 or self.nodes > 1


def scale_out(settings: StackSettings) -> ScaleOut:
    """The layout a stack asks for; replicas and nodes count only on Kubernetes."""
    engine, k = settings.engine, settings.kubernetes
    on_kubernetes = settings.target.kind == "kubernetes"
    return ScaleOut(
        tp=engine.tensor_parallel_size or 1, pp=engine.pipeline_parallel_size or 1,
        dp=engine.data_parallel_size or 1,
        nodes=k.nodes if on_kubernetes else 1, replicas=k.replicas if on_kubernetes else 1,
    )


def own_cache_note(layout: ScaleOut, plan: CapacityPlan) -> str | None:
    """What a reader must know when there are several engines; None for one."""
    if layout.engines == 1:
        return None
    parts = [f"{layout.replicas} replicas"] if layout.replicas > 1 else []
    parts += [f"{layout.dp} data-parallel engines per server"] if layout.dp > 1 else []
    return (f"{layout.engines} engines ({' x '.join(parts)}): each has its own weights and its own KV "
            f"cache of ~{plan.kv_cache_tokens} tokens; capacity adds up, but a request and its "
            f"prefix-cache hits stay on the engine that serves it (longest request: "
            f"{plan.max_model_len_that_fits} tokens)")


def scale_out_view(layout: ScaleOut, plan: CapacityPlan) -> dict[str, object]:
    """The layout and the capacity of the whole deployment, for the plan and the stack outputs."""
    view: dict[str, object] = {
        "replicas": layout.replicas,
        "nodesPerReplica": layout.nodes,
        "dataParallelSize": layout.dp,
        "gpusPerEngine": layout.engine_gpus,
        "gpusPerPod": layout.pod_gpus,
        "pods": layout.pods,
        "gpus": layout.total_gpus,
        "engines": layout.engines,
        "kvCacheTokensPerEngine": plan.kv_cache_tokens,
        "kvCacheTokensTotal": plan.kv_cache_tokens * layout.engines,
        "maxConcurrencyTotal": round(plan.max_concurrency * layout.engines, 2),
    }
    note = own_cache_note(layout, plan)
    if note is not None:
        view["note"] = note
    return view
