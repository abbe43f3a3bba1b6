"""Instances of the placement family: job placement with proportional load balancing (P1).

Liu, Wang, Huang, Pan. *Sampling-Based Multi-Job Placement for Heterogeneous Deep Learning
Clusters*. IEEE TPDS 35(6), 2024.

Units (all fields of the JSON file):

- ``jobs[i].dataset_size``  |Pi_i|, samples per epoch
- ``jobs[i].epochs``        T_i, integer >= 1
- ``jobs[i].model_size_mb`` D_i, megabytes (1 MB = 8e6 bits) exchanged by Ring-AllReduce
- ``jobs[i].throughput``    rho[i, k], samples per second, either a list aligned with
  ``workers`` or an object keyed by GPU type
- ``network.intra_node_gbps`` / ``network.inter_node_gbps``  link rates in Gbit/s (1e9 bit/s)
- JCTs and every objective are in seconds.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import numpy as np

from dlsched.errors import InstanceError
from dlsched.instances.validate import Reader, check_number, number_list, unique_names

BITS_PER_MB = 8e6
BITS_PER_GBIT = 1e9


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
class PlacementInstance:
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
    def num_jobs(self) -> int:
        return len(self.jobs)

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
        if len(row) != k:
            raise InstanceError(
                source, f"jobs[{i}].throughput", list(row), f"expected {k} entries (one per worker)"
            )
        for kk, v in enumerate(row):
            check_number(v, source, f"jobs[{i}].throughput[{kk}]", positive=True)
    for i, j in enumerate(inst.jobs):
        check_number(j.dataset_size, source, f"jobs[{i}].dataset_size", positive=True)
        check_number(j.model_size_mb, source, f"jobs[{i}].model_size_mb", nonnegative=True)
        if isinstance(j.epochs, bool) or not isinstance(j.epochs, int) or j.epochs < 1:
            raise InstanceError(source, f"jobs[{i}].epochs", j.epochs, "must be an integer >= 1")
    check_number(inst.intra_node_gbps, source, "network.intra_node_gbps", positive=True)
    check_number(inst.inter_node_gbps, source, "network.inter_node_gbps", positive=True)
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


def placement_from_dict(data: Any, source: str) -> PlacementInstance:
    r = Reader(data, source)
    name = r.string("name")
    workers_raw = r.array("workers")
    workers = []
    for k, w in enumerate(workers_raw):
        wr = r.child("workers", w, k)
        workers.append(
            Worker(
                name=wr.string("name", f"w{k}"),
                gpu=wr.string("gpu"),
                node=str(wr.raw("node", "node0")),
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
    jobs, rows = [], []
    for i, j in enumerate(jobs_raw):
        jr = r.child("jobs", j, i)
        jobs.append(
            PlacementJob(
                name=jr.string("name"),
                dataset_size=jr.number("dataset_size", positive=True),
                epochs=jr.integer("epochs", minimum=1),
                model_size_mb=jr.number("model_size_mb", 0.0, nonnegative=True),
            )
        )
        tp = jr.raw("throughput")
        field_name = f"jobs[{i}].throughput"
        if isinstance(tp, dict):
            for gpu in {w.gpu for w in workers}:
                if gpu not in tp:
                    raise InstanceError(
                        source, field_name, tp, f"no throughput for GPU type '{gpu}'"
                    )
            row = tuple(
                check_number(tp[w.gpu], source, f"{field_name}.{w.gpu}", positive=True)
                for w in workers
            )
        else:
            row = number_list(tp, source, field_name, len(workers), positive=True)
        rows.append(row)
    net = r.raw("network", {})
    nr = r.child("network", net)
    inst_kwargs = dict(
        name=name,
        jobs=tuple(jobs),
        workers=tuple(workers),
        throughput=tuple(rows),
        intra_node_gbps=nr.number("intra_node_gbps", 300.0, positive=True),
        inter_node_gbps=nr.number("inter_node_gbps", 10.0, positive=True),
        description=str(r.raw("description", "")),
    )
    # Re-run the cross-field checks against the real file name.
    try:
        return PlacementInstance(**inst_kwargs)  # type: ignore[arg-type]
    except InstanceError as e:
        raise InstanceError(source, e.field, e.value, e.reason) from None


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
