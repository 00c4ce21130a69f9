"""engine.extraArgs: each item read as the image's vLLM reads it, after the typed flags.

The reading is `vllm_serving.engine.extra_args` with the flag table of the image tag's release;
one rule per kind of problem. A finding names the item (`engine.extraArgs[i]`), never its value.
"""

from __future__ import annotations

from weakref import WeakKeyDictionary

from msgspec.structs import replace

from vllm_serving.command.vllm_argv import render_flags
from vllm_serving.engine.extra_args import Problem, ProblemKind, extra_args_problems
from vllm_serving.engine.flags import FLAGS
from vllm_serving.engine.release_registry import release_for_tag
from vllm_serving.finding_codes import CHECKED_FLAGS, SECRETS
from vllm_serving.findings import Finding, Severity, config_key
from vllm_serving.rules.base import Context, Facts, Predicate, Rule

EXTRA_ARGS = config_key("engine", "extraArgs")
SOURCE = ("vLLM v0.19.1 vllm/utils/argparse_utils.py (FlexibleArgumentParser.parse_args); "
          "CPython 3.12 argparse (_parse_optional, _get_option_tuples; vLLM keeps allow_abbrev)")
_READ: WeakKeyDictionary[Context, tuple[Problem, ...]] = WeakKeyDictionary()


def _problems(ctx: Context) -> tuple[Problem, ...]:
    """Read once per stack, shared by the rules below."""
    if not ctx.engine.extra_args:
        return ()
    found = _READ.get(ctx)
    if found is None:
        release, _ = release_for_tag(ctx.settings.image.tag)  # an unknown tag is the image rules' finding
        found = extra_args_problems(release, ctx.engine.extra_args, render_flags(ctx.settings, FLAGS))
        _READ[ctx] = found
    return found


def _each(kind: ProblemKind) -> Predicate:
    """One finding per item with a problem of `kind`, each naming its own `engine.extraArgs[i]`."""

    def test(ctx: Context) -> list[Facts] | None:
        hits = [p for p in _problems(ctx) if p.kind == kind]
        if not hits:
            return None
        release, _ = release_for_tag(ctx.settings.image.tag)
        return [{"index": p.index, "flag": p.flag, "detail": p.detail, "version": release.tag} for p in hits]

    return test


class ItemRule(Rule, frozen=True):
    """A rule whose finding names one item of engine.extraArgs: `key[index]`."""

    def finding(self, facts: Facts) -> Finding:
        index = facts["index"]
        assert isinstance(index, int)
        return replace(super().finding(facts), key=config_key("engine", "extraArgs", index))


_SPLIT = "write each flag and each value as its own item, e.g. [--max-num-partial-prefills, '2']"

RULES: tuple[Rule, ...] = (
    ItemRule(
        "extra-arg-secret", Severity.ERROR, EXTRA_ARGS,
        "vLLM reads this item as {flag}, a secret: its value would sit in plain text in the stack file, "
        "the container spec and the process list",
        "remove it and its value from engine.extraArgs and run: pulumi config set --secret {detail}",
        "extraArgs passes --api-key or --hf-token in any spelling vLLM takes (prefix, `_`, `=`, case).",
        "The credential is stored and shown in plain text wherever the argv is.",
        SOURCE, _each("secret"), guards=SECRETS),
    ItemRule(
        "extra-arg-typed-key", Severity.ERROR, EXTRA_ARGS,
        "vLLM reads this item as {flag}, set by {detail}: passed here it overrides that key and skips "
        "the checks on it",
        "remove it (and its value) from engine.extraArgs and set {detail} instead",
        "extraArgs names a flag that has its own config key (aliases such as -tp, prefixes, --no- and "
        "dotted forms such as --speculative-config.method included).",
        "vLLM takes the last value, so the deployment differs from what the keys, the plan and the "
        "rules say.", SOURCE, _each("typed-key"), guards=CHECKED_FLAGS),
    ItemRule(
        "extra-arg-forbidden", Severity.ERROR, EXTRA_ARGS,
        "{flag} {detail}",
        "remove it; list the flags you need in engine.extraArgs itself",
        "extraArgs names --help or --config.",
        "--help stops the server at once; --config reads flags no check sees.",
        SOURCE, _each("forbidden"), guards=CHECKED_FLAGS),
    ItemRule(
        "extra-arg-not-a-flag", Severity.ERROR, EXTRA_ARGS,
        "this item {detail}",
        _SPLIT + "; the argv reaches vLLM without a shell, so `;`, quotes and spaces stay in the item",
        "An item that is neither a flag nor the value of the flag before it.",
        "vLLM takes only the model as a positional argument and exits ('unrecognized arguments').",
        SOURCE, _each("not-a-flag")),
    ItemRule(
        "extra-arg-unknown", Severity.ERROR, EXTRA_ARGS,
        "{flag} is not a flag of vLLM {version}, the image tag's release: vLLM exits "
        "('unrecognized arguments')",
        "{detail}",
        "extraArgs names a flag the image's vLLM release does not have.",
        "vLLM exits at startup; the container restarts in a loop.", SOURCE, _each("unknown")),
    ItemRule(
        "extra-arg-ambiguous", Severity.ERROR, EXTRA_ARGS,
        "{flag} abbreviates several flags of vLLM {version}: vLLM exits ('ambiguous option')",
        "write the flag in full: one of {detail}",
        "An abbreviated flag that is the prefix of more than one flag.",
        "argparse takes a unique prefix but refuses an ambiguous one; vLLM exits.",
        SOURCE, _each("ambiguous")),
    ItemRule(
        "extra-arg-value", Severity.ERROR, EXTRA_ARGS,
        "{flag} {detail}",
        "write a flag's value as the next item ([--flag, VALUE]); write a switch such as --enforce-eager "
        "alone, without `=`",
        "A flag without the value it needs, or a switch given a value with `=`.",
        "vLLM exits at startup (or, for a dotted key at the end, fails before parsing).",
        SOURCE, _each("value")),
)
