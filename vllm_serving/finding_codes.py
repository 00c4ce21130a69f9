"""Finding codes raised outside the rules, in one table (the rules' own codes live in `rules/`),
and which findings no waiver may set aside.

A stack is read, validated, joined with the catalogs and promoted before any rule can look at it;
each of those stages refuses what it cannot go on with, under one of these codes, and the stack's
waivers are checked after the rules. docs/rules.md lists them beside the rules (generated, like
the rule table), and a test fails on a code raised anywhere in the package that is in neither table.

What a finding guards decides whether `vllm-serving:waivers` may set it aside: a rule's `guards`
(rules/base.py), a stage code's `guards` or else its stage, looked up in `UNWAIVABLE`. A rule that
guards nothing listed there states a fact about vLLM or the hardware, which this project may read
wrong: a waiver may override it.
"""

from __future__ import annotations

from typing import NamedTuple

STACK_FILE = "stack file"
SECRETS = "secrets"
HOST_PATHS = "host paths"
EXPOSURE = "exposure"
CHECKED_FLAGS = "checked flags"

UNWAIVABLE: dict[str, str] = {
    # what a finding guards -> why no waiver sets it aside (the message of `waiver-not-waivable`)
    STACK_FILE: "the stack file could not be read as written, so nothing in it can be trusted, a waiver "
                "neither",
    "settings": "the stack cannot be built from an invalid value",
    SECRETS: "a credential in plain text, or one a deployment needs and lacks, is fixed with "
             "`pulumi config set --secret`, never waived",
    HOST_PATHS: "a mount is checked for what it hands the container and what it could overwrite (system "
                "directories, sockets, the weights, the image's own files); no fact about vLLM is in question, "
                "so the path is fixed, never waived",
    EXPOSURE: "what the server exposes, its API to the network or the host to the container, is decided "
              "in the settings a reviewer reads (network.bindAddress, network.behindProxy, the apiKey secret, "
              "container.privileged)",
    CHECKED_FLAGS: "the flag has a key of its own (or, as --config, reads flags from a file): passed in "
                   "engine.extraArgs it skips every check on what it sets (trust_remote_code, the API's address "
                   "and port, the model), so the key is set instead",
    "catalog": "without a known GPU and model nothing can be sized or checked",
    "promotion": "a promoted stack runs exactly what its source verified; change the source and promote again",
    "backend objects": "the cluster itself rejects these objects",
    "waivers": "a problem with a waiver is fixed in the waivers list",
}


class StageCode(NamedTuple):
    stage: str
    """Which step raises it: stack file, settings, catalog, promotion, backend objects or waivers."""
    what: str
    """What it refuses, one line."""
    guards: str | None = None
    """What it protects, when that is not its stage (a key of UNWAIVABLE): secrets found while reading."""

    @property
    def concern(self) -> str:
        return self.guards or self.stage


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
                                                            "(typed by hand).", SECRETS),
    "stack-name-invalid": StageCode("stack file", "A stack name (a STACK argument, a stack file's name) Pulumi "
                                                  "would refuse: it would reach file names and the renders."),
    "config-secret-plaintext": StageCode("settings", "A secret key (apiKey, registryPassword, hfToken) in "
                                                     "plain text.", SECRETS),
    "config-secret-in-section": StageCode("settings", "A `secure:` value inside a section: the program gets "
                                                      "the whole section encrypted; never quoted.", SECRETS),
    "config-unknown-key": StageCode("settings", "A key no section has; the closest name is suggested."),
    "config-too-many-problems": StageCode("settings", "More problems than one check works out in full (50): the "
                                                      "rest are counted, fixed after the first ones."),
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
    "waiver-code-unknown": StageCode("waivers", "A waiver names a code no rule or stage raises; the closest "
                                                "codes are suggested."),
    "waiver-not-waivable": StageCode("waivers", "A waiver names a code about the stack file, secrets, host "
                                                "paths, exposure or another concern no waiver may pass."),
    "waiver-stale": StageCode("waivers", "A waiver matches no finding of the stack (at its key, when it "
                                         "gives one): it went stale."),
}
