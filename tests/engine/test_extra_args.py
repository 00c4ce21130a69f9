"""engine.extraArgs read as vLLM v0.19.1's `vllm serve` reads them (vllm_serving.engine.extra_args).

The oracle is CPython's own argparse, built from the release registry's flag table with vLLM's
parser settings (allow_abbrev kept, vllm/utils/argparse_utils.py): whatever spelling argparse
accepts for a typed key or a secret must be refused, and what it refuses must be refused too.
"""

from __future__ import annotations

import argparse
import re
from typing import Any

import msgspec
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from vllm_serving.engine.extra_args import SECRET_FLAGS, Problem, extra_args_problems, secret_key_in
from vllm_serving.engine.flags import MODELLED_FLAGS
from vllm_serving.engine.release_registry import VllmRelease, known_versions, load
from vllm_serving.settings import EngineSettings
from vllm_serving.settings.stack_config import section_error

RELEASE = load("0.19.1")
# the typed flags as vllm_serving.command.vllm_argv renders them for a stack without speculativeConfig
BEFORE = ("--model", "/models/m", "--served-model-name", "m", "--tensor-parallel-size", "4",
          "--max-model-len", "32768", "--enable-prefix-caching")
LEAK = "LEAKME"


def problems(*items: str, before: tuple[str, ...] = BEFORE, release: VllmRelease = RELEASE) -> list[Problem]:
    return list(extra_args_problems(release, items, before))


def kinds(*items: str, before: tuple[str, ...] = BEFORE) -> list[tuple[int, str]]:
    return [(p.index, p.kind) for p in problems(*items, before=before)]


# -- the oracle: CPython argparse with v0.19.1's option strings ------------------------------------

class _Refused(Exception):
    pass


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> Any:  # argparse would print and exit 2, as vLLM does
        raise _Refused(message)


def _oracle(release: VllmRelease) -> _Parser:
    parser = _Parser(add_help=False, allow_abbrev=release.parser.allow_abbrev)
    parser.add_argument("model_tag", nargs="?")
    for flag in release.flags.values():
        # -O is FlexibleArgumentParser's rewrite (argparse_utils.py parse_args), not an argparse option
        strings = [s for s in (flag.name, *flag.aliases) if s != "-O"]
        nargs = flag.nargs if flag.takes_value else 0
        if nargs == 0:
            parser.add_argument(*strings, dest=flag.dest, action="store_const", const=True, default=None)
            if flag.negations:
                parser.add_argument(*flag.negations, dest=flag.dest, action="store_const", const=False)
        else:
            const = {"const": True} if nargs == "?" else {}  # so a bare `--hf-token` reads as set
            parser.add_argument(*strings, dest=flag.dest, nargs=nargs, default=None, **const)
    return parser


ORACLE = _oracle(RELEASE)
BY_DEST = {f.dest: f.name for f in RELEASE.flags.values()}


def _vllm_rewrite(arg: str) -> str:
    # vllm/utils/argparse_utils.py (v0.19.1) parse_args: underscores to dashes between -- and the first .
    if not arg.startswith("--"):
        return arg
    key, sep, value = arg.partition("=")
    return re.sub(r"(?<=--)[^\.]*", lambda m: m.group(0).replace("_", "-"), key, count=1) + sep + value


def oracle_reads(items: list[str]) -> set[str] | None:
    """The flags argparse reads from `items` after the typed flags, or None when it refuses the argv."""
    rewritten = [_vllm_rewrite(a) for a in items]
    try:
        ORACLE.parse_args(["/models/m", *BEFORE[2:], *rewritten])
        parsed = vars(ORACLE.parse_args(["/models/m", *rewritten]))
    except _Refused:
        return None
    return {BY_DEST[dest] for dest, value in parsed.items() if dest in BY_DEST and value is not None}


TYPED_OR_SECRET = ["--api-key", "--hf-token", "--tensor-parallel-size", "-tp", "--max-model-len",
                   "--enable-prefix-caching", "--no-enable-prefix-caching", "--speculative-config", "-sc",
                   "--quantization", "-q", "--port", "--host", "--served-model-name", "--max-num-seqs"]
PLAIN = ["--enforce-eager", "--max-num-partial-prefills", "--compilation-config", "-cc", "--seed",
         "--disable-log-stats", "--no-enable-chunked-prefill", "--hf-overrides"]


@st.composite
def spellings(draw: st.DrawFn, names: list[str]) -> tuple[str, list[str]]:
    """A flag of `names` as a user might write it: a prefix, `_` for `-`, other case, `=value`."""
    name = draw(st.sampled_from(names))
    text = name
    if name.startswith("--"):
        text = name[: draw(st.integers(min_value=3, max_value=len(name)))]
        body = "".join(c if c != "-" or not draw(st.booleans()) else "_" for c in text[2:])
        text = "--" + body
    if draw(st.integers(0, 4)) == 0:
        text = "".join(c.upper() if draw(st.booleans()) else c for c in text)
    value = LEAK + "-" + draw(st.sampled_from(["7", "x.y", "a b"]))
    # the value glued to the whole name, as in `--api-keyVALUE`; glued to a prefix it names nothing
    form = draw(st.sampled_from(["equals", "next", "alone"] + ["glued"] * (len(text) == len(name))))
    items = {"equals": [f"{text}={value}"], "next": [text, value], "alone": [text], "glued": [text + value]}[form]
    return name, items


@settings(max_examples=400, deadline=None)
@given(spellings(TYPED_OR_SECRET + PLAIN))
def test_every_spelling_is_read_as_argparse_reads_it(case: tuple[str, list[str]]) -> None:
    _, items = case
    assume(not any(a.startswith("-") and "." in a for a in items))  # dotted keys: vLLM's, not argparse's
    read = oracle_reads(items)
    found = problems(*items)
    if read is None:  # vLLM exits on it: so must we refuse it
        assert found, f"vLLM refuses {items} but it passed"
        return
    guarded = {f for f in read if f in SECRET_FLAGS or f in MODELLED_FLAGS}
    if guarded:
        assert found and found[0].index == 0 and found[0].flag in guarded, (items, read, found)
        assert found[0].kind == ("secret" if found[0].flag in SECRET_FLAGS else "typed-key")
    else:
        assert found == [], (items, read, found)


@settings(max_examples=300, deadline=None)
@given(spellings(list(SECRET_FLAGS)))
def test_no_spelling_of_a_secret_passes_or_is_echoed(case: tuple[str, list[str]]) -> None:
    name, items = case
    found = problems(*items)
    assert found and found[0] == Problem("secret", 0, name, SECRET_FLAGS[name])
    assert LEAK not in repr(found)
    # and the settings refuse it before anything renders it, whether vLLM would take it or exit
    assert secret_key_in(items[0]) == SECRET_FLAGS[name]


# -- FlexibleArgumentParser's rewriting (vllm/utils/argparse_utils.py) ----------------------------

@pytest.mark.parametrize("items", [
    ("--enforce-eager",),
    ("--max-num-partial-prefills", "2"),
    ("--max_num_partial_prefills=2",),
    ("--compilation-config", '{"level":3}'),
    ("--compilation-config.level", "3", "--compilation_config.cudagraph_mode=FULL"),
    ("-cc.level", "3"),
    ("--compilation-config.custom_ops+", "none,+rms_norm"),  # the list form of the JSON tip
    ("-O3",), ("-O", "3"), ("-O=2",),  # rewritten to --optimization-level
    ("--hf-overrides", '{"rope_scaling": {"rope_type": "yarn", "factor": 2.0}}'),
    ("--lora-modules", "a=/l/a", "b=/l/b", "--enforce-eager"),  # nargs +
    ("--seed", "-1"),  # a negative number is a value, not a flag
    ("--disable-log-stats", "--no-enable-chunked-prefill"),
])
def test_what_vllm_takes_passes(items: tuple[str, ...]) -> None:
    assert problems(*items) == []


@pytest.mark.parametrize(("items", "flag", "key"), [
    (("-tp", "2"), "--tensor-parallel-size", "engine.tensorParallelSize"),
    (("--tensor_par=2",), "--tensor-parallel-size", "engine.tensorParallelSize"),
    (("--no-enable-prefix",), "--enable-prefix-caching", "engine.enablePrefixCaching"),
    (("-qfp8",), "--quantization", "engine.quantization"),
    # speculativeConfig unset (BEFORE has no --speculative-config): still its key, which sizes the plan
    (("--speculative-config.method", "mtp"), "--speculative-config", "engine.speculativeConfig"),
    (("-sc.num_speculative_tokens=2",), "--speculative-config", "engine.speculativeConfig"),
    (("--port", "9000"), "--port", "network.hostPort (the container port stays 8000)"),
    (("--model=/other",), "--model", "model.containerPath"),
])
def test_a_typed_key_in_any_spelling_is_refused(items: tuple[str, ...], flag: str, key: str) -> None:
    assert problems("--enforce-eager", *items) == [Problem("typed-key", 1, flag, key)]


def test_a_dotted_key_is_refused_at_every_item_that_feeds_it() -> None:
    assert kinds("--speculative-config.method", "mtp", "--enforce-eager", "-sc.num_speculative_tokens", "2") == [
        (0, "typed-key"), (3, "typed-key")]


@pytest.mark.parametrize(("items", "index"), [
    (("--enforce-eager; rm -rf /",), 0),
    (("--max-model-len 4096",), 0),  # one item: vLLM gets it whole
    (("--enforce-eager", "true"), 1),
    (("",), 0),
    (("--seed", "1", "--", "--enforce-eager"), 2),
])
def test_an_item_that_is_no_flag_nor_value_is_refused(items: tuple[str, ...], index: int) -> None:
    assert kinds(*items)[0] == (index, "not-a-flag")


def test_a_stray_word_after_a_list_flag_is_read_as_its_value() -> None:
    found = problems("extra", before=BEFORE[:4])  # --served-model-name m is the last typed flag
    assert [(p.kind, p.index) for p in found] == [("not-a-flag", 0)]
    assert "--served-model-name" in found[0].detail and "model.servedName" in found[0].detail
    assert found[0].flag == "--served-model-name"  # the finding names the flag that swallows it


def test_an_unknown_flag_names_the_release_and_a_close_flag() -> None:
    assert problems("--enforce-eagr") == [
        Problem("unknown", 0, "--enforce-eagr", "did you mean --enforce-eager? (flags are case-sensitive)")]
    # in v0.11.0 but not v0.19.1
    assert [p.kind for p in problems("--rope-scaling", "{}")] == ["unknown"]
    assert problems("--rope-scaling", "{}", release=load("0.11.0")) == []


def test_an_ambiguous_prefix_lists_the_flags_it_could_be() -> None:
    (found,) = problems("--max-num", "4")
    assert (found.kind, found.flag) == ("ambiguous", "--max-num")
    assert found.detail == "--max-num-batched-tokens, --max-num-partial-prefills, --max-num-seqs"


@pytest.mark.parametrize(("items", "kind"), [
    (("--max-num-partial-prefills",), "value"),
    (("--enforce-eager=true",), "value"),
    (("--compilation-config.level",), "value"),  # vLLM reads args[i + 1]: an IndexError
    (("--help",), "forbidden"), (("-h",), "forbidden"), (("--help=all",), "forbidden"),
    (("--config", "/models/m/flags.yaml"), "forbidden"),
])
def test_what_stops_vllm_is_refused(items: tuple[str, ...], kind: str) -> None:
    assert kinds(*items) == [(0, kind)]


@pytest.mark.parametrize("items", [
    ("--api-key", "-" + LEAK),  # argparse reads the value as an unknown flag
    ("--api-keyLEAKME",), ("--API_KEY=" + LEAK,), ("--hf_tok", LEAK), ("--a", LEAK),
    ("--enforce-eager --api-key " + LEAK,),
    ("--hf-token", LEAK, "--api-key", LEAK + "2"),
])
def test_a_secret_is_refused_without_its_value(items: tuple[str, ...]) -> None:
    found = problems(*items)
    assert found[0] == Problem("secret", 0, found[0].flag, SECRET_FLAGS[found[0].flag])
    assert LEAK not in repr(found)


# -- the guard that runs while the settings load (render and diff print the argv without rules) ----

@pytest.mark.parametrize(("item", "key"), [
    ("--api-key", "apiKey"), ("--api-ke=x", "apiKey"), ("--Api_Key", "apiKey"), ("--api-key.x", "apiKey"),
    ("--hf-token", "hfToken"), ("--hf_t", "hfToken"), ("--hf-tokenhf_abc", "hfToken"),
    ("--enforce-eager --hf-token x", "hfToken"),
    ("--enforce-eager", None), ("--hf-overrides", None), ("--api-server-count", None), ("-a", None),
])
def test_secret_key_in(item: str, key: str | None) -> None:
    assert secret_key_in(item) == key


def test_the_settings_refuse_a_secret_item_by_its_index() -> None:
    with pytest.raises(ValidationError) as raised:
        EngineSettings.model_validate({"extraArgs": ["--enforce-eager", "--api_ke=" + LEAK]})
    (finding,) = section_error("engine", raised.value).findings
    assert finding.key == "vllm-serving:engine.extraArgs[1]"
    assert "pulumi config set --secret apiKey" in finding.fix
    assert LEAK not in finding.message + finding.fix


def test_the_settings_leave_the_rest_to_the_rules() -> None:
    assert EngineSettings.model_validate({"extraArgs": ["-tp", "2"]}).extra_args == ("-tp", "2")


# -- what the refusal tells the user (rules/extra_args.py shows `flag` and `detail`) ---------------

def _argparse_error(items: tuple[str, ...]) -> str:
    """CPython argparse's own complaint about `items` after the model, as vLLM would exit with it."""
    with pytest.raises(_Refused) as refused:
        ORACLE.parse_args(["/models/m", *(_vllm_rewrite(a) for a in items)])
    return str(refused.value)


@pytest.mark.parametrize(("items", "flag", "why"), [
    (("-h",), "--help", "help"), (("--help=all",), "--help", "help"),
    (("--config", "/models/m/flags.yaml"), "--config", "YAML"),
])
def test_a_forbidden_item_names_the_flag_vllm_reads_it_as(items: tuple[str, ...], flag: str, why: str) -> None:
    (found,) = problems(*items)
    assert (found.kind, found.flag) == ("forbidden", flag) and why in found.detail


@pytest.mark.parametrize(("items", "before", "index", "why"), [
    (("--enforce-eager.x", "1"), BEFORE, 0, "dotted sub-keys"),  # --enforce-eager takes no JSON
    (("--seed", "1", "--", "x"), BEFORE, 2, "'--'"),
    (("",), BEFORE, 0, "is empty"),
    (("--max-model-len 4096",), BEFORE, 0, "holds a space"),
    (("--enforce-eager", "true"), BEFORE, 1, "--enforce-eager before it takes no further value"),
    (("word",), ("/models/m",), 0, "is not a flag"),  # nothing before it but the model
])
def test_a_stray_item_is_refused_with_its_reason(items: tuple[str, ...], before: tuple[str, ...], index: int,
                                                 why: str) -> None:
    found = next(p for p in problems(*items, before=before) if p.index == index)
    assert found.kind == "not-a-flag" and found.detail is not None and why in found.detail
    # the reason matches argparse's: a positional it cannot place is `unrecognized arguments`
    if why.startswith(("--enforce-eager before", "is not a flag")):
        assert "unrecognized arguments" in _argparse_error(items) and "unrecognized arguments" in found.detail
        assert found.detail.startswith("is not a flag")  # shown as "this item is not a flag ..."


def test_an_ambiguous_prefix_lists_every_flag_argparse_names_when_they_fit() -> None:
    # argparse: "ambiguous option: --co could match --a, --b, ..." (CPython _parse_optional)
    said = _argparse_error(("--co",)).split("could match ", 1)[1].split(", ")
    (found,) = problems("--co")
    assert len(said) == 6 and found.detail == ", ".join(sorted(said))  # all six, no "..."
    (more,) = problems("--c")
    assert len(_argparse_error(("--c",)).split("could match ", 1)[1].split(", ")) > 6
    assert more.detail.endswith(", ...") and more.detail.count(", ") == 6


def test_an_unknown_flag_with_no_close_one_is_to_be_removed() -> None:
    (found,) = problems("--zzqxv-wobble")
    assert (found.kind, found.flag) == ("unknown", "--zzqxv-wobble")
    assert found.detail == "remove it: vLLM v0.19.1 has no such flag"


def test_every_unknown_flag_is_reported_not_only_the_first() -> None:
    assert [(p.index, p.kind) for p in problems("--enforce-eagr", "--zzqxv-wobble")] == [
        (0, "unknown"), (1, "unknown")]


def test_a_secret_in_the_value_of_an_unknown_flag_is_still_caught() -> None:
    found = problems("--zzqxv-wobble", "a --api-key " + LEAK)
    assert ("secret", 1) in [(p.kind, p.index) for p in found]
    assert LEAK not in repr(found)


def test_an_unknown_flag_is_named_without_the_value_written_to_it() -> None:
    (found,) = problems("--zzqxv-wobble=" + LEAK)
    assert found.flag == "--zzqxv-wobble" and LEAK not in repr(found)


def test_an_empty_item_says_how_vllm_reads_it() -> None:
    (found,) = problems("")
    assert (found.kind, found.detail) == (
        "not-a-flag", "is empty: vLLM reads it as a positional argument, and takes none")


# -- how many unknown flags get a "did you mean", and up to which length ---------------------------

# Each a one-letter swap of a v0.19.1 flag (its last two letters), so the flag itself is the closest.
_TYPOED = ("--enforce-eager", "--max-num-seqs", "--disable-log-stats", "--block-size", "--kv-cache-dtype",
           "--gpu-memory-utilization", "--max-num-batched-tokens", "--trust-remote-code", "--tokenizer-mode",
           "--download-dir", "--load-format", "--distributed-executor-backend", "--max-model-len",
           "--max-logprobs", "--max-lora-rank", "--seed", "--revision")


def test_the_first_sixteen_unknown_flags_get_a_suggestion_and_the_rest_are_to_be_removed() -> None:
    # the rule (a cost cap against a hostile list): 16 suggestions per extraArgs list, then none
    typos = [flag[:-2] + flag[-1] + flag[-2] for flag in _TYPOED]
    found = problems(*typos, before=())
    assert [p.detail for p in found] == [
        *(f"did you mean {flag}? (flags are case-sensitive)" for flag in _TYPOED[:16]),
        "remove it: vLLM v0.19.1 has no such flag"]
    assert [(p.index, p.kind, p.flag) for p in found] == [(i, "unknown", t) for i, t in enumerate(typos)]


def test_an_unknown_name_of_up_to_64_characters_gets_a_suggestion() -> None:
    # the rule: a name past 64 characters (longer than any flag) gets none, however close
    name = "--disable-nccl-for-dp-synchronization-" + "x" * 30
    assert [p.detail for p in problems(name[:64])] == [
        "did you mean --disable-nccl-for-dp-synchronization? (flags are case-sensitive)"]
    assert [p.detail for p in problems(name[:65])] == ["remove it: vLLM v0.19.1 has no such flag"]


# -- what argparse hands each flag (CPython 3.12 consume_optional, vllm/engine/arg_utils.py) ---------

def test_an_optional_value_takes_one_word_and_the_next_is_stray() -> None:
    # arg_utils.py (v0.19.1): --hf-token is nargs="?", const=True: argparse gives it one value at most,
    # so a second word is a positional vLLM cannot place
    assert "unrecognized arguments: extra" in _argparse_error(("--hf-token", LEAK, "extra"))
    found = problems("--hf-token", LEAK, "extra")
    assert [(p.index, p.kind) for p in found] == [(0, "secret"), (2, "not-a-flag")]
    assert found[1].detail == ("is not a flag, and --hf-token before it takes no further value: vLLM exits "
                               "('unrecognized arguments')")
    assert LEAK not in repr(found)


def test_a_secret_behind_the_optimization_shorthand_is_refused() -> None:
    # argparse_utils.py (v0.19.1) parse_args: "-O<rest>" becomes "--optimization-level", "<rest>",
    # so the rest reaches argparse as an option of its own (and vLLM exits: expected one argument)
    found = problems("-O--api-key=" + LEAK)
    assert found == [Problem("secret", 0, "--api-key", "apiKey")]
    assert problems("-O--enforce-eager") == [Problem("value", 0, "--optimization-level",
                                                     "needs a value and none follows: vLLM exits "
                                                     "('expected one argument')")]


def test_a_model_option_with_no_value_is_still_the_typed_key() -> None:
    # argparse_utils.py (v0.19.1): a trailing "--model" makes vLLM read args[model_idx + 1] and fail;
    # the item is refused as the key that sets the model, whatever else follows
    assert problems("--model", before=()) == [Problem("typed-key", 0, "--model", "model.containerPath")]
    assert problems("--enforce-eager", "--model", before=()) == [
        Problem("typed-key", 1, "--model", "model.containerPath")]


# -- what each refusal says, word for word (issue 28, engine seed 5) -------------------------------

def test_a_double_dash_and_an_item_with_a_space_say_how_vllm_reads_them() -> None:
    # CPython argparse: after '--' every argument is positional, and vLLM's only positional is the
    # model: `unrecognized arguments: -- x`; an item is one argv entry, so a space stays inside it
    assert _argparse_error(("--seed", "1", "--", "x")) == "unrecognized arguments: -- x"
    assert problems("--seed", "1", "--", "x")[0] == Problem(
        "not-a-flag", 2, "", "'--' makes vLLM read every item after it as a positional argument, and it takes none")
    assert _argparse_error(("--max-model-len 4096",)) == "unrecognized arguments: --max-model-len 4096"
    assert problems("--max-model-len 4096") == [Problem(
        "not-a-flag", 0, "", "holds a space: vLLM receives it whole, as one positional argument (no shell splits "
        "the argv), and exits ('unrecognized arguments')")]


def test_an_unknown_flag_is_named_by_its_text_before_the_first_equals_sign() -> None:
    # CPython argparse _parse_optional: `option_string, sep, explicit_arg = arg_string.partition('=')`,
    # so `--x=a=b` is option --x with the value `a=b`; the value (which may hold a secret) is never shown
    (found,) = problems("--zzqxv-wobble=" + LEAK + "=x")
    assert (found.kind, found.flag) == ("unknown", "--zzqxv-wobble") and LEAK not in repr(found)


def test_with_nothing_before_them_the_first_item_is_the_model() -> None:
    # argparse gives the first positional to `model_tag`; argparse_utils.py (v0.19.1) moves the first
    # `--model M` to the front as that positional
    ORACLE.parse_args(["/models/m", "--enforce-eager"])  # vLLM takes it
    assert problems("/models/m", "--enforce-eager", before=()) == []
    assert problems("--enforce-eager", "--model", "/models/m", before=()) == []


def test_a_bare_optimization_shorthand_as_the_last_item_is_no_flag() -> None:
    # argparse_utils.py (v0.19.1) parse_args rewrites `-O <n>` only when a level follows
    # (`i + 1 < len(args) and args[i + 1] in {"0", "1", "2", "3"}`); a last `-O` reaches argparse as is,
    # where no option is -O
    assert _argparse_error(("--enforce-eager", "-O")) == "unrecognized arguments: -O"
    assert problems("--enforce-eager", "-O") == [
        Problem("unknown", 1, "-O", "remove it: vLLM v0.19.1 has no such flag")]


@pytest.mark.parametrize("version", known_versions())
def test_the_secret_spellings_are_exactly_the_secret_flags_option_strings(version: str) -> None:
    # a word inside a value or a stray item is refused by secret_key_in alone: sound only while no
    # release has a short secret alias (argparse would take `-k`, secret_key_in not) nor an other flag
    # spelled like a secret's prefix or extension (`--api-key-file` would be refused as a secret)
    for flag in load(version).flags.values():
        for option in flag.option_strings:
            assert secret_key_in(option) == SECRET_FLAGS.get(flag.name), (version, option)


def test_the_values_argparse_gives_a_typed_flag_are_refused_from_the_first() -> None:
    # CPython consume_optional: an nargs="+" flag takes every positional after it, so when the typed
    # flags end with --served-model-name the items after it are its values, the first one included
    before = ("--model", "/models/m", "--served-model-name")
    assert vars(ORACLE.parse_args(["/models/m", "--served-model-name", "a", "b"]))["served_model_name"] == ["a", "b"]
    why = "vLLM reads it as one more value of --served-model-name, which model.servedName sets"
    assert problems("a", "b", before=before) == [Problem("not-a-flag", 0, "--served-model-name", why),
                                                 Problem("not-a-flag", 1, "--served-model-name", why)]


def test_a_typed_flag_a_release_renamed_is_still_said_to_belong_to_a_typed_key() -> None:
    # a release that renames a flag and keeps the old spelling as an alias (argparse: one action,
    # several option strings) reads the typed spelling as the new name, which no key is listed under
    renamed = msgspec.structs.replace(RELEASE.flags["--served-model-name"], name="--served-model-names",
                                      aliases=("--served-model-name",))
    flags = {n: f for n, f in RELEASE.flags.items() if n != "--served-model-name"} | {renamed.name: renamed}
    release = msgspec.structs.replace(RELEASE, flags=flags)
    assert problems("extra", before=BEFORE[:4], release=release) == [Problem(
        "not-a-flag", 0, "--served-model-names",
        "vLLM reads it as one more value of --served-model-names, which a typed key sets")]


def test_a_flag_whose_value_is_optional_stands_alone() -> None:
    # v0.19.1 --hf-token takes nargs="?" (engine/arg_utils.py: alone it means "use the cached login"):
    # argparse needs no value after it, so the only problem is that a token flag is the hfToken secret's
    assert problems("--hf-token", "--enforce-eager") == [Problem("secret", 0, "--hf-token", "hfToken")]
