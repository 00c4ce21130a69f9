"""How many CUDA graphs vLLM captures, and what the planner charges for them
(planner/cudagraph_memory.py). The counts are written out from vLLM v0.20.2
config/vllm.py `VllmConfig._set_cudagraph_sizes` and v1/cudagraph_dispatcher.py
`CudagraphDispatcher.initialize_cudagraph_keys`, at the 0.25 MiB a layer and graph the v1 runner
logs (memory_accounting.json `model.cudagraph_per_layer_graph_mib`)."""

from __future__ import annotations

import pytest

from tests.planner.test_available_memory_terms import LLAMA_8B, term, with_
from vllm_serving.planner.cudagraph_memory import cudagraph_bytes

MIB = 2**20
PER_LAYER_GRAPH = 0.25 * MIB  # v1 runner
LAYERS = 32  # Llama-3.1-8B


def test_max_cudagraph_capture_size_caps_the_piecewise_graphs() -> None:
    """--max-cudagraph-capture-size 48 (CompilationConfig.max_cudagraph_capture_size) replaces
    min(max_num_seqs x 2, 512) = 512: sizes 1, 2, 4, 8..48 by 8 = 9 graphs, not 51."""
    capped = cudagraph_bytes(LLAMA_8B, "piecewise", tokens=2048, seqs=256, pp=1, max_capture_size=48)
    assert capped == 9 * LAYERS * PER_LAYER_GRAPH


def test_the_memory_estimate_charges_only_the_capped_graphs() -> None:
    """v0.20.2 subtracts the graphs (FULL_AND_PIECEWISE by default): with the cap at 48 the 9
    piecewise sizes are all below max_num_seqs 256, so 9 FULL graphs too: 18 graphs x 32 layers
    x 0.25 MiB = 0.140625 GiB, where the uncapped 86 graphs cost 0.671875 GiB."""
    capped = with_(vllm_version="0.20.2", max_num_seqs=256, max_cudagraph_capture_size=48)
    assert term(capped, "cuda_graphs") == pytest.approx(18 * LAYERS * 0.25 / 1024)


def test_speculative_tokens_capture_full_decode_graphs_up_to_seqs_times_the_decode_length() -> None:
    """16 sequences, 1 speculative token: a decode step is 2 tokens a sequence. Piecewise sizes
    up to min(16 x 2 x 2, 512) = 64: 1, 2, 4, 8..64 by 8 = 11. FULL decode sizes are those from
    the decode length 2 up to 16 x 2 = 32 (cudagraph_dispatcher.py `x <= max_num_tokens and
    x >= uniform_decode_query_len`): 2, 4, 8, 16, 24, 32 = 6. 17 graphs in all."""
    graphs = cudagraph_bytes(LLAMA_8B, "full_and_piecewise", tokens=2048, seqs=16, pp=1, speculative_tokens=1)
    assert graphs == 17 * LAYERS * PER_LAYER_GRAPH
