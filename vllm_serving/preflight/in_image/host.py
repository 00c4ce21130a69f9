"""The checks of the host and the image: NVIDIA runtime, GPUs, torch's kernels, weights, curl."""

from __future__ import annotations

import argparse
import ctypes
import importlib
import json
import os
import re
import shutil
from typing import Any

from .report import CheckFailed, few

WEIGHT_SUFFIXES = (".safetensors", ".bin", ".pt")
SHARD_INDEXES = ("model.safetensors.index.json", "pytorch_model.bin.index.json")
NVIDIA_CONTROL_DEVICE = "/dev/nvidiactl"
NVIDIA_DRIVER_VERSION = "/proc/driver/nvidia/version"
ARCH = re.compile(r"^(sm|compute)_(\d+)([a-z]?)$")


def check_runtime(args: argparse.Namespace) -> str:
    """The NVIDIA container runtime gave the container the driver: its control device and libcuda."""
    if not os.path.exists(NVIDIA_CONTROL_DEVICE):
        raise CheckFailed(f"no {NVIDIA_CONTROL_DEVICE}: the container was started without the NVIDIA runtime")
    try:
        ctypes.CDLL("libcuda.so.1")
    except OSError as exc:
        raise CheckFailed(f"libcuda.so.1 cannot be loaded ({exc}): the runtime did not mount the driver") from None
    try:
        with open(NVIDIA_DRIVER_VERSION, encoding="utf-8") as f:
            found = re.search(r"Kernel Module\s+(\S+)", f.readline())
    except OSError:
        found = None
    return f"NVIDIA driver {found.group(1) if found else '(version not readable)'}, libcuda.so.1 loads"


def torch_module() -> Any:
    """The image's torch (imported by name: the project never imports it)."""
    try:
        return importlib.import_module("torch")
    except ImportError as exc:
        raise CheckFailed(f"torch cannot be imported ({exc}): this is not a vLLM image") from None


def check_gpus(args: argparse.Namespace) -> str:
    """torch sees at least the GPUs the server needs, and those it uses are the GPU the stack names."""
    torch = torch_module()
    if not torch.cuda.is_available():
        raise CheckFailed("torch sees no CUDA GPU (torch.cuda.is_available() is False)")
    count = torch.cuda.device_count()
    if count < args.gpus:
        raise CheckFailed(f"{count} GPU(s) visible, the server needs {args.gpus} (tensor x pipeline parallel)")
    used = used_gpus(torch, args)
    names = sorted({f"{torch.cuda.get_device_name(i)} ({_cc(torch.cuda.get_device_capability(i))})" for i in used})
    if args.capability:
        wrong = [i for i in used if _cc(torch.cuda.get_device_capability(i)) != args.capability]
        if wrong:
            raise CheckFailed(f"GPU {', '.join(map(str, wrong))} of {count}: {', '.join(names)}; "
                              f"the stack's GPU has compute capability {args.capability}")
    return f"{count} visible: {', '.join(names)}"


def used_gpus(torch: Any, args: argparse.Namespace) -> range:
    """The GPUs vLLM's workers take: local ranks 0..N-1, the first N visible."""
    return range(min(args.gpus, torch.cuda.device_count()))


def _cc(capability: tuple[int, int]) -> str:
    return f"{capability[0]}.{capability[1]}"


def runs_on(capability: tuple[int, int], arch_list: list[str]) -> bool:
    """Whether a build for `arch_list` has code a GPU of `capability` runs.

    A cubin (`sm_XY`, or family-portable `sm_XYf`) runs on the same major version at an equal or
    higher minor one; an architecture-specific cubin (`sm_90a`) only on that exact GPU; PTX
    (`compute_XY`) is compiled by the driver for any GPU at or above it.
    """
    major, minor = capability
    for entry in arch_list:
        found = ARCH.match(entry)
        if not found:
            continue
        kind, digits, variant = found.groups()
        built = (int(digits[:-1]), int(digits[-1]))
        if kind == "compute" and built <= capability:
            return True
        if kind == "sm" and built[0] == major and (built[1] == minor if variant == "a" else built[1] <= minor):
            return True
    return False


def check_arch(args: argparse.Namespace) -> str:
    """torch in the image was built with kernels the server's GPUs run (`torch.cuda.get_arch_list()`)."""
    torch = torch_module()
    if not torch.cuda.is_available():
        raise CheckFailed("torch sees no CUDA GPU, so its kernels cannot be matched to one")
    arch_list = list(torch.cuda.get_arch_list())
    capabilities = sorted({tuple(torch.cuda.get_device_capability(i)) for i in used_gpus(torch, args)})
    missing = [c for c in capabilities if not runs_on(c, arch_list)]
    if missing:
        raise CheckFailed(f"torch {torch.__version__} in this image has no kernels for compute capability "
                          f"{', '.join(map(_cc, missing))} (its arch list: {' '.join(arch_list)})")
    return f"compute capability {', '.join(map(_cc, capabilities))} in torch's arch list ({' '.join(arch_list)})"


def check_weights(args: argparse.Namespace) -> str:
    """The weights path holds a model: config.json, weight files, every shard its index lists."""
    path = args.weights
    if not os.path.isdir(path):
        raise CheckFailed(f"{path} is not a directory in the container")
    entries = os.listdir(path)
    if not entries:
        docker = " (Docker creates a bind-mount source that does not exist as an empty directory)"
        raise CheckFailed(f"{path} is empty" + (docker if args.backend == "docker" else ""))
    if "config.json" not in entries:
        raise CheckFailed(f"{path} has no config.json (it holds {few(entries)})")
    try:
        with open(os.path.join(path, "config.json"), encoding="utf-8") as f:
            config = json.load(f)
    except (OSError, ValueError) as exc:
        raise CheckFailed(f"{path}/config.json cannot be read as JSON: {exc}") from None
    weights = [e for e in entries if e.endswith(WEIGHT_SUFFIXES)]
    if not weights:
        raise CheckFailed(f"{path} has a config.json but no weight files (*.safetensors, *.bin, *.pt)")
    empty = [w for w in weights if os.path.getsize(os.path.join(path, w)) == 0]
    if empty:
        raise CheckFailed(f"empty weight file(s) in {path}: {few(empty)} (an interrupted copy?)")
    for index in (i for i in SHARD_INDEXES if i in entries):
        try:
            with open(os.path.join(path, index), encoding="utf-8") as f:
                shards = set(json.load(f)["weight_map"].values())
        except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
            raise CheckFailed(f"{path}/{index} has no readable weight_map: {exc}") from None
        absent = sorted(shards - set(entries))
        if absent:
            raise CheckFailed(f"{len(absent)} of {len(shards)} shards {index} lists are missing: {few(absent)}")
    size = sum(os.path.getsize(os.path.join(path, w)) for w in weights) / 2**30
    architectures = ", ".join(config.get("architectures") or []) if isinstance(config, dict) else ""
    return f"config.json ({architectures or 'no architectures'}), {len(weights)} weight files, {size:.1f} GiB"


def check_curl(args: argparse.Namespace) -> str:
    """The Docker healthcheck runs `curl` inside the container."""
    found = shutil.which("curl")
    if found is None:
        raise CheckFailed("no curl on the image's PATH: the healthcheck would never pass")
    return found
