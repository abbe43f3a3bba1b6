"""Speed and quality of the online hare policies (seed 004, Chen et al., IEEE TCC 2024),
measured side by side in one run.

    python benchmarks/bench_hare_online.py [--quick] [--out benchmarks/RESULTS_hare_online.md]

1. the paper's online simulation scale (160 GPUs of four types, 300 jobs of 2-10 rounds of 1-8
   tasks, arrivals at load 1) and ten times that scale: every policy, its setup (grouping),
   simulation, and the hare checker's verification;
2. the same paper-scale cluster with heavy-tailed round counts (Pareto), where LAS is meant to
   shine;
3. GPU_Grouping: 16 GPUs of 4 types in 4 groups (pooled MILP, the paper's binary MILP, greedy)
   and 160 GPUs in 40 groups under a 60 s limit;
4. empirical competitive ratios against the certified offline optimum (hare ``exact``) over
   load and heterogeneity; the instance of each policy's worst ratio is saved under
   ``benchmarks/worst_hare_online/``;
5. HLAS-P's predictors side by side (none, conservative, history by name, history by name and
   user with NAS groups, oracle) on a paper-scale workload of named jobs and NAS groups.

The ``check (s)`` column is the hare checker alone; ``record (s)`` the rest of the verified
outcome (mostly the instance's hash).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import tempfile
import time
from dataclasses import replace
from pathlib import Path

import numpy as np

from dlsched.models import MethodOptions, run_method
from dlsched.models.hare.check import check_schedule
from dlsched.models.hare.generate import GPU_TYPES
from dlsched.models.hare.instance import HareInstance, HareJob
from dlsched.models.hare.online.grouping import group_gpus
from dlsched.models.hare.online.methods import ONLINE_POLICIES
from dlsched.models.hare.online.ratios import HETEROGENEITY, ratio_grid, ratio_instance, ratio_sweep
from dlsched.models.hare.relaxation import combinatorial_bound
from dlsched.solvers import SolveOptions
from dlsched.solvers.deadline import Deadline

HERE = Path(__file__).parent


def fmt(x, nd=2):
    return "-" if x is None else f"{x:.{nd}f}"


def paper_scale(jobs: int, gpus: int, seed: int = 0) -> HareInstance:
    inst = ratio_instance(jobs, gpus, seed, load=1.0, rounds=(2, 10), tasks=(1, 8))
    return replace(inst, name=f"paper-scale-{jobs}x{gpus}")


def heavy_tailed(jobs: int, gpus: int, seed: int = 0) -> HareInstance:
    """Rounds 1 + Pareto(1.2) (capped at 200): many small jobs, a few huge ones."""
    inst = paper_scale(jobs, gpus, seed)
    rng = np.random.default_rng(seed + 1)
    rounds = np.minimum(1 + rng.pareto(1.2, size=jobs) * 3, 200).astype(int)
    js = tuple(replace(j, rounds=int(r)) for j, r in zip(inst.jobs, rounds, strict=True))
    return replace(inst, name=f"heavy-tailed-{jobs}x{gpus}", jobs=js)


def policy_rows(inst: HareInstance, runs: list[tuple[str, str, dict]] | None = None) -> list[str]:
    """Every policy on ``inst`` (or the (label, method, params) ``runs``); the ratio is to the
    solver-free certified lower bound of the hare family (each job's chain on its fastest GPU,
    or Smith's rule on one machine |M| times faster, whichever is larger)."""
    lower = combinatorial_bound(inst)["bound"]
    rows = []
    for name, m, params in runs or [(m, m, {}) for m in ONLINE_POLICIES]:
        t0 = time.perf_counter()
        out = run_method(inst, m, MethodOptions(params=params))
        wall = time.perf_counter() - t0
        t1 = time.perf_counter()
        check_schedule(inst, out.solution)
        check = time.perf_counter() - t1
        d = out.details
        record = wall - d["setup_time"] - d["simulation_time"] - check
        rows.append(
            f"| {inst.name} | {inst.num_tasks} | {name} | {fmt(d['average_jct'])} | "
            f"{out.objective:.6g} | {out.objective / lower:.3f} | "
            f"{d['setup_time']:.2f} | {d['simulation_time']:.2f} | "
            f"{check:.2f} | {max(record, 0.0):.2f} | {wall:.2f} |"
        )
    return rows


POLICY_HEADER = (
    "| instance | tasks | policy | average JCT | sum w C | / lower bound | setup (s) | "
    "simulate (s) | check (s) | record (s) | total (s) |\n" + "|---" * 11 + "|"
)

#: Table II's eight models; a job of model k runs about MODEL_ROUNDS[k] rounds.
MODELS = ("vgg19", "resnet50", "inception3", "bert", "transformer", "deepspeech", "fastgcn")
MODELS += ("graphsage",)
MODEL_ROUNDS = (3, 8, 5, 10, 6, 4, 2, 7)


def named_workload(
    jobs: int, gpus: int, seed: int = 0, nas: int = 20, size: int = 5
) -> tuple[HareInstance, dict[str, str], dict[str, list[str]]]:
    """The paper-scale cluster with named jobs: ``nas`` NAS groups of ``size`` members (same
    profile, arriving together; one survives 10-30 rounds, the others are killed after 1-4),
    the rest of Table II's models with model-dependent round counts; users by model (the
    NAS groups by one user each). Returns the instance, ``users`` and ``nas_groups``."""
    base = paper_scale(jobs, gpus, seed)
    rng = np.random.default_rng(seed + 2)
    out, users, groups = [], {}, {}
    for n, j in enumerate(base.jobs):
        g, i = divmod(n, size)
        if g < nas:
            head = base.jobs[g * size]
            rounds = int(rng.integers(10, 31)) if i == 0 else int(rng.integers(1, 5))
            name = f"nas{g}-{i}"
            j = replace(head, rounds=rounds)
            groups.setdefault(f"search{g}", []).append(name)
            users[name] = f"researcher{g % 4}"
        else:
            k = int(rng.integers(len(MODELS)))
            rounds = max(1, round(MODEL_ROUNDS[k] * rng.uniform(0.7, 1.3)))
            name = f"{MODELS[k]}-{n}"
            users[name] = f"team-{MODELS[k]}"
        out.append(replace(j, name=name, rounds=rounds))
    inst = replace(base, name=f"named-nas-{jobs}x{gpus}", jobs=tuple(out))
    return inst, users, groups


def predictor_rows(idle: str, spacing: str = "linear") -> list[str]:
    inst, users, groups = named_workload(300, 160)
    side = {"users": users, "nas_groups": groups}
    runs = [("hlas", "hlas", {})] + [
        (f"hlas-p {label}", "hlas-p", {"predictor": name, **extra})
        for label, name, extra in (
            ("none", "none", {}),
            ("conservative", "conservative", {}),
            ("history (names)", "history", {}),
            ("history (names, users, NAS)", "history", side),
            ("oracle", "oracle", {}),
        )
    ]
    tag = f"[{idle}{'' if spacing == 'linear' else ', ' + spacing}]"
    opts = {"group_idle": idle, "spacing": spacing}
    runs = [(f"{name} {tag}", m, {**p, **opts}) for name, m, p in runs]
    return policy_rows(inst, runs)


def mixed(counts: tuple[int, ...], jobs: int, seed: int) -> HareInstance:
    rng = np.random.default_rng(seed)
    types = [t for t, c in zip(GPU_TYPES, counts, strict=False) for _ in range(c)]
    js = []
    for n in range(jobs):
        bc, bs = rng.uniform(1, 5), rng.uniform(0.1, 1)
        js.append(
            HareJob(
                f"j{n}",
                0.0,
                1.0,
                1,
                1,
                tuple(round(bc * GPU_TYPES[t][0], 1) for t in types),
                tuple(round(bs * GPU_TYPES[t][1], 1) for t in types),
            )
        )
    name = "gpus-" + "-".join(f"{c}{t}" for t, c in zip(GPU_TYPES, counts, strict=False))
    return HareInstance(name, tuple(f"{t}-{k}" for k, t in enumerate(types)), tuple(js))


def grouping_rows(inst: HareInstance, groups: int, limit: float, binary: bool) -> list[str]:
    rows = []
    runs = [("exact (pooled)", "exact", True)]
    if binary:
        runs.append(("exact (binary z, as (4)-(6))", "exact", False))
    runs.append(("greedy", "greedy", None))
    best = None  # the pooled route's bound: the optimum when it is certified
    for label, how, pooled in runs:
        res = group_gpus(inst, groups, how, pooled=pooled, deadline=Deadline.after(limit))
        best = res.bound if best is None else best
        above = None if not best else res.spread / best - 1
        rows.append(
            f"| {inst.name} ({inst.num_gpus} GPUs, {inst.num_jobs} job profiles) | {groups} | "
            f"{label} | {res.status} | {res.spread:.4f} | {fmt(res.bound, 4)} | "
            f"{fmt(res.gap, 4)} | {fmt(above, 3)} | {res.wall_time:.2f} |"
        )
    return rows


GROUPING_HEADER = (
    "| GPUs | groups | method | status | spread | own bound | own gap | above the pooled bound | "
    "time (s) |\n|---|---|---|---|---|---|---|---|---|"
)


def ratio_section(quick: bool) -> list[str]:
    per_cell = 2 if quick else 4
    insts = ratio_grid(per_cell=per_cell)
    worst_dir = HERE / "worst_hare_online"
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "ratios.jsonl"
        opts = MethodOptions(solve=SolveOptions(time_limit=30))
        worst = ratio_sweep(insts, path, options=opts, worst_dir=worst_dir)
        records = [json.loads(line) for line in path.read_text().splitlines()]
    out = [
        f"{len(insts)} instances (4 jobs of 1-3 rounds of 1-2 tasks, 3 GPUs), "
        f"{per_cell} per (heterogeneity, load) cell; ratio = sum w C / certified optimum.",
        "",
        "| policy | worst ratio | reference | worst instance | mean ratio |"
        + "".join(f" mean ({h}) |" for h in HETEROGENEITY),
        "|---|---|---|---|---|" + "---|" * len(HETEROGENEITY),
    ]
    kinds = {r["reference_kind"] for r in records if r["method"] != "exact"}
    for m in ONLINE_POLICIES:
        mine = [r for r in records if r["method"] == m and r["ratio"] is not None]
        mean = np.mean([r["ratio"] for r in mine])
        by_level = [
            np.mean([r["ratio"] for r in mine if f"-{h}-" in r["instance"]]) for h in HETEROGENEITY
        ]
        w = worst[m]
        out.append(
            f"| {m} | {w['ratio']:.3f} | {w['reference_kind']} | {w['instance']} | {mean:.3f} |"
            + "".join(f" {x:.3f} |" for x in by_level)
        )
    out += ["", f"Reference kinds: {', '.join(sorted(kinds))}."]
    loads = sorted({float(r["instance"].split("-load")[1].split("-")[0]) for r in records})
    out += ["", "Mean ratio by load:", "", "| policy |" + "".join(f" load {x:g} |" for x in loads)]
    out.append("|---|" + "---|" * len(loads))
    for m in ONLINE_POLICIES:
        cells = []
        for x in loads:
            tag = f"-load{x:g}-"
            vals = [r["ratio"] for r in records if r["method"] == m and tag in r["instance"]]
            cells.append(f" {np.mean(vals):.3f} |")
        out.append(f"| {m} |" + "".join(cells))
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--out", default=str(HERE / "RESULTS_hare_online.md"))
    args = ap.parse_args()
    lines = [
        "## hare online (seed 004: GPU_Grouping, HLAS, HLAS-P, online baselines)",
        "",
        f"Machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
        f"Python {platform.python_version()}. One run; compare side by side.",
        "",
        "### Paper scale and ten times it (load 1, uniform 2-10 rounds)",
        "",
        POLICY_HEADER,
    ]
    scales = [(300, 160)] if args.quick else [(300, 160), (3000, 1600)]
    for jobs, gpus in scales:
        lines += policy_rows(paper_scale(jobs, gpus))
    lines += ["", "### Heavy-tailed rounds (paper scale)", "", POLICY_HEADER]
    lines += policy_rows(heavy_tailed(300, 160))
    lines += ["", "### GPU_Grouping", "", GROUPING_HEADER]
    lines += grouping_rows(mixed((7, 5, 3, 1), 8, 0), 4, 10.0, binary=True)
    if not args.quick:
        lines += grouping_rows(mixed((70, 40, 30, 20), 300, 0), 40, 60.0, binary=False)
    lines += ["", "### HLAS-P's predictors (paper scale, named jobs and NAS groups)", ""]
    lines += [
        "300 jobs on 160 GPUs: 20 NAS groups of 5 (one survivor of 10-30 rounds, four killed "
        "after 1-4), 200 jobs of Table II's models with model-dependent rounds; group_idle "
        "all (as written) and any, with the default linear thresholds and with geometric ones.",
        "",
        POLICY_HEADER,
    ]
    lines += predictor_rows("all") + predictor_rows("any") + predictor_rows("any", "geometric")
    lines += ["", "### Empirical competitive ratios (online vs certified offline optimum)", ""]
    lines += ratio_section(args.quick)
    Path(args.out).write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
