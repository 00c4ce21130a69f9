"""Read a stack's config from `Pulumi.<stack>.yaml` without the Pulumi CLI.

Secret values (`{secure: ...}`) are noted as present and never decrypted, but must have the form
Pulumi writes. Project defaults in `Pulumi.yaml` (`config: {key: {value: ...}}`) apply under the
stack's own values. Files are read strictly (`strict_yaml`): bounded in size and depth, no
duplicate keys, anchors or aliases; a key under a misspelt project namespace is an error.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import msgspec
import yaml

from vllm_serving.findings import PROJECT, ConfigError, Finding, Severity
from vllm_serving.release.carried import release_of
from vllm_serving.release.promotion import PROMOTE_KEY, Promotion, promote_from
from vllm_serving.settings import SECRET_KEYS, StackSettings
from vllm_serving.settings.release import bare_stack
from vllm_serving.settings.stack_config import parse_stack_config
from vllm_serving.settings.text_checks import STACK_NAME_FIX, stack_name_problem
from vllm_serving.spec import ServingSpec, promoted_spec, resolve
from vllm_serving.stack_files import strict_yaml
from vllm_serving.stack_files.ciphertext import is_ciphertext, symmetric_stack
from vllm_serving.stack_files.namespaces import namespace_findings
from vllm_serving.terminal_text import printable

# A finding's message is cut here: settings errors quote the bad value (`expects int, got ...`),
# and a hostile file's value must not become a megabyte of terminal output.
MAX_MESSAGE_CHARS = 500
# A refused node's finding names the config key and at most this many keys below it.
MAX_KEY_PARTS = 3
MAX_KEY_PART_CHARS = 60
SECRET = "[secret]"
"""What a `secure:` value reads as offline: present, never decrypted, never quoted."""


class StackFile(msgspec.Struct, frozen=True):
    """Raw config of one stack file: values by key, and the keys held as secrets."""

    stack: str
    path: Path
    values: dict[str, Any]
    secret_keys: frozenset[str]
    problems: tuple[Finding, ...] = ()
    """Errors found while reading (misspelt namespace, `secure:` not ciphertext): `load_spec` raises them."""


def _fail(path: Path, message: str, fix: str) -> ConfigError:
    return ConfigError([Finding("stack-file", Severity.ERROR, str(path), message, fix)])


def stack_path(project_dir: Path, stack: str) -> Path:
    return project_dir / f"Pulumi.{stack}.yaml"


def stack_name(path: Path) -> str:
    """`Pulumi.v100.yaml` -> `v100`; any other file name -> its stem. A file name may hold anything:
    what is not a stack name is refused by `load_spec`, and returned inert (`printable`) meanwhile,
    so the headers that name it stay one line."""
    name = path.name
    if name.startswith("Pulumi.") and name.endswith((".yaml", ".yml")):
        return printable(name.split(".", 1)[1].rsplit(".", 1)[0])
    return printable(path.stem)


def list_stacks(project_dir: Path) -> list[str]:
    return sorted(stack_name(p) for p in project_dir.glob("Pulumi.*.yaml"))


def missing_stack_fix(path: Path) -> str:
    """What to do about a stack file that is not there: the closest stacks beside it, and how to
    write one (`vllm-stack init`; `pulumi stack init` creates no stack file)."""
    here = list_stacks(path.parent) if path.parent.is_dir() else []
    close = difflib.get_close_matches(stack_name(path), here, n=3, cutoff=0.6)
    name = stack_name(path)
    write = f"write it with vllm-stack init {name} --gpu GPU --count N --model MODEL"
    if close:
        return f"did you mean {', '.join(close)}? Or {write}"
    return f"{write}" + (f" (stacks here: {', '.join(here)})" if here else "")


def _finding_key(where: strict_yaml.Where, path: Path) -> str:
    """The setting a refused node sits in (`vllm-serving:engine.extraArgs` for anything inside
    that list), else the file: up to MAX_KEY_PARTS keys below the config key, no list index."""
    if len(where) < 2 or where[0] != "config":
        return str(path)
    text = str(where[1])[:MAX_KEY_PART_CHARS]
    for part in where[2:2 + MAX_KEY_PARTS]:
        if isinstance(part, int) and not isinstance(part, bool):
            break
        text += f".{str(part)[:MAX_KEY_PART_CHARS]}"
    return text


def _load_yaml(path: Path) -> Any:
    try:
        return strict_yaml.load_file(path)
    except FileNotFoundError:
        raise _fail(path, "no such stack file", missing_stack_fix(path)) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise _fail(path, f"cannot read the file ({exc.__class__.__name__})",
                    "check the path and that it is a text file") from None
    except strict_yaml.YamlRefused as exc:
        key = _finding_key(exc.where, path)
        raise ConfigError([Finding(exc.code, Severity.ERROR, key, exc.message, exc.fix)]) from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}" if mark is not None else ""
        if mark is not None and _indented_with_tab(path, mark.line):
            raise _fail(path, f"is not valid YAML{where}: the line is indented with a tab",
                        "indent with spaces (YAML forbids tabs in indentation)") from None
        raise _fail(path, f"is not valid YAML{where}", "fix the YAML syntax (indentation, colons, quotes)") from None


def _indented_with_tab(path: Path, line: int) -> bool:
    """Whether line `line` (0-based) of the file starts with white space holding a tab."""
    try:
        text = strict_yaml.read_bounded(path).decode("utf-8", "replace").splitlines()
    except (OSError, strict_yaml.YamlRefused):
        return False
    return 0 <= line < len(text) and "\t" in text[line][:len(text[line]) - len(text[line].lstrip())]


def project_defaults(project_dir: Path) -> dict[str, Any]:
    project = project_dir / "Pulumi.yaml"
    if not project.exists():
        return {}
    data = _load_yaml(project) or {}
    defaults: dict[str, Any] = {}
    for key, decl in (data.get("config") or {}).items():
        if isinstance(decl, dict) and "value" in decl:
            defaults[key if ":" in key else f"{data.get('name', '')}:{key}"] = redacted(decl["value"])
        elif not isinstance(decl, dict):
            defaults[key] = decl
    return defaults


def redacted(value: Any) -> Any:
    """`value` with each `{secure: ...}` inside it replaced by SECRET: nothing downstream (a settings
    error quoting the value, plan, diff) can print what a `secure:` holds."""
    if isinstance(value, dict):
        return SECRET if "secure" in value else {k: redacted(v) for k, v in value.items()}
    if isinstance(value, list):
        return [redacted(v) for v in value]
    return value


def read_stack_file(path: Path, project_dir: Path | None = None) -> StackFile:
    """Parse the file; structural problems (empty, not YAML, no `config:`) are errors."""
    data = _load_yaml(path)
    if data is None:
        raise _fail(path, "is empty", "add a `config:` mapping with the vllm-serving sections (see Pulumi.v100.yaml)")
    if not isinstance(data, dict):
        raise _fail(path, f"holds a {type(data).__name__}, not a mapping", "start the file with `config:`")
    config = data.get("config")
    if not isinstance(config, dict) or not config:
        raise _fail(path, "has no `config:` mapping", "put the vllm-serving sections under a top-level `config:` key")
    values: dict[str, Any] = dict(project_defaults(project_dir or path.parent))
    secrets: set[str] = set()
    problems = namespace_findings(str(key) for key in config)
    symmetric = symmetric_stack(data)
    for key, value in config.items():
        key = str(key)
        problems += [_not_ciphertext(where) for where, text in _secure_values(key, value)
                     if not is_ciphertext(text, symmetric)]
        if any(True for _ in _secure_values(key, value)):
            # present; the value stays encrypted. Pulumi marks a key secret when any part of its value
            # is (a section with one `secure:` inside is one secret to the program), and so does this.
            secrets.add(key)
            value = SECRET
        values[key] = value
    return StackFile(stack_name(path), path, values, frozenset(secrets), tuple(problems))


def _secure_values(where: str, value: Any) -> Iterator[tuple[str, Any]]:
    """(config key, ciphertext) of every `{secure: ...}` in a config value, nested ones too (a
    mapping with a `secure` key and others is one as well: its value is never shown either)."""
    if isinstance(value, dict):
        if "secure" in value:
            yield where, value["secure"]
            return
        for key, item in value.items():
            yield from _secure_values(f"{where}.{key}", item)
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _secure_values(f"{where}[{index}]", item)


def _not_ciphertext(key: str) -> Finding:
    """The value is never quoted: it is most likely the secret itself, typed in by hand."""
    namespace, _, name = key.partition(":")
    fix = "remove the key from the file and run: "
    if namespace != PROJECT:
        fix += f"pulumi config set --secret {key}"
    elif "." in name or "[" in name:  # a section holds no secret (config-secret-in-section)
        fix = (f"remove the `secure:` value from the file; secrets go in {', '.join(SECRET_KEYS)} "
               "(pulumi config set --secret KEY)")
    else:
        fix += f"pulumi config set --secret {name}"
    return Finding("config-secret-not-ciphertext", Severity.ERROR, key,
                   "the `secure:` value is not a ciphertext Pulumi wrote (typed into the file by hand?); "
                   "it is not shown here", fix)


def load_settings(stack_file: StackFile) -> StackSettings:
    """Typed settings of a stack file, or ConfigError naming every bad key."""
    return parse_stack_config(stack_file.values, stack_file.secret_keys)


def load_spec(
    path: Path, stack: str | None = None, project_dir: Path | None = None,
    _promoting: tuple[str, ...] = (),
) -> ServingSpec:
    """Read, validate and resolve one stack file: what every offline command starts from.

    A promoting stack gets its release from the source's stack file in the same project, as
    the source would export it (without the digest only a deployment knows).
    """
    name = stack or stack_name(path)
    if (bad := stack_name_problem(name)) is not None:  # it would reach file names, renders, PromQL
        raise ConfigError([Finding("stack-name-invalid", Severity.ERROR, "stack", bad, STACK_NAME_FIX)])
    try:
        return _read_and_resolve(path, stack, project_dir, _promoting)
    except ConfigError as exc:
        raise ConfigError([_shortened(f) for f in exc.findings]) from None


def _shortened(finding: Finding) -> Finding:
    if len(finding.message) <= MAX_MESSAGE_CHARS:
        return finding
    return msgspec.structs.replace(finding, message=finding.message[:MAX_MESSAGE_CHARS] + "... (cut)")


def _read_errors(stack_file: StackFile, name: str) -> list[Finding]:
    """The reading problems, with the settings errors of the same file: every error at once."""
    try:
        if promote_from(stack_file.values, name) is None:
            load_settings(stack_file)
    except ConfigError as exc:
        return [*stack_file.problems, *exc.findings]
    return list(stack_file.problems)


def _read_and_resolve(
    path: Path, stack: str | None, project_dir: Path | None, promoting: tuple[str, ...],
) -> ServingSpec:
    stack_file = read_stack_file(path, project_dir)
    name = stack or stack_file.stack
    if stack_file.problems:
        raise ConfigError(_read_errors(stack_file, name))
    source = promote_from(stack_file.values, name)
    directory = project_dir or path.parent
    if source is None:
        return resolve(load_settings(stack_file), name, project_dir=directory)
    release = _local_release(directory, source, (*promoting, name))
    promotion = Promotion(source, name, release, deployed=False)
    return promoted_spec(stack_file.values, stack_file.secret_keys, promotion, project_defaults(directory),
                         directory)


def _local_release(directory: Path, source: str, promoting: tuple[str, ...]) -> dict[str, Any]:
    """The release `source` would export; `promoting` is the chain read so far, in order."""
    stack = bare_stack(source)
    if stack in promoting:
        raise ConfigError([Finding(
            "release-cycle", Severity.ERROR, PROMOTE_KEY,
            f"promotion cycle: {' -> '.join(promoting)} -> {stack}",
            "end the chain at a stack without release.promoteFrom (the one that is verified first)")])
    path = stack_path(directory, stack)
    if not path.exists():
        raise ConfigError([Finding(
            "release-source-missing", Severity.ERROR, PROMOTE_KEY,
            f"{source}: offline views read its release from {path.name}, which is not in {directory}",
            f"add {path.name} to the project, or promote from a stack of this project")])
    try:
        spec = load_spec(path, stack, directory, promoting)
    except ConfigError as exc:
        raise ConfigError([msgspec.structs.replace(f, message=f"{f.message} [in source stack {stack}]")
                           for f in exc.findings]) from None
    return release_of(spec.settings, stack)
