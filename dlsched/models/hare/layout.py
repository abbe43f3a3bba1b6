"""Where a hare instance's raw dict keeps what the worst-case search's moves change (the
family's ``layout`` part, :mod:`dlsched.verify.moves`)."""

from __future__ import annotations

from dlsched.verify.moves import Axis, Layout, Raw


def _tasks(raw: Raw) -> int:
    return sum(int(j["rounds"]) * int(j["tasks_per_round"]) for j in raw["jobs"])


LAYOUT = Layout(
    "hare",
    Axis("gpus", ("train_time", "sync_time")),
    gpus=lambda raw: len(raw["gpus"]),
    job_size=("train_time", "sync_time"),
    counts=("rounds", "tasks_per_round"),
    work=_tasks,  # CP-SAT certifies 9 tasks in under a second, 14 in up to 3
)

__all__ = ["LAYOUT"]
