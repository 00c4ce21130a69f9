"""Reading a file the user names, bounded: regular files only, a size cap, never a blocking open.

Every file the CLI and the program read from a path they were given - stack files, Pulumi.yaml, a
model's config.json (`model.configFile`, `init --model-config`, `capacity --model-config`) - is
read here, so a FIFO, `/dev/stdin`, `/dev/zero`, a directory or a 10 GB file is refused at once
rather than hanging `check` or filling memory. O_NONBLOCK keeps the open of a FIFO without a
writer from blocking; the type is then taken from the open descriptor (fstat), so a path swapped
after a check cannot slip a device in; at most `limit + 1` bytes are ever read.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import BinaryIO


class FileRefused(Exception):
    """The path is not a regular file, or is larger than the cap; `reason` completes "the file ..."."""

    def __init__(self, reason: str, too_large: bool = False) -> None:
        self.reason, self.too_large = reason, too_large
        super().__init__(reason)


def _kind(mode: int) -> str:
    kinds = ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a pipe (FIFO)"), (stat.S_ISCHR, "a device"),
             (stat.S_ISBLK, "a device"), (stat.S_ISSOCK, "a socket"))
    return next((name for test, name in kinds if test(mode)), "not a regular file")


def open_regular_file(path: Path) -> BinaryIO:
    """The regular file at `path` open for reading (symlinks to one are followed), for a reader that
    takes only its start (a safetensors header); FileRefused for anything else; OSError
    (FileNotFoundError...) as the open raises it."""
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0)
    fd = os.open(path, flags)
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):
        os.close(fd)
        raise FileRefused(f"is {_kind(mode)}, not a regular file")
    return os.fdopen(fd, "rb")


def read_regular_file(path: Path, limit: int) -> bytes:
    """The bytes of the regular file at `path` (symlinks to one are followed), at most `limit`;
    FileRefused for anything else; OSError (FileNotFoundError...) as the open raises it."""
    with open_regular_file(path) as handle:
        data = handle.read(limit + 1)
    if len(data) > limit:
        raise FileRefused(f"is larger than {size_text(limit)}", too_large=True)
    return data


def size_text(limit: int) -> str:
    """`256 KiB`, `4 MiB`: a cap as messages name it."""
    return f"{limit // 2**20} MiB" if limit % 2**20 == 0 else f"{limit // 1024} KiB"
