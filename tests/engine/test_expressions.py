"""The registry's condition texts are evaluated on a whitelist: what vLLM's folded checks need,
nothing that could run code from a registry file."""

from __future__ import annotations

import pytest

from vllm_serving.engine.expressions import Capability, MissingInput, Unsupported, evaluate, names_in

A100 = Capability(8, 0)
H100 = Capability(9, 0)


@pytest.mark.parametrize(("text", "values", "expected"), [
    ("not device_capability >= (8, 0)", {"device_capability": Capability(7, 5)}, True),
    ("device_capability >= (7, 5) and device_capability <= (12, 1)", {"device_capability": Capability(12, 2)}, False),
    ("has_sink and (not device_capability.major == 10)", {"has_sink": True, "device_capability": H100}, True),
    ("not (head_size % 8 == 0 and head_size <= 256)", {"head_size": 80}, False),
    ("not head_size in [64, 128, 256]", {"head_size": 80}, True),
    ("True if kv_cache_dtype is None else kv_cache_dtype.startswith('fp8')", {"kv_cache_dtype": "fp8_e5m2"}, True),
    ("['FLASHINFER', 'TRITON_ATTN'] if device_capability.major == 10 else ['FLASH_ATTN', *(['X'] if use_mm_prefix "
     "else [])]", {"device_capability": A100, "use_mm_prefix": True}, ["FLASH_ATTN", "X"]),
    ("'sink < 9.0' if has_sink and device_capability < (9, 0) else None", {"has_sink": True, "device_capability": A100},
     "sink < 9.0"),
    # inputs on both sides, a chain, a negated input: Python reads `1 <= a < b` as `1 <= a and a < b`
    ("block_size <= max_model_len", {"block_size": 16, "max_model_len": 8}, False),
    ("1 <= num_speculative_tokens < max_tokens", {"num_speculative_tokens": 3, "max_tokens": 3}, False),
    ("1 <= num_speculative_tokens < max_tokens", {"num_speculative_tokens": 2, "max_tokens": 3}, True),
    ("-offset == -3", {"offset": 3}, True),
    ("swap_space > -1", {"swap_space": 0}, True),
    # arithmetic with an input on each side (vLLM's `total_num_attention_heads % tensor_parallel_size`)
    ("heads % tp != 0", {"heads": 40, "tp": 8}, False),
    ("heads % tp", {"heads": 40, "tp": 6}, 4),
    # a tuple of inputs: v0.30.0 vllm/v1/attention/backends/b12x.py supports_compute_capability,
    # `(capability.major, capability.minor) in ((12, 0), (12, 1))`, as the registry folds it
    ("not (device_capability.major, device_capability.minor) in ((12, 0), (12, 1))",
     {"device_capability": Capability(12, 1)}, False),
    ("not (device_capability.major, device_capability.minor) in ((12, 0), (12, 1))", {"device_capability": H100},
     True),
    ("(head_size, dtype)", {"head_size": 128, "dtype": "bfloat16"}, (128, "bfloat16")),
])
def test_folded_checks_evaluate_as_python_would(text: str, values: dict[str, object], expected: object) -> None:
    assert evaluate(text, values) == expected


def test_short_circuit_keeps_a_missing_input_unread() -> None:
    """`x is not None and x.startswith(...)`: the right side is not read when the left decides."""
    assert evaluate("kv is not None and kv.startswith('fp8')", {"kv": None}) is False


def test_an_input_not_given_is_reported() -> None:
    with pytest.raises(MissingInput):
        evaluate("fa_version == 3", {})
    assert names_in("has_sink and fa_version == 3") == {"has_sink", "fa_version"}


@pytest.mark.parametrize("text", ["open('/etc/passwd')", "head_size.__class__", "(lambda: 1)()",
                                  "[x for x in range(3)]", "dtype.join(dtype)"])
def test_anything_beyond_the_whitelist_is_refused(text: str) -> None:
    """`upper` is allowed (v0.34 names a KV quantization mode by `kv_cache_dtype.upper()`); no other
    string method is."""
    with pytest.raises((Unsupported, MissingInput)):
        evaluate(text, {"head_size": 1, "dtype": "float16"})
