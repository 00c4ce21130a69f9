"""docs/deploy.md "Deploy for real" names the provider plugin versions the lock file needs, so an
operator who installs plugins from files (air-gapped) installs the versions the program's SDKs
talk to."""

from __future__ import annotations

import re
import tomllib

import pytest

from tests.paths import DOCS, ROOT

PAGE = (DOCS / "deploy.md").read_text(encoding="utf-8")
DEPLOY = " ".join(PAGE[PAGE.index("## Deploy for real"):PAGE.index("## Check it: smoke")].split())


def _locked(name: str) -> str:
    lock = tomllib.loads((ROOT / "uv.lock").read_text(encoding="utf-8"))
    return next(p["version"] for p in lock["package"] if p["name"] == name)


@pytest.mark.parametrize("plugin", ["docker", "kubernetes"])
def test_deploy_steps_name_the_locked_plugin_versions(plugin: str) -> None:
    version = _locked(f"pulumi-{plugin}")
    assert f"pulumi-{plugin} **{version}**" in DEPLOY
    install = f"pulumi plugin install resource {plugin} {version} --file pulumi-resource-{plugin}-v{version}-"
    assert install in DEPLOY
    assert f"/pulumi-{plugin}/releases/tag/v{version}" in DEPLOY


def test_deploy_steps_put_uv_on_the_path_and_name_every_install() -> None:
    steps = re.findall(r" \d+\. \*\*(.+?)\*\*", DEPLOY)
    assert steps[:3] == ["uv on the PATH.", "The Pulumi CLI", "The provider plugins the lock file pins"]
    assert "pipx install uv" in DEPLOY and ".tools/bin" in DEPLOY
    assert "UV_FROZEN=1 UV_OFFLINE=1" in DEPLOY
