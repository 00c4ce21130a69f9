"""The engine check walks `vllm serve`'s own path, not a shortcut of it (tests/preflight/fake_vllm, a
stand-in for v0.19.1 with its module layout and messages): what `vllm serve` does before it parses
(cli_env_setup), the parser plugins setup_server imports before it checks the parser names, no API
server on a headless node, and only vLLM's judgement reported as "vLLM says" - a module of vLLM's
that fails to import is the image's fault, an error in the check's own code is never a refusal."""

from __future__ import annotations

import json
import types
from pathlib import Path

import pytest

from tests.preflight.fake_site import fake_site
from tests.preflight.program import run_program
from tests.stack_builders import make_spec
from vllm_serving.preflight.command import flag_keys
from vllm_serving.preflight.in_image import launcher

KEYS = json.dumps(flag_keys(make_spec("v100")))


def _engine(site: Path, argv: list[str], env: dict[str, str] | None = None) -> tuple[int, list[str]]:
    """The program as the container runs it (child process and all), for a tag without a registry."""
    done = run_program(["--flag-keys", KEYS, "engine", "--", *argv], site, env)
    return done.returncode, done.stdout.splitlines()


def test_the_spawn_method_vllm_serve_sets_before_parsing_is_set(site: Path, model: Path) -> None:
    # v0.19.1 config/vllm.py refuses torch_shm unless VLLM_WORKER_MULTIPROC_METHOD is spawn, which
    # `vllm serve` sets (cli_env_setup) unless the server's environment says otherwise
    argv = ["--model", str(model), "--mm-tensor-ipc", "torch_shm"]
    code, lines = _engine(site, argv)
    assert code == 0, lines
    code, lines = _engine(site, argv, env={"VLLM_WORKER_MULTIPROC_METHOD": "fork"})
    assert code == 1
    assert lines[0].endswith("ValueError: torch_shm is known to fail without VLLM_WORKER_MULTIPROC_METHOD set to "
                             "spawn")


def test_a_tool_parser_plugin_registers_its_parser_before_the_names_are_checked(site: Path, model: Path,
                                                                               tmp_path: Path) -> None:
    plugin = tmp_path / "my_parser.py"
    plugin.write_text("from vllm.entrypoints.openai.api_server import REGISTERED_TOOL_PARSERS\n"
                      "REGISTERED_TOOL_PARSERS.append('mine')\n")
    argv = ["--model", str(model), "--enable-auto-tool-choice", "--tool-call-parser", "mine"]
    code, lines = _engine(site, [*argv, "--tool-parser-plugin", str(plugin)])
    assert code == 0, lines
    code, lines = _engine(site, argv)  # without the plugin vLLM itself refuses the name
    assert code == 1 and "validating the API server arguments): KeyError: invalid tool call parser: mine" in lines[0]


def test_a_headless_node_runs_no_api_server(site: Path, model: Path) -> None:
    code, lines = _engine(site, ["--model", str(model), "--headless"])
    assert code == 0, lines
    assert "accepts the argv (parse, validate, config, attention)" in lines[0]
    assert lines[0].endswith("not run: api-server (a headless node serves no API (`vllm serve --headless` runs no "
                             "API server))")


def test_an_address_the_preflight_cannot_bind_is_not_a_refusal(site: Path, model: Path) -> None:
    # 192.0.2.1 (TEST-NET-1) is no interface's: binding it fails here as in the preflight's own network
    code, lines = _engine(site, ["--model", str(model), "--host", "192.0.2.1"])
    assert code == 0, lines
    assert "(parse, validate, api-server, config, attention)" in lines[0]


def test_a_vllm_module_that_fails_to_import_is_the_images_fault_not_the_stacks(tmp_path: Path, model: Path) -> None:
    site = fake_site(tmp_path)
    serve = site / "vllm" / "entrypoints" / "cli" / "serve.py"
    serve.write_text("import uvloop  # a dependency the image lacks\n" + serve.read_text())
    code, lines = _engine(site, ["--model", str(model)])
    assert code == 1
    assert lines[0] == ("FAIL  engine  vLLM v0.19.1 cannot run `vllm serve` in this image (parsing the argv as "
                        "`vllm serve`): vllm.entrypoints.cli.serve fails to import: ModuleNotFoundError: No module "
                        "named 'uvloop'")
    assert "the rules passed this" not in "\n".join(lines)
    assert lines[1].strip() == ("fix: use a vLLM image (vllm-serving:image.repository, image.tag) (the server would "
                                "stop at the same import)")


def test_an_error_in_the_checks_own_call_is_never_vllms_refusal(tmp_path: Path, model: Path) -> None:
    # a release whose create_engine_config takes usage_context positionally only: the check's keyword
    # call fails before vLLM runs a line - the check's bug, reported as a step not run
    site = fake_site(tmp_path)
    arg_utils = site / "vllm" / "engine" / "arg_utils.py"
    arg_utils.write_text(arg_utils.read_text().replace("(self, usage_context=None, headless=False)",
                                                       "(self, usage_context=None, /, headless=False)"))
    code, lines = _engine(site, ["--model", str(model)])
    assert code == 0, lines
    assert lines[0].startswith("ok    engine  vLLM v0.19.1 accepts the argv (parse, validate, api-server); not run: "
                               "config (the check's own error, not vLLM's: TypeError: ")
    assert "attention (needs the engine config)" in lines[0]


def _launched(site: Path, argv: list[str], tmp_path: Path) -> tuple[int, list[str], dict[str, object]]:
    """The check's result, and how it asked vLLM for the engine config (the fake records it)."""
    record = tmp_path / "config.json"
    code, lines = _engine(site, argv, env={"FAKE_VLLM_CONFIG_FILE": str(record)})
    return code, lines, json.loads(record.read_text()) if record.exists() else {}


def test_data_parallelism_is_judged_as_the_api_servers_vllm_serve_starts_for_it(
        site: Path, model: Path, tmp_path: Path) -> None:
    # from v0.15 `vllm serve` (ServeSubcommand.cmd) defaults --api-server-count to --data-parallel-size
    # and launches run_multi_api_server, which tells the engine config how many API servers share it
    code, lines, asked = _launched(site, ["--model", str(model), "--data-parallel-size", "2"], tmp_path)
    assert code == 0, lines
    assert "(parse, validate, api-server, config, attention)" in lines[0]
    assert asked == {"headless": False, "api_process_count": 2, "api_process_rank": -1}
    code, lines, asked = _launched(site, ["--model", str(model)], tmp_path)
    assert code == 0 and asked == {"headless": False, "api_process_count": 1, "api_process_rank": 0}, lines


def test_what_vllm_serve_refuses_before_it_launches_is_vllms_refusal(site: Path, model: Path) -> None:
    # v0.15+ ServeSubcommand.cmd: no API servers on a headless node
    code, lines = _engine(site, ["--model", str(model), "--headless", "--api-server-count", "2"])
    assert code == 1, lines
    assert lines[0].endswith("ValueError: --api-server-count=2 cannot be used with --headless (no API servers are "
                             "started in headless mode).")
    assert "the rules passed this; vLLM v0.19.1 says (validating the serve arguments)" in lines[0]


def test_no_api_server_is_a_headless_node_too(site: Path, model: Path, tmp_path: Path) -> None:
    # every release's cmd launches run_headless for --api-server-count 0, --headless or not
    code, lines, asked = _launched(site, ["--model", str(model), "--api-server-count", "0"], tmp_path)
    assert code == 0, lines
    assert "not run: api-server (a headless node serves no API" in lines[0]
    assert asked["headless"] is True


def test_the_logging_config_vllm_serve_applies_after_parsing_is_applied(tmp_path: Path, model: Path) -> None:
    # v0.31+ cli/main.py runs vllm.logger.configure_logging_from_args(args) before validating; a
    # logging config file that cannot be read stops `vllm serve` there (logging.config fails on it)
    site = fake_site(tmp_path)
    (site / "vllm" / "logger.py").write_text(
        "import json\n\n\ndef configure_logging_from_args(args):\n"
        "    if args.log_config_file:\n"
        "        with open(args.log_config_file) as f:\n"
        "            json.load(f)\n")
    code, lines = _engine(site, ["--model", str(model), "--log-config-file", "/nonexistent/logging.json"])
    assert code == 1, lines
    assert "(parsing the argv as `vllm serve`): FileNotFoundError: [Errno 2] No such file or directory: " \
           "'/nonexistent/logging.json'" in lines[0]
    code, lines = _engine(site, ["--model", str(model)])  # no file named: nothing to refuse
    assert code == 0, lines


@pytest.mark.parametrize(("headless_flag", "count", "serves_no_api"), [
    (False, 0, True), (False, 1, False), (False, 2, False), (True, 1, True), (False, None, False)])
def test_where_cmd_is_not_followed_headless_is_read_as_vllm_serve_reads_it(headless_flag: bool, count: int | None,
                                                                           serves_no_api: bool) -> None:
    # vllm/entrypoints/cli/serve.py (v0.10.2): `if args.headless or args.api_server_count < 1: run_headless`
    args = types.SimpleNamespace(headless=headless_flag, api_server_count=count)
    assert launcher.headless({"args": args}) is serves_no_api
