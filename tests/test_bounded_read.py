"""Every file a verb reads from a path it was given is read bounded: a FIFO, /dev/stdin, a device
or a directory is refused at once (never blocks), a file past the cap is refused after cap+1 bytes."""

from __future__ import annotations

import os
import shutil
import socket
import stat
import threading
import tracemalloc
from pathlib import Path

import pytest

from tests.paths import PROJECT_DIR, stack_file
from vllm_serving.bounded_read import FileRefused, _kind, open_regular_file, read_regular_file, size_text
from vllm_serving.cli import main


@pytest.mark.parametrize(("kind", "named"), [("fifo", "a pipe (FIFO)"), ("directory", "a directory"),
                                             ("/dev/zero", "a device"), ("/dev/null", "a device")])
def test_anything_but_a_regular_file_is_refused(tmp_path: Path, kind: str, named: str) -> None:
    path = tmp_path / "x"
    if kind == "fifo":
        os.mkfifo(path)  # no writer: a blocking open would wait for ever
    elif kind == "directory":
        path.mkdir()
    else:
        path = Path(kind)
    with pytest.raises(FileRefused) as refused:
        read_regular_file(path, 1024)
    # the message says what the path is, so the user knows what they pointed at
    assert refused.value.reason == f"is {named}, not a regular file"
    # not "larger than any config.json": the messages built on it say what the path is instead
    assert not refused.value.too_large
    assert str(refused.value) == refused.value.reason


def test_a_file_past_the_cap_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "big"
    path.write_bytes(b"x" * 2049)
    with pytest.raises(FileRefused) as refused:
        read_regular_file(path, 2048)
    assert refused.value.too_large
    assert refused.value.reason == "is larger than 2 KiB"
    assert read_regular_file(path, 4096) == b"x" * 2049
    # the cap is the largest size taken, not the first refused one
    assert read_regular_file(path, 2049) == b"x" * 2049


def test_a_huge_file_is_refused_without_being_read(tmp_path: Path) -> None:
    """A 256 MiB file (sparse: no disk used) against a 1 KiB cap: at most cap + 1 bytes are read,
    so memory stays at kilobytes whatever the file's size (a 10 GB file never fills it)."""
    path = tmp_path / "huge"
    with path.open("wb") as handle:
        handle.truncate(256 * 2**20)
    tracemalloc.start()
    try:
        with pytest.raises(FileRefused):
            read_regular_file(path, 1024)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 2**20


@pytest.mark.parametrize(("file_type", "named"), [
    (stat.S_IFDIR, "a directory"), (stat.S_IFIFO, "a pipe (FIFO)"), (stat.S_IFCHR, "a device"),
    (stat.S_IFBLK, "a device"), (stat.S_IFSOCK, "a socket"), (stat.S_IFLNK, "not a regular file"),
])
def test_each_file_type_is_named_as_people_call_it(file_type: int, named: str) -> None:
    """The file type bits of st_mode (stat(2)); a block device or a socket cannot be made without
    privileges in a test, so the names are checked on the mode the open descriptor reports."""
    assert _kind(file_type | 0o644) == named


def test_opening_a_terminal_never_makes_it_the_controlling_one() -> None:
    """configFile pointing at a tty (/dev/pts/N, /dev/console) is refused; the open itself must not make
    it the process's controlling terminal (O_NOCTTY), which a daemonised run (a session leader
    with no terminal, as under CI or systemd) would otherwise take and then get its signals."""
    pid = os.fork()
    if pid == 0:  # the child: a new session without a terminal, as a daemon is
        code = 3
        try:
            os.setsid()
            _, follower = os.openpty()  # glibc opens its own end with O_NOCTTY
            try:
                open_regular_file(Path(os.ttyname(follower)))
            except FileRefused:
                code = 2
            try:
                os.close(os.open("/dev/tty", os.O_RDONLY))  # opens only with a controlling terminal
            except OSError:
                code = 0 if code == 2 else code
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0


def test_a_regular_file_opens_for_reading_from_its_start(tmp_path: Path) -> None:
    path = tmp_path / "model.safetensors"
    path.write_bytes(b"\x08\x00header")
    with open_regular_file(path) as handle:
        assert handle.read(2) == b"\x08\x00"
        assert handle.read() == b"header"
    with pytest.raises(FileNotFoundError):
        open_regular_file(tmp_path / "missing")
    # a unix socket is refused by open(2) itself (ENXIO), as an OSError the callers already report
    listening = socket.socket(socket.AF_UNIX)
    listening.bind(str(tmp_path / "agent.sock"))
    with pytest.raises(OSError):
        open_regular_file(tmp_path / "agent.sock")
    listening.close()


@pytest.mark.parametrize(("limit", "named"), [(256 * 1024, "256 KiB"), (4 * 2**20, "4 MiB"), (64 * 2**20, "64 MiB"),
                                              (3 * 2**19, "1536 KiB"), (2**20, "1 MiB"), (3 * 2**20, "3 MiB")])
def test_a_cap_is_named_in_the_unit_it_was_set_in(limit: int, named: str) -> None:
    assert size_text(limit) == named


@pytest.mark.parametrize("special", ["fifo", "/dev/stdin", "/dev/zero"])
def test_check_and_plan_end_on_a_model_config_that_is_not_a_file(tmp_path: Path, special: str,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    """model.configFile names a FIFO or a device: the verbs say so and exit (run in a thread, so a
    blocking read fails the test instead of hanging it)."""
    shutil.copy(PROJECT_DIR / "Pulumi.yaml", tmp_path)
    stack = (stack_file("v100")).read_text(encoding="utf-8")
    config = "models/hang/config.json"
    (tmp_path / "models" / "hang").mkdir(parents=True)
    if special == "fifo":
        os.mkfifo(tmp_path / config)
    else:
        (tmp_path / config).symlink_to(special)
    (tmp_path / "Pulumi.hang.yaml").write_text(stack.replace("    name: Qwen3.5-27B\n", f"    configFile: {config}\n"))
    for verb in ("check", "plan"):
        codes: list[int] = []

        def run(verb: str = verb, codes: list[int] = codes) -> None:
            codes.append(main(["--project-dir", str(tmp_path), verb, "hang"]))

        worker = threading.Thread(target=run, daemon=True)
        worker.start()
        worker.join(timeout=30)
        assert codes == [1], f"{verb} did not end"
        out = capsys.readouterr()
        assert "model-config-invalid vllm-serving:model.configFile" in out.out + out.err
        assert "not a regular file" in out.out + out.err
