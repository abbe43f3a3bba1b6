"""ddlwmp at trace scale: `dlsched solve FILE` as a whole process on a 150,000-job workload.

    python benchmarks/trace_scale.py [--jobs 150000] [--gpus 2000] [--rounds 1]
                                     [--policies a-srpt | all] [--pooled] [--no-full]

The workload is ``dlsched generate ddlwmp --jobs N --gpus G --seed 1 --param setting=paper
--param load=0.9``, written once in each form (compact JSON, Parquet, and the full JSON of
before for comparison unless ``--no-full``) into a temporary folder. Each run is one child
process, ``dlsched solve FILE --method POLICY --bound`` (the text report, as a user runs it; with
``--param pooled=true`` for the pooled cluster), started fresh:

- seconds: its wall time, start to exit (imports, load, simulation, check, bound, report);
- load: ``dlsched.instances.load(FILE)`` alone, in another fresh process;
- peak RSS: the child's own maximum resident set (``os.wait4``'s rusage of that child; this
  process imports nothing of dlsched, so what a child inherits from it is small);
- sum C, flow time, bound, gap: the outcome's objective and its details ``flow_time_s``,
  ``flow_time_bound_s`` (Lemma 1 less the releases) and ``flow_time_gap``, read from the
  child itself (it wraps ``dlsched.api.solve`` to write them to a side file).

Medians over ``--rounds`` (forms and policies alternate within a round). ``--policies all``
runs every online policy on the compact form (with ``--pooled``: placement-aware and pooled
side by side, the difference is what placement costs). Prints a markdown table.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

#: The child: the command line of ``dlsched``, with ``api.solve`` wrapped to write the
#: outcome's numbers to the file named by argv[1] (everything else as ``dlsched`` runs).
CHILD = """
import json, sys
from dlsched import api, cli
real = api.solve
def solve(*args, **kwargs):
    out = real(*args, **kwargs)
    d = out.details
    keep = ("flow_time_s", "flow_time_bound_s", "flow_time_gap", "delays", "cluster")
    with open(sys.argv[1], "w") as fh:
        json.dump({"objective": out.objective, **{k: d[k] for k in keep if k in d}}, fh)
    return out
api.solve = solve
sys.exit(cli.main(sys.argv[2:]))
"""
#: Writes the workload in each form (argv: jobs, GPUs, folder, "full" or not) and prints the
#: online policies and the seconds the generation took: in a child, so that this process
#: stays small (a child's peak RSS counts the memory of the process it was forked from).
MAKE = """
import sys, time
from pathlib import Path
from dlsched.instances import save
from dlsched.models.ddlwmp.generate import generate
from dlsched.models.ddlwmp.online import POLICIES
jobs, gpus, folder, full = int(sys.argv[1]), int(sys.argv[2]), Path(sys.argv[3]), sys.argv[4]
t = time.perf_counter()
inst = generate(jobs, gpus, 1, setting="paper", load=0.9)
print(time.perf_counter() - t, ",".join(POLICIES))
save(inst, folder / "w.json", "compact")
save(inst, folder / "w.parquet")
if full == "full":
    save(inst, folder / "w-full.json", "full")
"""
LOAD = """
import sys, time
from dlsched.instances import load
t = time.perf_counter()
inst = load(sys.argv[1])
print(time.perf_counter() - t, inst.num_jobs)
"""


def _child(argv: list[str]) -> tuple[float, float, int]:
    """Run ``argv`` as a child (stdout discarded): (wall seconds, peak RSS MB, exit status)."""
    t = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    return time.perf_counter() - t, usage.ru_maxrss / 1024, proc.returncode


def solve_run(path: Path, policy: str, pooled: bool, side: Path) -> dict[str, Any]:
    argv = [sys.executable, "-c", CHILD, str(side), "solve", str(path), "--method", policy]
    argv.append("--bound")  # the flow-time bound and gap of the table
    if pooled:
        argv += ["--param", "pooled=true"]
    seconds, rss, code = _child(argv)
    if code != 0:
        raise SystemExit(f"{' '.join(argv[3:])} exited with {code}")
    out = json.loads(side.read_text())
    load = subprocess.run(
        [sys.executable, "-c", LOAD, str(path)], capture_output=True, text=True, check=True
    )
    return {**out, "seconds": seconds, "rss_mb": rss, "load_s": float(load.stdout.split()[0])}


def _median(runs: list[dict[str, Any]], key: str) -> float:
    return statistics.median(r[key] for r in runs)


def _row(form: str, size: int, policy: str, pooled: bool, runs: list[dict[str, Any]]) -> str:
    last = runs[-1]  # the numbers of the schedule are the same in every round
    return (
        f"| {form} | {size / 1e6:.1f} | {policy} | {'pooled' if pooled else 'placement'} "
        f"| {_median(runs, 'seconds'):.1f} | {_median(runs, 'load_s'):.2f} "
        f"| {_median(runs, 'rss_mb'):.0f} | {last['objective']:.6g} | {last['flow_time_s']:.4g} "
        f"| {last['flow_time_bound_s']:.4g} | {last['flow_time_gap']:.2%} |"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--jobs", type=int, default=150_000)
    ap.add_argument("--gpus", type=int, default=2000)
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--policies", default="a-srpt", help="comma-separated, or all")
    ap.add_argument("--pooled", action="store_true", help="also on the pooled cluster")
    ap.add_argument("--no-full", action="store_true", help="skip the full JSON form")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        made = subprocess.run(
            [sys.executable, "-c", MAKE, str(args.jobs), str(args.gpus), tmp]
            + ["none" if args.no_full else "full"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.split()
        gen, every = float(made[0]), made[1].split(",")
        policies = every if args.policies == "all" else args.policies.split(",")
        forms = {"compact JSON": folder / "w.json", "Parquet": folder / "w.parquet"}
        if not args.no_full:
            forms["full JSON"] = folder / "w-full.json"
        plan = [(form, "a-srpt", False) for form in forms]
        plan += [
            ("compact JSON", p, pooled)
            for p in policies
            for pooled in ((False, True) if args.pooled else (False,))
            if (p, pooled) != ("a-srpt", False)
        ]
        runs: dict[tuple[str, str, bool], list[dict[str, Any]]] = {key: [] for key in plan}
        for _ in range(args.rounds):
            for form, policy, pooled in plan:
                got = solve_run(forms[form], policy, pooled, folder / "side.json")
                runs[form, policy, pooled].append(got)
                print(f"{form} {policy} pooled={pooled}: {got}", file=sys.stderr, flush=True)
        print(
            f"{args.jobs:,} jobs on {args.gpus // 8} x 8 GPUs (generated in {gen:.1f} s), "
            f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}; "
            f"medians of {args.rounds} round(s).\n"
        )
        print(
            "| form | MB | policy | cluster | seconds | load (s) | peak RSS (MB) | sum C (s) "
            "| flow time (s) | flow bound (s) | gap |"
        )
        print("|---|---|---|---|---|---|---|---|---|---|---|")
        for form, policy, pooled in plan:
            size = forms[form].stat().st_size
            print(_row(form, size, policy, pooled, runs[form, policy, pooled]))


if __name__ == "__main__":
    main()
