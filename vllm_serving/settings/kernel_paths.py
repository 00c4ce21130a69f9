"""Host and container paths as the kernel, Docker and the kubelet read them: one normalisation.

The kernel reads any run of slashes as one (`//etc`, `/var//run`), `.` as the directory itself and
a trailing slash as nothing; Docker cleans a bind mount's source and target with Go's `path.Clean`
before it mounts (moby volume/mounts/linux_parser.go, parseMountSpec). Python's
`posixpath.normpath` differs exactly where it hurts: it keeps two leading slashes (POSIX leaves
`//` implementation-defined; Linux, Docker and the kubelet read it as `/`), so `//etc` passed every
check that compared normpath'd paths. Every check and every render here uses these functions.

`..` is resolved lexically only for comparison (`kernel_path`): the kernel resolves it after
following symlinks, which no stack file can see, so a path with `..` is refused by the rules
(`host-path-dotdot`) and kept as written by `tidy_path` so that rule sees it.
"""

from __future__ import annotations

import unicodedata


def tidy_path(path: str) -> str:
    """An absolute path with slashes collapsed, `.` segments and the trailing slash dropped; `..`
    kept. What the settings hold and the renders mount."""
    parts = [part for part in path.split("/") if part not in ("", ".")]
    return "/" + "/".join(parts)


def kernel_path(path: str) -> str:
    """`tidy_path` with `..` resolved against the segment before it (never above `/`): Go's
    path.Clean, which Docker applies to a mount's source and target."""
    parts: list[str] = []
    for part in tidy_path(path).split("/")[1:]:
        if part == "..":
            if parts:
                parts.pop()
        elif part:
            parts.append(part)
    return "/" + "/".join(parts)


def folded(name: str) -> str:
    """A path or a segment as a case-insensitive host compares it: Docker Desktop's macOS and
    Windows file sharing (APFS, NTFS) match names regardless of case and Unicode normal form, so
    `/Users/me/.SSH` is `.ssh` there. NFKC then casefold (`ſ`, the long s, folds to `s`)."""
    return unicodedata.normalize("NFKC", name).casefold()


def segments(path: str) -> list[str]:
    """The folded segments of `kernel_path(path)`; [] for `/`."""
    return [folded(part) for part in kernel_path(path).split("/")[1:] if part]
