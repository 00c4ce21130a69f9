"""`vllm-stack capacity` without `--tp`: the smallest tensor-parallel size that fits.

Candidates are the powers of two up to `--gpus` (or 8) that divide the model's attention heads,
the sizes vLLM accepts (config/parallel.py checks the heads divide; rules/parallelism.py says
so as findings). A size fits when the rules raise no error for it and the plan holds one full
request at the release's worst measured error (the pessimistic plan)."""

from __future__ import annotations

import argparse
from collections.abc import Callable

from vllm_serving import rules
from vllm_serving.catalog.models import ModelArchitecture
from vllm_serving.planner.capacity import plan, spec_inputs
from vllm_serving.spec import ServingSpec

DEFAULT_MAX_TP = 8
SpecFor = Callable[[argparse.Namespace], ServingSpec]


def tp_candidates(model: ModelArchitecture, gpus: int | None) -> list[int]:
    most = gpus or DEFAULT_MAX_TP
    sizes = [1 << i for i in range(most.bit_length()) if (1 << i) <= most]
    return [tp for tp in sizes if model.num_attention_heads % tp == 0] or [1]


def _fits(spec: ServingSpec) -> bool:
    if any(f.blocks for f in rules.check(spec)):
        return False
    result = plan(spec_inputs(spec))
    return result.weights_fit and result.fits_pessimistic


def choose_tp(args: argparse.Namespace, model: ModelArchitecture, spec_for: SpecFor) -> tuple[ServingSpec, str]:
    """The spec at the smallest fitting TP, and how it was chosen, in words; the largest
    candidate (the most memory) when none fits."""
    candidates = tp_candidates(model, args.gpus)
    spec = None
    for tp in candidates:
        spec = spec_for(argparse.Namespace(**{**vars(args), "tp": tp}))
        if _fits(spec):
            return spec, f"the smallest of {candidates} that fits (--tp to choose)"
    assert spec is not None
    return spec, f"none of {candidates} fits; shown at the largest (--tp to choose)"
