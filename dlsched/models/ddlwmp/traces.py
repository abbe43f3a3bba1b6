"""Trace readers: Gavel's Philly-derived ``.trace`` files and the Alibaba PAI 2020 tables.

Each trace job becomes a ddlwmp job the way Section V of Luo et al. (seed 001) does it: jobs
recur in groups; each group gets one Table I model and a training configuration with the
trace's GPU count (a single-GPU configuration for single-GPU groups, otherwise a random model
among those with a configuration of that many GPUs, else the largest that fits), and
iterations = duration / alpha~^min (the approximate minimum per-iteration time). Releases are
rounded up to the slot grid.

- Gavel (tab-separated, one job per line): job type, command, steps argument, needs-data-dir,
  total steps, arrival time (s), scale factor (GPUs). The duration is total steps over the
  isolated V100 throughput of (job type, scale factor) in Gavel's
  ``isolated_throughputs.json`` (that of one GPU when the file has none for the scale factor:
  the steps are then per GPU, docs/errata.md); the group is (job type, scale factor),
  the user unknown.
- PAI 2020 (CSV, with or without a header row): ``pai_job_table`` (job_name, inst_id, user,
  status, start_time, end_time) and ``pai_task_table`` (job_name, task_name, inst_num, status,
  start_time, end_time, plan_cpu, plan_mem, plan_gpu, gpu_type); GPUs = ceil(sum over the job's
  tasks of inst_num x plan_gpu / 100); jobs without GPUs or without times are skipped; the
  group is ``pai_group_tag_table``'s group (inst_id, user, gpu_type_spec, group, workload) when
  given, else the user and the task names.
"""

from __future__ import annotations

import csv
import json
import math
from collections.abc import Iterable
from pathlib import Path

import numpy as np

from dlsched.errors import InstanceError
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
    rows: Iterable[Row], cluster: Cluster, name: str, seed: int = 0
) -> DdlwmpInstance:
    """ddlwmp jobs from trace rows (releases shifted so that the first is 0)."""
    rng = np.random.default_rng(seed)
    rows = sorted(rows, key=lambda r: r[2])
    if not rows:
        raise InstanceError(name, "jobs", [], "the trace holds no usable job")
    t0 = rows[0][2]
    groups: dict[tuple[str, int], tuple[str, tuple[int, ...]]] = {}
    out = []
    for k, (group, user, release, duration, gpus) in enumerate(rows):
        key = (group, gpus)
        if key not in groups:
            groups[key] = _config_for(gpus, rng, cluster.total_gpus)
        model, config = groups[key]
        st = stages(model, config)
        a = alpha_tilde_min(Job("", 0.0, 1, st), cluster)[0]
        slot = cluster.slot_s
        rel = math.ceil((release - t0) / slot - 1e-9) * slot
        n = max(1, round(duration * 1000 / a))
        out.append(Job(f"t{k}", rel, n, st, "ring", group, user, None, model))
    return DdlwmpInstance(name, cluster, tuple(out), f"trace {name}")


def read_gavel(trace: Path, throughputs: Path, cluster: Cluster, seed: int = 0) -> DdlwmpInstance:
    tput = json.loads(Path(throughputs).read_text())["v100"]
    rows: list[Row] = []
    for n, line in enumerate(Path(trace).read_text().splitlines()):
        if not line.strip():
            continue
        f = line.split("\t")
        if len(f) != 7:
            raise InstanceError(str(trace), f"line {n + 1}", line[:60], "expected 7 tab fields")
        try:
            steps, arrival, scale = int(f[4]), float(f[5]), int(f[6])
        except ValueError as err:
            raise InstanceError(str(trace), f"line {n + 1}", line[:60], str(err)) from None
        key = str((f[0], scale)) if str((f[0], scale)) in tput else str((f[0], 1))
        if key not in tput:
            raise InstanceError(str(throughputs), "v100", key, "no throughput for this job")
        rows.append((f"{f[0]}|{scale}", "", arrival, steps / tput[key], scale))
    return jobs_from_rows(rows, cluster, Path(trace).stem, seed)


JOB_COLS = ("job_name", "inst_id", "user", "status", "start_time", "end_time")
TASK_COLS = (
    *("job_name", "task_name", "inst_num", "status", "start_time", "end_time"),
    *("plan_cpu", "plan_mem", "plan_gpu", "gpu_type"),
)
GROUP_COLS = ("inst_id", "user", "gpu_type_spec", "group", "workload")


def _csv(path: Path, cols: tuple[str, ...]) -> list[dict[str, str]]:
    with open(path, newline="") as fh:
        rows = list(csv.reader(fh))
    if rows and tuple(rows[0][: len(cols)]) == cols:
        rows = rows[1:]
    return [dict(zip(cols, r, strict=False)) for r in rows if len(r) >= len(cols)]


def _float(v: str) -> float | None:
    try:
        x = float(v)
    except ValueError:
        return None
    return x if math.isfinite(x) else None


def read_pai(
    job_table: Path,
    task_table: Path,
    cluster: Cluster,
    group_table: Path | None = None,
    seed: int = 0,
) -> DdlwmpInstance:
    gpus: dict[str, float] = {}
    names: dict[str, list[str]] = {}
    for t in _csv(task_table, TASK_COLS):
        num, plan = _float(t["inst_num"]), _float(t["plan_gpu"])
        if num is not None and plan is not None:
            gpus[t["job_name"]] = gpus.get(t["job_name"], 0.0) + num * plan / 100
            names.setdefault(t["job_name"], []).append(t["task_name"])
    tags = {}
    if group_table is not None:
        tags = {g["inst_id"]: g["group"] for g in _csv(group_table, GROUP_COLS)}
    rows: list[Row] = []
    for j in _csv(job_table, JOB_COLS):
        start, end = _float(j["start_time"]), _float(j["end_time"])
        g = math.ceil(gpus.get(j["job_name"], 0.0) - 1e-9)
        if start is None or end is None or end <= start or g < 1:
            continue
        group = tags.get(j["inst_id"]) or f"{j['user']}|{'+'.join(sorted(names[j['job_name']]))}"
        rows.append((group, j["user"], start, end - start, min(g, cluster.total_gpus)))
    return jobs_from_rows(rows, cluster, Path(job_table).stem, seed)


def gavel_dir(repo_root: Path) -> Path:
    """Where Gavel's data lives: beside the repository, never copied into it."""
    return Path(repo_root).parent / "shared" / "data" / "gavel"


__all__ = ["gavel_dir", "jobs_from_rows", "read_gavel", "read_pai"]
