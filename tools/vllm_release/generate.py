"""Generate vllm_serving/engine/releases/v<X>.json from vLLM release X's own wheel source.

    python tools/vllm_release/generate.py 0.19.1 [0.20.2 ...] [--wheel-dir DIR] [--out DIR]
    python tools/vllm_release/generate.py --all        # every release with a committed registry

The wheel is fetched with `pip download vllm==X --no-deps` (kept in --wheel-dir, so a rerun is
offline) and read as a zip; its `vllm/**/*.py` files are parsed with `ast`, never imported. The
output is deterministic: regenerating from the same wheel gives no diff.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script: make `tools.vllm_release` importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from tools.vllm_release.attention import extract_attention_backends  # noqa: E402
from tools.vllm_release.entry_points import extract_entry_points  # noqa: E402
from tools.vllm_release.env_facts import extract_env_vars  # noqa: E402
from tools.vllm_release.gates import extract_gates  # noqa: E402
from tools.vllm_release.model_facts import extract_model_facts  # noqa: E402
from tools.vllm_release.quantization import extract_quantization  # noqa: E402
from tools.vllm_release.registries import extract_load_formats, extract_parsers  # noqa: E402
from tools.vllm_release.runtime_facts import extract_metrics  # noqa: E402
from tools.vllm_release.serve_flags import extract_flags, extract_parser_facts  # noqa: E402
from tools.vllm_release.source_tree import SourceTree  # noqa: E402
from tools.vllm_release.speculative import extract_speculative  # noqa: E402

SCHEMA_VERSION = 2
REPO_ROOT = Path(__file__).resolve().parents[2]
DEFAULT_OUT = REPO_ROOT / "vllm_serving" / "engine" / "releases"
DEFAULT_WHEEL_DIR = Path("/work/vllm-wheels")


def build_release(tree: SourceTree, version: str, wheel: dict[str, str]) -> dict[str, Any]:
    """All facts of one release, as the JSON document the registry loads."""
    problems: list[str] = []
    flags, positionals = extract_flags(tree, problems)
    parser = extract_parser_facts(tree, problems)
    shorthand = parser.get("optimization_shorthand")
    if isinstance(shorthand, str) and shorthand in flags:
        # FlexibleArgumentParser rewrites -O<level> / -O <level> to this flag before argparse runs
        flags[shorthand]["aliases"] = sorted({*flags[shorthand]["aliases"], "-O"})
    return {
        "schema": SCHEMA_VERSION,
        "version": version,
        "wheel": wheel,
        "generator": "tools/vllm_release/generate.py",
        "parser": parser,
        "positionals": positionals,
        "flags": flags,
        "tool_parsers": extract_parsers(tree, "tool_parsers", problems),
        "reasoning_parsers": extract_parsers(tree, "reasoning_parsers", problems),
        "load_formats": extract_load_formats(tree, problems),
        "speculative": extract_speculative(tree, problems),
        "quantization": extract_quantization(tree, problems),
        "attention_backends": extract_attention_backends(tree, problems),
        "env_vars": extract_env_vars(tree, problems),
        "metrics": extract_metrics(tree, problems),
        "preflight_entry_points": extract_entry_points(tree, problems),
        "models": extract_model_facts(tree, problems),
        "gates": extract_gates(tree, flags, problems),
        "unextracted": sorted(set(problems)),
    }


def dump(obj: Any, depth: int = 0) -> str:
    """Compact JSON with one line per table entry, so a regenerated file diffs line by line."""
    expand = isinstance(obj, dict) and obj and (
        depth == 0 or (depth < 3 and any(isinstance(v, dict) for v in obj.values())))
    if not expand:
        return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    pad = "\n" + " " * (depth + 1)
    items = [f"{json.dumps(k)}:{dump(v, depth + 1)}" for k, v in sorted(obj.items())]
    return "{" + pad + ("," + pad).join(items) + "\n" + " " * depth + "}"


class WheelMissing(SystemExit):
    """No wheel of the version in the wheel folder, and none could be downloaded."""


def find_wheel(version: str, wheel_dir: Path) -> Path:
    """The cached wheel of `version`, downloaded first if it is not in `wheel_dir` yet."""
    pattern = f"vllm-{version}-*.whl"
    found = sorted(wheel_dir.glob(pattern))
    if not found:
        wheel_dir.mkdir(parents=True, exist_ok=True)
        subprocess.run(
            [sys.executable, "-m", "pip", "download", f"vllm=={version}", "--no-deps",
             "--only-binary=:all:", "-d", str(wheel_dir)],
            check=False,
        )
        found = sorted(wheel_dir.glob(pattern))
    if not found:
        raise WheelMissing(f"no wheel for vllm=={version} in {wheel_dir}, and pip could not download one")
    return found[0]


def sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def generate(version: str, wheel_dir: Path, out_dir: Path) -> Path:
    wheel = find_wheel(version, wheel_dir)
    release = build_release(
        SourceTree.from_wheel(wheel), version, {"file": wheel.name, "sha256": sha256(wheel)}
    )
    out_dir.mkdir(parents=True, exist_ok=True)
    target = out_dir / f"v{version}.json"
    target.write_text(dump(release) + "\n", encoding="utf-8")
    return target


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("versions", nargs="*", help="vLLM versions, e.g. 0.19.1")
    parser.add_argument("--all", action="store_true", help="regenerate every registry in --out")
    parser.add_argument("--wheel-dir", type=Path, default=DEFAULT_WHEEL_DIR)
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = parser.parse_args(argv)
    versions = [v.removeprefix("v") for v in args.versions]
    if args.all:
        versions += sorted((p.name[1:-5] for p in args.out.glob("v*.json")),
                           key=lambda v: tuple(int(x) for x in v.split(".")))
    if not versions:
        parser.error("name versions or give --all")
    named = {v.removeprefix("v") for v in args.versions}
    for version in dict.fromkeys(versions):
        try:
            target = generate(version, args.wheel_dir, args.out)
        except WheelMissing as missing:
            if version in named:
                raise
            print(f"v{version}: kept as it is ({missing})", file=sys.stderr)  # --all: the others go on
            continue
        data = json.loads(target.read_text(encoding="utf-8"))
        print(f"{target}: {len(data['flags'])} flags, {len(data['metrics'])} metrics, "
              f"{len(data['unextracted'])} facts not extracted")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
