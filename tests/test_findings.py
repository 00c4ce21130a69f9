"""What a finding says to the operator: the config key as written in the stack file, one line per
finding in the order that matters (what blocks first), a tally, and every error of a refused stack
at once. Expected texts are written out here, as the operator reads them."""

from __future__ import annotations

from vllm_serving.findings import ConfigError, Finding, Severity, by_urgency, config_key, finding_line, tally

ERROR = Finding("dtype-bf16-unsupported", Severity.ERROR, "vllm-serving:engine.dtype", "V100 has no bf16",
                "set engine.dtype: half")
WARNING = Finding("kv-cache-small", Severity.WARNING, "vllm-serving:engine.maxModelLen", "few sequences fit",
                  "lower engine.maxModelLen")
WAIVED_ERROR = Finding("image-untrusted", Severity.ERROR, "vllm-serving:image.registry", "unknown registry",
                       "use the mirror", waived="our Harbor, audited 2026-01")
WAIVED_WARNING = Finding("kv-cache-small", Severity.WARNING, "vllm-serving:engine.maxNumSeqs", "few fit",
                         "lower it", waived="load test passed")


def test_the_key_is_the_stack_files_own_spelling() -> None:
    assert config_key("engine", "maxModelLen") == "vllm-serving:engine.maxModelLen"
    assert config_key("hardware") == "vllm-serving:hardware"
    # list entries as YAML paths write them: target.hosts[1].deviceIds
    assert config_key("target", "hosts", 1, "deviceIds") == "vllm-serving:target.hosts[1].deviceIds"
    assert config_key("engine", "extraArgs", 0) == "vllm-serving:engine.extraArgs[0]"


def test_only_an_unwaived_error_blocks() -> None:
    assert ERROR.blocks
    assert not WARNING.blocks
    assert not WAIVED_ERROR.blocks  # the waiver sets it aside: check exits 0, plan and the program go on
    assert not WAIVED_WARNING.blocks
    assert Severity.ERROR == "error" and Severity.WARNING == "warning"  # the JSON outputs' values


def test_one_line_per_finding_grep_error_finds_what_blocks() -> None:
    assert ERROR.line() == ("ERROR dtype-bf16-unsupported vllm-serving:engine.dtype: V100 has no bf16"
                            " - set engine.dtype: half")
    assert WARNING.line() == ("WARNING kv-cache-small vllm-serving:engine.maxModelLen: few sequences fit"
                              " - lower engine.maxModelLen")
    assert WAIVED_ERROR.line() == ("WAIVED ERROR image-untrusted vllm-serving:image.registry: unknown registry"
                                   " - use the mirror [waived: our Harbor, audited 2026-01]")
    # the JSON form of a finding prints the same line (check --format json, then a script)
    assert finding_line(WAIVED_ERROR.as_dict()) == WAIVED_ERROR.line()


def test_as_data_names_the_waiver_only_when_there_is_one() -> None:
    assert ERROR.as_dict() == {"code": "dtype-bf16-unsupported", "severity": "error",
                               "key": "vllm-serving:engine.dtype", "message": "V100 has no bf16",
                               "fix": "set engine.dtype: half"}
    assert WAIVED_WARNING.as_dict() == {"code": "kv-cache-small", "severity": "warning",
                                        "key": "vllm-serving:engine.maxNumSeqs", "message": "few fit",
                                        "fix": "lower it", "waived": "load test passed"}


def test_what_blocks_comes_first_then_warnings_then_what_is_waived() -> None:
    second_error = Finding("gpu-unknown", Severity.ERROR, "vllm-serving:hardware.gpu", "unknown", "fix it")
    found = [WAIVED_WARNING, WARNING, WAIVED_ERROR, ERROR, second_error]
    assert by_urgency(found) == [ERROR, second_error, WARNING, WAIVED_WARNING, WAIVED_ERROR]
    assert found[0] is WAIVED_WARNING  # the caller's list is left as it was


def test_tally_counts_what_blocks_and_what_warns() -> None:
    assert tally([]) == "0 error(s), 0 warning(s)"
    assert tally([ERROR, ERROR, WARNING]) == "2 error(s), 1 warning(s)"
    # a waived finding is neither an error nor a warning of the tally, and is counted apart
    assert tally([ERROR, WAIVED_ERROR, WAIVED_WARNING]) == "1 error(s), 0 warning(s), 2 waived"
    assert tally(iter([WARNING, WAIVED_WARNING])) == "0 error(s), 1 warning(s), 1 waived"


def test_a_refused_stack_lists_every_error_with_its_key_and_fix() -> None:
    second = Finding("gpu-unknown", Severity.ERROR, "vllm-serving:hardware.gpu", "'H300' is not in the GPU catalog",
                     "did you mean H100-80GB?")
    refused = ConfigError([ERROR, second])
    assert refused.findings == [ERROR, second]
    assert str(refused) == (
        "stack configuration has 2 error(s):\n"
        "  vllm-serving:engine.dtype: V100 has no bf16\n"
        "    fix: set engine.dtype: half\n"
        "  vllm-serving:hardware.gpu: 'H300' is not in the GPU catalog\n"
        "    fix: did you mean H100-80GB?")
