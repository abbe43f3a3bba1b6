"""Gavel's Philly-derived traces as elastic instances (seed 003).

The trace is read by the online families' shared reader (:func:`dlsched.online.traces.
gavel_trace`: one-line errors naming the file, the line and the column; each job's speeds on
Gavel's three GPU types), and each job becomes an elastic job under Ring-AllReduce (Gavel's jobs are
data-parallel) on servers of one GPU type each:

- arrival a_j: the arrival time less the first one's, in slots of ``slot_s`` seconds (default
  six hours: the paper's horizons are 100-300 one-hour slots, a trace spans months; A_online
  prices every start of a job's window, so its time grows with the square of the slots),
  rounded up; weight w_j = 1;
- resources: one per GPU type (``v100``, ``p100``, ``k80``); each server holds
  ``gpus_per_server`` GPUs of one type (default 4; 36 GPUs of each type, as the hare family's
  cluster, are 9 servers of each); worker type m is one GPU of type m;
- at most D_j = k workers, the trace's scale factor (the job may run on fewer: elastic);
- v_jm: the seconds of one step on one GPU of type m, in slots; U_j, the Ring-AllReduce time:
  such that k colocated V100 workers run at Gavel's measured throughput of (job type, k):
  v + U (k - 1) / k = k x (seconds per step on k V100s), i.e. U = v (1 / phi - 1) k / (k - 1)
  with phi the measured scaling efficiency (0 when the file has no throughput for k, or for
  k = 1); the gradient pi_j is 0 (Gavel's throughputs do not separate the cost of spreading
  over servers);
- E_j D_j K_j mini-batches: the job's steps, k times them when the steps are per GPU (no
  throughput for k in the file), so that k colocated V100 workers run the job's measured time;
  E_j and K_j split them so that each count stays within the model's range (at most a job's
  D_j - 1 mini-batches more).

The horizon T is ``horizon`` slots, by default twice what a fluid schedule would need (the last
arrival, plus the jobs' least GPU-slots over the cluster's GPUs, plus the longest job's least
duration), at most 10,000 (the model's largest). docs/traces.md gives the mapping, and
:mod:`.flowbound` the flow-time bound of every result.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from dlsched.errors import InstanceError, OptionError
from dlsched.instances.validate import MAX_COUNT, check_integer, check_number
from dlsched.models.elastic.instance import (
    LIMITS,
    ElasticInstance,
    ElasticJob,
    NodeType,
    Server,
    most_workers,
)
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
    cluster_of,
    gavel_cluster,
    usable_jobs,
)

#: Seconds per slot by default: six hours.
SLOT_S = 21600.0
#: GPUs per server by default.
GPUS_PER_SERVER = 4
#: The largest horizon in slots the model accepts.
HORIZON = 10_000
#: NIC bandwidth of every worker, MB per second (10 Gbit/s); unused while pi_j = 0.
NIC_MB_S = 1250.0
#: The generator's trace parameters (``--param``): see :func:`from_params`.
TRACE_PARAMS = (
    "trace",
    "throughputs",
    "limit",
    "cluster",
    "slot_s",
    "horizon",
    "gpus_per_server",
    "skip_bad_rows",
)


def servers_of(cluster: Mapping[str, int], per_server: int) -> tuple[Server, ...]:
    """Servers of ``per_server`` GPUs of one type each (the last of a type holds the rest)."""
    out = []
    for k, gpu in enumerate(GPU_TYPES):
        left, h = cluster.get(gpu, 0), 0
        while left > 0:
            cap = [0.0] * len(GPU_TYPES)
            cap[k] = float(min(per_server, left))
            out.append(Server(f"{gpu}-{h}", tuple(cap)))
            left -= per_server
            h += 1
    return tuple(out)


def _split(total: int) -> tuple[int, int]:
    """(E, K) with E K >= total, each at most MAX_COUNT, E K - total < E."""
    epochs = max(1, math.ceil(total / MAX_COUNT))
    return epochs, max(1, math.ceil(total / epochs))


def _job(g: GavelJob, sp: Speeds, arrival: int, slot_s: float, name: str) -> ElasticJob:
    """The elastic job of trace line ``g``, arriving at slot ``arrival``."""
    one, phi, k = sp.one["v100"], sp.phi["v100"], g.scale
    total = max(1, round(k * g.steps * sp.scaled["v100"] * phi / one))
    epochs, batches = _split(math.ceil(total / k))
    reduce = one * (1 / phi - 1) * k / (k - 1) if k > 1 else 0.0
    return ElasticJob(
        name=name,
        arrival=arrival,
        weight=1.0,
        epochs=epochs,
        chunks=k,
        minibatches_per_chunk=batches,
        minibatch_time=tuple(sp.one[t] / slot_s for t in GPU_TYPES),
        gradient_mb=0.0,
        reduce_time=reduce / slot_s,
    )


def _fits(trace: Path, line: int, job: ElasticJob, horizon: int, slot_s: float) -> None:
    """An error naming the trace's line when ``job`` lies outside the family's ranges
    (:data:`~dlsched.models.elastic.instance.LIMITS`): its arrival in slots (before the
    horizon) in the column arrival, its counts and times in the columns they come from."""
    src, where = str(trace), f"line {line}, column"
    if job.arrival >= horizon:
        why = f"after the horizon of {horizon} slots of {slot_s:g} s: give a longer slot_s"
        raise InstanceError(src, f"{where} arrival", job.arrival, why)
    check_integer(job.chunks, src, f"{where} scale_factor", LIMITS["count"])
    for key in ("epochs", "minibatches_per_chunk"):
        check_integer(getattr(job, key), src, f"{where} total_steps ({key})", LIMITS["count"])
    for x in job.minibatch_time:
        what = f"{where} job_type (minibatch_time in slots)"
        check_number(x, src, what, LIMITS["positive_time"])
    check_number(job.reduce_time, src, f"{where} job_type (reduce_time)", LIMITS["time"])


def read_gavel(
    trace: Path,
    throughputs: Path,
    cluster: Mapping[str, int] | None = None,
    slot_s: float = SLOT_S,
    horizon: int | None = None,
    per_server: int = GPUS_PER_SERVER,
    limit: int | None = None,
    bad: BadRows | None = None,
) -> ElasticInstance:
    """A Gavel ``.trace`` file as an elastic instance (the first ``limit`` jobs by arrival
    when given) on ``cluster`` (GPUs per type, default :data:`~dlsched.online.traces.CLUSTER`,
    as for the hare family), over ``horizon`` slots (default :func:`fluid_horizon`'s); each
    bad row (one out of the family's ranges too) refused or, as ``bad`` says, skipped and
    counted."""
    bad = BadRows() if bad is None else bad
    cluster = dict(CLUSTER if cluster is None else cluster)

    def make(g: GavelJob, sp: Speeds, first: float, name: str) -> ElasticJob:
        return _job(g, sp, math.ceil((g.arrival - first) / slot_s - 1e-9), slot_s, name)

    def fits(line: int, job: ElasticJob) -> None:
        _fits(trace, line, job, horizon or HORIZON, slot_s)

    jobs = [job for _, job in usable_jobs(trace, throughputs, limit, bad, make, fits)]
    workers = tuple(
        NodeType(t, tuple(float(k == i) for i in range(len(GPU_TYPES))), NIC_MB_S * slot_s)
        for k, t in enumerate(GPU_TYPES)
    )
    about = f"{gavel_cluster(trace, cluster)}, {per_server} GPUs per server, slots of {slot_s:g} s"
    inst = ElasticInstance(
        name=Path(trace).stem,
        architecture="ring",
        horizon=horizon or HORIZON,
        resources=GPU_TYPES,
        servers=servers_of(cluster, per_server),
        worker_types=workers,
        ps_types=(),
        jobs=tuple(jobs),
        slot_seconds=slot_s,
        description=bad.noted(about),
    )
    return inst if horizon is not None else replace(inst, horizon=fluid_horizon(inst))


def fluid_horizon(inst: ElasticInstance) -> int:
    """Twice the last arrival plus the jobs' least worker-slots over the cluster's workers
    plus the longest least duration (:func:`.flowbound.least_use`), at most
    :data:`HORIZON`."""
    from dlsched.models.elastic.flowbound import least_use

    most = most_workers(inst)
    got = [least_use(inst, j, most) for j in range(inst.num_jobs)]
    work = math.fsum(float(u.min()) for _, u in got)
    fluid = max(j.arrival for j in inst.jobs) + work / max(1, sum(most)) + max(d for d, _ in got)
    return min(HORIZON, math.ceil(2 * fluid))


def _horizon(value: Any) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= HORIZON:
        raise OptionError("horizon", value, f"expected an integer from 1 to {HORIZON}")
    return value


def from_params(servers: int | None, params: Mapping[str, Any]) -> ElasticInstance:
    """The generator's trace mode (``--param trace=FILE``): ``trace``, ``throughputs``,
    ``limit``, ``cluster`` (GPUs per type) and ``skip_bad_rows`` as the hare family reads them
    (:mod:`dlsched.online.params`), by default ``servers`` servers in thirds of each type;
    ``gpus_per_server`` (default :data:`GPUS_PER_SERVER`), ``slot_s`` (default
    :data:`SLOT_S`), ``horizon`` (default :func:`fluid_horizon`'s). Every seed gives the same
    instance."""
    trace, tput = trace_files(params, TRACE_PARAMS)
    per = positive("gpus_per_server", params.get("gpus_per_server", GPUS_PER_SERVER))
    per = per or GPUS_PER_SERVER
    cluster = parse_cluster(params.get("cluster"), None)
    if params.get("cluster") is None and servers is not None:
        cluster = {t: n * per for t, n in cluster_of(servers).items()}
    return read_gavel(
        trace,
        tput,
        cluster,
        seconds("slot_s", params.get("slot_s", SLOT_S), 1.0),
        _horizon(params.get("horizon")),
        per,
        positive("limit", params.get("limit")),
        skip_rows(params),
    )


#: How :mod:`dlsched.instances` reads a trace file (the defaults of :func:`from_params`) or an
#: instance file naming one: ``{"family": "elastic", "name": ..., "trace": {"path": ...,
#: PARAMETER: ...}}``, the parameters of :func:`from_params`.
READER = GavelReader(TRACE_PARAMS, from_params)


__all__ = [
    "GPUS_PER_SERVER",
    "HORIZON",
    "READER",
    "SLOT_S",
    "TRACE_PARAMS",
    "fluid_horizon",
    "from_params",
    "read_gavel",
    "servers_of",
]
