"""Start-up stays lean: each path imports only the provider package it uses."""

from __future__ import annotations

import subprocess
import sys

from tests.paths import ROOT


def _heavy_modules(code: str) -> set[str]:
    probe = (code + "; import sys; print('HEAVY:' + ','.join(m for m in "
             "('pulumi', 'pulumi_docker', 'pulumi_kubernetes') if m in sys.modules), file=sys.stderr)")
    done = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, check=True)
    marker = next(line for line in done.stderr.splitlines() if line.startswith("HEAVY:"))
    return set(filter(None, marker.removeprefix("HEAVY:").split(",")))


def test_offline_cli_imports_no_pulumi() -> None:
    assert _heavy_modules("from vllm_serving.cli import main; main(['plan', 'v100', '--json'])") == set()


def test_docker_program_does_not_import_kubernetes() -> None:
    assert _heavy_modules("import components.program, components.docker.vllm_deployment") == {
        "pulumi", "pulumi_docker"}
