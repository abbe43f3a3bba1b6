"""Throughput of ``dlsched verify``: small instances with certified references per minute.

    python benchmarks/bench_verify.py [--quick] [--out benchmarks/RESULTS_verify.md]

1. In this process (``--processes 0``), warm: instances per minute of each of the cheapest
   theorems (a certified optimum or exact reference on every instance), measure only.
2. Dask's own cost: a task that does nothing, on a LocalCluster of 2 workers.
3. The runner (``verify.runner.run``: instances drawn, tasks, log, shrinking) on a warmed
   LocalCluster (processes, one thread each) of 1 and of 2 workers, the two clusters up side by
   side, paired runs alternated over rounds: instances per minute and the speed-up of 2
   workers over 1 (the median of the rounds' ratios: the machine is shared, and its load
   moves within seconds); for 000-has also with one task per instance (``task_seconds=0``).
4. End to end: ``dlsched verify 000-has --count N --processes W`` as a fresh command (interpreter
   start, imports, cluster start, tasks, log, report), wall time.
"""

from __future__ import annotations

import argparse
import logging
import os
import platform
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from statistics import median

from dlsched.runner import Pool
from dlsched.solvers import SolveOptions
from dlsched.verify import select
from dlsched.verify.runner import VerifyOptions, measure_instance, run, worker_modules

SO = SolveOptions(time_limit=30, threads=1)
ROUNDS = 4
CHEAP = ("000-has", "000-thm2", "002-lemma2", "001-thm1-perfect", "003-thm1")


def load() -> str:
    return f"{os.getloadavg()[0]:.1f}"


def serial_rates(count: int) -> list[tuple[str, int, float]]:
    out = []
    for t in select(list(CHEAP)):
        measure_instance(t.id, t.instance(10_000), SO, t)  # warm: imports, first solve
        insts = [t.instance(s) for s in range(count)]
        t0 = time.perf_counter()
        for inst in insts:
            assert all(r["status"] != "error" for r in measure_instance(t.id, inst, SO, t))
        out.append((t.id, count, count / (time.perf_counter() - t0) * 60))
    return out


def _noop(x: int) -> int:
    return x


def task_cost(pool: Pool, count: int) -> float:
    """Milliseconds per no-op task, ``count`` submitted at once and gathered as they finish."""
    from distributed import as_completed

    client = pool.start()
    client.gather([client.submit(_noop, k, pure=False) for k in range(20)])
    t0 = time.perf_counter()
    for f in as_completed([client.submit(_noop, k, pure=False) for k in range(count)]):
        f.result()
    return (time.perf_counter() - t0) / count * 1e3


def _cpu_seconds() -> float:
    """CPU time of this process and its finished children (a worker's, through client.run)."""
    me, kids = (
        resource.getrusage(resource.RUSAGE_SELF),
        resource.getrusage(resource.RUSAGE_CHILDREN),
    )
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


def pool_rate(pool: Pool, theorem_id: str, count: int, first_seed: int, task_seconds: float,
              ) -> tuple[float, float]:  # fmt: skip
    """Instances per minute of ``run`` on ``pool`` (a fresh log; instances drawn included), and
    the cores the workers got (their CPU seconds over the wall seconds)."""
    opts = VerifyOptions(count=count, first_seed=first_seed, solve=SO, progress=False,
                         task_seconds=task_seconds, shrink=0)  # fmt: skip
    client = pool.start()
    with tempfile.TemporaryDirectory() as d:
        cpu = sum(client.run(_cpu_seconds).values())
        t0 = time.perf_counter()
        s = run(select([theorem_id]), Path(d), opts, pool=pool)
        wall = time.perf_counter() - t0
        cpu = sum(client.run(_cpu_seconds).values()) - cpu
    assert s.tasks == count
    return count / wall * 60, cpu / wall


Runs = dict[int, list[tuple[float, float]]]


def side_by_side(counts: dict[str, int], rounds: int) -> list[tuple[str, str, int, Runs, str]]:
    """(theorem, grouping, instances, {workers: [(instances / min, cores used)]}, load) of
    ``rounds`` rounds, each a 1-worker and a 2-worker run one after the other (order
    alternating); the load average as the rounds end."""
    theorems = select(list(CHEAP))
    pools = {w: Pool(VerifyOptions(processes=w), worker_modules(theorems)) for w in (1, 2)}
    try:
        for w, pool in pools.items():  # warm: every theorem once on every worker
            pool.start()
            for tid in CHEAP:
                pool_rate(pool, tid, 2 * w, 50_000, 0.0)
        out = []
        plan = [(tid, "grouped", 0.3) for tid in counts] + [("000-has", "one per instance", 0.0)]
        for tid, label, ts in plan:
            runs: Runs = {1: [], 2: []}
            for r in range(rounds):
                for w in (1, 2) if r % 2 == 0 else (2, 1):
                    runs[w].append(pool_rate(pools[w], tid, counts[tid], 1_000 * (r + 1), ts))
            out.append((tid, label, counts[tid], runs, load()))
            print(out[-1], flush=True)
        return out
    finally:
        for pool in pools.values():
            pool.close()


def end_to_end(count: int, workers: int) -> tuple[float, str]:
    """Wall seconds of a fresh ``dlsched verify 000-has`` command, and its summary line."""
    with tempfile.TemporaryDirectory() as d:
        argv = [sys.executable, "-m", "dlsched.cli", "verify", "000-has", "--count", str(count),
                "--processes", str(workers), "--quiet", "--time-limit", "30", "-o", d]  # fmt: skip
        t0 = time.perf_counter()
        done = subprocess.run(argv, capture_output=True, text=True, check=True)
        return time.perf_counter() - t0, done.stdout.splitlines()[0]


def main() -> None:
    logging.getLogger("distributed").setLevel(logging.ERROR)
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    scale = 0.25 if args.quick else 1.0
    counts = {"000-has": 600, "000-thm2": 12, "002-lemma2": 80, "001-thm1-perfect": 24,
              "003-thm1": 80}  # fmt: skip
    counts = {k: max(4, int(v * scale)) for k, v in counts.items()}
    lines = ["## verify (dlsched verify throughput)", "",
             f"Machine: {platform.machine()}, {os.cpu_count()} cores, Python "
             f"{platform.python_version()}; solver threads 1 per task. A shared machine: the "
             "load average (1 min) is given beside each figure.", "",
             "### In one process, warm (`--processes 0`), measure only", "",
             "| theorem | instances | instances / min | load |", "|---|---|---|---|"]  # fmt: skip
    for tid, n, rate in serial_rates(max(4, int(40 * scale))):
        lines.append(f"| {tid} | {n} | {rate:,.0f} | {load()} |")
    with Pool(VerifyOptions(processes=2), worker_modules(select(list(CHEAP)))) as pool:
        noop = task_cost(pool, int(400 * scale))
    lines += ["", f"Dask's own cost per task (a no-op task, 2 workers, {int(400 * scale)} "
              f"submitted at once): {noop:.1f} ms (load {load()}).", "",
              "### The runner on a warmed Dask LocalCluster (processes, 1 thread each)", "",
              "`run` with a fresh log: instances drawn, tasks, rows streamed back and appended. "
              f"The 1-worker and the 2-worker clusters are up side by side; {ROUNDS} rounds, "
              "each a 1-worker run and a 2-worker run back to back (order alternating); rates "
              "are medians over the rounds, the speed-up is the median of the rounds' ratios "
              "(lowest-highest). *grouped*: consecutive instances in tasks of about 0.3 s (the "
              "runner's default); *one per instance*: one task per instance.", "",
              "*Cores*: the workers' CPU seconds over the wall seconds of the run (what the "
              "shared machine gave them), medians.", "",
              "| theorem | tasks | instances / run | 1 worker / min | 2 workers / min | "
              "speed-up (range) | cores, 1 / 2 workers | load |",
              "|---|---|---|---|---|---|---|---|"]  # fmt: skip
    for tid, label, n, runs, at in side_by_side(counts, ROUNDS):
        one, two = ([rate for rate, _ in runs[w]] for w in (1, 2))
        ratios = sorted(b / a for a, b in zip(one, two, strict=True))
        spread = f"{median(ratios):.2f}x ({ratios[0]:.2f}-{ratios[-1]:.2f})"
        cores = " / ".join(f"{median(c for _, c in runs[w]):.2f}" for w in (1, 2))
        lines.append(f"| {tid} | {label} | {n} | {median(one):,.0f} | {median(two):,.0f} | "
                     f"{spread} | {cores} | {at} |")  # fmt: skip
    lines += [
        "",
        "### End to end: a fresh `dlsched verify 000-has --count N --processes W`",
        "",
        "Interpreter start, imports, cluster start, tasks, log and report (md and html).",
        "",
        "| N | workers | wall s | instances / min | load |",
        "|---|---|---|---|---|",
    ]
    for n in (int(1000 * scale), int(200 * scale)):
        for w in (1, 2):
            wall, summary = end_to_end(n, w)
            assert summary.startswith(f"{n} instances run"), summary
            lines.append(f"| {n} | {w} | {wall:.1f} | {n / wall * 60:,.0f} | {load()} |")
            print(lines[-1], flush=True)
    text = "\n".join(lines) + "\n"
    print(text)
    if args.out:
        Path(args.out).write_text(text)


if __name__ == "__main__":
    main()
