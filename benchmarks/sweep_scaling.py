"""Does ``dlsched sweep`` use a second core? And does a killed sweep resume exactly?

    python benchmarks/sweep_scaling.py [--count 1000] [--jobs 2] [--gpus 2] [--kill-count 200]
                                       [--in-process]

1. The same sweep, a fresh ``dlsched sweep`` command each time (interpreter start, imports,
   cluster start, tasks, log), on a Dask LocalCluster of 1 process and of 2, one after the other
   in this run (``--in-process``: also with ``--processes 0``): ``--count`` placement instances
   of ``--jobs`` jobs on ``--gpus`` GPUs (2 and 2: about 0.2 CPU seconds an instance, so one
   process takes some 3 minutes on an idle machine) against the certified optimum (``exact``),
   with every method of the family that runs without a parameter (p3 needs a category;
   has-literal, whose printed tie rule may cycle, stops at its own cap). Wall seconds, instances
   per minute, the 1-minute load average at start and end, and the speed-up of 2 processes
   over 1. *Busy* is the sum of the records' own wall times over the run's wall time: the
   processes kept at work (at most 1 and 2), so a speed-up short of 2 with *busy* near 2 is the
   machine's contention (each method slower), not the runner idling. *CPU s* is that of the
   command and every process under it (sampled each half second), *cores used* the CPU seconds
   over the wall seconds: what the machine gave the run. Both logs must hold every (instance,
   method) key once and the same records (timings aside).
2. Kill -9: the sweep of ``--kill-count`` instances on 2 processes is started, killed with
   SIGKILL once a third of its records are written, and run again: the keys of the file are
   those of a complete sweep, each once, and the records written before the kill are kept.

The machine may be shared: the load average is printed beside each figure.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from dlsched.bounds import SWEEP_KEY
from dlsched.models import methods

FAMILY = "placement"
#: methods a sweep cannot run: they need a parameter the sweep does not pass
NEEDS_PARAM = {"p3"}
METHODS = [m for m in methods(FAMILY) if m != "exact" and m not in NEEDS_PARAM]
TIME_LIMIT = 60


def command(count: int, processes: int, log: Path) -> list[str]:
    return [sys.executable, "-m", "dlsched.cli", "sweep", FAMILY, "--count", str(count),
            "--jobs", str(ARGS.jobs), "--gpus", str(ARGS.gpus), "--methods", ",".join(METHODS),
            "--time-limit", str(TIME_LIMIT), "--processes", str(processes), "--quiet",
            "--counterexamples", str(log.parent / "cx"), "-o", str(log)]  # fmt: skip


def load() -> float:
    return os.getloadavg()[0]


def records(log: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in log.read_text().splitlines()]


def keys(log: Path) -> list[tuple[Any, ...]]:
    return [tuple(r[f] for f in SWEEP_KEY) for r in records(log)]


def comparable(log: Path) -> list[str]:
    """The records without their timings, sorted."""
    return sorted(json.dumps({k: v for k, v in r.items() if k != "wall_time"}, sort_keys=True)
                  for r in records(log))  # fmt: skip


def run_measured(argv: list[str]) -> float:
    """Run ``argv`` to its end; the CPU seconds of it and every process under it (sampled each
    half second, so a process that ends between samples loses up to its last half second)."""
    import psutil  # a dependency of distributed

    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL)
    cpu: dict[int, float] = {}
    while proc.poll() is None:
        try:
            tree = [psutil.Process(proc.pid), *psutil.Process(proc.pid).children(recursive=True)]
        except psutil.NoSuchProcess:
            break
        for p in tree:
            try:
                t = p.cpu_times()
            except psutil.NoSuchProcess:
                continue
            cpu[p.pid] = t.user + t.system
        time.sleep(0.5)
    if proc.wait() != 0:
        raise SystemExit(f"{' '.join(argv)} failed")
    return sum(cpu.values())


def timed(count: int, processes: int, folder: Path) -> dict[str, Any]:
    log = folder / f"p{processes}.jsonl"
    start_load, t0 = load(), time.perf_counter()
    cpu = run_measured(command(count, processes, log))
    wall = time.perf_counter() - t0
    found = keys(log)
    complete = len(found) == len(set(found)) == count * (len(METHODS) + 1)
    busy = sum(r["wall_time"] for r in records(log)) / wall
    return {"processes": processes, "wall": wall, "start_load": start_load, "end_load": load(),
            "log": log, "complete": complete, "busy": busy, "cpu": cpu}  # fmt: skip


def kill_check(count: int, folder: Path, complete: Path) -> dict[str, Any]:
    """Kill -9 a sweep on 2 processes a third of the way, rerun it, check its keys (each once,
    all of them, and those of the same instances in the ``complete`` sweep's file)."""
    log = folder / "killed.jsonl"
    want = count * (len(METHODS) + 1)
    quiet = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL}  # its leaked semaphores
    proc = subprocess.Popen(command(count, 2, log), **quiet)
    while proc.poll() is None and not (log.exists() and log.read_bytes().count(b"\n") >= want // 3):
        time.sleep(0.01)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    kept = log.read_bytes()
    before = kept[: kept.rfind(b"\n") + 1]  # a torn last line is not a record
    subprocess.run(command(count, 2, log), check=True, stdout=subprocess.DEVNULL)
    found = keys(log)
    return {
        "before": before.count(b"\n"),
        "after": len(found),
        "want": want,
        "repeated": len(found) - len(set(found)),
        "missing": want - len(set(found)),
        "kept": log.read_bytes().startswith(before),
        "same_keys": set(found) <= set(keys(complete)),
    }


def table(runs: list[dict[str, Any]], count: int) -> list[str]:
    lines = ["| processes | wall s | instances / min | busy | CPU s | cores used | load at start | "
             "load at end | complete |", "|---|---|---|---|---|---|---|---|---|"]  # fmt: skip
    for r in runs:
        shown = "0 (in this process)" if r["processes"] == 0 else str(r["processes"])
        lines.append(f"| {shown} | {r['wall']:.1f} | {count / r['wall'] * 60:.0f} | "
                     f"{r['busy']:.2f} | {r['cpu']:.0f} | {r['cpu'] / r['wall']:.2f} | "
                     f"{r['start_load']:.2f} | {r['end_load']:.2f} | "
                     f"{'yes' if r['complete'] else 'NO'} |")  # fmt: skip
    return lines


def main() -> None:
    folder = Path(tempfile.mkdtemp(prefix="sweep-scaling-"))
    runs = []
    for processes in ([0] if ARGS.in_process else []) + [1, 2]:
        runs.append(timed(ARGS.count, processes, folder))
        print(f"{processes} processes: {runs[-1]['wall']:.1f} s", file=sys.stderr, flush=True)
    one, two = runs[-2], runs[-1]
    same = comparable(one["log"]) == comparable(two["log"])
    kill = kill_check(min(ARGS.kill_count, ARGS.count), folder, one["log"])
    shown = " ".join(["dlsched", *command(ARGS.count, 2, Path("s.jsonl"))[3:]])
    print(f"## sweep scaling (dlsched sweep on the shared Dask runner)\n\n"
          f"Machine: {platform.machine()}, {os.cpu_count()} cores, Python "
          f"{platform.python_version()}. `{shown}`"
          f" with `--processes` 1 and 2: {ARGS.count} instances x {len(METHODS) + 1} methods "
          f"({', '.join(['exact', *METHODS])}), a fresh command each (start, imports, cluster, "
          "tasks, log). The machine may be shared: the 1-minute load average is beside each "
          "run.\n")  # fmt: skip
    print("\n".join(table(runs, ARGS.count)))
    print(f"\nSpeed-up of 2 processes over 1: **{one['wall'] / two['wall']:.2f}x** "
          f"(target >= 1.5); the two logs hold the same records (timings aside): "
          f"{'yes' if same else 'NO'}.\n")  # fmt: skip
    print("| kill -9 check | records before the kill | after the rerun | expected | repeated | "
          "missing | records kept |\n|---|---|---|---|---|---|---|")  # fmt: skip
    print(f"| {ARGS.kill_count} instances, 2 processes | {kill['before']} | {kill['after']} | "
          f"{kill['want']} | {kill['repeated']} | {kill['missing']} | "
          f"{'yes' if kill['kept'] and kill['same_keys'] else 'NO'} |")  # fmt: skip


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--count", type=int, default=1000)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--gpus", type=int, default=2)
    ap.add_argument("--kill-count", type=int, default=200)
    ap.add_argument("--in-process", action="store_true", help="also with --processes 0")
    ARGS = ap.parse_args()
    main()
