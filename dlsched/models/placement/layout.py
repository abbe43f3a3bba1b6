"""Where a placement instance's raw dict keeps what the worst-case search's moves change (the
family's ``layout`` part, :mod:`dlsched.verify.moves`)."""

from __future__ import annotations

from dlsched.verify.moves import Axis, Layout

LAYOUT = Layout(
    "placement",
    Axis("workers", ("throughput",)),
    gpus=lambda raw: len(raw["workers"]),
    categorical=frozenset({"gpu", "node"}),
    job_size=("dataset_size",),
    counts=("epochs",),
)

__all__ = ["LAYOUT"]
