"""The weights of a checkpoint on disk, read from its safetensors headers (never the tensors).

A safetensors file starts with an 8-byte little-endian length and that many bytes of JSON: each
tensor's dtype, shape and byte range. `model.safetensors.index.json` maps tensor names to the
shard files. Both are read bounded (`MAX_HEADER_BYTES`, `MAX_INDEX_BYTES`, `MAX_SHARDS`), so a
directory of multi-GiB shards costs a few kilobytes of reading. MTP / next-token-prediction
layers (`mtp.*`, DeepSeek's layer `num_hidden_layers`) load only as a speculative draft and are
counted apart.
"""

from __future__ import annotations

import json
import re
import struct
from pathlib import Path

import msgspec

from vllm_serving.bounded_read import FileRefused, open_regular_file, read_regular_file

INDEX = "model.safetensors.index.json"
SINGLE = "model.safetensors"
MAX_HEADER_BYTES = 100 * 2**20  # the safetensors library refuses headers above 100 MB too
MAX_INDEX_BYTES = 64 * 2**20
MAX_SHARDS = 4096
MAX_HEADERS_BYTES = 256 * 2**20  # all shards' headers together: real checkpoints' are a few MiB
MAX_DIMS = 16  # real tensors have at most 5; the product of many huge dims would take minutes
MAX_ELEMENTS = 2**53  # more elements than any tensor (a float counts them exactly below this)
DTYPE_BYTES = {"F64": 8.0, "I64": 8.0, "U64": 8.0, "F32": 4.0, "I32": 4.0, "U32": 4.0, "F16": 2.0, "BF16": 2.0,
               "I16": 2.0, "U16": 2.0, "F8_E4M3": 1.0, "F8_E5M2": 1.0, "F8_E8M0": 1.0, "I8": 1.0, "U8": 1.0,
               "BOOL": 1.0, "F4": 0.5, "F6_E2M3": 0.75, "F6_E3M2": 0.75}
_LAYER = re.compile(r"(?:^|\.)layers\.(\d+)\.")


class HeaderError(ValueError):
    """A file that is not a readable safetensors checkpoint, said in one line."""


class HeaderWeights(msgspec.Struct, frozen=True):
    loaded_bytes: float
    """Every tensor the served model loads (vision tower included)."""
    mtp_bytes: float
    """MTP / next-token-prediction layers: loaded only as a speculative draft."""
    files: int
    source: str


def _header(path: Path, budget: int) -> tuple[dict[str, object], int]:
    """The header's JSON and its length; at most `budget` bytes of it (what the shards before it left)."""
    try:
        with open_regular_file(path) as file:  # a shard swapped for a FIFO or a device is refused, never read
            raw = file.read(8)
            length = struct.unpack("<Q", raw)[0] if len(raw) == 8 else None
            text = file.read(length) if length is not None and length <= min(MAX_HEADER_BYTES, budget) else b""
    except FileRefused as exc:
        raise HeaderError(f"{path.name}: {exc.reason}") from None
    except OSError as exc:
        raise HeaderError(f"{path.name}: unreadable ({exc.__class__.__name__})") from None
    if length is None:
        raise HeaderError(f"{path.name}: shorter than a safetensors header")
    if length > MAX_HEADER_BYTES:
        raise HeaderError(f"{path.name}: header of {length} bytes, more than any safetensors file's")
    if length > budget:
        raise HeaderError(f"{path.name}: the shards' headers add up to more than {MAX_HEADERS_BYTES // 2**20} MiB, "
                          "more than any checkpoint's")
    try:
        data = json.loads(text.decode("utf-8"))
    except ValueError:
        raise HeaderError(f"{path.name}: the header is not JSON") from None
    if not isinstance(data, dict):
        raise HeaderError(f"{path.name}: the header is not a JSON object")
    return data, length


def _tensor_bytes(name: str, info: object) -> float:
    if not isinstance(info, dict) or "shape" not in info or "dtype" not in info:
        raise HeaderError(f"tensor {name!r} has no dtype and shape")
    size = DTYPE_BYTES.get(str(info["dtype"])[:20])
    if size is None:
        raise HeaderError(f"tensor {name[:80]!r}: unknown dtype {str(info['dtype'])[:20]!r}")
    shape = info["shape"]
    # safetensors' shape is a list of unsigned integers; anything else (a float, a string, infinity,
    # thousands of dims) is a broken or hostile header, refused before any arithmetic on it
    if not isinstance(shape, list) or len(shape) > MAX_DIMS \
            or not all(isinstance(dim, int) and not isinstance(dim, bool) and dim >= 0 for dim in shape):
        raise HeaderError(f"tensor {name[:80]!r}: the shape is not a list of at most {MAX_DIMS} whole numbers")
    elements = 1
    for dim in shape:
        elements *= dim
        if elements > MAX_ELEMENTS:
            raise HeaderError(f"tensor {name[:80]!r}: more elements than any tensor holds")
    return elements * size


def _shards(directory: Path) -> list[Path]:
    index = directory / INDEX
    if index.is_file():
        try:
            weight_map = json.loads(read_regular_file(index, MAX_INDEX_BYTES).decode("utf-8"))["weight_map"]
        except FileRefused as exc:
            larger = f" than any index ({MAX_INDEX_BYTES // 2**20} MiB)" if exc.too_large else ""
            raise HeaderError(f"{INDEX}: {exc.reason}{larger}") from None
        except (OSError, ValueError, KeyError, TypeError, RecursionError):
            raise HeaderError(f"{INDEX}: no weight_map") from None
        if not isinstance(weight_map, dict):
            raise HeaderError(f"{INDEX}: no weight_map")
        names = sorted({str(file) for file in weight_map.values()})
        if len(names) > MAX_SHARDS or any("/" in name or name.startswith(".") for name in names):
            raise HeaderError(f"{INDEX}: its weight_map names files outside the directory or too many")
        return [directory / name for name in names]
    return [directory / SINGLE] if (directory / SINGLE).is_file() else []


def is_mtp(name: str, num_hidden_layers: int) -> bool:
    """MTP tensors: `mtp.*` (Qwen3.5/3.6, Qwen3-Next) or a layer past the decoder's (DeepSeek's
    next-n layers are `model.layers.<num_hidden_layers>...`)."""
    if name.startswith("mtp.") or ".mtp." in name:
        return True
    layer = _LAYER.search(name)
    return layer is not None and int(layer.group(1)) >= num_hidden_layers


def header_weights(directory: Path, num_hidden_layers: int) -> HeaderWeights | None:
    """The checkpoint beside a config.json, from its headers; None when no shard is there
    (a config.json copied alone), HeaderError when one is there but unreadable."""
    shards = _shards(directory)
    if not shards or not all(shard.is_file() for shard in shards):
        return None
    loaded = mtp = 0.0
    budget = MAX_HEADERS_BYTES
    for shard in shards:
        header, length = _header(shard, budget)
        budget -= length
        for name, info in header.items():
            if name == "__metadata__":
                continue
            size = _tensor_bytes(name, info)
            if is_mtp(name, num_hidden_layers):
                mtp += size
            else:
                loaded += size
    source = f"safetensors headers of {len(shards)} file(s) beside the config.json"
    return HeaderWeights(loaded, mtp, len(shards), source)
