"""Heuristics at full speed: ``dlsched solve`` as a whole process, with and without the
certified bound, side by side with the previous release; and the peak memory of a large
answer printed as JSON.

    python benchmarks/bound_timings.py [--rounds 3] [--previous 33a46ce | --previous-tree DIR]
                                       [--jobs 150000] [--out benchmarks/RESULTS_bound_timings.md]

The previous release is checked out at ``--previous`` into a temporary git worktree (removed at
the end; or an existing checkout, ``--previous-tree``); each run is a fresh child ``python -m
dlsched.cli solve FILE --method M`` of one tree or the other (its ``PYTHONPATH``; bytecode
cached, as in an installed package: one untimed run of each tree first), standard output to
/dev/null. Per (instance, method), one round runs the previous release (whose heuristics
always computed their bound), then this tree without ``--bound``, then with it: alternating,
so that the load of the shared machine falls on all three alike. Figures are medians over
``--rounds``, and their ratios to the previous release's:

- wall: the child's wall time, start to exit (imports, load, the method, the report);
- CPU: its user + system time (``os.wait4``), what the machine's load inflates least;
- peak: its maximum resident set.

The instances: elastic in Section 7's setting (``dlsched generate elastic --jobs 300 --gpus 150
--param setting=paper --param horizon=300``: ``a-online``), hare online at the paper's scale
(300 jobs on 160 GPUs of four types, as ``bench_hare_online.py``: ``hlas``, ``hlas-p``,
``2d-las``, ``online-fifo``), each written once to a JSON file; and ddlwmp's ``--jobs`` workload
of ``trace_scale.py`` (compact JSON, 2,000 GPUs, paper setting, load 0.9), ``a-srpt --json``:
the answer (68 MB of JSON) printed whole before, written as it goes now (``--jobs 0``: not
run). The load average (``uptime``) is printed beside the figures.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
#: Writes the instances (argv: folder, ddlwmp jobs): in a child, so this process stays small.
MAKE = """
import sys
from pathlib import Path
sys.path.insert(0, sys.argv[3])
from bench_hare_online import paper_scale
from dlsched.instances import save
from dlsched.models.ddlwmp.generate import generate as ddlwmp
from dlsched.models.elastic.generate import generate as elastic
folder, jobs = Path(sys.argv[1]), int(sys.argv[2])
save(elastic(300, 150, 0, setting="paper", horizon=300), folder / "elastic.json")
save(paper_scale(300, 160), folder / "hare.json")
if jobs:
    save(ddlwmp(jobs, 2000, 1, setting="paper", load=0.9), folder / "ddlwmp.json", "compact")
"""
#: (instance file, method, extra arguments, label) of the timings.
TIMINGS = [
    ("elastic.json", "a-online", (), "elastic Section 7, 300 jobs x 150 servers"),
    *(
        ("hare.json", m, (), "hare online, 300 jobs x 160 GPUs")
        for m in ("hlas", "hlas-p", "2d-las", "online-fifo")
    ),
]


def worktree(commit: str, folder: Path) -> Path:
    """The previous release checked out (detached) under ``folder``."""
    path = folder / "previous"
    subprocess.run(
        ["git", "-C", str(ROOT), "worktree", "add", "--detach", str(path), commit],
        check=True,
        capture_output=True,
    )
    return path


def child(tree: Path, argv: list[str]) -> dict[str, float]:
    """``python -m dlsched.cli ARGV`` on ``tree``: wall and CPU seconds, peak RSS MB."""
    env = {**os.environ, "PYTHONPATH": str(tree)}
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # as an installed package: bytecode cached
    t = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, "-m", "dlsched.cli", *argv],
        cwd=tree,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{tree.name}: dlsched {' '.join(argv)} failed")
    return {"wall": wall, "cpu": usage.ru_utime + usage.ru_stime, "mb": usage.ru_maxrss / 1024}


def _median(runs: list[dict[str, float]], key: str) -> float:
    return statistics.median(r[key] for r in runs)


def _cells(runs: list[dict[str, float]], prev: list[dict[str, float]] | None = None) -> str:
    """Wall, CPU and peak of ``runs`` (medians), with the wall and CPU ratios to ``prev``."""
    wall, cpu, mb = (_median(runs, k) for k in ("wall", "cpu", "mb"))
    if prev is None:
        return f"{wall:.2f} | {cpu:.2f} | {mb:.0f}"
    ratio = f"{wall / _median(prev, 'wall'):.2f} / {cpu / _median(prev, 'cpu'):.2f}"
    return f"{wall:.2f} | {cpu:.2f} | {mb:.0f} | **{ratio}**"


def timings(files: Path, previous: Path, rounds: int) -> list[str]:
    """The table of heuristics: previous release, this tree without and with the bound."""
    lines = [
        "| instance | method | previous: wall (s) | CPU (s) | MB | now, no bound: wall (s) "
        "| CPU (s) | MB | ratio to previous (wall / CPU) | now, --bound: wall (s) | CPU (s) | MB "
        "| ratio to previous (wall / CPU) |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for name, method, extra, label in TIMINGS:
        argv = ["solve", str(files / name), "--method", method, "--time-limit", "600", *extra]
        runs: dict[str, list[dict[str, float]]] = {"prev": [], "now": [], "bound": []}
        for _ in range(rounds):
            runs["prev"].append(child(previous, argv))
            runs["now"].append(child(ROOT, argv))
            runs["bound"].append(child(ROOT, [*argv, "--bound"]))
        lines.append(
            f"| {label} | {method} | {_cells(runs['prev'])} | {_cells(runs['now'], runs['prev'])} "
            f"| {_cells(runs['bound'], runs['prev'])} |"
        )
        print(lines[-1], file=sys.stderr, flush=True)
    return lines


def memory(files: Path, previous: Path, jobs: int) -> list[str]:
    """The peak of ``solve --json`` on the ddlwmp workload, before and now, beside the text
    report's (one run each; the previous release computed the bound in every run)."""
    argv = ["solve", str(files / "ddlwmp.json"), "--method", "a-srpt", "--time-limit", "600"]
    rows = []
    for label, tree, more in (
        ("previous (its bound always), --json", previous, ["--json"]),
        ("previous (its bound always), text report", previous, []),
        ("now, --json", ROOT, ["--json"]),
        ("now, text report", ROOT, []),
        ("now, --bound --json", ROOT, ["--bound", "--json"]),
    ):
        got = child(tree, argv + more)
        rows.append(f"| {label} | {got['wall']:.1f} | {got['cpu']:.1f} | {got['mb']:.0f} |")
        print(rows[-1], file=sys.stderr, flush=True)
    head = [
        f"`dlsched solve` of a-srpt on the {jobs:,}-job ddlwmp workload (compact JSON):",
        "",
        "| run | wall (s) | CPU (s) | peak RSS (MB) |",
        "|---|---|---|---|",
    ]
    return head + rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--previous", default="33a46ce", help="the previous release's commit")
    ap.add_argument("--previous-tree", type=Path, default=None, help="or its checkout")
    ap.add_argument("--jobs", type=int, default=150_000, help="ddlwmp workload's jobs (0: none)")
    ap.add_argument("--out", type=Path, default=None, help="also write the section here")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        subprocess.run(
            [sys.executable, "-c", MAKE, tmp, str(args.jobs), str(ROOT / "benchmarks")],
            check=True,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
        )
        made = args.previous_tree is None
        previous = worktree(args.previous, folder) if made else args.previous_tree.resolve()
        try:
            for tree in (previous, ROOT):  # untimed: each tree's bytecode written
                child(tree, ["solve", str(folder / "hare.json"), "--method", "online-fifo"])
            load = os.getloadavg()
            table = timings(folder, previous, args.rounds)
            mem = memory(folder, previous, args.jobs) if args.jobs else []
            after = os.getloadavg()
        finally:
            if made:
                subprocess.run(
                    ["git", "-C", str(ROOT), "worktree", "remove", "--force", str(previous)],
                    check=False,
                    capture_output=True,
                )
    out = _section(args, table, mem, load, after)
    print(out)
    if args.out is not None:
        args.out.write_text(out)


def _commit(tree: Path) -> str:
    """The short commit checked out in ``tree``."""
    got = subprocess.run(
        ["git", "-C", str(tree), "rev-parse", "--short", "HEAD"], capture_output=True, text=True
    )
    return got.stdout.strip() or str(tree)


def _section(args: Any, table: list[str], mem: list[str], load: Any, after: Any) -> str:
    return "\n".join(
        [
            "## Heuristics with and without the bound, beside the previous release",
            "",
            "Measured by `python benchmarks/bound_timings.py` (whole processes, medians of "
            f"{args.rounds} alternating rounds; previous release: "
            f"{_commit(args.previous_tree) if args.previous_tree else args.previous}), "
            f"{platform.machine()}, {os.cpu_count()} cores, Python "
            f"{platform.python_version()}; load average (1, 5, 15 min) "
            f"{load[0]:.1f} {load[1]:.1f} {load[2]:.1f} before, "
            f"{after[0]:.1f} {after[1]:.1f} {after[2]:.1f} after.",
            "",
            *table,
            "",
            *mem,
            "",
        ]
    )


if __name__ == "__main__":
    main()
