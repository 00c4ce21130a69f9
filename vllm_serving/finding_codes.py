"""Finding codes raised before the rules run, in one table (the rules' own codes live in `rules/`).

A stack is read, validated, joined with the catalogs and promoted before any rule can look at it;
each of those stages refuses what it cannot go on with, under one of these codes. docs/rules.md
lists them beside the rules (generated, like the rule table), and a test fails on a code raised
anywhere in the package that is in neither table.
"""

from __future__ import annotations

from typing import NamedTuple


class StageCode(NamedTuple):
    stage: str
    """Which step raises it: stack file, settings, catalog, promotion or backend objects."""
    what: str
    """What it refuses, one line."""


STAGE_CODES: dict[str, StageCode] = {
    "stack-file": StageCode("stack file", "A stack file that cannot be read: missing, not YAML, not a mapping, "
                                          "a second document, a key that is not a plain word."),
    "stack-file-too-large": StageCode("stack file", "A stack file past the size cap (read no further)."),
    "stack-file-too-deep": StageCode("stack file", "Nesting past the depth cap (a hostile or broken file)."),
    "stack-file-alias": StageCode("stack file", "YAML anchors, aliases or merge keys (an alias bomb expands "
                                                "before anything could check it)."),
    "stack-file-duplicate-key": StageCode("stack file", "A key or section written twice (YAML keeps the last "
                                                        "without a word); both lines named."),
    "config-namespace-misspelt": StageCode("stack file", "Keys under a misspelt project namespace, which "
                                                         "no code would read."),
    "config-secret-not-ciphertext": StageCode("stack file", "A `secure:` value that is not Pulumi ciphertext "
                                                            "(typed by hand)."),
    "config-secret-plaintext": StageCode("settings", "A secret key (apiKey, registryPassword, hfToken) in "
                                                     "plain text."),
    "config-unknown-key": StageCode("settings", "A key no section has; the closest name is suggested."),
    "config-missing": StageCode("settings", "A required key is absent."),
    "config-type": StageCode("settings", "A value of the wrong type (`8k` for a number)."),
    "config-range": StageCode("settings", "A number outside its range."),
    "config-invalid": StageCode("settings", "A value of the wrong form (paths, names, references, "
                                            "exclusive keys)."),
    "gpu-unknown": StageCode("catalog", "hardware.gpu names no catalog GPU; the closest names are suggested."),
    "model-unknown": StageCode("catalog", "model.name names no catalog model; the closest names are suggested."),
    "model-config-invalid": StageCode("catalog", "model.configFile is missing, too large, or lacks a field "
                                                 "the planner needs."),
    "release-cycle": StageCode("promotion", "Stacks that promote from each other in a loop."),
    "release-source-missing": StageCode("promotion", "release.promoteFrom names a stack file that is not there."),
    "release-missing": StageCode("promotion", "The source stack exports no release (never deployed)."),
    "release-key-overridden": StageCode("promotion", "The promoting stack sets a key the release carries."),
    "release-fingerprint-mismatch": StageCode("promotion", "This commit renders the release's flags "
                                                           "differently from the source's deployment."),
    "release-tag-only": StageCode("promotion", "The release has no pulled digest: the tag may have moved."),
    "release-backend-differs": StageCode("promotion", "Source and target run on different backends."),
    "k8s-name": StageCode("backend objects", "A name Docker accepts that is not a Kubernetes DNS-1123 name."),
    "k8s-cache-shared": StageCode("backend objects", "A compile-cache claim several pods would share with "
                                                     "an access mode that cannot be shared."),
    "k8s-lws-outdated": StageCode("backend objects", "A server across nodes on a cluster whose LeaderWorkerSet "
                                                     "predates v0.9.0 (its status records no generation: Pulumi's "
                                                     "wait would end on the previous rollout's condition)."),
}
