"""The extra-arg-* rules at their boundaries: each item vLLM would misread beside its nearest twin.

The bad item sits after a good one, so the finding's key must name its index. Secrets reach the
rules here through `edit` (the settings refuse them earlier, see tests/engine/test_extra_args.py).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.paths import PROJECT_DIR, stack_file
from tests.rules.boundary import Boundary, check_boundary, findings
from tests.rules.test_flag_values import BOUNDARIES as VALUE_BOUNDARIES
from tests.stack_builders import edit, shipped_settings, spec_of
from vllm_serving import rules
from vllm_serving.cli import main
from vllm_serving.findings import config_key

LEAK = "LEAKME"


def extra(*items: str) -> dict[str, object]:
    return {"engine": {"extra_args": ("--enforce-eager", *items)}}


def item(index: int) -> str:
    return config_key("engine", "extraArgs", index)


BOUNDARIES = [
    Boundary("extra-arg-secret", "a100", extra("--api-ke", LEAK), extra("--api-server-count", "1"),
             "--api-ke (a prefix of --api-key only) -> --api-server-count", key=item(1),
             says=("--api-key", "pulumi config set --secret apiKey")),
    Boundary("extra-arg-secret", "a100", extra("--HF_TOKEN=" + LEAK), extra("--hf-overrides={}"),
             "--HF_TOKEN= -> --hf-overrides=", key=item(1), says=("pulumi config set --secret hfToken",)),
    Boundary("extra-arg-typed-key", "a100", extra("-tp", "2"), extra("-dcp", "2"),
             "-tp (engine.tensorParallelSize) -> -dcp", key=item(1), says=("engine.tensorParallelSize",)),
    Boundary("extra-arg-typed-key", "a100", extra("--max-model=4096"), extra("--max-logprobs=4"),
             "--max-model= (prefix of --max-model-len) -> --max-logprobs=", key=item(1),
             says=("engine.maxModelLen",)),
    Boundary("extra-arg-typed-key", "a100",
             {"engine": {"speculative_config": None,
                         "extra_args": ("--enforce-eager", "--speculative-config.method", "mtp")}},
             {"engine": {"speculative_config": None,
                         "extra_args": ("--enforce-eager", "--compilation-config.mode", "3")}},
             "speculativeConfig unset: --speculative-config.method -> --compilation-config.mode", key=item(1),
             says=("engine.speculativeConfig",)),
    Boundary("extra-arg-forbidden", "a100", extra("--config", "/models/flags.yaml"), extra("--config-format", "hf"),
             "--config -> --config-format", key=item(1)),
    Boundary("extra-arg-not-a-flag", "a100", extra("--max-num-partial-prefills 2"),
             extra("--max-num-partial-prefills", "2"), "one item with a space -> two items", key=item(1)),
    Boundary("extra-arg-not-a-flag", "a100", extra("--disable-log-stats; rm -rf /"), extra("--disable-log-stats"),
             "shell syntax in the item -> the flag alone", key=item(1), says=("without a shell",)),
    Boundary("extra-arg-unknown", "a100", extra("--enforce-eagr"), extra("--enforce-eager"),
             "a typo -> the flag", key=item(1), says=("v0.19.1", "did you mean --enforce-eager?")),
    Boundary("extra-arg-unknown", "a100", extra("--rope-scaling", "{}"),
             {**extra("--rope-scaling", "{}"), "image": {"tag": "v0.11.0"}},
             "--rope-scaling: v0.19.1 (removed) -> v0.11.0 (has it)", key=item(1)),
    Boundary("extra-arg-ambiguous", "a100", extra("--max-num", "2"), extra("--max-num-partial", "2"),
             "--max-num (three flags) -> --max-num-partial (one)", key=item(1), says=("--max-num-partial-prefills",)),
    Boundary("extra-arg-value", "a100", extra("--max-num-partial-prefills"), extra("--max-num-partial-prefills", "2"),
             "no value -> a value", key=item(1)),
]


@pytest.mark.parametrize("case", BOUNDARIES, ids=[b.id for b in BOUNDARIES])
def test_boundary(case: Boundary) -> None:
    check_boundary(case)


def test_every_extra_arg_rule_has_a_boundary() -> None:
    codes = {r.code for r in rules.RULES if r.code.startswith("extra-arg-")}
    assert codes == {b.code for b in BOUNDARIES} | {b.code for b in VALUE_BOUNDARIES}


def test_no_finding_echoes_a_secret_value() -> None:
    for items in [("--api-key", LEAK), ("--api-key", "-" + LEAK), ("--a", LEAK), ("--hf-tokenLEAKME",),
                  ("--hf-token", LEAK, "--api_kee=" + LEAK, LEAK)]:
        text = "\n".join(f.line() for f in findings("a100", extra(*items)))
        assert "extra-arg-secret" in text and LEAK not in text, items


def test_every_offender_gets_its_own_finding_in_one_run() -> None:
    hits = [f for f in findings("a100", extra("--seeed", "1", "--enforce-eagr")) if f.code == "extra-arg-unknown"]
    assert [f.key for f in hits] == [item(1), item(3)]
    assert "--seeed" in hits[0].message and "--enforce-eagr" in hits[1].message


def test_shipped_stacks_pass_with_typical_extra_args() -> None:
    # (--max-num-partial-prefills 2 is not typical: v0.19.1 refuses it, see test_flag_values.py)
    typical = ("--enforce-eager", "--seed", "42", "--compilation-config", '{"level":3}',
               "-O3", "--disable-log-stats", "--hf-overrides", '{"rope_scaling": {"rope_type": "yarn"}}')
    for stack in ("v100", "a100", "a100-k8s"):
        spec = spec_of(edit(shipped_settings(stack), engine={"extra_args": typical}))
        assert [f.code for f in rules.check(spec) if f.code.startswith("extra-arg-")] == []


def test_check_refuses_an_alias_of_a_typed_key_from_a_stack_file(tmp_path: Path,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    text = (stack_file("a100")).read_text(encoding="utf-8")
    engine = "  vllm-serving:engine:\n"
    assert text.count(engine) == 1
    stack = tmp_path / "Pulumi.alias.yaml"
    stack.write_text(text.replace(engine, engine + "    extraArgs: [--enforce-eager, -pp, '2']\n"), encoding="utf-8")
    assert main(["--project-dir", str(PROJECT_DIR), "check", "--config-file", str(stack)]) == 1
    out = capsys.readouterr().out
    assert f"ERROR extra-arg-typed-key {item(1)}: vLLM reads this item as --pipeline-parallel-size" in out
