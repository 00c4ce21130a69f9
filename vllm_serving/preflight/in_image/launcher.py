"""Which way `vllm serve` launches: `ServeSubcommand.cmd` (vllm/entrypoints/cli/serve.py) run on
the parsed arguments with its launchers replaced by stand-ins that record the one it picks.

`cmd` checks and sets what the later steps depend on, differently per release: v0.10-v0.14 launch
headless for `--headless` or `--api-server-count 0` and otherwise one API server by default; from
v0.15 it refuses `--headless` with `--api-server-count`, refuses two data-parallel load-balancing
modes at once, and defaults the API-server count to `--data-parallel-size` (so `run_multi_api_server`
for data parallelism); from v0.17 it sets `api_server_count` to None for a single server; v0.22+
has `run_dp_supervisor` for the multi-port mode. Running `cmd` itself keeps all that vLLM's.
Every `run_*` name in serve.py's module and its `uvloop` are replaced for the call (v0.10-v0.34:
`run_server` and `run_dp_supervisor` imported there, `run_headless` and `run_multi_api_server`
defined there, `uvloop.run(run_server(args))` for one API server), so nothing is started.
"""

from __future__ import annotations

import sys
import types
from collections.abc import Callable
from typing import Any

from .outcomes import NotRun

State = dict[str, Any]
OTHER_SERVER = "a server under uvloop.run (e.g. `--grpc`)"


def launch(state: State) -> str:
    """`ServeSubcommand.cmd(args)` up to the launcher it picks, which is recorded, not called."""
    serve, args = state["serve"], state["args"]
    module = sys.modules.get(type(serve).__module__)
    if not callable(getattr(serve, "cmd", None)) or module is None or not hasattr(module, "uvloop"):
        return "ServeSubcommand.cmd not followed (not found as v0.10-v0.34 have it)"
    chosen: list[str] = []

    def stand_in(name: str) -> Callable[..., None]:
        def launcher(*called: Any, **_: Any) -> None:
            for c in called:  # uvloop.run(run_server(args)): a coroutine that must never run
                getattr(c, "close", lambda: None)()
            chosen.append(name)
        return launcher

    stand_ins: dict[str, Any] = {n: stand_in(n) for n, f in vars(module).items()
                                 if n.startswith("run_") and callable(f)}
    stand_ins["uvloop"] = types.SimpleNamespace(run=stand_in(OTHER_SERVER))
    saved = {n: getattr(module, n) for n in stand_ins}
    try:
        for n, f in stand_ins.items():
            setattr(module, n, f)
        serve.cmd(args)
    finally:
        for n, f in saved.items():
            setattr(module, n, f)
    picked = [n for n in chosen if n != OTHER_SERVER] or chosen  # run_server's coroutine goes to uvloop.run
    if not picked:
        raise NotRun("ServeSubcommand.cmd returned without a launcher the check knows")
    state["launcher"] = picked[0]
    return f"ServeSubcommand.cmd (launches {picked[0]})"


def headless(state: State) -> bool:
    """A node that serves no API: `cmd` chose `run_headless` (or, where `cmd` was not followed,
    `--headless` / `--api-server-count 0`, as every release's `cmd` decides)."""
    if "launcher" in state:
        return bool(state["launcher"] == "run_headless")
    args = state["args"]
    count = getattr(args, "api_server_count", None)
    return bool(getattr(args, "headless", False) or (isinstance(count, int) and count < 1))
