"""Instances of the elastic family: resource-elastic ML jobs on a cluster of servers.

Zhou, Pang, Zhang, Wu, Jiao, Zhong, Li. *Online Scheduling Algorithm for Heterogeneous
Distributed Machine Learning Jobs*, IEEE TCC, Sections 3 (parameter server) and 6
(Ring-AllReduce).

Units. Time is counted in slots (``slot_seconds`` long; informative only): ``horizon`` T,
``arrival`` a_j, ``minibatch_time`` v_jm, ``ps_update_time`` U_j^p and ``reduce_time`` U_j are
in slots. ``gradient_mb`` pi_j is in MB and every ``bandwidth`` (b_m, B_p) in MB per slot, so
that pi_j / b_m is in slots. Capacities C_h^r and demands e_m^r, z_p^r are in any unit per
resource (GPUs, vCPUs, GB), the same for a resource everywhere; a demand may omit a resource
(zero). A resource named ``gpu`` (or ``gpus``, any case) counts whole GPUs: its capacities and
demands are integers (:data:`WHOLE`).

A job trains E_j (``epochs``) passes over D_j (``chunks``) chunks of K_j
(``minibatches_per_chunk``) mini-batches: E_j D_j K_j mini-batches in all, with at most D_j
workers (2g). Its per-worker speed rho (mini-batches per slot) is eq. (1) for the parameter
server architecture and eq. (14) for Ring-AllReduce; :func:`iteration_time` is the one place of
both formulas and :func:`duration` the one place of (2f).

Start times are slot indices 0 .. T-1; a job started at t for d slots occupies slots t .. t+d-1
and completes at t + d <= T (docs/errata.md).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from dlsched.errors import InstanceError
from dlsched.instances.base import JobList
from dlsched.instances.validate import COUNT, Range, Reader, check_keys, unique_names

ARCHITECTURES = ("ps", "ring")
#: Resources counted in whole units (GPUs cannot be split): integer capacities and demands.
WHOLE = ("gpu", "gpus")

#: Relative slack of the completion requirement (2f): d n rho >= E D K holds when
#: d n rho >= E D K (1 - SPEED_TOL), so that 15 slots of 1.5e-4-slot iterations do 100,000.
SPEED_TOL = 1e-9

LIMITS = {
    "horizon": Range(1, 10_000),
    "arrival": Range(0, 10_000),
    "weight": Range(1e-6, 1e6),
    "count": COUNT,
    "time": Range(0, 1e6),
    "positive_time": Range(1e-9, 1e6),
    "amount": Range(0, 1e9),
    "bandwidth": Range(1e-9, 1e12),
    "gradient": Range(0, 1e9),
    "slot_seconds": Range(1e-6, 1e9),
}

_FIELDS = (
    "family",
    "name",
    "description",
    "architecture",
    "horizon",
    "slot_seconds",
    "resources",
    "servers",
    "worker_types",
    "ps_types",
    "jobs",
)
_JOB_FIELDS = (
    "name",
    "arrival",
    "weight",
    "epochs",
    "chunks",
    "minibatches_per_chunk",
    "minibatch_time",
    "gradient_mb",
    "ps_update_time",
    "reduce_time",
)


@dataclass(frozen=True)
class Server:
    name: str
    capacity: tuple[float, ...]  # C_h^r, aligned with ``resources``


@dataclass(frozen=True)
class NodeType:
    """A worker type (e_m^r, b_m) or a parameter-server type (z_p^r, B_p)."""

    name: str
    demand: tuple[float, ...]
    bandwidth: float


@dataclass(frozen=True)
class ElasticJob:
    name: str
    arrival: int
    weight: float
    epochs: int
    chunks: int
    minibatches_per_chunk: int
    minibatch_time: tuple[float, ...]  # v_jm per worker type (slots)
    gradient_mb: float  # pi_j
    ps_update_time: tuple[float, ...] = ()  # U_j^p per PS type (slots), PS architecture
    reduce_time: float = 0.0  # U_j (slots), Ring-AllReduce

    @property
    def minibatches(self) -> int:
        """E_j D_j K_j."""
        return self.epochs * self.chunks * self.minibatches_per_chunk


@dataclass(frozen=True)
class ElasticInstance(JobList):
    name: str
    architecture: str
    horizon: int
    resources: tuple[str, ...]
    servers: tuple[Server, ...]
    worker_types: tuple[NodeType, ...]
    ps_types: tuple[NodeType, ...]
    jobs: tuple[ElasticJob, ...]
    slot_seconds: float = 3600.0
    description: str = ""
    family: str = field(default="elastic", init=False)

    @property
    def num_servers(self) -> int:
        return len(self.servers)

    @property
    def is_ps(self) -> bool:
        return self.architecture == "ps"

    def ps_choices(self) -> range:
        """PS type indices (a single placeholder 0 under Ring-AllReduce)."""
        return range(len(self.ps_types)) if self.is_ps else range(1)


def iteration_time(inst: ElasticInstance, j: int, m: Any, p: Any, workers: Any, q: bool) -> Any:
    """1 / rho: slots per mini-batch of one worker, eq. (1) (PS) or eq. (14) (Ring-AllReduce).

    ``q`` is True when all workers (and PSs) of the job share one server. ``m``, ``p`` and
    ``workers`` may be numpy arrays (broadcast together).
    """
    job = inst.jobs[j]
    b = np.array([t.bandwidth for t in inst.worker_types])[m]
    v = np.array(job.minibatch_time)[m]
    if inst.is_ps:
        assert p is not None
        t = v + np.array(job.ps_update_time)[p]
        return t if q else t + 2 * job.gradient_mb / b
    share = (workers - 1) / workers
    t = v + job.reduce_time * share
    return t if q else t + 2 * job.gradient_mb * share / b


def durations(inst: ElasticInstance, j: int, m: Any, p: Any, workers: Any, q: bool) -> np.ndarray:
    """The fewest slots d with d * workers * rho >= E_j D_j K_j (2f), at least 1, for every
    worker count of ``workers`` at once (``m``, ``p`` and ``workers`` broadcast together)."""
    n = np.asarray(workers, dtype=float)
    need = inst.jobs[j].minibatches * iteration_time(inst, j, m, p, n, q) / n
    return np.maximum(1, np.ceil(need * (1 - SPEED_TOL))).astype(int)


def least_durations(inst: ElasticInstance, j: int, most: list[int]) -> list[np.ndarray]:
    """Per worker type m: d_j(m, n) of :func:`durations` for n = 1 .. min(D_j, ``most[m]``)
    (empty when none), every worker colocated (q = 1), the least over the PS types: one
    broadcast of types, PS types and worker counts."""
    tops = [min(inst.jobs[j].chunks, n_max) for n_max in most]
    if not tops or not len(inst.ps_choices()):
        return [np.zeros(0, dtype=int) for _ in tops]
    n = np.arange(1, max([1, *tops]) + 1)
    m = np.arange(len(most))[:, None, None]
    p = np.array(inst.ps_choices())[None, :, None] if inst.is_ps else None
    d = durations(inst, j, m, p, n[None, None, :], True).min(axis=1)  # [M, n]
    return [d[k, : max(0, top)] for k, top in enumerate(tops)]


def duration(inst: ElasticInstance, j: int, m: int, p: int | None, workers: int, q: bool) -> int:
    """:func:`durations` of one worker count."""
    return int(durations(inst, j, m, p, np.array([workers]), q)[0])


def completes(
    inst: ElasticInstance, j: int, m: int, p: int | None, workers: int, q: bool, d: int
) -> bool:
    """(2f): d slots of ``workers`` workers train every mini-batch."""
    rate = workers / iteration_time(inst, j, m, p, workers, q)
    return d * rate >= inst.jobs[j].minibatches * (1 - SPEED_TOL)


def most_workers(inst: ElasticInstance) -> list[int]:
    """N_m: the most type-m workers the empty cluster holds at once."""
    cap = np.array([s.capacity for s in inst.servers], dtype=float)
    out = []
    for t in inst.worker_types:
        e = np.array(t.demand)
        pos = e > 0
        per = np.floor(cap[:, pos] / e[pos] + 1e-9).min(axis=1) if pos.any() else np.inf
        out.append(int(min(np.sum(per), 10**9)))
    return out


# --- reading and writing ------------------------------------------------------------------


def _amounts(r: Reader, key: str, resources: tuple[str, ...], *, complete: bool) -> tuple:
    raw = r.raw(key)
    name = r.field(key)
    if not isinstance(raw, dict):
        raise InstanceError(r.source, name, raw, "expected an object {resource: amount}")
    check_keys(raw, resources, r.source, name, "resource")
    if complete:
        missing = [x for x in resources if x not in raw]
        if missing:
            raise InstanceError(r.source, name, raw, f"no capacity for resource '{missing[0]}'")
    sub = r.child(key, raw, fields=resources)
    return tuple(
        float(sub.integer(x, LIMITS["amount"], 0))
        if x.lower() in WHOLE
        else sub.number(x, LIMITS["amount"], 0.0)
        for x in resources
    )


def _per_type(r: Reader, key: str, types: tuple[NodeType, ...], rng: Range) -> tuple:
    raw = r.raw(key)
    name = r.field(key)
    names = tuple(t.name for t in types)
    if not isinstance(raw, dict):
        raise InstanceError(r.source, name, raw, "expected an object {type name: slots}")
    check_keys(raw, names, r.source, name, "type")
    missing = [x for x in names if x not in raw]
    if missing:
        raise InstanceError(r.source, name, raw, f"no value for type '{missing[0]}'")
    sub = r.child(key, raw, fields=names)
    return tuple(sub.number(x, rng) for x in names)


def _node_types(r: Reader, key: str, resources: tuple[str, ...]) -> tuple:
    items = r.array(key)
    out = []
    for k, item in enumerate(items):
        c = r.child(key, item, k, fields=("name", "demand", "bandwidth"))
        out.append(
            NodeType(
                c.string("name"),
                _amounts(c, "demand", resources, complete=False),
                c.number("bandwidth", LIMITS["bandwidth"]),
            )
        )
    unique_names([t.name for t in out], r.source, key)
    return tuple(out)


def _job(jr: Reader, inst_arch: str, horizon: int, workers: tuple, ps: tuple) -> ElasticJob:
    arrival = jr.integer("arrival", LIMITS["arrival"], 0)
    if arrival >= horizon:
        raise jr.fail("arrival", arrival, f"must be before the horizon ({horizon} slots)")
    is_ps = inst_arch == "ps"
    if is_ps and "reduce_time" in jr.data:
        raise jr.fail("reduce_time", jr.data["reduce_time"], "only for architecture 'ring'")
    if not is_ps and "ps_update_time" in jr.data:
        raise jr.fail("ps_update_time", jr.data["ps_update_time"], "only for architecture 'ps'")
    return ElasticJob(
        name=jr.string("name"),
        arrival=arrival,
        weight=jr.number("weight", LIMITS["weight"], 1.0),
        epochs=jr.integer("epochs", LIMITS["count"]),
        chunks=jr.integer("chunks", LIMITS["count"]),
        minibatches_per_chunk=jr.integer("minibatches_per_chunk", LIMITS["count"]),
        minibatch_time=_per_type(jr, "minibatch_time", workers, LIMITS["positive_time"]),
        gradient_mb=jr.number("gradient_mb", LIMITS["gradient"]),
        ps_update_time=_per_type(jr, "ps_update_time", ps, LIMITS["time"]) if is_ps else (),
        reduce_time=jr.number("reduce_time", LIMITS["time"]) if not is_ps else 0.0,
    )


def elastic_from_dict(data: Any, source: str) -> ElasticInstance:
    r = Reader(data, source, fields=_FIELDS)
    arch = r.string("architecture")
    if arch not in ARCHITECTURES:
        raise r.fail("architecture", arch, "expected 'ps' or 'ring'")
    horizon = r.integer("horizon", LIMITS["horizon"])
    resources = tuple(r.array("resources"))
    for k, x in enumerate(resources):
        if not isinstance(x, str) or not x:
            raise InstanceError(source, f"resources[{k}]", x, "expected a non-empty string")
    if len(set(resources)) != len(resources):
        raise r.fail("resources", list(resources), "duplicate resource name")
    servers = []
    for k, s in enumerate(r.array("servers")):
        c = r.child("servers", s, k, fields=("name", "capacity"))
        servers.append(Server(c.string("name"), _amounts(c, "capacity", resources, complete=True)))
    unique_names([s.name for s in servers], source, "servers")
    workers = _node_types(r, "worker_types", resources)
    if arch == "ps":
        ps = _node_types(r, "ps_types", resources)
    else:
        if r.raw("ps_types", []):
            raise r.fail("ps_types", r.raw("ps_types"), "Ring-AllReduce has no parameter servers")
        ps = ()
    jobs = [
        _job(r.child("jobs", j, i, fields=_JOB_FIELDS), arch, horizon, workers, ps)
        for i, j in enumerate(r.array("jobs"))
    ]
    unique_names([j.name for j in jobs], source, "jobs")
    return ElasticInstance(
        name=r.string("name"),
        architecture=arch,
        horizon=horizon,
        resources=resources,
        servers=tuple(servers),
        worker_types=workers,
        ps_types=ps,
        jobs=tuple(jobs),
        slot_seconds=r.number("slot_seconds", LIMITS["slot_seconds"], 3600.0),
        description=r.string("description", "", empty=True),
    )


def _by_name(names: Any, values: tuple[float, ...]) -> dict[str, float]:
    return {n: v for n, v in zip(names, values, strict=True) if v}


def elastic_to_dict(inst: ElasticInstance) -> dict[str, Any]:
    res = inst.resources

    def node(t: NodeType) -> dict[str, Any]:
        return {"name": t.name, "demand": _by_name(res, t.demand), "bandwidth": t.bandwidth}

    def job(j: ElasticJob) -> dict[str, Any]:
        d: dict[str, Any] = {
            "name": j.name,
            "arrival": j.arrival,
            "weight": j.weight,
            "epochs": j.epochs,
            "chunks": j.chunks,
            "minibatches_per_chunk": j.minibatches_per_chunk,
            "minibatch_time": dict(
                zip((w.name for w in inst.worker_types), j.minibatch_time, strict=True)
            ),
            "gradient_mb": j.gradient_mb,
        }
        if inst.is_ps:
            d["ps_update_time"] = dict(
                zip((p.name for p in inst.ps_types), j.ps_update_time, strict=True)
            )
        else:
            d["reduce_time"] = j.reduce_time
        return d

    out: dict[str, Any] = {
        "family": "elastic",
        "name": inst.name,
        "description": inst.description,
        "architecture": inst.architecture,
        "horizon": inst.horizon,
        "slot_seconds": inst.slot_seconds,
        "resources": list(res),
        "servers": [
            {"name": s.name, "capacity": dict(zip(res, s.capacity, strict=True))}
            for s in inst.servers
        ],
        "worker_types": [node(t) for t in inst.worker_types],
        "ps_types": [node(t) for t in inst.ps_types],
        "jobs": [job(j) for j in inst.jobs],
    }
    return out
