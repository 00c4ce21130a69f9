"""The README's first request works as written: its curl asks for the served name its `init ws`
writes and gets a chat completion (from the stand-in, which answers like vLLM v0.19.1), and its
Python reads the reasoning from the field the pinned release returns."""

from __future__ import annotations

import ast
import json
import re
import shlex
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from tests.docker_engine.standin.server import serve
from tests.paths import PROJECT_DIR, ROOT
from tests.smoke.conftest import full_config
from vllm_serving.cli import main
from vllm_serving.engine.responses import reasoning_fields
from vllm_serving.planner.capacity import PINNED_VLLM_VERSION

README = (ROOT / "README.md").read_text(encoding="utf-8")
HOUR = README[README.index("### 7. A first request"):README.index("### 8. Tear down")]
CURL = " ".join(re.sub(r"\\\n\s*", "", HOUR[HOUR.index("curl "):]).split("\n")[0].split())
PYTHON = HOUR[HOUR.index("```python\n") + 10:]
PYTHON = PYTHON[:PYTHON.index("```")]
URL = "http://127.0.0.1:8000"


def _served_name_init_writes(tmp_path: Path) -> str:
    """The served name of the stack the README's `init ws` writes."""
    init = next(line for line in README.splitlines() if "vllm-stack init ws " in line)
    shutil.copy(PROJECT_DIR / "Pulumi.yaml", tmp_path)
    argv = shlex.split(init, comments=True)
    assert main(["--project-dir", str(tmp_path), *argv[argv.index("vllm-stack") + 1:]]) == 0
    model = yaml.safe_load((tmp_path / "Pulumi.ws.yaml").read_text())["config"]["vllm-serving:model"]
    return str(model["servedName"])


def test_the_examples_ask_for_the_served_name_init_writes(tmp_path: Path) -> None:
    served = _served_name_init_writes(tmp_path)
    assert f'"model": "{served}"' in CURL and f'model="{served}"' in PYTHON
    assert URL in CURL and f'base_url="{URL}/v1"' in PYTHON  # the API init publishes


@pytest.mark.skipif(shutil.which("curl") is None, reason="no curl on this machine")
def test_the_curl_gets_a_chat_completion() -> None:
    served = json.loads(CURL[CURL.index("-d '") + 4:CURL.rindex("'")])["model"]
    server = serve(full_config(served_names=[served]))
    try:
        done = subprocess.run(["bash", "-c", CURL.replace(URL, f"http://127.0.0.1:{server.server_address[1]}")],
                              capture_output=True, text=True, timeout=30, check=False)
    finally:
        server.stop()
    assert done.returncode == 0, done.stderr
    message = json.loads(done.stdout)["choices"][0]["message"]
    assert message["content"] and message["reasoning"]


def test_the_python_reads_the_reasoning_where_the_pinned_release_puts_it() -> None:
    tree = ast.parse(PYTHON)
    read = {node.args[1].value for node in ast.walk(tree) if isinstance(node, ast.Call)
            and getattr(node.func, "id", None) == "getattr" and isinstance(node.args[1], ast.Constant)}
    field = reasoning_fields(PINNED_VLLM_VERSION)[0]
    assert read == {field}
    assert f"in `message.{field}`, the field vLLM v{'.'.join(map(str, PINNED_VLLM_VERSION))} returns" in \
        " ".join(HOUR.split())
