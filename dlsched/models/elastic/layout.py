"""Where an elastic instance's raw dict keeps what the worst-case search's moves change (the
family's ``layout`` part, :mod:`dlsched.verify.moves`), and which recorded sub-cases of
Theorems 1 and 6 fit an instance."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from dlsched.verify.moves import LABELS, Axis, Layout, Raw


def _case_ok(raw: Raw, case: Mapping[str, Any]) -> bool:
    """m', p' and n within the instance; one row of prices and free capacity per server and
    one entry per resource, none negative."""
    from dlsched.instances import from_dict

    inst = from_dict(raw)
    shape = (inst.num_servers, len(inst.resources))
    rows = [np.asarray(case[key], dtype=float) for key in ("prices", "free")]
    return (
        0 <= case["m"] < len(inst.worker_types)
        and 0 <= case["p"] < len(inst.ps_choices())
        and 1 <= case["n"] <= inst.jobs[0].chunks
        and all(r.shape == shape and bool((r >= 0).all()) for r in rows)
    )


LAYOUT = Layout(
    "elastic",
    Axis("servers", (), ("prices", "free")),
    gpus=lambda raw: len(raw["servers"]),
    labels=LABELS | {"architecture", "resources"},
    job_size=("minibatches_per_chunk",),
    counts=("chunks", "epochs"),
    limits={"horizon": (2, 24), "n": (1, 1e6)},
    case_ok=_case_ok,
)

__all__ = ["LAYOUT"]
