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
  100). Jobs without an end_time (running), without GPUs (CPU only) or with a run of 0 are
  left out. The group is ``pai_group_tag_table``'s group (inst_id, user, gpu_type_spec,
  group, workload) when given, else the user and the task names.

Every number lies in its :data:`LIMITS` (finite; a time within the compact form's release
range, total steps within its iterations'). A bad row is one
:class:`~dlsched.errors.InstanceError` naming the file, the line and the column: a number out
of range or not one, too few fields, a line that is not UTF-8 text or holds a control
character, a last line without its newline (a file cut short), a line or job or task listed
twice, a job type without throughput, a job without a task, an end before its start or before
a task's launch. With the trace parameter ``skip_bad_rows=true`` (a
:class:`~dlsched.online.rows.BadRows` that skips) each is skipped instead and counted by file
and reason; the families report the counts. A byte order mark, a header without a column, and
a file that holds no job are errors all the same; a file that cannot be read is an
:class:`~dlsched.errors.OptionError` naming the parameter that gave it.
"""

from __future__ import annotations

import csv
import json
import math
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from dlsched.errors import InstanceError, OptionError
from dlsched.instances.validate import COUNT, MAX_COUNT, RESOLUTION, Range, number_text
from dlsched.online.rows import (
    DUPLICATE,
    FIELDS,
    NUMBER,
    RANGE,
    TAINTED,
    TIMES,
    UNKNOWN,
    BadRows,
    text_lines,
)

T = TypeVar("T")

#: Gavel's GPU types, fastest first, as its throughput file names them.
GPU_TYPES = ("v100", "p100", "k80")
#: GPUs of each type of the cluster a Gavel trace is read on by the online families by default.
CLUSTER = {"v100": 36, "p100": 36, "k80": 36}
#: The range of each number of a trace: those of the instance fields it becomes (ddlwmp's,
#: also its compact form's: a time is a release, total steps are iterations), times in
#: seconds, GPUs (a scale factor) and task instances at most a count's MAX_COUNT, a task's
#: GPUs in percent of one GPU, its CPU (percent of a core) and memory (GB) plans, and a
#: throughput (steps per second; 0 in Gavel's file: the GPU type cannot run the job).
LIMITS = {
    "time": Range(0, 1e12),
    "steps": Range(1, 1e12),
    "gpus": COUNT,
    "instances": Range(0, MAX_COUNT),
    "plan_gpu": Range(0, 1e6),
    "plan": Range(0, 1e12),
    "throughput": Range(RESOLUTION, 1e9),
}
#: The columns of a Gavel ``.trace`` file (tab-separated, no header).
GAVEL_COLS = (
    *("job_type", "command", "steps_arg", "needs_data_dir"),
    *("total_steps", "arrival", "scale_factor"),
)


def cluster_of(gpus: int) -> dict[str, int]:
    """``gpus`` GPUs in equal thirds of V100, P100 and K80 (the remainder to the faster)."""
    base, extra = divmod(gpus, len(GPU_TYPES))
    return {t: base + (k < extra) for k, t in enumerate(GPU_TYPES)}


def gavel_dir(repo_root: Path) -> Path:
    """Where Gavel's data lives: beside the repository, never copied into it."""
    return Path(repo_root).parent / "shared" / "data" / "gavel"


def _read_text(path: Path, option: str) -> str:
    """The text of a file; an error naming the parameter ``option`` that gave it."""
    try:
        return Path(path).read_text(encoding="utf-8")
    except OSError as e:
        raise OptionError(option, str(path), e.strerror or str(e)) from None
    except UnicodeDecodeError:
        raise InstanceError(str(path), "", None, "not a UTF-8 text file") from None


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


def _gavel_job(src: str, n: int, f: list[str]) -> GavelJob:
    """The job of line ``n`` (fields ``f``), each number in its :data:`LIMITS`."""
    where = f"line {n}, column"
    steps = number_text(f[4], src, f"{where} total_steps", LIMITS["steps"], integer=True)
    arrival = number_text(f[5], src, f"{where} arrival", LIMITS["time"])
    scale = number_text(f[6], src, f"{where} scale_factor", LIMITS["gpus"], integer=True)
    return GavelJob(n, f[0], int(steps), arrival, int(scale))


def gavel_jobs(trace: Path, bad: BadRows | None = None) -> list[GavelJob]:
    """The jobs of a Gavel ``.trace`` file, checked field by field (one-line errors naming
    the file, the line and the column; a line repeated is a bad row too), each bad row
    refused or, as ``bad`` says, skipped and counted."""
    bad = BadRows() if bad is None else bad
    src = str(trace)
    out: list[GavelJob] = []
    seen: dict[str, int] = {}
    for n, line in text_lines(trace, "trace", "\t", GAVEL_COLS, bad):
        f = line.split("\t")
        if len(f) != len(GAVEL_COLS):
            why = f"expected {len(GAVEL_COLS)} tab fields, not {len(f)}"
            bad.row(FIELDS, InstanceError(src, f"line {n}", line, why))
            continue
        try:
            job = _gavel_job(src, n, f)
        except InstanceError as e:
            bad.row(NUMBER, e)
            continue
        if line in seen:
            why = f"the job of line {seen[line]} again (a line repeated)"
            bad.row(DUPLICATE, InstanceError(src, f"line {n}", line, why))
            continue
        seen[line] = n
        out.append(job)
    return out


def _throughput(tput: dict[str, float], source: Path, gpu: str, key: str) -> float | None:
    """The throughput of ``key`` on ``gpu``, None when the file has none or 0 (the GPU type
    cannot run it); an error naming the file for any other value out of its range."""
    value = tput.get(key)
    if value is None or (value == 0 and not isinstance(value, bool)):
        return None
    rng = LIMITS["throughput"]
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise InstanceError(str(source), f"{gpu}.{key}", value, f"expected 0 or a number {rng}")
    if not rng.low <= value <= rng.high:
        raise InstanceError(str(source), f"{gpu}.{key}", value, f"expected 0 or a number {rng}")
    return float(value)


def gavel_rate(
    tput: dict[str, float],
    source: Path,
    job_type: str,
    scale: int,
    gpu: str = "v100",
    row: tuple[Path, int] | None = None,
) -> tuple[float, bool]:
    """The throughput of (job type, scale factor) on ``gpu``, and whether it is that scale
    factor's own: when the file has none (or 0: the GPU type cannot run the job at that
    scale) it is the single-GPU throughput (docs/errata.md); when that is not positive
    either, an error naming the trace's line ``row`` (trace, line) when given, else the
    throughputs file."""
    own = _throughput(tput, source, gpu, str((job_type, scale)))
    if own is not None:
        return own, True
    key = str((job_type, 1))
    rate = _throughput(tput, source, gpu, key)
    if rate is None:
        if row is not None:
            why = f"no positive {gpu} throughput for {key} in {Path(source).name}"
            raise InstanceError(str(row[0]), f"line {row[1]}, column job_type", job_type, why)
        raise InstanceError(str(source), gpu, key, "no positive throughput for it")
    return rate, scale == 1


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
    tputs: Mapping[str, dict[str, float]],
    source: Path,
    job_type: str,
    scale: int,
    row: tuple[Path, int] | None = None,
) -> Speeds:
    """:class:`Speeds` of (job type, scale factor) from the throughputs of every GPU type
    (an unknown job type named at the trace's line ``row`` when given, :func:`gavel_rate`)."""
    scaled, one, phi = {}, {}, {}
    for gpu in GPU_TYPES:
        rate, own = gavel_rate(tputs[gpu], source, job_type, scale, gpu, row)
        single, _ = gavel_rate(tputs[gpu], source, job_type, 1, gpu, row)
        scaled[gpu], one[gpu] = 1.0 / rate, 1.0 / single
        phi[gpu] = min(1.0, rate / (scale * single)) if own else 1.0
    return Speeds(scaled, one, phi)


def known_type(bad: BadRows, trace: Path, error: InstanceError) -> None:
    """An error of :func:`gavel_rate` on a row of ``trace``: an unknown job type, a bad row
    (refused or skipped as ``bad`` says); any other (the throughputs file's) raised."""
    if error.source != str(trace):
        raise error
    bad.row(UNKNOWN, error)


def gavel_trace(
    trace: Path, throughputs: Path, limit: int | None = None, bad: BadRows | None = None
) -> list[tuple[GavelJob, Speeds]]:
    """The jobs of a Gavel trace by arrival (the first ``limit`` when given), each with its
    speeds on Gavel's GPU types; an error when there is none. Each bad row (a job type
    without throughput too) is refused or, as ``bad`` says, skipped and counted."""
    bad = BadRows() if bad is None else bad
    tputs = {gpu: gavel_throughputs(throughputs, gpu) for gpu in GPU_TYPES}
    cache: dict[tuple[str, int], Speeds] = {}
    out = []
    for g in sorted(gavel_jobs(trace, bad), key=lambda j: j.arrival):
        key = (g.job_type, g.scale)
        if key not in cache:
            try:
                cache[key] = speeds(tputs, throughputs, g.job_type, g.scale, (trace, g.line))
            except InstanceError as e:
                known_type(bad, trace, e)
                continue
        out.append((g, cache[key]))
    if not out:
        raise InstanceError(str(trace), "jobs", [], f"the trace holds no job{bad.aside()}")
    return out[:limit]


def usable_jobs(
    trace: Path,
    throughputs: Path,
    limit: int | None,
    bad: BadRows,
    make: Callable[[GavelJob, Speeds, float, str], T],
    fits: Callable[[int, T], None],
) -> Iterator[tuple[int, T]]:
    """A family's jobs from a Gavel trace, by arrival, each with its line in the trace:
    ``make(g, sp, first, name)`` for each row ``g`` (``first``: the arrival of the first
    usable row; names ``t0``, ``t1``, ...), the first ``limit`` usable ones. A job that
    ``fits(line, job)`` refuses (out of the family's ranges) is a bad row, refused or, as
    ``bad`` says, skipped and counted; an error when none is usable."""
    count, first = 0, 0.0
    for g, sp in gavel_trace(trace, throughputs, None, bad):
        if count == limit:
            break
        first = first if count else g.arrival
        job = make(g, sp, first, f"t{count}")
        try:
            fits(g.line, job)
        except InstanceError as e:
            bad.row(RANGE, e)
            continue
        count += 1
        yield g.line, job
    if not count:
        raise InstanceError(str(trace), "jobs", [], f"the trace holds no usable job{bad.aside()}")


def gavel_cluster(trace: Path, cluster: Mapping[str, int]) -> str:
    """The description of an instance read from ``trace`` on ``cluster`` (GPUs per type)."""
    spec = ":".join(str(cluster.get(t, 0)) for t in GPU_TYPES)
    return f"Gavel trace {Path(trace).name} on v100:p100:k80 = {spec}"


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


def _split(text: str) -> list[str]:
    """The cells of one CSV line (PAI's tables quote nothing: a plain split unless quoted)."""
    return next(csv.reader([text])) if '"' in text else text.split(",")


def _csv(
    path: Path, cols: tuple[str, ...], option: str, bad: BadRows
) -> Iterator[tuple[int, dict[str, str]]]:
    """(line number, row) of a PAI table, read as it streams (:func:`.rows.text_lines`);
    columns in the order ``cols`` unless a header row says otherwise; a row without one of
    them (its first missing named) or a bad line is a bad row."""
    src = str(path)
    at: dict[str, int] | None = None
    need = 0  # the fields a row needs
    for n, text in text_lines(path, option, ",", cols, bad):
        if not text.strip(" \t,"):
            continue  # no cell holds anything
        try:
            row = _split(text)
        except csv.Error as e:
            bad.row(FIELDS, InstanceError(src, f"line {n}", text, f"bad CSV: {e}"))
            continue
        if at is None:
            at = _header(row, cols, src) if n == 1 else None
            need = 1 + max(at.values()) if at is not None else len(cols)
            if at is not None:
                continue
            at = {c: k for k, c in enumerate(cols)}
        if len(row) < need:
            first = min((k, c) for c, k in at.items() if k >= len(row))[1]
            why = f"missing: expected {len(cols)} fields"
            bad.row(FIELDS, InstanceError(src, f"line {n}, column {first}", text, why))
            continue
        yield n, {c: row[k] for c, k in at.items()}


def _cell(src: str, n: int, col: str, text: str, rng: Range = LIMITS["time"]) -> float | None:
    """Cell ``col`` of row ``n`` of a PAI table: empty (a running job's end, a CPU task's
    GPUs) is None, else a number in ``rng`` (:func:`number_text`'s error when it is not)."""
    if not text or text.isspace():
        return None
    try:
        x = float(text)
        if rng.low <= x <= rng.high:  # the common case, without building the field's name
            return x
    except ValueError:
        pass
    return number_text(text, src, f"line {n}, column {col}", rng)


def _task_numbers(src: str, n: int, t: dict[str, str]) -> tuple[float | None, ...]:
    """(inst_num, plan_gpu, start_time, end_time) of task row ``n`` (plan_cpu and plan_mem
    checked too), each empty or in its :data:`LIMITS`."""
    num = _cell(src, n, "inst_num", t["inst_num"], LIMITS["instances"])
    plan = _cell(src, n, "plan_gpu", t["plan_gpu"], LIMITS["plan_gpu"])
    for col in ("plan_cpu", "plan_mem"):
        _cell(src, n, col, t[col], LIMITS["plan"])
    start = _cell(src, n, "start_time", t["start_time"])
    end = _cell(src, n, "end_time", t["end_time"])
    return num, plan, start, end


class _Tasks:
    """What the task table says of each job: GPUs (sum of inst_num x plan_gpu / 100), task
    names, the earliest launch (start_time) of its tasks and its line, and the jobs one of
    whose task rows was bad (skipped)."""

    def __init__(self, path: Path, bad: BadRows) -> None:
        self.gpus: dict[str, float] = {}
        self.names: dict[str, list[str] | int] = {}  # an int: the job-table line that read it
        self.launch: dict[str, tuple[float, int]] = {}
        self.tainted: set[str] = set()
        self.path = path
        for n, t in _csv(path, TASK_COLS, "tasks", bad):
            try:
                num, plan, start, end = _task_numbers(str(path), n, t)
            except InstanceError as e:
                bad.row(NUMBER, e)
                self.tainted.add(t["job_name"])
                continue
            self._add(n, t, (num, plan, start, end), bad)

    def _add(
        self, n: int, t: dict[str, str], numbers: tuple[float | None, ...], bad: BadRows
    ) -> None:
        """Task row ``n`` (its :func:`_task_numbers`): its times consistent, not listed
        before."""
        num, plan, start, end = numbers
        src, job, where = str(self.path), t["job_name"], f"line {n}, column"
        if start is not None and end is not None and end < start:
            why = f"before the task's start_time {t['start_time']}"
            bad.row(TIMES, InstanceError(src, f"{where} end_time", t["end_time"], why))
            self.tainted.add(job)
            return
        names = self.names.setdefault(job, [])
        assert isinstance(names, list)
        if t["task_name"] in names:
            why = f"a second task of this name in job {job!r}"
            bad.row(DUPLICATE, InstanceError(src, f"{where} task_name", t["task_name"], why))
            return
        names.append(t["task_name"])
        if num is not None and plan is not None:
            self.gpus[job] = self.gpus.get(job, 0.0) + num * plan / 100
        if start is not None and start < self.launch.get(job, (math.inf, 0))[0]:
            self.launch[job] = start, n


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


def _tags(path: Path, bad: BadRows) -> dict[str, str]:
    """``pai_group_tag_table``: the group of each inst_id (one row per inst_id)."""
    tags: dict[str, str] = {}
    for n, g in _csv(path, GROUP_COLS, "group_tags", bad):
        if g["inst_id"] in tags:
            why = "this inst_id listed twice"
            bad.row(
                DUPLICATE, InstanceError(str(path), f"line {n}, column inst_id", g["inst_id"], why)
            )
            continue
        tags[g["inst_id"]] = g["group"]
    return tags


def _run(
    src: str, n: int, j: dict[str, str], times: tuple[float, float], tasks: _Tasks, bad: BadRows
) -> float | None:
    """The run of job row ``n`` from ``times`` (its start and end), None when it is not
    positive or the row is bad (skipped): its end before its start or before a task's
    launch."""
    (start, end), where = times, f"line {n}, column end_time"
    if end < start:
        why = f"before the job's start_time {j['start_time']}"
        bad.row(TIMES, InstanceError(src, where, j["end_time"], why))
        return None
    launch, m = tasks.launch.get(j["job_name"], (start, 0))
    if launch > end:
        why = f"before its task's launch at {launch:g} ({tasks.path.name} line {m})"
        bad.row(TIMES, InstanceError(src, where, j["end_time"], why))
        return None
    run = end - max(start, launch)
    return run if run > 0 else None


def _job_tasks(src: str, n: int, name: str, tasks: _Tasks, bad: BadRows) -> list[str] | None:
    """The task names of the job ``name`` of row ``n``, or None for a bad row (skipped): a
    job listed before, a job without a task, or one of whose task rows was bad."""
    names = tasks.names.get(name)
    where = f"line {n}, column job_name"
    if isinstance(names, int):
        bad.row(DUPLICATE, InstanceError(src, where, name, f"the job of line {names} again"))
        return None
    if name in tasks.tainted:
        why = f"a bad row of this job in {tasks.path}"
        bad.row(TAINTED, InstanceError(src, where, name, why))
        return None
    if names is None:
        why = f"no task of this job in {tasks.path}"
        bad.row(UNKNOWN, InstanceError(src, where, name, why))
        return None
    tasks.names[name] = n
    return names


def pai_jobs(
    job_table: Path,
    task_table: Path,
    group_table: Path | None = None,
    bad: BadRows | None = None,
) -> list[PaiJob]:
    """The usable jobs of the PAI 2020 job and task tables (and the group tag table when
    given), read as the module docstring says; each bad row refused or, as ``bad`` says,
    skipped and counted."""
    bad = BadRows() if bad is None else bad
    tasks = _Tasks(task_table, bad)
    tags = {} if group_table is None else _tags(group_table, bad)
    out: list[PaiJob] = []
    src = str(job_table)
    for n, j in _csv(job_table, JOB_COLS, "trace", bad):
        name = j["job_name"]
        try:
            start = _cell(src, n, "start_time", j["start_time"])
            end = _cell(src, n, "end_time", j["end_time"])
        except InstanceError as e:
            bad.row(NUMBER, e)
            continue
        names = _job_tasks(src, n, name, tasks, bad)
        if names is None or start is None or end is None:
            continue  # a bad row, or a job still running
        run = _run(src, n, j, (start, end), tasks, bad)
        g = math.ceil(tasks.gpus.get(name, 0.0) - 1e-9)
        if run is None or g < 1:
            continue
        group = tags.get(j["inst_id"]) or f"{j['user']}|{'+'.join(sorted(names))}"
        out.append(PaiJob(n, group, j["user"], start, run, g))
    return out


__all__ = [
    "CLUSTER",
    "GAVEL_COLS",
    "LIMITS",
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
    "gavel_cluster",
    "gavel_trace",
    "known_type",
    "pai_jobs",
    "speeds",
    "usable_jobs",
]
