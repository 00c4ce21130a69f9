"""Where `init --model-config` puts the model's config.json, and how, without writing anywhere else.

The stack must name its config.json relative to the project (`model.configFile` refuses absolute
paths), so a file from outside is copied to `models/<folder>/config.json`. Everything about that
copy is settled before anything is written (`read_config_source`), so a refused `init` leaves
nothing behind; the write (`write_copy`) then goes only under the project's own `models/`:
- the folder name comes from the file's name or folder, reduced to letters, digits, `.`, `_`, `-`
  and never starting with a dot (`...`, `..` or `.hidden` cannot climb out or hide);
- every directory is opened relative to the one before it with O_NOFOLLOW|O_DIRECTORY, so a
  symlinked `models/` or `models/<folder>` is refused rather than followed;
- the file is created with O_CREAT|O_EXCL|O_NOFOLLOW: a file or a (dangling) link already there is
  never written through; an identical existing copy is reused;
- the resolved target is checked to be under the resolved `models/`, and whatever the write created
  is removed again if `init` refuses afterwards (`remove_created`).
"""

from __future__ import annotations

import json
import os
import re
import stat
from pathlib import Path

import msgspec

from vllm_serving.bounded_read import FileRefused, read_regular_file
from vllm_serving.catalog.hf_config import MAX_CONFIG_BYTES, parse_hf_config
from vllm_serving.catalog.models import ModelArchitecture
from vllm_serving.findings import ConfigError
from vllm_serving.settings.model import CONFIG_FILE

MODELS_DIR = "models"
CONFIG_NAME = "config.json"
MAX_FOLDER_CHARS = 64


class ConfigUnusable(Exception):
    """The config.json cannot be used or copied; the message says why and what to do."""


class ConfigSource(msgspec.Struct, frozen=True):
    """A model's config.json as init will use it."""

    model: ModelArchitecture
    config_file: str
    """model.configFile: the path in the project, relative, with '/'."""
    folder: str
    """The model's directory name (weights under /models/<folder>, served name): a plain name."""
    copy: bytes | None
    """The bytes to write at `config_file`; None when the file is in the project already."""
    data: bytes = b""
    """The bytes read and checked, so nothing reads the path a second time (it may be swapped)."""


class Created(msgspec.Struct):
    """What `write_copy` made, newest last, so a refusal can take it back."""

    paths: list[Path] = msgspec.field(default_factory=list)


def folder_name(text: str) -> str:
    """A name from a file or folder name: letters, digits, '.', '_', '-'; a letter or digit first."""
    cleaned = re.sub(r"[^A-Za-z0-9._-]+", "-", text)
    cleaned = re.sub(r"^[^A-Za-z0-9]+", "", cleaned)[:MAX_FOLDER_CHARS].rstrip(".-_")
    return cleaned or "model"


def _parsed(data: bytes, shown: str) -> ModelArchitecture:
    try:
        config = json.loads(data.decode("utf-8"))
    except (ValueError, RecursionError) as exc:
        raise ConfigUnusable(f"{shown} is not a readable JSON file ({exc.__class__.__name__})") from None
    if not isinstance(config, dict):
        raise ConfigUnusable(f"{shown} is not a JSON object")
    try:
        return parse_hf_config(config, shown)
    except ConfigError as exc:
        problem = exc.findings[0]
        raise ConfigUnusable(f"{problem.key}: {problem.message} - {problem.fix}") from None


def read_config_source(path: Path, project: Path) -> ConfigSource:
    """Read and check `path`, and settle where the stack will find it; writes nothing."""
    shown = f"--model-config {str(path)[:120]!r}"
    try:
        data = read_regular_file(path, MAX_CONFIG_BYTES)
    except FileRefused as exc:
        raise ConfigUnusable(f"{shown} {exc.reason}") from None
    except OSError as exc:
        raise ConfigUnusable(f"{shown} cannot be read ({exc.strerror or exc.__class__.__name__})") from None
    model = _parsed(data, shown)
    resolved = path.resolve()
    inside = resolved.relative_to(project.resolve()).as_posix() if resolved.is_relative_to(project.resolve()) else None
    folder = folder_name(resolved.parent.name if resolved.name == CONFIG_NAME
                         else resolved.name.removesuffix(".json").removesuffix(".config"))
    if inside is not None and CONFIG_FILE.fullmatch(inside):  # a path model.configFile takes
        return ConfigSource(model, inside, folder, None, data)
    return ConfigSource(model, f"{MODELS_DIR}/{folder}/{CONFIG_NAME}", folder, data, data)


_DIR_FLAGS = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_NOFOLLOW", 0)


def _subdirectory(parent: int, name: str, created: Created, where: Path) -> int:
    """An fd of directory `name` in `parent`, made if missing; a symlink or a non-directory refused."""
    try:
        os.mkdir(name, 0o755, dir_fd=parent)
        created.paths.append(where)
    except FileExistsError:
        pass
    try:
        return os.open(name, _DIR_FLAGS, dir_fd=parent)
    except OSError:
        raise ConfigUnusable(f"{where} is a symbolic link or not a directory: init writes only into the "
                             f"project's own {MODELS_DIR}/ (copy the config.json in yourself and pass "
                             "its path)") from None


def _same_file(folder: int, data: bytes, target: Path) -> None:
    """An existing target is fine only as a regular file (not a link) holding exactly `data`."""
    try:
        fd = os.open(CONFIG_NAME, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0),
                     dir_fd=folder)
    except OSError:
        raise ConfigUnusable(f"{target} is a symbolic link or cannot be read; refusing to write through it") from None
    with os.fdopen(fd, "rb") as handle:
        same = stat.S_ISREG(os.fstat(fd).st_mode) and handle.read(len(data) + 1) == data
    if not same:
        raise ConfigUnusable(f"{target} already exists with other content; copy the file into the project "
                             "yourself and pass that path")


def write_copy(source: ConfigSource, project: Path) -> Created:
    """Write `source.copy` at `source.config_file` under the project's models/; what it created."""
    created = Created()
    if source.copy is None:
        return created
    models, target = project / MODELS_DIR, project / source.config_file
    fds: list[int] = []
    try:
        fds.append(os.open(project, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0)))
        fds.append(_subdirectory(fds[-1], MODELS_DIR, created, models))
        fds.append(_subdirectory(fds[-1], source.folder, created, models / source.folder))
        if not target.resolve().parent.is_relative_to(models.resolve()):
            raise ConfigUnusable(f"{target} would not be inside {models}; refusing to write it")
        try:
            fd = os.open(CONFIG_NAME, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o644,
                         dir_fd=fds[-1])
        except FileExistsError:
            _same_file(fds[-1], source.copy, target)
            return created
        created.paths.append(target)
        with os.fdopen(fd, "wb") as handle:
            handle.write(source.copy)
        return created
    except BaseException:
        remove_created(created)
        raise
    finally:
        for fd in fds:
            os.close(fd)


def remove_created(created: Created) -> None:
    """Take back what `write_copy` made, newest first (a refusal after the copy leaves nothing)."""
    for path in reversed(created.paths):
        try:
            if path.is_dir() and not path.is_symlink():
                path.rmdir()
            else:
                path.unlink()
        except OSError:
            pass  # not ours any more (someone wrote into it meanwhile): leave it
    created.paths.clear()
