"""The stand-in "vLLM" image, built here with `docker import`: nothing is pulled.

Its root filesystem carries this machine's own Python (the interpreter running the tests, its
standard library and shared libraries, each at the path it has here, so the interpreter finds its
prefix unchanged), `curl` with its libraries (the project's healthcheck runs `curl -fsS`), `/bin/sh`
(`docker run --health-cmd` runs the check through it), `standin/server.py` as the entrypoint,
which takes vLLM's argv, and the fake `vllm` package the preflight's `engine` check imports
(tests/preflight/fake_vllm, a stand-in for v0.19.1, with the project's registry of v0.19.1 beside it)
on the image's PYTHONPATH.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import sysconfig
import tarfile
from pathlib import Path

import docker

from tests.preflight.fake_site import fake_site

SERVER = Path(__file__).parent / "standin" / "server.py"
SERVER_IN_IMAGE = "/standin/server.py"
SITE_IN_IMAGE = "/standin/site"
# Standard-library parts the stand-in never imports; leaving them out keeps the image ~60 MB.
STDLIB_LEFT_OUT = {"test", "site-packages", "dist-packages", "idlelib", "tkinter", "turtledemo", "ensurepip",
                   "lib2to3", "pydoc_data", "__pycache__"}
LDD_PATH = re.compile(r"(/\S+)")


class CannotBuild(Exception):
    """This machine lacks something the image needs (ldd, curl); the suite skips with the reason."""


def _shared_libraries(binary: Path) -> set[Path]:
    done = subprocess.run(["ldd", str(binary)], capture_output=True, text=True, timeout=30, check=False)
    if done.returncode != 0:  # a static binary or not ELF: nothing to add
        return set()
    return {Path(m.group(1)) for line in done.stdout.splitlines()
            if (m := LDD_PATH.search(line.split("=>")[-1]))}


def _stdlib_files(stdlib: Path) -> list[Path]:
    files: list[Path] = []
    for directory, subdirs, names in os.walk(stdlib):
        subdirs[:] = [d for d in subdirs if d not in STDLIB_LEFT_OUT and not d.startswith("config-")]
        files += [Path(directory, n) for n in names]
    return files


def write_rootfs(tar_path: Path) -> None:
    """The root filesystem as a tar, ready for `docker import`."""
    if shutil.which("ldd") is None:
        raise CannotBuild("no ldd on this machine to find the stand-in's shared libraries")
    curl = shutil.which("curl")
    if curl is None:
        raise CannotBuild("no curl on this machine to put in the stand-in image (its healthcheck runs curl)")
    python = Path(os.path.realpath(sys.executable))
    dynload = Path(sysconfig.get_config_var("DESTSHARED"))
    shell = Path(os.path.realpath("/bin/sh"))
    binaries = [python, Path(curl), shell, *dynload.glob("*.so")]
    files = set(binaries) | set(_stdlib_files(Path(sysconfig.get_paths()["stdlib"])))
    for binary in binaries:
        files |= _shared_libraries(binary)
    members = {str(path).lstrip("/"): path for path in files}
    members["usr/bin/curl"] = Path(curl)  # on the healthcheck's PATH wherever it is here
    # `docker run --health-cmd` is Docker's CMD-SHELL form: it runs through /bin/sh -c
    members["bin/sh"] = shell
    with tarfile.open(tar_path, "w", dereference=True) as tar:
        for name, path in sorted(members.items()):
            tar.add(path, arcname=name, recursive=False)
        if "usr/bin/python3" not in members:
            _add_symlink(tar, "usr/bin/python3", str(python))
        tar.add(SERVER, arcname=SERVER_IN_IMAGE.lstrip("/"))
        tar.add(fake_site(tar_path.parent / "site"), arcname=SITE_IN_IMAGE.lstrip("/"))
        _add_dir(tar, "tmp", 0o1777)


def _add_symlink(tar: tarfile.TarFile, name: str, target: str) -> None:
    info = tarfile.TarInfo(name)
    info.type = tarfile.SYMTYPE
    info.linkname = target
    tar.addfile(info)


def _add_dir(tar: tarfile.TarFile, name: str, mode: int) -> None:
    info = tarfile.TarInfo(name)
    info.type = tarfile.DIRTYPE
    info.mode = mode
    tar.addfile(info)


def build(client: docker.DockerClient, tar_path: Path, repository: str, labels: dict[str, str]) -> str:
    """Import the root filesystem as `repository:latest`; returns the image id."""
    write_rootfs(tar_path)
    changes = [f'ENTRYPOINT ["python3", "{SERVER_IN_IMAGE}"]', "EXPOSE 8000", f"ENV PYTHONPATH={SITE_IN_IMAGE}",
               *(f"LABEL {k}={v}" for k, v in labels.items())]
    client.api.import_image(src=str(tar_path), repository=repository, tag="latest", changes=changes)
    image: str = client.images.get(f"{repository}:latest").id
    return image
