"""The JSON-lines log of sweeps and of ``dlsched verify``: one record a line, the file locked for
the whole run, each line written whole and fsynced, a torn last line (a run killed mid-write)
repaired before anything is appended."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

from dlsched.errors import DlschedError

#: The descriptors of the logs this process holds locked. A forked child (a solver stage run
#: under its deadline) closes its copies at once: the lock is then this process's alone, and a
#: kill of this process releases it even while such a child runs on.
_HELD: set[int] = set()


def _close_held() -> None:
    for fd in _HELD:
        with suppress(OSError):
            os.close(fd)
    _HELD.clear()


os.register_at_fork(after_in_child=_close_held)


@contextmanager
def locked_log(path: Path) -> Iterator[int]:
    """An append descriptor on ``path`` (created if missing), exclusively locked until exit
    (or until this process dies: a process forked meanwhile does not keep the lock)."""
    import fcntl

    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_APPEND, 0o666)  # less the umask
    except OSError as e:
        raise DlschedError(f"{path}: cannot open the sweep file: {e.strerror}") from None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise DlschedError(f"{path} is in use by another sweep") from None
        _HELD.add(fd)
        yield fd
    finally:
        _HELD.discard(fd)
        os.close(fd)  # releases the lock


def parse_record(path: Path, lineno: int, line: bytes) -> dict[str, Any]:
    record = _as_record(line)
    if record is None:
        raise DlschedError(f"{path}:{lineno}: not a sweep record; fix or remove this line")
    return record


def read_records(path: Path) -> list[dict[str, Any]]:
    """Every record of a sweep log (a torn last line, left by a killed sweep, is skipped)."""
    lines = path.read_bytes().split(b"\n")
    records = []
    for n, line in enumerate(lines, 1):
        if line.strip() and not (n == len(lines) and _as_record(line) is None):
            records.append(parse_record(path, n, line))
    return records


def _as_record(line: bytes) -> dict[str, Any] | None:
    try:
        record = json.loads(line)
    except ValueError:
        return None
    ok = isinstance(record, dict) and "instance_hash" in record and "method" in record
    return record if ok else None


def repair_tail(path: Path, fd: int) -> bytes:
    """The file's complete lines, once every one of them is a sweep record (DlschedError naming
    the first that is not, before anything is changed). A last line without its newline (a
    sweep killed mid-write) is completed when it holds a whole record, and cut off when it is
    no whole JSON value and some earlier line is a record; otherwise the file is refused
    untouched (a file of one line that is not a record, say).
    stderr says once what was repaired."""
    data = path.read_bytes()
    cut = data.rfind(b"\n") + 1
    complete, tail = data[:cut], data[cut:]
    records = 0
    for n, line in enumerate(complete.split(b"\n"), 1):
        if line.strip():
            parse_record(path, n, line)
            records += 1
    if not tail.strip():  # nothing, or blanks the next record's line will start with
        return data
    if _as_record(tail) is not None:
        append_line(fd, "\n")
        print(f"dlsched: {path}: completed a last line that lacked its newline", file=sys.stderr)
        return data + b"\n"
    if records == 0 or _is_json(tail):  # not a record cut short: refuse, change nothing
        parse_record(path, complete.count(b"\n") + 1, tail)  # raises
    os.ftruncate(fd, cut)
    os.fsync(fd)
    print(
        f"dlsched: {path}: dropped a torn last line ({len(tail)} bytes) left by an interrupted "
        "sweep",
        file=sys.stderr,
    )
    return complete


def _is_json(line: bytes) -> bool:
    try:
        json.loads(line)
    except ValueError:
        return False
    return True


def append_line(fd: int, line: str) -> None:
    """Append a complete line in one write() (looping only on a short write), then fsync, so a
    kill at any moment loses at most this line."""
    data = line.encode("utf-8")
    while data:
        data = data[os.write(fd, data) :]
    os.fsync(fd)


__all__ = ["append_line", "locked_log", "parse_record", "read_records", "repair_tail"]
