"""Instances of the placement family: job placement with proportional load balancing (P1).

Liu, Wang, Huang, Pan. *Sampling-Based Multi-Job Placement for Heterogeneous Deep Learning
Clusters*. IEEE TPDS 35(6), 2024.

Units (all fields of the JSON file):

- ``jobs[i].dataset_size``  |Pi_i|, samples per epoch, integer from 1 to 1e9
- ``jobs[i].epochs``        T_i, integer from 1 to 1e6
- ``jobs[i].model_size_mb`` D_i, megabytes (1 MB = 8e6 bits) exchanged by Ring-AllReduce,
  0 to 1e6 (a terabyte)
- ``jobs[i].throughput``    rho[i, k], samples per second, 1e-6 to 1e6, either a list aligned
  with ``workers`` or an object keyed by GPU type
- ``network.intra_node_gbps`` / ``network.inter_node_gbps``  link rates in Gbit/s (1e9 bit/s),
  1e-6 to 1e5
- ``workers[k].node``       a node name (string; default ``"node0"``)
- JCTs and every objective are in seconds.

The ranges (:data:`LIMITS`) hold every real cluster by orders of magnitude; values outside
them are unit mistakes that would only push the exact solvers past their numerical range.
Unknown keys are refused.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import numpy as np

from dlsched.errors import InstanceError
from dlsched.instances.base import JobList
from dlsched.instances.validate import (
    COUNT,
    RESOLUTION,
    Range,
    Reader,
    built,
    check_integer,
    check_keys,
    check_number,
    number_list,
    unique_names,
)

BITS_PER_MB = 8e6
BITS_PER_GBIT = 1e9

#: The accepted range of every numeric field (documented in the module docstring).
LIMITS = {
    "dataset_size": Range(1, 1e9),
    "epochs": COUNT,
    "model_size_mb": Range(0, 1e6),
    "throughput": Range(RESOLUTION, 1e6),
    "gbps": Range(RESOLUTION, 1e5),
}
_FIELDS = ("family", "name", "description", "network", "workers", "jobs")
_JOB_FIELDS = ("name", "dataset_size", "epochs", "model_size_mb", "throughput")


@dataclass(frozen=True)
class PlacementJob:
    name: str
    dataset_size: float
    epochs: int
    model_size_mb: float = 0.0


@dataclass(frozen=True)
class Worker:
    name: str
    gpu: str
    node: str


@dataclass(frozen=True)
class PlacementInstance(JobList):
    """S jobs, K workers (one GPU each), the S x K throughput matrix and the network."""

    name: str
    jobs: tuple[PlacementJob, ...]
    workers: tuple[Worker, ...]
    throughput: tuple[tuple[float, ...], ...]
    intra_node_gbps: float = 300.0
    inter_node_gbps: float = 10.0
    description: str = ""
    family: str = field(default="placement", init=False)

    def __post_init__(self) -> None:
        validate_placement(self, "<instance>")

    # --- sizes ---------------------------------------------------------------------------
    @property
    def num_workers(self) -> int:
        return len(self.workers)

    @cached_property
    def rho(self) -> np.ndarray:
        """Throughput matrix rho[i, k] in samples/s (a read-only copy)."""
        a = np.array(self.throughput, dtype=float)
        a.setflags(write=False)
        return a

    @cached_property
    def nodes(self) -> tuple[str, ...]:
        """Distinct node names in order of first appearance."""
        return tuple(dict.fromkeys(w.node for w in self.workers))

    @cached_property
    def node_index(self) -> np.ndarray:
        pos = {h: j for j, h in enumerate(self.nodes)}
        return np.array([pos[w.node] for w in self.workers], dtype=int)

    @property
    def work(self) -> np.ndarray:
        """T_i * |Pi_i|: samples processed by job i over its whole training."""
        return np.array([j.epochs * j.dataset_size for j in self.jobs], dtype=float)

    def comm_coefficient(self, i: int, spans_nodes: bool) -> float:
        """Seconds of Ring-AllReduce over the whole job per unit of 2(K_i - 1)/K_i.

        Eq. (6) x T_i: T_i * 2 (K_i - 1) D_i / (r_min K_i); this returns T_i D_i / r_min with
        r_min the inter-node rate if the job's workers span two or more nodes, else the
        intra-node rate (eq. 5 is a minimum over all pairs of the job's workers).
        """
        job = self.jobs[i]
        rate = self.inter_node_gbps if spans_nodes else self.intra_node_gbps
        return job.epochs * job.model_size_mb * BITS_PER_MB / (rate * BITS_PER_GBIT)

    def worker_groups(self) -> list[tuple[int, ...]]:
        """Groups of interchangeable workers: same node and same throughput column."""
        groups: dict[tuple[Any, ...], list[int]] = {}
        for k, w in enumerate(self.workers):
            key = (w.node, tuple(self.rho[:, k]))
            groups.setdefault(key, []).append(k)
        return [tuple(ks) for ks in groups.values()]


def validate_placement(inst: PlacementInstance, source: str) -> None:
    s, k = len(inst.jobs), len(inst.workers)
    if s == 0:
        raise InstanceError(source, "jobs", [], "at least one job is required")
    if k < s:
        raise InstanceError(
            source, "workers", k, f"fewer workers ({k}) than jobs ({s}): every job needs one"
        )
    if len(inst.throughput) != s:
        raise InstanceError(source, "throughput", len(inst.throughput), f"expected {s} rows")
    for i, row in enumerate(inst.throughput):
        number_list(row, source, f"jobs[{i}].throughput", k, LIMITS["throughput"])
    for i, j in enumerate(inst.jobs):
        check_integer(j.dataset_size, source, f"jobs[{i}].dataset_size", LIMITS["dataset_size"])
        check_number(j.model_size_mb, source, f"jobs[{i}].model_size_mb", LIMITS["model_size_mb"])
        if not isinstance(j.epochs, int):
            raise InstanceError(source, f"jobs[{i}].epochs", j.epochs, "expected an integer")
        check_integer(j.epochs, source, f"jobs[{i}].epochs", LIMITS["epochs"])
    check_number(inst.intra_node_gbps, source, "network.intra_node_gbps", LIMITS["gbps"])
    check_number(inst.inter_node_gbps, source, "network.inter_node_gbps", LIMITS["gbps"])
    if inst.inter_node_gbps > inst.intra_node_gbps:
        raise InstanceError(
            source,
            "network.inter_node_gbps",
            inst.inter_node_gbps,
            f"must not exceed intra_node_gbps ({inst.intra_node_gbps}): the ring bottleneck "
            "model assumes links inside a node are at least as fast",
        )
    unique_names([j.name for j in inst.jobs], source, "jobs")
    unique_names([w.name for w in inst.workers], source, "workers")
    _check_training_time(inst, source)


#: The longest computation time T_i |Pi_i| / rho a job may have on its slowest worker
#: (seconds, about 300 years): beyond it the solvers' double precision cannot resolve the
#: objective, and an exact route would certify noise.
MAX_TRAINING_SECONDS = 1e10


def _check_training_time(inst: PlacementInstance, source: str) -> None:
    for i, (j, row) in enumerate(zip(inst.jobs, inst.throughput, strict=True)):
        seconds = j.epochs * j.dataset_size / min(row)
        if seconds > MAX_TRAINING_SECONDS:
            raise InstanceError(
                source,
                f"jobs[{i}].epochs",
                j.epochs,
                f"epochs x dataset_size / slowest throughput = {seconds:.3g} s exceeds "
                f"{MAX_TRAINING_SECONDS:g} s: the objective cannot be solved to precision",
            )


def placement_from_dict(data: Any, source: str) -> PlacementInstance:
    r = Reader(data, source, fields=_FIELDS)
    name = r.string("name")
    workers = []
    for k, w in enumerate(r.array("workers")):
        wr = r.child("workers", w, k, fields=("name", "gpu", "node"))
        workers.append(
            Worker(
                name=wr.string("name", f"w{k}"),
                gpu=wr.string("gpu"),
                node=wr.string("node", "node0"),
            )
        )
    jobs_raw = r.array("jobs")
    if len(workers) < len(jobs_raw):
        raise InstanceError(
            source,
            "workers",
            len(workers),
            f"fewer workers ({len(workers)}) than jobs ({len(jobs_raw)}): every job needs one",
        )
    gpu_types = {w.gpu for w in workers}
    jobs, rows = [], []
    for i, j in enumerate(jobs_raw):
        jr = r.child("jobs", j, i, fields=_JOB_FIELDS)
        jobs.append(
            PlacementJob(
                name=jr.string("name"),
                dataset_size=float(jr.integer("dataset_size", LIMITS["dataset_size"])),
                epochs=jr.integer("epochs", LIMITS["epochs"]),
                model_size_mb=jr.number("model_size_mb", LIMITS["model_size_mb"], 0.0),
            )
        )
        tp = jr.raw("throughput")
        field_name = jr.field("throughput")
        if isinstance(tp, dict):  # keyed by GPU type
            check_keys(tp, gpu_types, source, field_name, "GPU type")
            missing = sorted(gpu_types - tp.keys())
            if missing:
                raise InstanceError(
                    source, field_name, tp, f"no throughput for GPU type '{missing[0]}'"
                )
            lim = LIMITS["throughput"]
            by_type = {g: check_number(v, source, f"{field_name}.{g}", lim) for g, v in tp.items()}
            rows.append(tuple(by_type[w.gpu] for w in workers))
        else:
            rows.append(number_list(tp, source, field_name, len(workers), LIMITS["throughput"]))
    nr = r.child("network", r.raw("network", {}), fields=("intra_node_gbps", "inter_node_gbps"))
    # Re-run the cross-field checks against the real file name.
    return built(
        source,
        PlacementInstance,
        name=name,
        jobs=tuple(jobs),
        workers=tuple(workers),
        throughput=tuple(rows),
        intra_node_gbps=nr.number("intra_node_gbps", LIMITS["gbps"], 300.0),
        inter_node_gbps=nr.number("inter_node_gbps", LIMITS["gbps"], 10.0),
        description=r.string("description", "", empty=True),
    )


def placement_to_dict(inst: PlacementInstance) -> dict[str, Any]:
    return {
        "family": "placement",
        "name": inst.name,
        "description": inst.description,
        "network": {
            "intra_node_gbps": inst.intra_node_gbps,
            "inter_node_gbps": inst.inter_node_gbps,
        },
        "workers": [{"name": w.name, "gpu": w.gpu, "node": w.node} for w in inst.workers],
        "jobs": [
            {
                "name": j.name,
                "dataset_size": j.dataset_size,
                "epochs": j.epochs,
                "model_size_mb": j.model_size_mb,
                "throughput": list(inst.throughput[i]),
            }
            for i, j in enumerate(inst.jobs)
        ],
    }
