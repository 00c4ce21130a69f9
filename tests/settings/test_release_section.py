"""`release.promoteFrom` names a stack of this project: only a vllm-serving stack exports the
`release` output a promotion deploys (a stack reference is `ORG/PROJECT/STACK`, as
`pulumi stack ls --fully-qualify-stack-names` prints it)."""

from __future__ import annotations

import pytest

from tests.settings.minimal_stack import parse_minimal
from vllm_serving.findings import ConfigError


def test_a_stack_of_another_project_is_refused_with_the_form_to_write() -> None:
    with pytest.raises(ConfigError) as exc:
        parse_minimal(release={"promoteFrom": "organization/other-app/staging"})
    [finding] = exc.value.findings
    assert finding.key == "vllm-serving:release.promoteFrom"
    assert finding.message == ("'organization/other-app/staging' belongs to project 'other-app'; "
                               "only a vllm-serving stack exports a release")
    assert finding.fix == "name a vllm-serving stack: ORG/vllm-serving/STACK"


def test_a_stack_of_this_project_is_taken() -> None:
    settings = parse_minimal(release={"promoteFrom": "organization/vllm-serving/v100-staging"})
    assert settings.release.promote_from == "organization/vllm-serving/v100-staging"
