"""The STACK argument every verb takes: a stack name or a stack file's path, read one way.

`v100` is `Pulumi.v100.yaml` in the project directory; `Pulumi.v100.yaml`, `./Pulumi.v100.yaml`,
`stacks/x.yaml` or an absolute path is that file (relative to the working directory, as the
shell completes it), named `v100` or after the file. Project defaults (Pulumi.yaml) come from
the project directory either way, as with `pulumi preview --config-file PATH`.
"""

from __future__ import annotations

import os
from pathlib import Path

from vllm_serving.findings import ConfigError, Finding, by_urgency
from vllm_serving.release.promotion import promote_from
from vllm_serving.rules.every_error import every_finding, stack_build
from vllm_serving.spec import ServingSpec
from vllm_serving.stack_files.loader import load_spec, read_stack_file, stack_name, stack_path
from vllm_serving.stack_files.namespaces import corrected
from vllm_serving.terminal_text import printable

STACK_HELP = "stack name (Pulumi.STACK.yaml in the project) or the path of a stack file"


def is_path(item: str) -> bool:
    """A file path rather than a stack name: it has a directory part or a YAML suffix."""
    return item.endswith((".yaml", ".yml")) or "/" in item or os.sep in item


def stack_target(project_dir: Path, item: str) -> tuple[str, Path]:
    """(stack name, stack file) for one STACK argument."""
    if is_path(item):
        path = Path(item)
        return stack_name(path), path
    return printable(item), stack_path(project_dir, item)  # inert: load_spec refuses a name that is not one


def stack_findings(stack: str, path: Path, project_dir: Path, first: list[Finding]) -> list[Finding]:
    """Every finding of a stack whose loading failed with `first`: for a stack of its own (not
    promoting), the catalog and rule findings of the rest of it too."""
    try:
        stack_file = read_stack_file(path, project_dir)
        if promote_from(stack_file.values, stack) is not None:
            return first
    except ConfigError:
        return first
    seen = {(f.code, f.key) for f in first}
    # under a misspelt namespace the section is what the author meant: check it as written there
    values = corrected(stack_file.values)
    more = every_finding(values, stack_build(stack_file.secret_keys, stack, project_dir))
    found = first + [f for f in more if (f.code, f.key) not in seen]
    return by_urgency(found)


def load_stack(project_dir: Path, item: str) -> ServingSpec:
    """The resolved spec of one STACK argument; ConfigError with every error of the stack."""
    stack, path = stack_target(project_dir, item)
    try:
        return load_spec(path, stack, project_dir)
    except ConfigError as exc:
        findings = stack_findings(stack, path, project_dir, list(exc.findings))
        raise ConfigError([f for f in findings if f.blocks]) from None
