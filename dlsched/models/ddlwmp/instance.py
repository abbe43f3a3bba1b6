"""Instances of the ddlwmp family: DDL jobs with mixed parallelism on a GPU cluster (seed 001).

Luo, Liu, Lee, Shroff. *Prediction-Assisted Online Distributed Deep Learning Workload Scheduling
in GPU Clusters*, Section III.

Units (every field of the JSON format):

- ``cluster.servers`` M and ``cluster.gpus_per_server`` g are counts; ``inter_gbps`` (the NIC
  of a server, B_inter) and ``intra_gbps`` (the GPU interconnect inside a server, B_intra) are in
  gigabits per second (the paper's 300 GB/s NVLink is 2400 Gbit/s);
- ``cluster.slot_s`` is the length of one time slot in seconds (default 1): the system is
  time-slotted (Section III), so releases and start times are whole slots;
- ``cluster.slots`` (optional) is how the slots are numbered: ``"from-1"`` (the default, the
  paper's [T] = {1, ..., T}, footnote 1: a job released in the first slot has r_i = 1) or
  ``"from-0"``; times in the file count from the beginning of the first slot, and the
  objective (8) counts each t_i from the first slot's number (:attr:`Cluster.first_slot_s`);
- ``cluster.occupied`` (optional) lists GPUs already busy per server: only the mapping methods
  (``mapping-exact``, ``heavy-edge``) read it;
- ``jobs[].release`` r_i is in seconds (a multiple of the slot); ``iterations`` n_i and
  ``predicted_iterations`` n~_i (optional, defaults to n_i) are counts; ``group`` and ``user``
  (optional) are strings, the ids the predictors learn from;
- ``stages[].forward_ms`` / ``backward_ms`` p^f, p^b are milliseconds per mini-batch per
  replica; ``activation_in_mb`` / ``activation_out_mb`` d^in, d^out and ``params_mb`` h are
  megabytes (10^6 bytes) per replica.

A megabyte over one Gbit/s takes 8 ms (:data:`MS_PER_MB_PER_GBPS`).

Large instances are written in the compact form (:mod:`.columnar`): each distinct profile
(model, AllReduce, stages) once in ``profiles``, and ``jobs`` an object of columns (``name``,
``release``, ``iterations``, ``profile``, and ``predicted_iterations``, ``group``, ``user``
when any job has one), in JSON or as a Parquet file. Both forms read into the same jobs
(:func:`.forms.ddlwmp_from_dict` reads every form; this module the full one).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from dlsched.errors import InstanceError
from dlsched.instances.base import JobList
from dlsched.instances.validate import RESOLUTION, Range, Reader, check_integer, unique_names

#: milliseconds to move one megabyte (8e6 bits) over one gigabit per second
MS_PER_MB_PER_GBPS = 8.0

LIMITS = {
    "servers": Range(1, 100_000),
    "gpus_per_server": Range(1, 1024),
    "gbps": Range(RESOLUTION, 1e9),
    "slot_s": Range(RESOLUTION, 1e9),
    "release": Range(0, 1e12),
    "iterations": Range(1, 1e12),
    "predicted_iterations": Range(0, 1e12),
    "replicas": Range(1, 1024),
    "ms": Range(0, 1e9),
    "mb": Range(0, 1e9),
}
#: the fields of an instance file (:mod:`.forms` reads them)
FIELDS = ("family", "name", "description", "cluster", "jobs", "profiles", "trace")
_CLUSTER = ("servers", "gpus_per_server", "inter_gbps", "intra_gbps", "slot_s", "slots", "occupied")
#: How the slots of [T] are numbered: from 1 as the paper does (footnote 1: "We use [X] to
#: denote the set {1, 2, ..., X}"; r_i, t_i in [T]), or from 0 (docs/errata.md, E6 and V-11).
SLOTS = ("from-1", "from-0")
_JOB = (
    "name",
    "release",
    "iterations",
    "predicted_iterations",
    "group",
    "user",
    "allreduce",
    "stages",
    "model",
)
#: the fields of one stage of a job
STAGE_FIELDS = (
    "replicas",
    "forward_ms",
    "backward_ms",
    "activation_in_mb",
    "activation_out_mb",
    "params_mb",
)
ALLREDUCE = ("ring", "tree")
#: relative tolerance of the identity k_{s-1} d^out_{s-1} = k_s d^in_s and of slot alignment
REL_TOL = 1e-9


@dataclass(frozen=True)
class Stage:
    replicas: int
    forward_ms: float
    backward_ms: float
    activation_in_mb: float
    activation_out_mb: float
    params_mb: float


@dataclass(frozen=True)
class Cluster:
    servers: int
    gpus_per_server: int
    inter_gbps: float
    intra_gbps: float
    slot_s: float = 1.0
    occupied: tuple[int, ...] = ()
    slots: str = SLOTS[0]

    @property
    def total_gpus(self) -> int:
        return self.servers * self.gpus_per_server

    @property
    def first_slot_s(self) -> float:
        """The time of the first slot in (8)'s sum_i (t_i + n_i alpha_i): its number (1 in the
        paper's [T] = {1, ..., T}, 0 with ``slots="from-0"``) times the slot length. A job
        starting ``x`` seconds after the beginning of the first slot has t_i = first_slot_s +
        x; releases, starts and completions all move by it, so no schedule changes, only the
        completion times counted (flow times C_i - r_i do not change either)."""
        return self.slot_s if self.slots == "from-1" else 0.0

    def free(self) -> tuple[int, ...]:
        """Free GPUs per server for the mapping methods."""
        occ = self.occupied or (0,) * self.servers
        return tuple(self.gpus_per_server - o for o in occ)


@dataclass(frozen=True, slots=True)
class Job:
    name: str
    release: float
    iterations: int
    stages: tuple[Stage, ...]
    allreduce: str = "ring"
    group: str = ""
    user: str = ""
    predicted_iterations: int | None = None
    model: str = ""

    @property
    def gpus(self) -> int:
        """g_i = sum_s k_{i,s}."""
        return sum(s.replicas for s in self.stages)

    @property
    def predicted(self) -> int:
        """n~_i (the true n_i when no prediction is given)."""
        return self.iterations if self.predicted_iterations is None else self.predicted_iterations


@dataclass(frozen=True)
class DdlwmpInstance(JobList):
    name: str
    cluster: Cluster
    jobs: tuple[Job, ...]
    description: str = ""
    family: str = field(default="ddlwmp", init=False)

    def slot_of(self, seconds: float) -> int:
        """The slot index of a time that lies on the slot grid."""
        return round(seconds / self.cluster.slot_s)

    @functools.cached_property
    def shapes(self) -> Shapes:
        """The jobs' distinct (stages, AllReduce) shapes, computed once per instance."""
        return shapes_of(self.jobs)


@dataclass(frozen=True)
class Shapes:
    """``of_job[i]``: the index of job i's (stages, allreduce) among the distinct ones, in
    order of first appearance; ``first[k]``: the first job of shape k; ``gpus[k]``: its g_i."""

    of_job: np.ndarray
    first: tuple[int, ...]
    gpus: np.ndarray


def shapes_of(jobs: tuple[Job, ...]) -> Shapes:
    """Group the jobs by (stages, allreduce): by the stages object first (jobs read from a
    catalogue share it), by value when a new object comes."""
    by_id: dict[tuple[int, str], int] = {}
    by_value: dict[tuple[tuple[Stage, ...], str], int] = {}
    first: list[int] = []
    of_job: list[int] = []
    for i, j in enumerate(jobs):
        k = by_id.get((id(j.stages), j.allreduce))
        if k is None:
            k = by_value.setdefault((j.stages, j.allreduce), len(by_value))
            by_id[id(j.stages), j.allreduce] = k
            if k == len(first):
                first.append(i)
        of_job.append(k)
    gpus = np.array([jobs[i].gpus for i in first], dtype=np.int64)
    return Shapes(np.array(of_job, dtype=np.int64), tuple(first), gpus)


def read_stage(r: Reader) -> Stage:
    """One stage of a job, read and checked field by field."""
    return Stage(
        replicas=r.integer("replicas", LIMITS["replicas"]),
        forward_ms=r.number("forward_ms", Range(RESOLUTION, 1e9)),
        backward_ms=r.number("backward_ms", LIMITS["ms"]),
        activation_in_mb=r.number("activation_in_mb", LIMITS["mb"]),
        activation_out_mb=r.number("activation_out_mb", LIMITS["mb"]),
        params_mb=r.number("params_mb", LIMITS["mb"]),
    )


def _job(r: Reader, seen: dict[tuple[Stage, ...], tuple[Stage, ...]]) -> Job:
    """One job of the full form; equal stage tables are kept once (``seen``)."""
    stages = tuple(
        read_stage(r.child("stages", s, k, fields=STAGE_FIELDS))
        for k, s in enumerate(r.array("stages"))
    )
    kind = r.string("allreduce", "ring")
    if kind not in ALLREDUCE:
        raise r.fail("allreduce", kind, f"expected one of {', '.join(ALLREDUCE)}")
    pred = r.raw("predicted_iterations", None)
    return Job(
        name=r.string("name"),
        release=r.number("release", LIMITS["release"]),
        iterations=r.integer("iterations", LIMITS["iterations"]),
        stages=seen.setdefault(stages, stages),
        allreduce=kind,
        group=r.string("group", "", empty=True),
        user=r.string("user", "", empty=True),
        predicted_iterations=None
        if pred is None
        else r.integer("predicted_iterations", LIMITS["predicted_iterations"]),
        model=r.string("model", "", empty=True),
    )


def _cluster(r: Reader) -> Cluster:
    servers = r.integer("servers", LIMITS["servers"])
    g = r.integer("gpus_per_server", LIMITS["gpus_per_server"])
    occ_raw = r.raw("occupied", None)
    occupied: tuple[int, ...] = ()
    if occ_raw is not None:
        if not isinstance(occ_raw, list) or len(occ_raw) != servers:
            raise r.fail("occupied", occ_raw, f"expected a JSON array of {servers} integers")
        occupied = tuple(
            check_integer(v, r.source, f"{r.field('occupied')}[{m}]", Range(0, g))
            for m, v in enumerate(occ_raw)
        )
    return Cluster(
        servers=servers,
        gpus_per_server=g,
        inter_gbps=r.number("inter_gbps", LIMITS["gbps"]),
        intra_gbps=r.number("intra_gbps", LIMITS["gbps"]),
        slot_s=r.number("slot_s", LIMITS["slot_s"], 1.0),
        occupied=occupied,
        slots=_slots(r),
    )


def _slots(r: Reader) -> str:
    slots = r.string("slots", SLOTS[0])
    if slots not in SLOTS:
        raise r.fail("slots", slots, f"expected one of {', '.join(SLOTS)}")
    return slots


def validate(inst: DdlwmpInstance, source: str) -> None:
    """Cross-field rules: jobs fit the (free) cluster, releases on the slot grid, and the
    activation identity k_{s-1} d^out_{s-1} = k_s d^in_s of Section III-B. Each rule is
    tested on every job at once (the stage rules once per shape); the first job that breaks
    one is then reported by :func:`_validate_job`."""
    if not inst.jobs:
        return
    c, shapes = inst.cluster, inst.shapes
    free = sum(c.free())
    cap = free if c.occupied else c.total_gpus
    shape_bad = np.array(
        [
            inst.jobs[i].gpus > cap or _activation_error(inst.jobs[i]) is not None
            for i in shapes.first
        ],
        dtype=bool,
    )
    k = np.array([j.release for j in inst.jobs], dtype=float) / c.slot_s
    off = np.abs(k - np.round(k)) > REL_TOL * np.maximum(1.0, np.abs(k))
    bad = np.flatnonzero(shape_bad[shapes.of_job] | off)
    if len(bad):
        _validate_job(inst, int(bad[0]), source, free)


def _activation_error(job: Job) -> tuple[int, float, float] | None:
    """The first stage s whose k_(s-1) d_out_(s-1) differs from k_s d_in_s: (s, out, in)."""
    for s in range(1, len(job.stages)):
        a, b = job.stages[s - 1], job.stages[s]
        out, inn = a.replicas * a.activation_out_mb, b.replicas * b.activation_in_mb
        if abs(out - inn) > REL_TOL * max(1.0, out, inn):
            return s, out, inn
    return None


def _validate_job(inst: DdlwmpInstance, i: int, source: str, free: int) -> None:
    """The rules of :func:`validate` on job i, raising the first it breaks."""
    c, job, where = inst.cluster, inst.jobs[i], f"jobs[{i}]"
    if job.gpus > c.total_gpus:
        raise InstanceError(
            source,
            f"{where}.stages",
            job.gpus,
            f"the job needs this many GPUs, more than the cluster's {c.total_gpus}",
        )
    if c.occupied and job.gpus > free:
        raise InstanceError(
            source, "cluster.occupied", list(c.occupied), f"{where} needs {job.gpus} GPUs"
        )
    k = job.release / c.slot_s
    if abs(k - round(k)) > REL_TOL * max(1.0, abs(k)):
        raise InstanceError(
            source, f"{where}.release", job.release, f"must be a multiple of slot_s={c.slot_s}"
        )
    wrong = _activation_error(job)
    if wrong is not None:
        s, out, inn = wrong
        raise InstanceError(
            source,
            f"{where}.stages[{s}].activation_in_mb",
            job.stages[s].activation_in_mb,
            f"k_(s-1) d_out_(s-1) = {out:g} MB must equal k_s d_in_s = {inn:g} MB",
        )


def read_head(data: Any, source: str) -> tuple[Reader, Cluster]:
    """The reader of a ddlwmp instance file (its fields, its family checked) and its cluster;
    :func:`dlsched.models.ddlwmp.forms.ddlwmp_from_dict` reads the jobs in the file's form."""
    r = Reader(data, source, fields=FIELDS)
    family = r.string("family")
    if family != "ddlwmp":
        raise r.fail("family", family, "expected 'ddlwmp'")
    return r, _cluster(r.child("cluster", r.raw("cluster"), fields=_CLUSTER))


def full_jobs(r: Reader) -> tuple[Job, ...]:
    """The jobs of the full form (a JSON array of jobs, each with its stage table)."""
    seen: dict[tuple[Stage, ...], tuple[Stage, ...]] = {}
    return tuple(
        _job(r.child("jobs", j, k, fields=_JOB), seen) for k, j in enumerate(r.array("jobs"))
    )


def build(r: Reader, cluster: Cluster, jobs: tuple[Job, ...], source: str) -> DdlwmpInstance:
    """The instance of file ``r`` with these jobs, checked (:func:`validate`)."""
    unique_names([j.name for j in jobs], source, "jobs")
    inst = DdlwmpInstance(r.string("name"), cluster, jobs, r.string("description", "", empty=True))
    validate(inst, source)
    return inst


def stage_dict(s: Stage) -> dict[str, Any]:
    """A stage's JSON form: its fields, in their order (the dataclass is their one list)."""
    return dict(vars(s))


def _job_dict(j: Job) -> dict[str, Any]:
    d: dict[str, Any] = {"name": j.name, "release": j.release, "iterations": j.iterations}
    if j.predicted_iterations is not None:
        d["predicted_iterations"] = j.predicted_iterations
    d.update(group=j.group, user=j.user, allreduce=j.allreduce)
    if j.model:
        d["model"] = j.model
    d["stages"] = [stage_dict(s) for s in j.stages]
    return d


def ddlwmp_to_dict(inst: DdlwmpInstance) -> dict[str, Any]:
    c = inst.cluster
    cluster: dict[str, Any] = {
        "servers": c.servers,
        "gpus_per_server": c.gpus_per_server,
        "inter_gbps": c.inter_gbps,
        "intra_gbps": c.intra_gbps,
        "slot_s": c.slot_s,
    }
    if c.slots != SLOTS[0]:
        cluster["slots"] = c.slots
    if c.occupied:
        cluster["occupied"] = list(c.occupied)
    out: dict[str, Any] = {"family": "ddlwmp", "name": inst.name}
    if inst.description:
        out["description"] = inst.description
    out["cluster"] = cluster
    out["jobs"] = [_job_dict(j) for j in inst.jobs]
    return out
