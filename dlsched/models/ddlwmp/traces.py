"""Gavel's Philly-derived ``.trace`` files and the Alibaba PAI 2020 tables as ddlwmp instances.

Each trace job becomes a ddlwmp job the way Section V of Luo et al. (seed 001) does it: jobs
recur in groups; each group gets one Table I model and a training configuration with the
trace's GPU count (a single-GPU configuration for single-GPU groups, otherwise a random model
among those with a configuration of that many GPUs, else the largest that fits), and
iterations = duration / alpha~^min (the approximate minimum per-iteration time), so the job
runs its trace duration on its best placement. Releases are shifted so that the first is 0
and rounded up to the slot grid. docs/traces.md gives the mapping field by field.

The files are read by the online families' shared readers (:mod:`dlsched.online.traces`:
the formats, and one-line errors naming the file, the line and the column); here:

- Gavel: the duration is total steps over the isolated V100 throughput of (job type, scale
  factor) in Gavel's ``isolated_throughputs.json`` (that of one GPU when the file has none for
  the scale factor: the steps are then per GPU, docs/errata.md); the GPUs are the scale
  factor; the group is (job type, scale factor), the user unknown.
- PAI 2020 (:func:`~dlsched.online.traces.pai_jobs`: running, CPU-only and empty jobs left
  out): the release is the job's start_time (its submission), the duration its run (from its
  tasks' launch to its end_time), the GPUs its tasks' (at most the cluster's); the group is
  ``pai_group_tag_table``'s when given, else the user and the task names.

:func:`load_trace` reads a trace given in place of an instance file (``dlsched
solve pai_job_table.csv``) on the trace's own cluster (:data:`CLUSTERS`); an instance file
whose ``trace`` object names the files and the generator's trace parameters
(:func:`from_manifest`) reads it on the cluster it gives.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import numpy as np

from dlsched.errors import InstanceError, OptionError
from dlsched.models.ddlwmp.instance import LIMITS, Cluster, DdlwmpInstance, Job
from dlsched.models.ddlwmp.mapping import alpha_tilde_min
from dlsched.models.ddlwmp.profiles import PROFILES, stages
from dlsched.online.params import beside, file_param, skip_rows
from dlsched.online.rows import RANGE, BadRows
from dlsched.online.traces import gavel_jobs, gavel_rate, gavel_throughputs, known_type, pai_jobs

#: (group, user, release s, duration s, GPUs, (file, line, column) the duration comes from)
Row = tuple[str, str, float, float, int, tuple[str, int, str]]


def _config_for(gpus: int, rng: np.random.Generator, total: int) -> tuple[str, tuple[int, ...]]:
    exact = [(m, c) for m, p in PROFILES.items() for c in p.configs if sum(c) == gpus]
    if not exact:
        fits = [
            (m, c) for m, p in PROFILES.items() for c in p.configs if sum(c) <= min(gpus, total)
        ]
        top = max(sum(c) for _, c in fits)
        exact = [(m, c) for m, c in fits if sum(c) == top]
    return exact[int(rng.integers(len(exact)))]


def jobs_from_rows(
    rows: Iterable[Row],
    cluster: Cluster,
    name: str,
    seed: int = 0,
    limit: int | None = None,
    bad: BadRows | None = None,
    source: str = "",
) -> DdlwmpInstance:
    """ddlwmp jobs from trace rows, the first ``limit`` by release when given (releases
    shifted so that the first is 0); a row whose iterations would exceed their range
    (:data:`~dlsched.models.ddlwmp.instance.LIMITS`) is a bad row, refused or, as ``bad``
    says, skipped and counted (in the instance's description too). No job left is an error
    naming ``source`` (the trace file; by default ``name``)."""
    bad = BadRows() if bad is None else bad
    rng = np.random.default_rng(seed)
    groups: dict[tuple[str, int], tuple[str, Any, float]] = {}
    out: list[Job] = []
    slot, t0 = cluster.slot_s, 0.0
    top = LIMITS["iterations"].high
    for group, user, release, duration, gpus, (src, line, col) in sorted(rows, key=lambda r: r[2]):
        if len(out) == limit:
            break
        key = (group, gpus)
        if key not in groups:
            model, config = _config_for(gpus, rng, cluster.total_gpus)
            st = stages(model, config)
            groups[key] = model, st, alpha_tilde_min(Job("", 0.0, 1, st), cluster)[0]
        model, st, a = groups[key]
        n = max(1, round(duration * 1000 / a))
        if n > top:
            why = f"{n:.3g} iterations of {model} (at most {top:g}): a run of {duration:.3g} s"
            bad.row(RANGE, InstanceError(src, f"line {line}, column {col}", duration, why))
            continue
        t0 = t0 if out else release
        rel = math.ceil((release - t0) / slot - 1e-9) * slot
        out.append(Job(f"t{len(out)}", rel, n, st, "ring", group, user, None, model))
    if not out:
        why = f"the trace holds no usable job{bad.aside()}"
        raise InstanceError(source or name, "jobs", [], why)
    return DdlwmpInstance(name, cluster, tuple(out), bad.noted(f"trace {name}"))


def read_gavel(
    trace: Path,
    throughputs: Path,
    cluster: Cluster,
    seed: int = 0,
    limit: int | None = None,
    bad: BadRows | None = None,
) -> DdlwmpInstance:
    """A Gavel ``.trace`` file as ddlwmp jobs (the first ``limit`` by arrival when given);
    each bad row refused or, as ``bad`` says, skipped and counted."""
    bad = BadRows() if bad is None else bad
    tput = gavel_throughputs(throughputs)
    rows: list[Row] = []
    for job in gavel_jobs(trace, bad):
        try:
            rate, _ = gavel_rate(tput, throughputs, job.job_type, job.scale, row=(trace, job.line))
        except InstanceError as e:
            known_type(bad, trace, e)
            continue
        group, where = f"{job.job_type}|{job.scale}", (str(trace), job.line, "total_steps")
        rows.append((group, "", job.arrival, job.steps / rate, job.scale, where))
    return jobs_from_rows(rows, cluster, Path(trace).stem, seed, limit, bad, str(trace))


def read_pai(
    job_table: Path,
    task_table: Path,
    cluster: Cluster,
    group_table: Path | None = None,
    seed: int = 0,
    limit: int | None = None,
    bad: BadRows | None = None,
) -> DdlwmpInstance:
    """The PAI 2020 job and task tables (and the group tag table when given) as ddlwmp jobs
    (:func:`dlsched.online.traces.pai_jobs`; a job's GPUs at most the cluster's); each bad
    row refused or, as ``bad`` says, skipped and counted."""
    bad = BadRows() if bad is None else bad
    top, src = cluster.total_gpus, str(job_table)
    rows: list[Row] = [
        (p.group, p.user, p.release, p.run, min(p.gpus, top), (src, p.line, "end_time"))
        for p in pai_jobs(job_table, task_table, group_table, bad)
    ]
    return jobs_from_rows(rows, cluster, Path(job_table).stem, seed, limit, bad, src)


#: generator parameters of a trace-driven instance (see :func:`from_params`)
TRACE_PARAMS = (
    "trace",
    "format",
    "limit",
    "throughputs",
    "tasks",
    "group_tags",
    "predictor",
    "train_share",
    "skip_bad_rows",
)


def _format(trace: Path, params: dict[str, Any]) -> str:
    fmt = params.get("format")
    if fmt is None:
        fmt = {".trace": "gavel", ".csv": "pai"}.get(trace.suffix.lower())
        if fmt is None:
            raise OptionError("format", None, f"give format=gavel or pai for {trace.name}")
    if fmt not in ("gavel", "pai"):
        raise OptionError("format", fmt, "expected 'gavel' or 'pai'")
    return str(fmt)


def from_params(cluster: Cluster, seed: int, params: dict[str, Any]) -> DdlwmpInstance:
    """The generator's trace mode: ``trace`` (a Gavel ``.trace`` file or a PAI 2020
    ``pai_job_table`` CSV), ``format`` (``gavel`` | ``pai``, by default from the suffix),
    ``limit`` (the first jobs by release; default all), ``throughputs`` (Gavel's
    ``isolated_throughputs.json``, by default found beside the trace or up to two folders
    above), ``tasks`` (PAI's task table, by default ``pai_task_table.csv`` beside the job
    table), ``group_tags`` (PAI's group tag table, optional); ``predictor`` (``group-mean``,
    ``group-median`` or ``random-forest``) trains on the first ``train_share`` (default 0.8)
    of the jobs and keeps the rest with ``predicted_iterations`` set; ``skip_bad_rows``
    (``true``: a bad row is skipped and counted, in the description and on the standard
    error, not refused: :func:`~dlsched.online.params.skip_rows`)."""
    trace = file_param(params, "trace")
    assert trace is not None
    limit = params.get("limit")
    if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or limit < 1):
        raise OptionError("limit", limit, "expected a positive integer")
    bad = skip_rows(params)
    if _format(trace, params) == "gavel":
        tput = file_param(params, "throughputs") or beside(trace, "isolated_throughputs.json", 3)
        if tput is None:
            raise OptionError("throughputs", None, "give the path of isolated_throughputs.json")
        inst = read_gavel(trace, tput, cluster, seed, limit, bad)
    else:
        tasks = file_param(params, "tasks") or beside(trace, "pai_task_table.csv", 1)
        if tasks is None:
            raise OptionError("tasks", None, "give the path of the PAI task table CSV")
        tags = file_param(params, "group_tags")
        inst = read_pai(trace, tasks, cluster, tags, seed, limit, bad)
    if params.get("predictor") is None:
        if "train_share" in params:
            raise OptionError("train_share", params["train_share"], "only with predictor=")
        return inst
    from dlsched.models.ddlwmp.predict import PREDICTORS, predict

    name = params["predictor"]
    if name not in PREDICTORS:
        raise OptionError("predictor", name, f"expected one of {', '.join(PREDICTORS)}")
    return predict(inst, name, params.get("train_share", 0.8), seed)[0]


#: The cluster a trace given in place of an instance file is read on (:func:`load_trace`):
#: PAI 2020's, over 6,500 GPUs (813 servers of 8); for Gavel's traces 8 servers of 8 GPUs
#: (benchmarks/RESULTS_ddlwmp.md section 4); 10 Gbit/s NICs, 2400 Gbit/s NVLink and 1 s slots
#: (Section V-B). A trace manifest (:func:`from_manifest`) gives any other.
CLUSTERS = {
    "pai": Cluster(servers=813, gpus_per_server=8, inter_gbps=10.0, intra_gbps=2400.0),
    "gavel": Cluster(servers=8, gpus_per_server=8, inter_gbps=10.0, intra_gbps=2400.0),
}
#: Fields of a manifest's ``trace`` object: ``path`` and the generator's trace parameters.
MANIFEST = ("path", "seed", *(p for p in TRACE_PARAMS if p != "trace"))


def load_trace(path: Path) -> DdlwmpInstance:
    """A trace file read as an instance (``.csv``: PAI's job table, its task table
    ``pai_task_table.csv`` beside it; ``.trace``: Gavel's, with ``isolated_throughputs.json``
    beside it or above) on :data:`CLUSTERS`' cluster of its format."""
    return _read_manifest({"path": str(path)}, None, str(path))


def from_manifest(spec: Any, cluster: Cluster, source: str) -> DdlwmpInstance:
    """The jobs of an instance file's ``trace`` object on ``cluster``: ``path`` (the trace,
    relative to the instance file's folder), ``seed`` (draws each group's model, default 0),
    and the trace parameters of :func:`from_params` (``format``, ``limit``, ``tasks``,
    ``group_tags``, ``throughputs``, ``predictor``, ``train_share``; paths relative too)."""
    return _read_manifest(spec, cluster, source)


def _read_manifest(spec: Any, cluster: Cluster | None, source: str) -> DdlwmpInstance:
    from dlsched.instances.validate import Range, Reader

    r = Reader(spec, source, "trace", fields=MANIFEST)
    base = Path(source).parent if cluster is not None and Path(source).is_file() else Path()
    params = {k: v for k, v in spec.items() if k not in ("path", "seed")}
    params["trace"] = r.string("path")
    for key in ("trace", "throughputs", "tasks", "group_tags"):
        if isinstance(params.get(key), str):
            params[key] = str(base / params[key])
    seed = r.integer("seed", Range(0, 2**32 - 1), 0)
    try:
        if cluster is None:
            cluster = CLUSTERS[_format(Path(params["trace"]), params)]
        return from_params(cluster, seed, params)
    except OptionError as e:
        field = r.field("path" if e.option == "trace" else e.option)
        raise InstanceError(source, field, e.value, e.reason) from None


__all__ = [
    "CLUSTERS",
    "TRACE_PARAMS",
    "from_manifest",
    "from_params",
    "jobs_from_rows",
    "load_trace",
    "read_gavel",
    "read_pai",
]
