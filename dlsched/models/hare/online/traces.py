"""Gavel's Philly-derived traces as online hare instances (seed 004).

A Gavel ``.trace`` file (one job per line: job type, command, steps argument, needs-data-dir,
total steps, arrival time in seconds, scale factor) is read by the online families' shared
reader (:func:`dlsched.online.traces.gavel_trace`: one-line errors naming the file, the line
and the column; each job's speeds on Gavel's three GPU types), and each job becomes a hare
job on a cluster of Gavel's three GPU types, with the per-type throughputs of Gavel's
``isolated_throughputs.json``:

- arrival a_n: the job's arrival time less the first one's (seconds); weight w_n = 1;
- tasks per round |D_n|: the scale factor k (one task per worker of the data-parallel job);
- D_x, the job's run on k GPUs of type x: total steps over the throughput of (job type, k)
  on x (that of one GPU when the file has none for k, or 0: the steps are then per GPU, as
  ddlwmp reads them, docs/errata.md);
- rounds |R_n| = ceil(D_v100 / ``round_s``), at least 1: the job's iterations taken in rounds
  of about ``round_s`` seconds of its V100 run (default :data:`ROUND_S`), so that a policy
  learns a job's size and revisits its priorities at a round's end, as in the paper;
- per task on a GPU of type x: training T^c = phi_x D_x / |R_n|, synchronization T^s =
  (1 - phi_x) D_x / |R_n|, phi_x = min(1, rate(k) / (k rate(1))) the scaling efficiency
  measured by Gavel (1 when the file gives no rate for k): one round on k GPUs of type x takes
  D_x / |R_n|, the job D_x in all, the measured figure; the workers hold their GPUs for the
  compute share only (Hare_Sched (8)), and the all-reduce slowdown is the synchronization.

The cluster (:data:`CLUSTER`) is 36 GPUs of each type, 108 in all, about as fast as ddlwmp's
64 V100s for Gavel's traces (a P100 runs Gavel's jobs at 0.5-2.3 and a K80 at 0.09-1.5 times
a V100's speed). docs/traces.md gives the mapping and the flow-time bound of every result.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import Any

from dlsched.errors import InstanceError
from dlsched.instances.validate import check_integer, check_number
from dlsched.models.hare.instance import LIMITS, HareInstance, HareJob
from dlsched.online.params import (
    GavelReader,
    parse_cluster,
    positive,
    seconds,
    skip_rows,
    trace_files,
)
from dlsched.online.rows import BadRows
from dlsched.online.traces import (
    CLUSTER,
    GPU_TYPES,
    GavelJob,
    Speeds,
    gavel_cluster,
    usable_jobs,
)

#: Seconds of a job's V100 run per round, by default.
ROUND_S = 3600.0
#: The generator's trace parameters (``--param``): see :func:`from_params`.
TRACE_PARAMS = ("trace", "throughputs", "limit", "round_s", "cluster", "skip_bad_rows")
#: Most tasks of a hare instance (rounds x tasks per round, summed).
MAX_TASKS = 10**6


def _job(g: GavelJob, sp: Speeds, types: list[str], round_s: float, name: str) -> HareJob:
    """The hare job of trace line ``g`` (arrival not yet shifted)."""
    rounds = max(1, math.ceil(g.steps * sp.scaled["v100"] / round_s - 1e-9))
    rnd = {t: g.steps * sec / rounds for t, sec in sp.scaled.items()}  # one round on k
    return HareJob(
        name=name,
        arrival=g.arrival,
        weight=1.0,
        rounds=rounds,
        tasks_per_round=g.scale,
        train_time=tuple(rnd[t] * sp.phi[t] for t in types),
        sync_time=tuple(rnd[t] * (1 - sp.phi[t]) for t in types),
    )


def _fits(trace: Path, line: int, job: HareJob) -> None:
    """An error naming the trace's line when ``job`` lies outside the family's ranges
    (:data:`~dlsched.models.hare.instance.LIMITS`): its arrival (less the first one's) in
    the column arrival, its rounds and times (from the steps) in the column total_steps."""
    src, where = str(trace), f"line {line}, column"
    check_number(job.arrival, src, f"{where} arrival", LIMITS["arrival"])
    steps = f"{where} total_steps"
    check_integer(job.rounds, src, steps, LIMITS["rounds"])
    for key in ("train_time", "sync_time"):
        for x in set(getattr(job, key)):
            check_number(x, src, f"{steps} ({key} of a round)", LIMITS[key])


def read_gavel(
    trace: Path,
    throughputs: Path,
    cluster: Mapping[str, int] | None = None,
    round_s: float = ROUND_S,
    limit: int | None = None,
    bad: BadRows | None = None,
) -> HareInstance:
    """A Gavel ``.trace`` file as an online hare instance (the first ``limit`` jobs by
    arrival when given) on ``cluster`` (GPUs per type, default :data:`CLUSTER`); each bad row
    (one out of the family's ranges too) refused or, as ``bad`` says, skipped and counted."""
    bad = BadRows() if bad is None else bad
    cluster = dict(CLUSTER if cluster is None else cluster)
    types = [t for t in GPU_TYPES for _ in range(cluster.get(t, 0))]
    gpus = tuple(f"{t}-{k}" for t in GPU_TYPES for k in range(cluster.get(t, 0)))

    def make(g: GavelJob, sp: Speeds, first: float, name: str) -> HareJob:
        return replace(_job(g, sp, types, round_s, name), arrival=g.arrival - first)

    jobs: list[HareJob] = []
    tasks = 0
    for line, job in usable_jobs(trace, throughputs, limit, bad, make, partial(_fits, trace)):
        tasks += job.rounds * job.tasks_per_round
        if tasks > MAX_TASKS:
            raise InstanceError(
                str(trace),
                f"line {line}",
                job.rounds,
                f"more than {MAX_TASKS:g} tasks in all: give a longer round_s than {round_s:g}",
            )
        jobs.append(job)
    about = f"{gavel_cluster(trace, cluster)}, rounds of {round_s:g} s"
    return HareInstance(
        name=Path(trace).stem, gpus=gpus, jobs=tuple(jobs), description=bad.noted(about)
    )


def from_params(gpus: int | None, params: Mapping[str, Any]) -> HareInstance:
    """The generator's trace mode (``--param trace=FILE``): ``trace`` (a Gavel ``.trace``
    file), ``throughputs`` (see :func:`~dlsched.online.params.trace_files`), ``limit`` (the
    first jobs by arrival), ``round_s`` (default :data:`ROUND_S`), ``cluster`` (``V:P:K`` GPUs
    of each type; by default ``gpus`` in thirds, or :data:`CLUSTER`), ``skip_bad_rows``
    (:func:`~dlsched.online.params.skip_rows`). The mapping draws nothing: every seed gives
    the same instance."""
    trace, tput = trace_files(params, TRACE_PARAMS)
    return read_gavel(
        trace,
        tput,
        parse_cluster(params.get("cluster"), gpus),
        seconds("round_s", params.get("round_s", ROUND_S)),
        positive("limit", params.get("limit")),
        skip_rows(params),
    )


#: The trace reader :mod:`dlsched.instances` asks for a trace given in place of an instance
#: file (on :data:`CLUSTER`) and for an instance file naming one, ``{"family": "hare", "name":
#: ..., "trace": {"path": ..., "throughputs": ..., "limit": ..., "round_s": ..., "cluster":
#: "36:36:36"}}``.
READER = GavelReader(TRACE_PARAMS, from_params)


__all__ = [
    "MAX_TASKS",
    "READER",
    "ROUND_S",
    "TRACE_PARAMS",
    "from_params",
    "read_gavel",
]
