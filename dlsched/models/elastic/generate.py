"""Random elastic instances: a small setting for exact routes, and Section 7's setting.

``generate(jobs, workers, seed, **params)``: ``workers`` is the number of servers H. Params:

- ``setting``: ``small`` (default) or ``paper``;
- ``horizon``: T in slots (small: default 12; paper: default 300, the top of the paper's
  range 100-300);
- ``architecture``: ``ps`` (default) or ``ring``.

*small*: two resources (GPU, vCPU), servers of 1-2 GPUs and 4-8 vCPUs, two worker and two PS
types, integer weights 1-3, arrivals in the first third of T, at most 3 workers per job (D_j),
single-worker times of 2-6 slots: Gamma_j stays enumerable on a few servers.

*paper* (Zhou et al., Section 7): one-hour slots; servers shaped like EC2 P3, P2 and G3
instances (GPUs, vCPUs, memory GB); 8 worker types (1-4 GPUs, 1-16 vCPUs, 100 Mbps-5 Gbps) and
10 PS types (1-16 vCPUs, 5-20 Gbps); w_j in [200, 5000], E_j in [50, 100], D_j in [5, 50], K_j
in [10, 50], U_j^p in [10, 100] ms, v_jm in [0.001, 0.05] slots, pi_j in [30, 575] MB. Server
capacities are scaled so that the cluster holds a fraction in [0.2, 0.5] of the jobs' total
ideal demand (each job with D_j workers of its fastest type and one PS). A job whose
min(D_j, 4) workers would need more than T/4 slots has its v_jm scaled down to fit
(docs/errata.md: the paper's ranges give jobs of thousands of slots).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from dlsched.errors import OptionError
from dlsched.models.elastic.instance import (
    ElasticInstance,
    ElasticJob,
    NodeType,
    Server,
    iteration_time,
)

PARAMS = ("setting", "horizon", "architecture")
#: EC2 shapes (GPUs, vCPUs, memory GB): p3.2xlarge, p3.8xlarge, p2.xlarge, p2.8xlarge,
#: g3.4xlarge, g3.8xlarge.
EC2_SHAPES = ((1, 8, 61), (4, 32, 244), (1, 4, 61), (8, 32, 488), (1, 16, 122), (2, 32, 244))
#: MB per slot of one Gbps over a one-hour slot.
GBPS = 125.0 * 3600
MAX_JOBS = 10_000
MAX_SERVERS = 10_000


def _int(name: str, value: Any, low: int, high: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise OptionError(name, value, f"expected an integer in [{low}, {high}]")
    return value


def generate(jobs: int, workers: int, seed: int, **params: Any) -> ElasticInstance:
    if params.get("trace") is not None:  # a Gavel trace's jobs on H servers (docs/traces.md)
        from dlsched.models.elastic.traces import from_params

        return from_params(_int("--gpus", workers, 1, MAX_SERVERS), params)
    unknown = sorted(set(params) - set(PARAMS))
    if unknown:
        raise OptionError(unknown[0], params[unknown[0]], f"unknown (known: {', '.join(PARAMS)})")
    jobs = _int("--jobs", jobs, 1, MAX_JOBS)
    servers = _int("--gpus", workers, 1, MAX_SERVERS)
    seed = _int("--seed", seed, 0, 2**32 - 1)
    setting = params.get("setting", "small")
    if setting not in ("small", "paper"):
        raise OptionError("setting", setting, "expected small or paper")
    arch = params.get("architecture", "ps")
    if arch not in ("ps", "ring"):
        raise OptionError("architecture", arch, "expected ps or ring")
    horizon = _int("horizon", params.get("horizon", 12 if setting == "small" else 300), 2, 10_000)
    rng = np.random.default_rng(seed)
    make = _small if setting == "small" else _paper
    return make(rng, jobs, servers, horizon, arch, f"{setting}-{arch}-j{jobs}-h{servers}-s{seed}")


def _finish(
    name: str,
    arch: str,
    horizon: int,
    resources: tuple,
    servers: list,
    wt: list,
    pt: list,
    js: list,
) -> ElasticInstance:
    return ElasticInstance(
        name=name,
        architecture=arch,
        horizon=horizon,
        resources=resources,
        servers=tuple(servers),
        worker_types=tuple(wt),
        ps_types=tuple(pt) if arch == "ps" else (),
        jobs=tuple(js),
        slot_seconds=3600.0,
    )


def _small(
    rng: np.random.Generator, n_jobs: int, n_servers: int, horizon: int, arch: str, name: str
) -> ElasticInstance:
    servers = [
        Server(f"s{h}", (float(rng.integers(1, 3)), float(rng.choice([4, 8]))))
        for h in range(n_servers)
    ]
    wt = [NodeType("w1", (1.0, 2.0), 50.0), NodeType("w2", (1.0, 4.0), 100.0)]
    pt = [NodeType("ps1", (0.0, 1.0), 100.0), NodeType("ps2", (0.0, 2.0), 200.0)]
    js = []
    for k in range(n_jobs):
        e, d, kk = int(rng.integers(1, 3)), int(rng.integers(1, 4)), int(rng.integers(5, 20))
        single = float(rng.integers(2, 7))  # slots one worker of type w1 needs (compute only)
        v1 = single / (e * d * kk)
        js.append(
            ElasticJob(
                name=f"j{k}",
                arrival=int(rng.integers(0, max(1, horizon // 3))),
                weight=float(rng.integers(1, 4)),
                epochs=e,
                chunks=d,
                minibatches_per_chunk=kk,
                minibatch_time=(v1, v1 * 0.7),
                gradient_mb=round(float(rng.uniform(0.05, 0.2)) * v1 * 50 / 2, 9),
                ps_update_time=(round(0.1 * v1, 12), round(0.05 * v1, 12)) if arch == "ps" else (),
                reduce_time=round(0.1 * v1, 12) if arch == "ring" else 0.0,
            )
        )
    return _finish(name, arch, horizon, ("gpu", "cpu"), servers, wt, pt, js)


def _paper_types(rng: np.random.Generator) -> tuple[list[NodeType], list[NodeType]]:
    wt = [
        NodeType(
            f"worker{k}",
            (float(rng.integers(1, 5)), float(rng.integers(1, 17)), float(rng.integers(4, 65))),
            float(rng.uniform(0.1, 5.0)) * GBPS,
        )
        for k in range(8)
    ]
    pt = [
        NodeType(
            f"ps{k}",
            (0.0, float(rng.integers(1, 17)), float(rng.integers(4, 65))),
            float(rng.uniform(5.0, 20.0)) * GBPS,
        )
        for k in range(10)
    ]
    return wt, pt


def _paper_job(
    rng: np.random.Generator, k: int, horizon: int, arch: str, n_worker: int, n_ps: int
) -> ElasticJob:
    ms = 1e-3 / 3600  # one millisecond in one-hour slots
    return ElasticJob(
        name=f"j{k}",
        arrival=int(rng.integers(0, max(1, horizon // 2))),
        weight=float(rng.integers(200, 5001)),
        epochs=int(rng.integers(50, 101)),
        chunks=int(rng.integers(5, 51)),
        minibatches_per_chunk=int(rng.integers(10, 51)),
        minibatch_time=tuple(float(rng.uniform(0.001, 0.05)) for _ in range(n_worker)),
        gradient_mb=float(rng.uniform(30, 575)),
        ps_update_time=tuple(float(rng.uniform(10, 100)) * ms for _ in range(n_ps)),
        reduce_time=float(rng.uniform(10, 100)) * ms if arch == "ring" else 0.0,
    )


#: Workers of the reference configuration that must finish a job within T/4 slots.
REFERENCE_WORKERS = 4


def _fit_to_horizon(inst: ElasticInstance, j: int) -> ElasticJob:
    """Scale v_jm down when min(D_j, 4) workers of the fastest type (spread, q = 0) need more
    than T/4 slots."""
    job = inst.jobs[j]
    n = min(job.chunks, REFERENCE_WORKERS)
    p = 0 if inst.is_ps else None
    best = min(iteration_time(inst, j, m, p, n, False) for m in range(len(inst.worker_types)))
    need = job.minibatches * best / n
    limit = inst.horizon / 4
    if need <= limit:
        return job
    factor = limit / need
    return ElasticJob(
        **{**job.__dict__, "minibatch_time": tuple(v * factor for v in job.minibatch_time)}
    )


def _paper(
    rng: np.random.Generator, n_jobs: int, n_servers: int, horizon: int, arch: str, name: str
) -> ElasticInstance:
    wt, pt = _paper_types(rng)
    js = [_paper_job(rng, k, horizon, arch, len(wt), len(pt)) for k in range(n_jobs)]
    shapes = [EC2_SHAPES[int(rng.integers(len(EC2_SHAPES)))] for _ in range(n_servers)]
    servers = [Server(f"s{h}", tuple(float(x) for x in s)) for h, s in enumerate(shapes)]
    draft = _finish(name, arch, horizon, ("gpu", "cpu", "mem"), servers, wt, pt, js)
    js = [_fit_to_horizon(draft, j) for j in range(n_jobs)]
    ideal = np.zeros(3)
    for job in js:
        m = int(np.argmin(job.minibatch_time))
        ideal += job.chunks * np.array(wt[m].demand) + (np.array(pt[0].demand) if pt else 0)
    total = np.array(shapes, dtype=float).sum(axis=0)
    scale = float(rng.uniform(0.2, 0.5)) * ideal / total
    servers = [
        Server(
            f"s{h}",
            tuple(
                float(max(x, np.ceil(s * f)))
                for s, f, x in zip(sh, scale, _least(wt, pt), strict=True)
            ),
        )
        for h, sh in enumerate(shapes)
    ]
    return _finish(name, arch, horizon, ("gpu", "cpu", "mem"), servers, wt, pt, js)


def _least(wt: list[NodeType], pt: list[NodeType]) -> tuple[float, ...]:
    """Per resource, the largest demand of one worker plus one PS: every server holds one of
    each, whatever the scaling."""
    w = np.array([t.demand for t in wt]).max(axis=0)
    p = np.array([t.demand for t in pt]).max(axis=0) if pt else 0
    return tuple(float(x) for x in w + p)
