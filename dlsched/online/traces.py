"""Trace readers shared by the online families: Gavel's Philly-derived ``.trace`` files (with
Gavel's ``isolated_throughputs.json``) and the Alibaba PAI 2020 tables.

They return family-neutral rows: a :class:`GavelJob` per line of a Gavel trace (with its
:class:`Speeds` on Gavel's three GPU types, :func:`gavel_trace`), a :class:`PaiJob` per
usable job of the PAI tables (:func:`pai_jobs`). Each family turns the rows into its own
instances in its own ``traces.py`` (docs/traces.md gives each mapping field by field).

- Gavel (tab-separated, one job per line): job type, command, steps argument, needs-data-dir,
  total steps, arrival time (s), scale factor (GPUs). A throughput is that of (job type,
  scale factor) on a GPU type, or that of one GPU when the file has none for the scale factor
  (the steps are then per GPU, docs/errata.md).
- PAI 2020 (CSV; the trace's files have no header row, their columns are in the documented
  order; a first row naming the columns is read as a header, in any order): ``pai_job_table``
  (job_name, inst_id, user, status, start_time, end_time) and ``pai_task_table`` (job_name,
  task_name, inst_num, status, start_time, end_time, plan_cpu, plan_mem, plan_gpu,
  gpu_type). The release is the job's start_time (its submission); the run goes from the
  earliest start_time of its tasks (their launch; the job's own start_time when no task has
  one) to the job's end_time; GPUs = ceil(sum over the job's tasks of inst_num x plan_gpu /
  100). Jobs without an end_time (running), without GPUs (CPU only) or without a positive run
  are skipped; a job with no task at all is an error. The group is ``pai_group_tag_table``'s
  group (inst_id, user, gpu_type_spec, group, workload) when given, else the user and the
  task names.

A malformed trace is one :class:`~dlsched.errors.InstanceError` naming the file, the line and
the column; a file that cannot be read is an :class:`~dlsched.errors.OptionError` naming the
parameter that gave it.
"""

from __future__ import annotations

import csv
import json
import math
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

from dlsched.errors import InstanceError, OptionError

#: Gavel's GPU types, fastest first, as its throughput file names them.
GPU_TYPES = ("v100", "p100", "k80")
#: GPUs of each type of the cluster a Gavel trace is read on by the online families by default.
CLUSTER = {"v100": 36, "p100": 36, "k80": 36}


def cluster_of(gpus: int) -> dict[str, int]:
    """``gpus`` GPUs in equal thirds of V100, P100 and K80 (the remainder to the faster)."""
    base, extra = divmod(gpus, len(GPU_TYPES))
    return {t: base + (k < extra) for k, t in enumerate(GPU_TYPES)}


def gavel_dir(repo_root: Path) -> Path:
    """Where Gavel's data lives: beside the repository, never copied into it."""
    return Path(repo_root).parent / "shared" / "data" / "gavel"


def _read_text(path: Path, option: str) -> str:
    """The text of a trace file; an error naming the parameter ``option`` that gave it."""
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


# --- Gavel ------------------------------------------------------------------------------------


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


@dataclass(frozen=True)
class Speeds:
    """Seconds per step of one trace job on each of Gavel's GPU types: on its ``scale`` GPUs
    of the type (``scaled``: the job's run is steps x that), on one GPU (``one``), and the
    scaling efficiency phi = one / (scale x scaled), at most 1 (1 when the file gives no
    throughput for the scale factor: the steps are then per GPU)."""

    scaled: dict[str, float]
    one: dict[str, float]
    phi: dict[str, float]


def speeds(
    tputs: Mapping[str, dict[str, float]], source: Path, job_type: str, scale: int
) -> Speeds:
    """:class:`Speeds` of (job type, scale factor) from the throughputs of every GPU type."""
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
            cache[key] = speeds(tputs, throughputs, g.job_type, g.scale)
        out.append((g, cache[key]))
    return out


# --- PAI 2020 ---------------------------------------------------------------------------------

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


@dataclass(frozen=True, slots=True)
class PaiJob:
    """One usable job of the PAI tables, in the order of the job table (``line``, its line
    there): its group, user, release (s), run (s, > 0) and GPUs (>= 1)."""

    line: int
    group: str
    user: str
    release: float
    run: float
    gpus: int


def pai_jobs(job_table: Path, task_table: Path, group_table: Path | None = None) -> list[PaiJob]:
    """The usable jobs of the PAI 2020 job and task tables (and the group tag table when
    given), read as the module docstring says."""
    tasks = _Tasks(task_table)
    tags = {}
    if group_table is not None:
        tags = {g["inst_id"]: g["group"] for _, g in _csv(group_table, GROUP_COLS, "group_tags")}
    out: list[PaiJob] = []
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
        out.append(PaiJob(n, group, j["user"], start, run, g))
    return out


__all__ = [
    "CLUSTER",
    "GPU_TYPES",
    "GROUP_COLS",
    "JOB_COLS",
    "TASK_COLS",
    "GavelJob",
    "PaiJob",
    "Speeds",
    "cluster_of",
    "gavel_dir",
    "gavel_jobs",
    "gavel_rate",
    "gavel_throughputs",
    "gavel_trace",
    "pai_jobs",
    "speeds",
]
