"""Does every method keep its time limit? Every method of every family at ``--time-limit`` 1 and
5 on a large generated instance, wall time against the limit plus the deadline's grace.

    python benchmarks/time_limits.py [--limits 1 5] [--families placement ddlwmp ...] [--out FILE]
        [--whole] [--sizes bench|issue]

Each run is a fresh process (as ``dlsched solve``): the instance is loaded and the family's
methods imported first, then the clock covers :func:`dlsched.models.run_method`, checking
included. With ``--whole``, the clock covers the whole process instead: ``dlsched solve FILE
--method M --time-limit L`` is spawned and timed from before its start to its exit (start-up,
imports, loading, the check and the printing included), which the command line's deadline
counts from its process's start. ``--sizes issue``: the sizes at which issue 34 measured whole
processes (placement 8 jobs x 200 GPUs, hare 40 x 8; ddlwmp and elastic as ``bench``). A ratio
above 1 is an overrun. A method that refuses the instance (bad input, exit status 2) is listed
with its reason; a run still going at ten times its limit plus a minute is stopped and listed
as such.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
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

#: The sizes at which issue 34 timed whole ``dlsched solve`` processes at ``--time-limit 2``.
ISSUE_INSTANCES: dict[str, tuple[int, int, dict[str, Any]]] = {
    **INSTANCES,
    "placement": (8, 200, {}),
    "hare": (40, 8, {}),
}

SIZES = {"bench": INSTANCES, "issue": ISSUE_INSTANCES}


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


def command() -> list[str]:
    """How this interpreter starts ``dlsched``: its console script beside it, else ``-m``."""
    script = shutil.which("dlsched", path=str(Path(sys.executable).parent))
    return [script] if script else [sys.executable, "-m", "dlsched.cli"]


def option_params(family: str, method: str, path: str) -> list[str]:
    """:func:`method_params` as command-line options."""
    from dlsched.instances import load

    params = method_params(family, method, load(path))
    return ["--category", ",".join(map(str, params["category"]))] if params else []


def whole(path: str, family: str, method: str, limit: float) -> dict[str, Any]:
    """``dlsched solve`` of ``method`` on ``path`` at ``limit``, timed as a whole process."""
    cmd = [*command(), "solve", path, "--method", method, "--time-limit", f"{limit:g}"]
    cmd += option_params(family, method, path)
    t0 = time.perf_counter()
    try:
        got = subprocess.run(cmd, capture_output=True, text=True, timeout=10 * limit + 60)
    except subprocess.TimeoutExpired:
        return {"stopped": 10 * limit + 60}
    wall = time.perf_counter() - t0
    if got.returncode != 0:
        return {"refused": (got.stderr.strip().splitlines() or ["failed"])[-1]}
    fields = dict(line.split(None, 1) for line in got.stdout.splitlines() if " " in line.strip())
    return {"wall": wall, "status": fields.get("status", "?").strip()}


def instance_file(family: str, folder: str, sizes: str = "bench") -> str:
    from dlsched import families

    jobs, workers, params = SIZES[sizes][family]
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


def table(
    families: list[str], limits: list[float], sizes: str = "bench", whole_process: bool = False
) -> list[str]:
    from dlsched.models import methods

    heads = " | ".join(f"--time-limit {lim:g}" for lim in limits)
    lines = [f"| family | method | {heads} |", "|---|---|" + "---|" * len(limits)]
    with tempfile.TemporaryDirectory() as folder:
        for family in families:
            path = instance_file(family, folder, sizes)
            for method in methods(family):
                if whole_process:
                    runs = [whole(path, family, method, lim) for lim in limits]
                else:
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
    ap.add_argument("--whole", action="store_true", help="time whole dlsched solve processes")
    ap.add_argument("--sizes", choices=sorted(SIZES), default="bench", help="instance sizes")
    args = ap.parse_args()
    if args.one:
        path, method, limit = args.one
        print(json.dumps(one(path, method, float(limit))))
        return 0
    load = os.getloadavg()[0]
    chosen = SIZES[args.sizes]
    sizes = ", ".join(f"{f} {chosen[f][0]} jobs x {chosen[f][1]}" for f in args.families)
    what = "whole processes" if args.whole else "run_method in a fresh process"
    head = [
        f"Python {platform.python_version()}, {platform.machine()}, {os.cpu_count()} CPUs, "
        f"load average {load:.1f} at the start; {what}, one run each; instances (seed 0): "
        f"{sizes}.",
        "",
    ]
    lines = head + table(args.families, args.limits, args.sizes, args.whole)
    if args.out:
        Path(args.out).write_text("\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
