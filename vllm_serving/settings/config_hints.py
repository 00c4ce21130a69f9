"""What a stack file's author most likely meant, for the fix of a config error.

New users bring habits from elsewhere: vLLM's flags as keys (`--tensor-parallel-size`, `tp`),
docker run and Compose (`ports`, `volumes`, `-e KEY=VALUE`), YAML 1.1 (`restart: no` is false,
`tag: 0.10` is 0.1), vLLM's `32K` shorthand, percentages, Kubernetes' and Docker's spellings. Each
helper returns the fix that says exactly what to write, or None when the generic fix applies.
"""

from __future__ import annotations

import re
import unicodedata

from pydantic.alias_generators import to_camel

from vllm_serving.settings.shown import shown
from vllm_serving.units import HUMAN_INT, HUMAN_MULTIPLIERS

# Keys people write by habit that mean something else here: key (lower case) -> the fix.
KEY_HINTS: dict[str, str] = {
    "password": "secrets are not config values: remove it and run pulumi config set --secret registryPassword",
    "registrypassword": "remove it and run: pulumi config set --secret registryPassword",
    "apikey": "remove it and run: pulumi config set --secret apiKey",
    "hftoken": "remove it and run: pulumi config set --secret hfToken",
    "version": "the image version is image.tag (e.g. v0.19.1); rename the key",
    # vLLM's short flags (-tp, -pp, -dp)
    "tp": "vLLM's -tp is engine.tensorParallelSize; rename the key",
    "pp": "vLLM's -pp is engine.pipelineParallelSize; rename the key",
    "dp": "vLLM's -dp is engine.dataParallelSize; rename the key",
    # docker run / Compose
    "ports": "publish the API with network.hostPort: 30006 (the host port alone: the container port is always 8000)",
    "port": "the host port is network.hostPort (the container port is always 8000); the Service port is "
            "kubernetes.service.port",
    "volumes": "mounts are keys of their own: model.hostPath (the weights, read-only) and cache.hostPath "
               "(vLLM's compile cache); remove it",
    "gpus": "the GPUs are hardware.count (how many the host has) and hardware.deviceIds (which ones the "
            "container gets); remove it",
    "environment": "environment variables go under vllm-serving:engine as env: {NAME: value}",
    "env": "environment variables go under vllm-serving:engine as env: {NAME: value}",
    "command": "vLLM flags are keys of vllm-serving:engine, the rest a list in engine.extraArgs; remove it",
    "args": "vLLM flags are keys of vllm-serving:engine, the rest a list in engine.extraArgs; remove it",
    "image": "the image is its own section, vllm-serving:image (registry, repository, tag); move it there",
}

# Values people write by habit for a fixed choice (lower case) -> the choice.
VALUE_ALIASES: dict[str, str] = {
    "k8s": "kubernetes", "kube": "kubernetes",
    "fp16": "float16", "bf16": "bfloat16", "fp32": "float32",
}

# YAML 1.1 (PyYAML, and Pulumi's stack-file parser gopkg.in/yaml.v2) reads these unquoted as booleans.
_YAML_BOOLEANS = {True: ("yes", "on", "y", "true"), False: ("no", "off", "n", "false")}
# vLLM's own shorthand for --max-model-len and --max-num-batched-tokens (vllm/engine/arg_utils.py
# human_readable_int at v0.19.1): k = 1000, K = 1024, and so on.
_PERCENT = re.compile(r"\s*(\d+(?:\.\d+)?)\s*%\s*")
_ENV_ITEM = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)=(.*)", re.S)


def spoken_kind(value: object) -> str:
    """What a value is, in the stack file's words rather than Python's."""
    if value is None:
        return "nothing"
    if isinstance(value, bool):
        return f"the boolean {str(value).lower()}"
    if isinstance(value, (int, float)):
        return f"the number {value}"
    if isinstance(value, str):
        return "text"
    if isinstance(value, (list, tuple)):
        return "a list"
    # YAML 1.1 reads an unquoted 2024-01-01 as a date: name what it made
    return "a mapping" if isinstance(value, dict) else f"a {type(value).__name__}"


def _normalised(name: str) -> str:
    """`--tensor-parallel-size`, `tensor_parallel_size`, `TensorParallelSize` -> `tensorparallelsize`."""
    return to_camel(name.strip().lstrip("-").replace("-", "_")).casefold()


def _odd_characters(name: str) -> str | None:
    """A key that looks right but is not: white space around it, a look-alike letter or a control
    character (DEL and the like print as nothing)."""
    if name != name.strip():
        return "has white space around it (inside the quotes)"
    odd = next((c for c in name if not (c.isascii() and c.isprintable())), None)
    if odd is not None:
        kind = "control" if odd.isascii() else "non-ASCII"
        label = unicodedata.name(odd, "unnamed character")
        return f"contains the {kind} character {odd!r} (U+{ord(odd):04X} {label})"
    return None


def unknown_key(name: str, known: list[str], close: str | None) -> tuple[str, str]:
    """(message, fix) for a key no section has: the key it spells, else a habit, else a guess."""
    message = f"unknown key {shown(name)!r}"
    odd = _odd_characters(name)
    if odd:
        message += f": it {odd}"
    exact = next((k for k in known if _normalised(k) == _normalised(name)), None)
    if exact is not None and exact != name:
        return message, f"write it as {exact} (camelCase, as the YAML keys are spelt)"
    hint = KEY_HINTS.get(name.strip().lower())
    if hint is not None:
        return message, hint
    if close is not None:
        return message, f"did you mean '{close}'? rename the key"
    return message, "remove it; known keys here: " + ", ".join(known)


def choice_fix(value: object, expected: tuple[str, ...]) -> str | None:
    """The one allowed value a wrong-case, abbreviated or YAML-boolean value stands for."""
    if isinstance(value, bool):
        meant = next((e for e in expected if e.lower() in _YAML_BOOLEANS[value]), None)
        if meant is not None:
            return (f"write '{meant}' in quotes: YAML reads an unquoted {meant} as the boolean "
                    f"{str(value).lower()}")
        return None
    if not isinstance(value, str):
        return None
    meant = next((e for e in expected if e.lower() == value.strip().lower()), None)
    if meant is not None:
        return f"write '{meant}' (exactly so: the choice is case-sensitive)"
    alias = VALUE_ALIASES.get(value.strip().lower())
    return f"write '{alias}' (the name itself, not its abbreviation)" if alias in expected else None


def text_fix(value: object) -> str | None:
    """A string was wanted: what YAML made of an unquoted value."""
    if isinstance(value, bool):
        return (f"write a quoted string: YAML reads an unquoted {'/'.join(_YAML_BOOLEANS[value])} as the "
                f"boolean {str(value).lower()}")
    if isinstance(value, (int, float)):
        return ("write a quoted string, exactly as meant: unquoted, YAML reads it as a number (and drops "
                "what a number has no room for: 0.10 becomes 0.1, 010 becomes 8)")
    return None


def number_fix(value: object, wanted: str) -> str | None:
    """A number was wanted: the number a string stands for."""
    if not isinstance(value, str):
        return None
    human = HUMAN_INT.fullmatch(value)
    if human and wanted == "int":
        number, suffix = human.groups()
        if suffix.isupper() and "." in number:
            # vLLM's human_readable_int refuses a fraction with a binary suffix and offers the decimal one
            decimal = suffix.lower()
            return (f"write a whole number: vLLM refuses {value.strip()} (no fraction with a binary suffix such as "
                    f"{suffix}); {number}{decimal} would be {int(float(number) * HUMAN_MULTIPLIERS[decimal])}")
        amount = int(float(number) * HUMAN_MULTIPLIERS[suffix])
        twin = suffix.swapcase()
        return (f"write the whole number {amount} ({value.strip()} in vLLM's shorthand, where {number}{twin} "
                f"would be {int(float(number) * HUMAN_MULTIPLIERS[twin])}; the config takes digits only)")
    percent = _PERCENT.fullmatch(value)
    if percent and wanted == "float":
        return f"write {float(percent.group(1)) / 100:g} (a share of 1, not a percentage)"
    return None


def fraction_fix(value: object, bound: object) -> str | None:
    """A share of 1 written as a percentage (90 for 0.9)."""
    if bound == 1 and isinstance(value, (int, float)) and not isinstance(value, bool) and 10 <= value <= 100:
        return f"write {value / 100:g} (a share of 1, not a percentage)"
    return None


def mapping_fix(value: object, dotted: str) -> tuple[str, str] | None:
    """(message, fix) for a section or setting that must be a mapping, given something else."""
    if value is None or (isinstance(value, str) and not value.strip()):  # Pulumi passes an empty key as ""
        return "is empty", f"write its keys indented under {dotted}, or delete the line"
    if isinstance(value, str) and value.lstrip().startswith("{"):
        return ("is JSON text, not YAML keys",
                f"write the keys as YAML under {dotted} (camelCase), one per line")
    if isinstance(value, list) and value and all(isinstance(v, str) and _ENV_ITEM.fullmatch(v) for v in value):
        first = _ENV_ITEM.fullmatch(value[0])
        assert first is not None
        return ("is a list of NAME=value items (docker run -e style)",
                f"write each as NAME: value under {dotted}, e.g. {first.group(1)}: 'VALUE' (values in quotes)")
    return None

