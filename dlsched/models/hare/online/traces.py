"""Gavel's Philly-derived traces as online hare instances (seed 004).

A Gavel ``.trace`` file (one job per line: job type, command, steps argument, needs-data-dir,
total steps, arrival time in seconds, scale factor) is read by the ddlwmp family's parser
(:func:`dlsched.models.ddlwmp.traces.gavel_jobs`: the same one-line errors naming the file, the
line and the column), and each job becomes a hare job on a cluster of Gavel's three GPU types,
with the per-type throughputs of Gavel's ``isolated_throughputs.json``:

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
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, TypeVar

from dlsched.errors import InstanceError, OptionError
from dlsched.models.ddlwmp.traces import (
    GavelJob,
    _beside,
    _path,
    gavel_jobs,
    gavel_rate,
    gavel_throughputs,
)
from dlsched.models.hare.instance import HareInstance, HareJob

#: Gavel's GPU types, fastest first, as its throughput file names them.
GPU_TYPES = ("v100", "p100", "k80")
#: GPUs of each type of the cluster a trace is read on by default.
CLUSTER = {"v100": 36, "p100": 36, "k80": 36}
#: Seconds of a job's V100 run per round, by default.
ROUND_S = 3600.0
#: The generator's trace parameters (``--param``): see :func:`from_params`.
TRACE_PARAMS = ("trace", "throughputs", "limit", "round_s", "cluster")
#: Most tasks of a hare instance (rounds x tasks per round, summed).
MAX_TASKS = 10**6


def cluster_of(gpus: int) -> dict[str, int]:
    """``gpus`` GPUs in equal thirds of V100, P100 and K80 (the remainder to the faster)."""
    base, extra = divmod(gpus, len(GPU_TYPES))
    return {t: base + (k < extra) for k, t in enumerate(GPU_TYPES)}


@dataclass(frozen=True)
class Speeds:
    """Seconds per step of one trace job on each of Gavel's GPU types: on its ``scale`` GPUs
    of the type (``scaled``: the job's run is steps x that), on one GPU (``one``), and the
    scaling efficiency phi = one / (scale x scaled), at most 1 (1 when the file gives no
    throughput for the scale factor: the steps are then per GPU)."""

    scaled: dict[str, float]
    one: dict[str, float]
    phi: dict[str, float]


def _speeds(
    tputs: Mapping[str, dict[str, float]], source: Path, job_type: str, scale: int
) -> Speeds:
    scaled, one, phi = {}, {}, {}
    for gpu in GPU_TYPES:
        rate, own = gavel_rate(tputs[gpu], source, job_type, scale, gpu)
        single, _ = gavel_rate(tputs[gpu], source, job_type, 1, gpu)
        scaled[gpu], one[gpu] = 1.0 / rate, 1.0 / single
        phi[gpu] = min(1.0, rate / (scale * single)) if own else 1.0
    return Speeds(scaled, one, phi)


def gavel_trace(
    trace: Path, throughputs: Path, limit: int | None = None
) -> list[tuple[GavelJob, Speeds]]:
    """The jobs of a Gavel trace by arrival (the first ``limit`` when given), each with its
    speeds on Gavel's GPU types; an error when there is none."""
    tputs = {gpu: gavel_throughputs(throughputs, gpu) for gpu in GPU_TYPES}
    lines = sorted(gavel_jobs(trace), key=lambda j: j.arrival)[:limit]
    if not lines:
        raise InstanceError(str(trace), "jobs", [], "the trace holds no job")
    cache: dict[tuple[str, int], Speeds] = {}
    out = []
    for g in lines:
        key = (g.job_type, g.scale)
        if key not in cache:
            cache[key] = _speeds(tputs, throughputs, g.job_type, g.scale)
        out.append((g, cache[key]))
    return out


def read_gavel(
    trace: Path,
    throughputs: Path,
    cluster: Mapping[str, int] | None = None,
    round_s: float = ROUND_S,
    limit: int | None = None,
) -> HareInstance:
    """A Gavel ``.trace`` file as an online hare instance (the first ``limit`` jobs by
    arrival when given) on ``cluster`` (GPUs per type, default :data:`CLUSTER`)."""
    cluster = dict(CLUSTER if cluster is None else cluster)
    types = [t for t in GPU_TYPES for _ in range(cluster.get(t, 0))]
    gpus = tuple(f"{t}-{k}" for t in GPU_TYPES for k in range(cluster.get(t, 0)))
    lines = gavel_trace(trace, throughputs, limit)
    first = lines[0][0].arrival
    jobs, tasks = [], 0
    for n, (g, sp) in enumerate(lines):
        rounds = max(1, math.ceil(g.steps * sp.scaled["v100"] / round_s - 1e-9))
        tasks += rounds * g.scale
        if tasks > MAX_TASKS:
            raise InstanceError(
                str(trace),
                f"line {g.line}",
                rounds,
                f"more than {MAX_TASKS:g} tasks in all: give a longer round_s than {round_s:g}",
            )
        rnd = {t: g.steps * sec / rounds for t, sec in sp.scaled.items()}  # one round on k
        jobs.append(
            HareJob(
                name=f"t{n}",
                arrival=g.arrival - first,
                weight=1.0,
                rounds=rounds,
                tasks_per_round=g.scale,
                train_time=tuple(rnd[t] * sp.phi[t] for t in types),
                sync_time=tuple(rnd[t] * (1 - sp.phi[t]) for t in types),
            )
        )
    spec = ":".join(str(cluster.get(t, 0)) for t in GPU_TYPES)
    return HareInstance(
        name=Path(trace).stem,
        gpus=gpus,
        jobs=tuple(jobs),
        description=f"Gavel trace {Path(trace).name} on v100:p100:k80 = {spec}, "
        f"rounds of {round_s:g} s",
    )


def parse_cluster(value: Any, gpus: int | None) -> dict[str, int]:
    """``cluster=V:P:K`` (GPUs of each type), else ``gpus`` in thirds, else :data:`CLUSTER`."""
    if value is None:
        return cluster_of(gpus) if gpus is not None else dict(CLUSTER)
    parts = value.split(":") if isinstance(value, str) else []
    if len(parts) != 3 or not all(p.isdigit() for p in parts) or not sum(map(int, parts)):
        raise OptionError("cluster", value, "expected V100:P100:K80 GPU counts, e.g. 36:36:36")
    return dict(zip(GPU_TYPES, map(int, parts), strict=True))


def seconds(name: str, value: Any, low: float = 1e-3, high: float = 1e9) -> float:
    """A trace parameter in seconds, from ``low`` to ``high``."""
    ok = isinstance(value, int | float) and not isinstance(value, bool)
    if not ok or not math.isfinite(value) or not low <= value <= high:
        raise OptionError(name, value, f"expected seconds from {low:g} to {high:g}")
    return float(value)


def positive(name: str, value: Any) -> int | None:
    """A positive integer trace parameter, or None when not given."""
    if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
        raise OptionError(name, value, "expected a positive integer")
    return value


def trace_files(params: Mapping[str, Any], known: tuple[str, ...]) -> tuple[Path, Path]:
    """The trace and Gavel's ``isolated_throughputs.json`` (``throughputs``, by default found
    beside the trace or up to two folders above) of trace parameters ``params`` (an unknown
    one refused)."""
    unknown = sorted(set(params) - set(known))
    if unknown:
        listed = ", ".join(known)
        raise OptionError(unknown[0], params[unknown[0]], f"not with trace= (known: {listed})")
    trace = _path(dict(params), "trace")
    assert trace is not None
    tput = _path(dict(params), "throughputs") or _beside(trace, "isolated_throughputs.json", 3)
    if tput is None:
        raise OptionError("throughputs", None, "give the path of isolated_throughputs.json")
    return trace, tput


def from_params(gpus: int | None, params: Mapping[str, Any]) -> HareInstance:
    """The generator's trace mode (``--param trace=FILE``): ``trace`` (a Gavel ``.trace``
    file), ``throughputs`` (see :func:`trace_files`), ``limit`` (the first jobs by arrival),
    ``round_s`` (default :data:`ROUND_S`), ``cluster`` (``V:P:K`` GPUs of each type; by
    default ``gpus`` in thirds, or :data:`CLUSTER`). The mapping draws nothing: every seed
    gives the same instance."""
    trace, tput = trace_files(params, TRACE_PARAMS)
    return read_gavel(
        trace,
        tput,
        parse_cluster(params.get("cluster"), gpus),
        seconds("round_s", params.get("round_s", ROUND_S)),
        positive("limit", params.get("limit")),
    )


def load_trace(path: Path) -> HareInstance:
    """A Gavel trace read as an online hare instance on :data:`CLUSTER`."""
    return from_params(None, {"trace": str(path)})


T = TypeVar("T")


def manifest(
    data: Mapping[str, Any],
    source: str,
    known: tuple[str, ...],
    build: Callable[[dict[str, Any]], T],
) -> T:
    """The instance of a file naming a trace, ``{"family": ..., "name": ..., "trace":
    {"path": ..., PARAMETER: ...}}``: ``build`` called on the trace parameters (``known``;
    ``path`` is ``trace``, and file paths are relative to the instance file's folder), an
    error naming ``trace.FIELD`` for a bad one; the file's name and description kept."""
    from dlsched.instances.validate import Reader

    top = Reader(data, source, fields=("family", "name", "description", "trace"))
    spec = top.raw("trace")
    r = Reader(spec, source, "trace", fields=("path", *(k for k in known if k != "trace")))
    base = Path(source).parent if Path(source).is_file() else Path()
    params = {k: v for k, v in spec.items() if k != "path"}
    params["trace"] = str(base / r.string("path"))
    if isinstance(params.get("throughputs"), str):
        params["throughputs"] = str(base / params["throughputs"])
    try:
        inst = build(params)
    except OptionError as e:
        field = r.field("path" if e.option == "trace" else e.option)
        raise InstanceError(source, field, e.value, e.reason) from None
    name = top.string("name", inst.name)  # type: ignore[attr-defined]
    about = top.string("description", inst.description, empty=True)  # type: ignore[attr-defined]
    return replace(inst, name=name, description=about)  # type: ignore[type-var]


def read_manifest(data: Mapping[str, Any], source: str) -> HareInstance:
    """An instance file naming a trace: ``{"family": "hare", "name": ..., "trace": {"path":
    ..., "throughputs": ..., "limit": ..., "round_s": ..., "cluster": "36:36:36"}}``."""
    return manifest(data, source, TRACE_PARAMS, lambda params: from_params(None, params))


__all__ = [
    "CLUSTER",
    "GPU_TYPES",
    "ROUND_S",
    "TRACE_PARAMS",
    "Speeds",
    "cluster_of",
    "from_params",
    "gavel_trace",
    "load_trace",
    "manifest",
    "parse_cluster",
    "positive",
    "read_gavel",
    "read_manifest",
    "seconds",
    "trace_files",
]
