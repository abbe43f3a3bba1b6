"""Trace readers: Gavel's Philly-derived ``.trace`` files and the Alibaba PAI 2020 tables.

Each trace job becomes a ddlwmp job the way Section V of Luo et al. (seed 001) does it: jobs
recur in groups; each group gets one Table I model and a training configuration with the
trace's GPU count (a single-GPU configuration for single-GPU groups, otherwise a random model
among those with a configuration of that many GPUs, else the largest that fits), and
iterations = duration / alpha~^min (the approximate minimum per-iteration time), so the job
runs its trace duration on its best placement. Releases are shifted so that the first is 0
and rounded up to the slot grid. docs/traces.md gives the mapping field by field.

- Gavel (tab-separated, one job per line): job type, command, steps argument, needs-data-dir,
  total steps, arrival time (s), scale factor (GPUs). The duration is total steps over the
  isolated V100 throughput of (job type, scale factor) in Gavel's
  ``isolated_throughputs.json`` (that of one GPU when the file has none for the scale factor:
  the steps are then per GPU, docs/errata.md); the group is (job type, scale factor),
  the user unknown.
- PAI 2020 (CSV; the trace's files have no header row, their columns are in the documented
  order; a first row naming the columns is read as a header, in any order): ``pai_job_table``
  (job_name, inst_id, user, status, start_time, end_time) and ``pai_task_table`` (job_name,
  task_name, inst_num, status, start_time, end_time, plan_cpu, plan_mem, plan_gpu,
  gpu_type). The release is the job's start_time (its submission); the duration runs from
  the earliest start_time of its tasks (their launch; the job's own start_time when no task
  has one) to the job's end_time; GPUs = ceil(sum over the job's tasks of inst_num x
  plan_gpu / 100). Jobs without an end_time (running) or without GPUs (CPU only) are
  skipped; a job with no task at all is an error. The group is ``pai_group_tag_table``'s
  group (inst_id, user, gpu_type_spec, group, workload) when given, else the user and the
  task names.

A malformed trace is one :class:`~dlsched.errors.InstanceError` naming the file, the line and
the column. :func:`load_trace` reads a trace given in place of an instance file (``dlsched
solve pai_job_table.csv``) on the trace's own cluster (:data:`CLUSTERS`); an instance file
whose ``trace`` object names the files and the generator's trace parameters
(:func:`from_manifest`) reads it on the cluster it gives.
"""

from __future__ import annotations

import csv
import json
import math
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from dlsched.errors import InstanceError, OptionError
from dlsched.models.ddlwmp.instance import Cluster, DdlwmpInstance, Job
from dlsched.models.ddlwmp.mapping import alpha_tilde_min
from dlsched.models.ddlwmp.profiles import PROFILES, stages

Row = tuple[str, str, float, float, int]  # (group, user, release s, duration s, GPUs)


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
    rows: Iterable[Row], cluster: Cluster, name: str, seed: int = 0, limit: int | None = None
) -> DdlwmpInstance:
    """ddlwmp jobs from trace rows, the first ``limit`` by release when given (releases
    shifted so that the first is 0)."""
    rng = np.random.default_rng(seed)
    rows = sorted(rows, key=lambda r: r[2])[:limit]
    if not rows:
        raise InstanceError(name, "jobs", [], "the trace holds no usable job")
    t0 = rows[0][2]
    groups: dict[tuple[str, int], tuple[str, Any, float]] = {}
    out = []
    slot = cluster.slot_s
    for k, (group, user, release, duration, gpus) in enumerate(rows):
        key = (group, gpus)
        if key not in groups:
            model, config = _config_for(gpus, rng, cluster.total_gpus)
            st = stages(model, config)
            groups[key] = model, st, alpha_tilde_min(Job("", 0.0, 1, st), cluster)[0]
        model, st, a = groups[key]
        rel = math.ceil((release - t0) / slot - 1e-9) * slot
        n = max(1, round(duration * 1000 / a))
        out.append(Job(f"t{k}", rel, n, st, "ring", group, user, None, model))
    return DdlwmpInstance(name, cluster, tuple(out), f"trace {name}")


def _read_text(path: Path, option: str) -> str:
    try:
        return Path(path).read_text(encoding="utf-8")
    except OSError as e:
        raise OptionError(option, str(path), e.strerror or str(e)) from None
    except UnicodeDecodeError:
        raise InstanceError(str(path), "", None, "not a UTF-8 text file") from None


def _number(source: str, where: str, text: str, low: float, integer: bool = False) -> float:
    """A finite number >= ``low`` (an integer when asked), else a one-line InstanceError."""
    try:
        x = int(text) if integer else float(text)
    except ValueError:
        kind = "an integer" if integer else "a number"
        raise InstanceError(source, where, text, f"expected {kind}") from None
    if not math.isfinite(x) or x < low:
        raise InstanceError(source, where, text, f"expected a finite number >= {low:g}")
    return x


def gavel_throughputs(path: Path, gpu: str = "v100") -> dict[str, float]:
    """Gavel's isolated throughputs (steps per second) of one GPU type (``v100``, ``p100``,
    ``k80``), keyed ``"('job type', scale factor)"``."""
    try:
        data = json.loads(_read_text(path, "throughputs"))
    except ValueError as e:
        raise InstanceError(str(path), "", None, f"not JSON: {e}") from None
    tput = data.get(gpu) if isinstance(data, dict) else None
    if not isinstance(tput, dict):
        raise InstanceError(str(path), gpu, None, f"expected an object of {gpu} throughputs")
    return tput


@dataclass(frozen=True)
class GavelJob:
    """One line of a Gavel ``.trace`` file (its number kept for messages)."""

    line: int
    job_type: str
    steps: int
    arrival: float
    scale: int


def gavel_jobs(trace: Path) -> list[GavelJob]:
    """The jobs of a Gavel ``.trace`` file, checked field by field (one-line errors naming
    the file, the line and the column)."""
    src = str(trace)
    out = []
    for n, line in enumerate(_read_text(trace, "trace").splitlines(), 1):
        if not line.strip():
            continue
        f = line.split("\t")
        if len(f) != 7:
            raise InstanceError(src, f"line {n}", line[:60], f"expected 7 tab fields, not {len(f)}")
        steps = int(_number(src, f"line {n}, column total_steps", f[4], 1, integer=True))
        arrival = _number(src, f"line {n}, column arrival", f[5], 0)
        scale = int(_number(src, f"line {n}, column scale_factor", f[6], 1, integer=True))
        out.append(GavelJob(n, f[0], steps, arrival, scale))
    return out


def gavel_rate(
    tput: dict[str, float], source: Path, job_type: str, scale: int, gpu: str = "v100"
) -> tuple[float, bool]:
    """The throughput of (job type, scale factor) on ``gpu``, and whether it is that scale
    factor's own: when the file has none (or 0: the GPU type cannot run the job at that
    scale) it is the single-GPU throughput (docs/errata.md); an error naming the file when
    that is not positive either."""
    own = tput.get(str((job_type, scale)))
    if isinstance(own, int | float) and own > 0:
        return float(own), True
    key = str((job_type, 1))
    rate = tput.get(key)
    if not isinstance(rate, int | float) or not rate > 0:
        raise InstanceError(str(source), gpu, key, "no positive throughput for it")
    return float(rate), scale == 1


def read_gavel(
    trace: Path, throughputs: Path, cluster: Cluster, seed: int = 0, limit: int | None = None
) -> DdlwmpInstance:
    """A Gavel ``.trace`` file as ddlwmp jobs (the first ``limit`` by arrival when given)."""
    tput = gavel_throughputs(throughputs)
    rows: list[Row] = []
    for job in gavel_jobs(trace):
        rate, _ = gavel_rate(tput, throughputs, job.job_type, job.scale)
        rows.append((f"{job.job_type}|{job.scale}", "", job.arrival, job.steps / rate, job.scale))
    return jobs_from_rows(rows, cluster, Path(trace).stem, seed, limit)


JOB_COLS = ("job_name", "inst_id", "user", "status", "start_time", "end_time")
TASK_COLS = (
    *("job_name", "task_name", "inst_num", "status", "start_time", "end_time"),
    *("plan_cpu", "plan_mem", "plan_gpu", "gpu_type"),
)
GROUP_COLS = ("inst_id", "user", "gpu_type_spec", "group", "workload")


def _header(row: list[str], cols: tuple[str, ...], src: str) -> dict[str, int] | None:
    """Where each column is when ``row`` is a header row (it names the first column), else
    None; a header without one of ``cols`` is an error naming that column."""
    names = [c.strip() for c in row]
    if cols[0] not in names:
        return None
    missing = [c for c in cols if c not in names]
    if missing:
        raise InstanceError(
            src, f"line 1, column {missing[0]}", ",".join(names), "missing from the header"
        )
    return {c: names.index(c) for c in cols}


def _csv(path: Path, cols: tuple[str, ...], option: str) -> Iterator[tuple[int, dict[str, str]]]:
    """(line number, row) of a PAI table, read as it streams; columns in the order ``cols``
    unless a header row says otherwise; a row without one of them names the first missing."""
    src = str(path)
    try:
        fh = open(path, encoding="utf-8", newline="")  # noqa: SIM115 (closed below)
    except OSError as e:
        raise OptionError(option, src, e.strerror or str(e)) from None
    with fh:
        reader = csv.reader(fh)
        at: dict[str, int] | None = None
        try:
            for row in reader:
                n = reader.line_num
                if not any(c.strip() for c in row):
                    continue
                if at is None:
                    at = _header(row, cols, src) if n == 1 else None
                    if at is not None:
                        continue
                    at = {c: k for k, c in enumerate(cols)}
                if len(row) <= max(at.values()):
                    first = min((k, c) for c, k in at.items() if k >= len(row))[1]
                    text = ",".join(row)
                    raise InstanceError(
                        src,
                        f"line {n}, column {first}",
                        text,
                        f"missing: expected {len(cols)} fields",
                    )
                yield n, {c: row[k] for c, k in at.items()}
        except UnicodeDecodeError:
            raise InstanceError(src, "", None, "not a UTF-8 text file") from None
        except csv.Error as e:
            raise InstanceError(src, f"line {reader.line_num}", None, f"bad CSV: {e}") from None


def _optional(source: str, where: str, text: str) -> float | None:
    """An empty PAI cell (a running job's end, a CPU task's GPUs) is None, else a number."""
    return None if not text.strip() else _number(source, where, text, 0)


class _Tasks:
    """What the task table says of each job: GPUs (sum of inst_num x plan_gpu / 100), task
    names, and the earliest launch (start_time) of its tasks."""

    def __init__(self, path: Path) -> None:
        self.gpus: dict[str, float] = {}
        self.names: dict[str, list[str]] = {}
        self.launch: dict[str, float] = {}
        src = str(path)
        for n, t in _csv(path, TASK_COLS, "tasks"):
            job = t["job_name"]
            num = _optional(src, f"line {n}, column inst_num", t["inst_num"])
            plan = _optional(src, f"line {n}, column plan_gpu", t["plan_gpu"])
            start = _optional(src, f"line {n}, column start_time", t["start_time"])
            self.names.setdefault(job, []).append(t["task_name"])
            if num is not None and plan is not None:
                self.gpus[job] = self.gpus.get(job, 0.0) + num * plan / 100
            if start is not None:
                self.launch[job] = min(start, self.launch.get(job, start))


def read_pai(
    job_table: Path,
    task_table: Path,
    cluster: Cluster,
    group_table: Path | None = None,
    seed: int = 0,
    limit: int | None = None,
) -> DdlwmpInstance:
    """The PAI 2020 job and task tables (and the group tag table when given) as ddlwmp jobs."""
    tasks = _Tasks(task_table)
    tags = {}
    if group_table is not None:
        tags = {g["inst_id"]: g["group"] for _, g in _csv(group_table, GROUP_COLS, "group_tags")}
    rows: list[Row] = []
    src = str(job_table)
    for n, j in _csv(job_table, JOB_COLS, "trace"):
        name = j["job_name"]
        start = _optional(src, f"line {n}, column start_time", j["start_time"])
        end = _optional(src, f"line {n}, column end_time", j["end_time"])
        if name not in tasks.names:
            raise InstanceError(
                src, f"line {n}, column job_name", name, f"no task of this job in {task_table}"
            )
        g = math.ceil(tasks.gpus.get(name, 0.0) - 1e-9)
        if start is None or end is None or g < 1:
            continue
        run = end - max(start, tasks.launch.get(name, start))
        if run <= 0:
            continue
        group = tags.get(j["inst_id"]) or f"{j['user']}|{'+'.join(sorted(tasks.names[name]))}"
        rows.append((group, j["user"], start, run, min(g, cluster.total_gpus)))
    return jobs_from_rows(rows, cluster, Path(job_table).stem, seed, limit)


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
)


def _path(params: dict[str, Any], key: str) -> Path | None:
    value = params.get(key)
    if value is None:
        return None
    if not isinstance(value, str) or not value:
        raise OptionError(key, value, "expected a file path")
    path = Path(value)
    if not path.is_file():
        raise OptionError(key, value, "no such file")
    return path


def _beside(path: Path, name: str, levels: int) -> Path | None:
    for d in [path.parent, *path.parent.parents][:levels]:
        if (d / name).is_file():
            return d / name
    return None


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
    of the jobs and keeps the rest with ``predicted_iterations`` set."""
    trace = _path(params, "trace")
    assert trace is not None
    limit = params.get("limit")
    if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or limit < 1):
        raise OptionError("limit", limit, "expected a positive integer")
    if _format(trace, params) == "gavel":
        tput = _path(params, "throughputs") or _beside(trace, "isolated_throughputs.json", 3)
        if tput is None:
            raise OptionError("throughputs", None, "give the path of isolated_throughputs.json")
        inst = read_gavel(trace, tput, cluster, seed, limit)
    else:
        tasks = _path(params, "tasks") or _beside(trace, "pai_task_table.csv", 1)
        if tasks is None:
            raise OptionError("tasks", None, "give the path of the PAI task table CSV")
        inst = read_pai(trace, tasks, cluster, _path(params, "group_tags"), seed, limit)
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


def gavel_dir(repo_root: Path) -> Path:
    """Where Gavel's data lives: beside the repository, never copied into it."""
    return Path(repo_root).parent / "shared" / "data" / "gavel"


__all__ = [
    "CLUSTERS",
    "TRACE_PARAMS",
    "GavelJob",
    "from_manifest",
    "from_params",
    "gavel_dir",
    "gavel_jobs",
    "gavel_rate",
    "gavel_throughputs",
    "jobs_from_rows",
    "load_trace",
    "read_gavel",
    "read_pai",
]
