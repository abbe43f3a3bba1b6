"""Empirical competitive ratios of the online hare policies (Chen et al., IEEE TCC 2024).

The paper states no competitive bound, so we measure: each online policy's objective (sum of
weighted completion times, verified by the hare checker) over the certified offline optimum
(the hare ``exact`` method) on small instances, or over its certified lower bound when the
exact route stops at its time limit. Records go through :func:`dlsched.bounds.sweep` (one JSON
line each, resumable); the instance reaching each policy's worst ratio is saved with its record
(:func:`dlsched.bounds.save_counterexample`).

Sweeps run over arrival load and GPU heterogeneity, the two axes of the paper's Figs. 17-18:

- heterogeneity "low" (V100 only), "middle" (V100 and K80), "high" (V100, T4, K80, M60);
- load = offered work / capacity: arrivals are spread uniformly over
  span = sum_n |R_n| |D_n| (T^c + T^s on a V100) / (|M| load); load 0 puts every arrival at 0.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from dlsched.errors import OptionError
from dlsched.instances import instance_hash
from dlsched.models import MethodOptions
from dlsched.models.hare.generate import GPU_TYPES
from dlsched.models.hare.instance import HareInstance, HareJob

from .methods import ONLINE_POLICIES

HETEROGENEITY = {
    "low": ("V100",),
    "middle": ("V100", "K80"),
    "high": ("V100", "T4", "K80", "M60"),
}


def ratio_instance(
    jobs: int,
    gpus: int,
    seed: int,
    load: float = 1.0,
    heterogeneity: str = "high",
    rounds: tuple[int, int] = (1, 3),
    tasks: tuple[int, int] = (1, 2),
) -> HareInstance:
    """A random instance on the paper's GPU types at the given load and heterogeneity; times
    on a 0.1 grid (the exact route's scaling stays small)."""
    if heterogeneity not in HETEROGENEITY:
        raise OptionError("heterogeneity", heterogeneity, f"expected {', '.join(HETEROGENEITY)}")
    if not (isinstance(load, int | float) and load >= 0):
        raise OptionError("load", load, "expected a number >= 0")
    rng = np.random.default_rng(seed)
    kinds = HETEROGENEITY[heterogeneity]
    types = [kinds[k % len(kinds)] for k in range(gpus)]
    rows = []
    for _ in range(jobs):
        base_c, base_s = float(rng.uniform(1.0, 4.0)), float(rng.uniform(0.0, 1.0))
        r = int(rng.integers(rounds[0], rounds[1] + 1))
        d = int(rng.integers(tasks[0], tasks[1] + 1))
        rows.append((base_c, base_s, r, d, float(rng.random())))
    work = sum(r * d * (c + s) for c, s, r, d, _ in rows)
    span = 0.0 if load == 0 else work / (gpus * load)
    out = tuple(
        HareJob(
            f"j{n}",
            round(u * span, 1),
            1.0,
            r,
            d,
            tuple(round(c * GPU_TYPES[t][0], 1) for t in types),
            tuple(round(s * GPU_TYPES[t][1], 1) for t in types),
        )
        for n, (c, s, r, d, u) in enumerate(rows)
    )
    name = f"online-{heterogeneity}-load{load:g}-{jobs}x{gpus}-s{seed}"
    names = tuple(f"{t}-{k}" for k, t in enumerate(types))
    return HareInstance(name=name, gpus=names, jobs=out)


def ratio_grid(
    loads: Sequence[float] = (0.0, 0.5, 1.0, 2.0),
    levels: Sequence[str] = tuple(HETEROGENEITY),
    per_cell: int = 5,
    jobs: int = 4,
    gpus: int = 3,
) -> list[HareInstance]:
    return [
        ratio_instance(jobs, gpus, seed, load, level)
        for level in levels
        for load in loads
        for seed in range(per_cell)
    ]


def ratio_sweep(
    instances: Iterable[HareInstance],
    path: str | Path,
    methods: Sequence[str] = ONLINE_POLICIES,
    options: MethodOptions | None = None,
    worst_dir: str | Path | None = None,
) -> dict[str, dict[str, Any]]:
    """Sweep ``methods`` against ``exact``, then return each method's worst record in the file
    (ratio, reference kind, instance) and save the instance that reaches it under
    ``worst_dir``."""
    from dlsched.bounds import save_counterexample, sweep

    insts = list(instances)
    sweep(insts, methods, path, reference="exact", options=options)
    by_hash = {instance_hash(i): i for i in insts}
    worst: dict[str, dict[str, Any]] = {}
    for line in Path(path).read_text().splitlines():
        rec = json.loads(line)
        m, ratio = rec["method"], rec.get("ratio")
        if m == "exact" or ratio is None or rec["instance_hash"] not in by_hash:
            continue
        if m not in worst or ratio > worst[m]["ratio"]:
            worst[m] = rec
    if worst_dir is not None:
        for rec in worst.values():
            saved = save_counterexample(by_hash[rec["instance_hash"]], rec, worst_dir)
            rec["saved"] = str(saved)
    return worst


__all__ = ["HETEROGENEITY", "ratio_grid", "ratio_instance", "ratio_sweep"]
