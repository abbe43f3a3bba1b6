"""Where a DDLwMP instance's raw dict keeps what the worst-case search's moves change (the
family's ``layout`` part, :mod:`dlsched.verify.moves`)."""

from __future__ import annotations

from dlsched.verify.moves import LABELS, Layout, Raw


def _gpus(raw: Raw) -> int:
    return int(raw["cluster"]["servers"]) * int(raw["cluster"]["gpus_per_server"])


def _stages(raw: Raw) -> int:
    return sum(len(j["stages"]) for j in raw["jobs"])


LAYOUT = Layout(
    "ddlwmp",
    None,
    gpus=_gpus,
    labels=LABELS | {"group", "user", "model"},
    categorical=frozenset({"allreduce"}),
    job_size=("iterations", "predicted_iterations"),
    counts=("servers", "gpus_per_server", "replicas"),
    stages="stages",
    work=_stages,
    work_per_job=2.0,
)

__all__ = ["LAYOUT"]
