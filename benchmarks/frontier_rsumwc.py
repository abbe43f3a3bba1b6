"""R || sum w_j C_j past the published benchmark sizes: the exact route at 60 s and 300 s,
beside the previous code, side by side in one run.

    python benchmarks/frontier_rsumwc.py --previous ../prev [--sizes 20x200,40x400]
        [--limits 60,300] [--seeds 0,1] [--out benchmarks/RESULTS_frontier_rsumwc.md]

``--previous``: a checkout of the code to compare with (``git worktree add ../prev 1dc9f86``);
without it only this tree runs. Every run is a child process (this tree's or the previous
one's ``dlsched`` on ``PYTHONPATH``) of ``exact`` on ``generate_unrelated(jobs, GPUs, seed)``
(p integer in [1, 30], w in [1, 100], all at 0, no sync), under the command line's heartbeat;
the two codes alternate which runs first. Per run: status, incumbent, bound, gap, wall time,
peak resident memory (the child and its forks), and the bound's trajectory: (seconds, bound)
read from the heartbeat's progress lines (every 10 s, both codes alike) and, for this tree,
the route's own record of every rise (``bound_trajectory``). The load average is recorded
before each run: the machine is shared; run the long sizes last.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).parent
ROOT = HERE.parent
SIZES = ((20, 200), (40, 400), (50, 1000), (100, 2000))
#: a heartbeat line: "dlsched: <label>: <t> s of <limit> s, <stage> ... Lagrangian bound <b>"
PROGRESS = re.compile(r": (\d+) s of [\d.]+ s, .*Lagrangian bound ([\d.e+]+)")


def child(gpus: int, jobs: int, seed: int, limit: float) -> None:
    """One run in this process (the ``dlsched`` found on ``PYTHONPATH``): a JSON line."""
    import resource

    from dlsched.models import MethodOptions, run_method
    from dlsched.models.hare.generate import generate_unrelated
    from dlsched.solvers import SolveOptions
    from dlsched.solvers.progress import heartbeat

    inst = generate_unrelated(jobs, gpus, seed)
    with heartbeat(f"exact on {inst.name}", limit):
        out = run_method(inst, "exact", MethodOptions(SolveOptions(limit)))
    rss = max(
        resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
        resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss,
    )
    keep = ("incumbent_from", "colgen_bound", "colgen_iterations", "colgen_pricing_rounds")
    print(
        json.dumps(
            {
                "status": str(out.status),
                "objective": out.objective,
                "bound": out.bound,
                "gap": out.gap,
                "wall": out.wall_time,
                "peak_mb": rss / 1024,
                "trajectory": out.details.get("bound_trajectory"),
                **{k: out.details.get(k) for k in keep},
            }
        )
    )


def run(tree: Path, gpus: int, jobs: int, seed: int, limit: float) -> dict:
    """A child run of ``tree``'s code; its JSON line with the heartbeat's trajectory."""
    env = {**os.environ, "PYTHONPATH": str(tree)}
    load = os.getloadavg()[0]
    args = [sys.executable, str(Path(__file__).resolve()), "--child"]
    args += [str(gpus), str(jobs), str(seed), str(limit)]
    done = subprocess.run(args, env=env, cwd=tree, capture_output=True, text=True, check=False)
    lines = [ln for ln in done.stdout.splitlines() if ln.startswith("{")]
    if done.returncode != 0 or not lines:
        return {"status": f"failed ({done.returncode})", "load": load, "beats": []}
    beats = [(int(t), float(b)) for t, b in PROGRESS.findall(done.stderr)]
    return {**json.loads(lines[-1]), "load": load, "beats": beats}


def fmt(x: float | None, nd: int = 0) -> str:
    return "-" if x is None else f"{x:,.{nd}f}"


def pct(x: float | None) -> str:
    return "-" if x is None else f"{100 * x:.3f} %"


def trajectory(r: dict) -> str:
    """The bound's trajectory, at most six points: the route's own record, else the
    heartbeat's."""
    points = r.get("trajectory") or r.get("beats") or []
    if len(points) > 6:
        step = (len(points) - 1) / 5
        points = [points[round(k * step)] for k in range(6)]
    return ", ".join(f"{t:.0f} s: {b:,.0f}" for t, b in points) or "-"


def table(rows: list[tuple[str, int, float, str, dict]]) -> list[str]:
    out = [
        "| instance | limit (s) | code | status | incumbent | bound | gap | wall (s) | "
        "peak MB | load | bound trajectory (s: bound) |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for name, _, limit, code, r in rows:
        out.append(
            f"| {name} | {limit:g} | {code} | {r['status']} | {fmt(r.get('objective'))} | "
            f"{fmt(r.get('bound'))} | {pct(r.get('gap'))} | {fmt(r.get('wall'), 1)} | "
            f"{fmt(r.get('peak_mb'))} | {r['load']:.1f} | {trajectory(r)} |"
        )
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--child", nargs=4, help=argparse.SUPPRESS)
    ap.add_argument("--previous", type=Path, help="a checkout of the previous code")
    ap.add_argument("--sizes", default=",".join(f"{m}x{n}" for m, n in SIZES))
    ap.add_argument("--limits", default="60,300")
    ap.add_argument("--seeds", default="0,1")
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    if args.child:
        gpus, jobs, seed, limit = args.child
        return child(int(gpus), int(jobs), int(seed), float(limit))
    codes = [("this", ROOT)] + ([("previous", args.previous.resolve())] if args.previous else [])
    rows = []
    for k, (size, seed, limit) in enumerate(
        (s, int(seed), float(lim))
        for s in args.sizes.split(",")
        for seed in args.seeds.split(",")
        for lim in args.limits.split(",")
    ):
        gpus, jobs = map(int, size.split("x"))
        for code, tree in codes if k % 2 == 0 else codes[::-1]:  # alternate who goes first
            r = run(tree, gpus, jobs, seed, limit)
            rows.append((f"unrelated-{gpus}x{jobs}-s{seed}", k, limit, code, r))
            print(table([rows[-1]])[-1], flush=True)
    text = [
        "\n## R || sum w_j C_j past the published sizes (the exact route's frontier)\n",
        "`benchmarks/frontier_rsumwc.py`: `exact` on `generate_unrelated(jobs, GPUs, seed)` "
        "(p in [1, 30], w in [1, 100], all at 0), this code beside the previous one "
        f"({args.previous.name if args.previous else 'not run'}), run alternately, one child "
        "process per run; load = 1-min load average before the run (2 shared cores).\n",
        *table(rows),
    ]
    if args.out:
        Path(args.out).write_text("\n".join(text) + "\n")
    else:
        print("\n".join(text))


if __name__ == "__main__":
    main()
