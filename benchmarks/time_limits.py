"""Does every method keep its time limit? Every method of every family at ``--time-limit`` 1 and
5 on a large generated instance, wall time against the limit plus the deadline's grace.

    python benchmarks/time_limits.py [--limits 1 5] [--families placement ddlwmp ...] [--out FILE]

Each run is a fresh process (as ``dlsched solve``): the instance is loaded and the family's
methods imported first, then the clock covers :func:`dlsched.models.run_method`, checking
included. A ratio above 1 is an
overrun. A method that refuses the instance (bad input, exit status 2) is listed with its
reason; a run still going at ten times its limit plus a minute is stopped and listed as such.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

#: family -> (jobs, workers or GPUs or servers, generator parameters): the instance, seed 0
INSTANCES: dict[str, tuple[int, int, dict[str, Any]]] = {
    "placement": (50, 400, {}),
    "hare": (1000, 16, {}),
    "ddlwmp": (2000, 64, {}),
    "elastic": (300, 20, {"setting": "paper"}),
}


def method_params(family: str, method: str, instance: Any) -> dict[str, Any]:
    """What a method needs beyond the instance (placement p3: a category, here the workers
    shared as evenly as the jobs allow)."""
    if family == "placement" and method == "p3":
        s, k = instance.num_jobs, instance.num_workers
        return {"category": [k // s + (i < k % s) for i in range(s)]}
    return {}


def one(path: str, method: str, limit: float) -> dict[str, Any]:
    """Run ``method`` on the instance at ``path`` under ``limit`` seconds (in this process)."""
    from dlsched.errors import DlschedError
    from dlsched.instances import load
    from dlsched.models import MethodOptions, methods, run_method
    from dlsched.solvers import SolveOptions

    instance = load(path)
    methods(instance.family)  # the family's modules are imported before the clock starts
    params = method_params(instance.family, method, instance)
    t0 = time.perf_counter()
    try:
        out = run_method(instance, method, MethodOptions(SolveOptions(time_limit=limit), params))
    except DlschedError as e:
        return {"refused": str(e).splitlines()[0]}
    return {"wall": time.perf_counter() - t0, "status": str(out.status)}


def spawn(path: str, method: str, limit: float) -> dict[str, Any]:
    cmd = [sys.executable, __file__, "--one", path, method, str(limit)]
    try:
        got = subprocess.run(cmd, capture_output=True, text=True, timeout=10 * limit + 60)
    except subprocess.TimeoutExpired:
        return {"stopped": 10 * limit + 60}
    if got.returncode != 0:
        return {"refused": (got.stderr.strip().splitlines() or ["failed"])[-1]}
    return dict(json.loads(got.stdout.strip().splitlines()[-1]))


def instance_file(family: str, folder: str) -> str:
    from dlsched import families

    jobs, workers, params = INSTANCES[family]
    fam = families.get(family)
    instance = fam.generate(jobs, workers, 0, **params)
    path = os.path.join(folder, f"{family}.json")
    Path(path).write_text(json.dumps(fam.to_dict(instance)))
    return path


def cell(run: dict[str, Any], limit: float) -> str:
    from dlsched.solvers.deadline import grace

    if "refused" in run:
        return "refused"
    if "stopped" in run:
        return f"> {run['stopped']:.0f} s"
    ratio = run["wall"] / (limit + grace(limit))
    flag = " **over**" if ratio > 1 else ""
    return f"{run['wall']:.2f} s, {ratio:.2f}{flag} ({run['status']})"


def table(families: list[str], limits: list[float]) -> list[str]:
    from dlsched.models import methods

    heads = " | ".join(f"--time-limit {lim:g}" for lim in limits)
    lines = [f"| family | method | {heads} |", "|---|---|" + "---|" * len(limits)]
    with tempfile.TemporaryDirectory() as folder:
        for family in families:
            path = instance_file(family, folder)
            for method in methods(family):
                runs = [spawn(path, method, lim) for lim in limits]
                reasons = [r["refused"] for r in runs if "refused" in r]
                row = " | ".join(cell(r, lim) for r, lim in zip(runs, limits, strict=True))
                lines.append(f"| {family} | {method} | {row} |")
                print(lines[-1] + (f"  ({reasons[0]})" if reasons else ""), flush=True)
    return lines


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--one", nargs=3, metavar=("INSTANCE", "METHOD", "LIMIT"))
    ap.add_argument("--limits", nargs="+", type=float, default=[1.0, 5.0])
    ap.add_argument("--families", nargs="+", default=list(INSTANCES))
    ap.add_argument("--out", help="write the table here (markdown)")
    args = ap.parse_args()
    if args.one:
        path, method, limit = args.one
        print(json.dumps(one(path, method, float(limit))))
        return 0
    load = os.getloadavg()[0]
    sizes = ", ".join(f"{f} {INSTANCES[f][0]} jobs x {INSTANCES[f][1]}" for f in args.families)
    head = [
        f"Python {platform.python_version()}, {platform.machine()}, {os.cpu_count()} CPUs, "
        f"load average {load:.1f} at the start; one run each; instances (seed 0): {sizes}.",
        "",
    ]
    lines = head + table(args.families, args.limits)
    if args.out:
        Path(args.out).write_text("\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
