"""What the instances of every family share."""

from __future__ import annotations

from typing import Any


class JobList:
    """An instance is a tuple of ``jobs`` (and its family's resources): its size is theirs."""

    jobs: tuple[Any, ...]

    @property
    def num_jobs(self) -> int:
        return len(self.jobs)


__all__ = ["JobList"]
