"""Which stack keys vLLM's words are about: the flags they name, through the project's flag table.

vLLM names a flag as the user typed it (`--max-model-len`, argparse's `argument --kv-cache-dtype`),
by its field (`max_model_len`), in words (`invalid tool call parser`, `Unknown attention
backend`), or quoted (`dtype`). The table
(flag -> stack key) comes from the project with the command (`--flag-keys`): its flag table, and
every flag of engine.extraArgs mapped to that key.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

# what a step's refusal is about besides the flags it names, where the argv sets them
STEP_FLAGS = {"attention": ("--attention-backend", "--kv-cache-dtype", "--dtype")}
EDGE_BEFORE, EDGE_AFTER = r"(?<![\w-])", r"(?![\w-])"


def _patterns(flag: str) -> list[re.Pattern[str]]:
    """How a message names `flag`: `--a-b`/`--a_b`; a field of several words as `a_b` or `a b`;
    a one-word field only quoted (`dtype`): bare, such words are ordinary English."""
    name = flag.lstrip("-")
    spelled = "[-_]".join(re.escape(part) for part in name.split("-"))
    patterns = [re.compile(EDGE_BEFORE + "--" + spelled + EDGE_AFTER)]
    if "-" in name:
        words = "[-_ ]".join(re.escape(part) for part in name.split("-"))
        patterns.append(re.compile(EDGE_BEFORE + words + EDGE_AFTER, re.IGNORECASE))
    else:
        patterns.append(re.compile(r"[`'\"]" + spelled + r"[`'\"]"))
    return patterns


def keys_named(message: str, flag_keys: Mapping[str, str]) -> list[str]:
    """The keys of the flags `message` names, in the order it names them, each once."""
    first: dict[str, int] = {}
    for flag, key in flag_keys.items():
        positions = [m.start() for p in _patterns(flag) for m in [p.search(message)] if m]
        if positions:
            first[key] = min(first.get(key, len(message)), *positions)
    return sorted(first, key=lambda k: first[k])


def argv_flags(argv: Iterable[str]) -> set[str]:
    """The long options an argv sets, as `--a-b` (vLLM also takes `--a_b` and `--a-b=value`)."""
    return {"--" + token[2:].split("=", 1)[0].replace("_", "-") for token in argv if token.startswith("--")}


def keys_for(step: str, message: str, flag_keys: Mapping[str, str], argv: Iterable[str]) -> list[str]:
    """The stack keys a refusal at `step` is about: those it names, then the step's own flags
    that the argv sets."""
    present = argv_flags(argv)
    own = [flag_keys[f] for f in STEP_FLAGS.get(step, ()) if f in present and f in flag_keys]
    return list(dict.fromkeys([*keys_named(message, flag_keys), *own]))
