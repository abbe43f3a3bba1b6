"""Progress lines on stderr for long solves: at most one every :data:`PROGRESS_EVERY` seconds.

Two sources write them through :func:`say`: solvers that report by themselves (CP-SAT's
solution callback, the wait on work forked by :mod:`deadline`), and :func:`heartbeat`, a
thread the command line runs beside a route. The heartbeat speaks only when nothing else has
for :data:`PROGRESS_EVERY` seconds, and tells the elapsed time and the route's current stage
as the route last described it with :func:`note` (a string, or a function read when the
line is printed: a search's node count, a column generation's bound). So a search in Python,
or a solver without callbacks, is never silent for long.

Forks: the lock that orders the lines is held across every fork of this process
(``os.register_at_fork``), so a child never starts with it taken, and a child starts with no
heartbeat of its own.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

#: Seconds between two progress lines of one solve.
PROGRESS_EVERY = 10.0

Stage = str | Callable[[], str]


@dataclass
class _State:
    last: float = 0.0  # when the last line was printed
    stage: Stage | None = None  # the route's own words (:func:`note`)
    depth: int = 0  # heartbeats running (nested ones add no thread)


_lock = threading.Lock()
_state = _State()


def say(text: str) -> None:
    """Print ``dlsched: text`` on stderr now."""
    with _lock:
        print(f"dlsched: {text}", file=sys.stderr, flush=True)
        _state.last = time.perf_counter()


def note(stage: Stage | None) -> None:
    """Describe what the running route does now (None: nothing to add to the elapsed time)."""
    _state.stage = stage


def beating() -> bool:
    """Whether a :func:`heartbeat` runs (its lines then stand for the waits' own)."""
    return _state.depth > 0


def _stage_text() -> str:
    stage = _state.stage
    if callable(stage):
        try:
            return str(stage())
        except Exception:  # a line is not worth a failure: the stage may be mid-update
            return ""
    return "" if stage is None else str(stage)


def _beat(label: str, limit: float | None, t0: float, stop: threading.Event) -> None:
    while not stop.wait(PROGRESS_EVERY / 4):
        now = time.perf_counter()
        if now - max(_state.last, t0) < PROGRESS_EVERY:
            continue
        of = "" if limit is None else f" of {limit:g} s"
        stage = _stage_text()
        say(f"{label}: {now - t0:.0f} s{of}" + (f", {stage}" if stage else ""))


@contextmanager
def heartbeat(label: str, limit: float | None = None) -> Iterator[None]:
    """Run the body with a progress line every :data:`PROGRESS_EVERY` seconds of silence.
    Nested uses add no second thread."""
    depth = _state.depth
    _state.depth = depth + 1
    stop = threading.Event()
    thread = None
    if depth == 0:
        note(None)
        args = (label, limit, time.perf_counter(), stop)
        thread = threading.Thread(target=_beat, args=args, name="dlsched-progress", daemon=True)
        thread.start()
    try:
        yield
    finally:
        stop.set()
        if thread is not None:
            thread.join()
            note(None)
        _state.depth = depth


def _after_fork_in_child() -> None:
    global _lock
    _lock = threading.Lock()
    _state.depth = 0  # the heartbeat thread stayed in the parent


if hasattr(os, "register_at_fork"):
    os.register_at_fork(
        before=lambda: _lock.acquire(),
        after_in_parent=lambda: _lock.release(),
        after_in_child=_after_fork_in_child,
    )

__all__ = ["PROGRESS_EVERY", "beating", "heartbeat", "note", "say"]
