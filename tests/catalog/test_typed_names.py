"""Names as people type them: what `--gpu` and `--model` take, what they say back, what they refuse.

The expected names are read off the cards and model pages (nvidia-smi's product name, the node
label GPU feature discovery sets, the Hugging Face repository), not from the lookup."""

from __future__ import annotations

import pytest

from vllm_serving.catalog.gpus import find_gpu, lookup_gpu, suggest_gpu
from vllm_serving.catalog.models import find_model, lookup_model, suggest_model
from vllm_serving.cli import main


@pytest.mark.parametrize(("typed", "entry"), [
    ("NVIDIA GeForce RTX 4090", "RTX-4090"),  # nvidia-smi --query-gpu=name
    ("NVIDIA-GeForce-RTX-4090", "RTX-4090"),  # nvidia.com/gpu.product
    ("rtx4090", "RTX-4090"),
    ("4090", "RTX-4090"),  # the one entry with that number
    ("RTX 5090", "RTX-5090"),
    ("Tesla V100-SXM2-32GB", "V100-32GB"),
    ("NVIDIA A100-SXM4-80GB", "A100-80GB"),
    ("NVIDIA H100 80GB HBM3", "H100-80GB"),
    ("l40s", "L40S"),
    ("V100 32G", "V100-32GB"),  # as seed 000 writes it: G for GB
    ("A100-80G", "A100-80GB"),
    ("NVIDIA A100 80G PCIe", "A100-PCIe-80GB"),
])
def test_a_gpu_as_people_type_it_is_taken_and_said_back(typed: str, entry: str) -> None:
    found = lookup_gpu(typed)
    assert found.name == entry
    if typed.lower() != entry.lower():
        assert found.note is not None and found.note.startswith(f"{typed!r} taken as {entry} (")


@pytest.mark.parametrize(("typed", "candidates"), [
    ("a100", {"A100-40GB", "A100-PCIe-40GB", "A100-80GB", "A100-PCIe-80GB"}),
    ("V100", {"V100-16GB", "V100-32GB"}),
    ("6000", {"RTX-6000-Ada", "RTX-PRO-6000", "RTX-PRO-6000-WS"}),
])
def test_a_gpu_name_several_cards_share_is_refused_with_them(typed: str, candidates: set[str]) -> None:
    found = lookup_gpu(typed)
    assert found.name is None and set(found.candidates) == candidates
    assert "could be any of" in found.refusal("GPU catalog")


@pytest.mark.parametrize("typed", ["L40", "B300", "Telsa V100-SXM2-32GB", "A100-80GBB"])
def test_a_near_miss_is_suggested_never_taken(typed: str) -> None:
    """L40 is a card of its own (not an L40S): a close spelling is a question, not an answer."""
    found = lookup_gpu(typed)
    assert found.name is None and found.candidates
    assert "did you mean" in found.refusal("GPU catalog")


@pytest.mark.parametrize(("typed", "suggested"), [("4091", ["RTX-4090"]), ("5091", ["RTX-5090"]),
                                                  ("4080", ["RTX-4090"])])
def test_a_number_one_digit_off_suggests_the_card_holding_it(typed: str, suggested: list[str]) -> None:
    """`--gpu 4091`: `4090` is taken as RTX-4090, so its typo is a question about it (against the
    whole name `rtx4090` four digits never looked close)."""
    found = lookup_gpu(typed)
    assert found.name is None
    assert list(found.candidates) == suggested
    assert found.refusal("GPU catalog") == f"{typed!r} is not in the GPU catalog; did you mean {suggested[0]}?"


def test_a_number_close_to_none_suggests_nothing() -> None:
    assert lookup_gpu("12345").candidates == ()


def test_capacity_suggests_the_card_for_a_mistyped_number(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["capacity", "--model", "Qwen3-8B", "--gpu", "4091", "--tp", "1", "--max-model-len", "8192"])
    assert code != 0
    assert "did you mean RTX-4090?" in capsys.readouterr().err


@pytest.mark.parametrize(("typed", "entry"), [
    ("Qwen/Qwen3-8B", "Qwen3-8B"),
    ("https://huggingface.co/Qwen/Qwen3-8B", "Qwen3-8B"),
    ("openai/gpt-oss-20b", "gpt-oss-20b"),
    ("qwen3.5 27b", "Qwen3.5-27B"),
    ("deepseek-ai/DeepSeek-R1", "DeepSeek-R1"),
])
def test_a_model_as_people_type_it_is_taken_and_said_back(typed: str, entry: str) -> None:
    found = lookup_model(typed)
    assert found.name == entry
    # said back as the user typed it (the URL included), not as it was looked up
    assert found.note is not None and found.note.startswith(f"{typed!r} taken as {entry} (")


@pytest.mark.parametrize("typed", ["unsloth/Qwen3-8B", "Qwen/Qwen3-8B-FP8", "llama 70b"])
def test_another_upload_or_a_shared_part_is_not_taken(typed: str) -> None:
    """Another organisation's upload may be another quantisation; `llama 70b` is two entries."""
    assert lookup_model(typed).name is None


def test_a_stack_file_keeps_the_catalogs_spelling_and_is_told_it() -> None:
    assert find_gpu("NVIDIA GeForce RTX 4090") is None and suggest_gpu("NVIDIA GeForce RTX 4090") == ["RTX-4090"]
    assert find_model("Qwen/Qwen3-8B") is None and suggest_model("Qwen/Qwen3-8B") == ["Qwen3-8B"]


def test_capacity_takes_typed_names_and_says_so(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["capacity", "--model", "Qwen/Qwen3-8B", "--gpu", "NVIDIA GeForce RTX 4090", "--tp", "1",
                 "--max-model-len", "8192"])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert out.startswith("Qwen3-8B on 1 x RTX-4090")
    assert "--gpu 'NVIDIA GeForce RTX 4090' taken as RTX-4090" in err
    assert "--model 'Qwen/Qwen3-8B' taken as Qwen3-8B" in err


def test_a_typo_close_to_several_spellings_of_one_card_still_gets_three_suggestions() -> None:
    """`H100-80` is closest to several spellings of the H100 80GB (its catalog name, nvidia-smi's,
    the node label's): those count once, and the next closest cards fill the three suggestions."""
    found = lookup_gpu("H100-80")
    assert found.name is None
    assert len(found.candidates) == 3 and found.candidates[0] == "H100-80GB"
    assert len(set(found.candidates)) == 3


@pytest.mark.parametrize(("typed", "entry"),
                         [("v100-32gb", "V100-32GB"), ("qwen3-8b", "Qwen3-8B"), (" QWEN3-8B ", "Qwen3-8B")])
def test_the_catalogs_own_spelling_in_another_case_is_taken_without_a_word(typed: str, entry: str) -> None:
    """Case aside, the catalog's own name is no guess: nothing is said back (`how` is None)."""
    found = lookup_gpu(typed) if entry == "V100-32GB" else lookup_model(typed)
    assert (found.name, found.how) == (entry, None)


@pytest.mark.parametrize(("typed", "said"), [
    # nvidia-smi prints `Tesla V100-SXM2-32GB`, `NVIDIA A100-SXM4-80GB`, `NVIDIA H100 80GB HBM3`;
    # people copy it without the vendor word
    ("V100-SXM2-32GB", "'V100-SXM2-32GB' taken as V100-32GB (nvidia-smi's name without the vendor)"),
    ("A100-SXM4-80GB", "'A100-SXM4-80GB' taken as A100-80GB (nvidia-smi's name without the vendor)"),
    ("H100 80GB HBM3", "'H100 80GB HBM3' taken as H100-80GB (nvidia-smi's name without the vendor)"),
    # G for GB on the catalog's own name: said back as the rewrite it is, in the user's spelling
    ("V100-32G", "'V100-32G' taken as V100-32GB (the catalog's name, spelt another way)"),
    ("a100-80g", "'a100-80g' taken as A100-80GB (the catalog's name, spelt another way)"),
    # G for GB on another route: said as that route, not as a rewrite of the catalog's name
    ("V100-SXM2-32G", "'V100-SXM2-32G' taken as V100-32GB (nvidia-smi's name without the vendor)"),
    ("32g", "'32g' taken as V100-32GB (the only entry whose names include 32gb)"),
])
def test_what_a_gpu_spelling_is_taken_as_is_said_in_words(typed: str, said: str) -> None:
    assert lookup_gpu(typed).note == said


def test_g_for_gb_shared_by_several_cards_is_refused_as_ambiguous() -> None:
    """`80g` is every 80 GB card's: refused with them as candidates, not said to be a spelling."""
    assert lookup_gpu("80g").refusal("GPU catalog") == (
        "'80g' could be any of A100-80GB, A100-PCIe-80GB, A800-80GB, H100-80GB in the GPU catalog: give one")


@pytest.mark.parametrize(("typed", "closest"), [
    ("qwen3-3b", "Qwen3-32B"),  # six catalog names within difflib's 0.6 ratio of `qwen33b`
    ("rtx6000a", "RTX-6000-Ada"),  # four cards close to `rtx6000a` (RTX-5090 the fourth)
    ("4000", "RTX-6000-Ada"),  # no name close: the cards holding a number close to 4000 (6000 x3, 4090)
])
def test_a_name_close_to_many_gets_three_suggestions_the_closest_first(typed: str, closest: str) -> None:
    found = lookup_model(typed) if typed.startswith("qwen") else lookup_gpu(typed)
    assert found.name is None and found.how is None
    assert len(found.candidates) == 3 and found.candidates[0] == closest
    assert found.refusal("catalog").endswith(f"; did you mean {', '.join(found.candidates)}?")
