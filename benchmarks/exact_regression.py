"""The hare exact route at the sizes of ``bench_hare.py`` (sections 3, 6 and 7), this tree
beside the previous release, side by side in one run.

    python benchmarks/exact_regression.py --previous ../prev [--rounds 2] [--seeds 0]
        [--hetero 6] [--out benchmarks/RESULTS_exact_regression.md]

``--previous``: a checkout of the previous release (``git worktree add ../prev 33a46ce``,
outside this tree). Every run is a child process (one tree's ``dlsched`` on ``PYTHONPATH``) of
``exact`` on one instance with the section's limit and 2 threads, as ``bench_hare.py`` runs it.
The child first runs ``exact`` on a small instance of the same section, untimed, as
``bench_hare.py``'s one process has loaded the modules and compiled code its routes use after
its first instance; so *method s* (the Outcome's ``wall_time``) is the route's own work;
*process s* is the child's whole life. With ``--cold`` there is no warm-up: *method s* then
includes what the route loads (the routes import their solvers when they first run), and
*process s* is what one ``dlsched solve`` costs. Per instance the two trees alternate
which runs first, ``--rounds`` times; medians. Section 3: ``R-4x40-s0/s1`` (30 s); section 6:
``generate_unrelated`` at every size of ``UNRELATED_SIZES`` for ``--seeds`` (60 s); section 7:
the first ``--hetero`` instances of ``hetero_instances`` (30 s). Both trees must prove the
same optimum (else the run stops); the load average is recorded beside each instance.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
#: One run in a child (argv: file, limit, warm-up file or ""): ``exact`` on the warm-up file
#: (untimed), then on the file.
CHILD = """
import json, sys
from dlsched.instances import load
from dlsched.models import MethodOptions, run_method
from dlsched.solvers import SolveOptions
def exact(path, limit):
    return run_method(load(path), "exact", MethodOptions(SolveOptions(limit, threads=2)))
if sys.argv[3]:
    exact(sys.argv[3], 10.0)
out = exact(sys.argv[1], float(sys.argv[2]))
print(json.dumps({"status": str(out.status), "objective": out.objective,
                  "wall": out.wall_time, "numba": "numba" in sys.modules}))
"""
#: Writes the instances (argv: folder, seeds, hetero count), in this tree.
MAKE = """
import sys
from pathlib import Path
sys.path.insert(0, str(Path(sys.argv[4])))
from bench_hare import UNRELATED_SIZES, hetero_instances, unrelated
from dlsched.instances import save
from dlsched.models.hare.generate import generate_unrelated
folder, seeds = Path(sys.argv[1]), [int(s) for s in sys.argv[2].split(",")]
for seed in (0, 1):
    save(unrelated(40, 4, seed), folder / f"3-R-4x40-s{seed}.json")
for (m, n), allowed in UNRELATED_SIZES.items():
    for seed in (s for s in seeds if s in allowed):
        save(generate_unrelated(n, m, seed), folder / f"6-unrelated-{m}x{n}-s{seed}.json")
for k, inst in enumerate(hetero_instances(12)[: int(sys.argv[3])]):
    save(inst, folder / f"7-{k:02d}-{inst.name}.json")
save(generate_unrelated(8, 2, 99), folder / "warm-3.json")  # the warm-up of each section
save(generate_unrelated(8, 2, 99), folder / "warm-6.json")
save(hetero_instances(13)[-1], folder / "warm-7.json")
"""
LIMITS = {"3": 30.0, "6": 60.0, "7": 30.0}


def child(tree: Path, path: Path, limit: float, warm: Path | None = None) -> dict:
    """One run of ``exact`` in a child process on ``tree`` (after ``warm``'s, untimed): its
    line, process wall, peak MB."""
    env = {**os.environ, "PYTHONPATH": str(tree)}
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # as an installed package: bytecode cached
    started = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, "-c", CHILD, str(path), str(limit), str(warm or "")],
        cwd=tree,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    assert proc.stdout is not None
    text = proc.stdout.read()
    _, status, usage = os.wait4(proc.pid, 0)
    if os.waitstatus_to_exitcode(status) != 0 or not text.strip():
        raise SystemExit(f"{tree.name}: exact on {path.name} failed")
    got = json.loads(text.strip().splitlines()[-1])
    got.update(process=time.perf_counter() - started, mb=usage.ru_maxrss / 1024)
    return dict(got)


def _med(runs: list[dict], key: str) -> float:
    return statistics.median(r[key] for r in runs)


def compare(path: Path, trees: dict[str, Path], rounds: int, cold: bool) -> str:
    """The row of one instance: both trees ``rounds`` times, alternating which runs first;
    after the section's warm-up instance unless ``cold``."""
    section = path.name.split("-")[0]
    warm = None if cold else path.parent / f"warm-{section}.json"
    runs: dict[str, list[dict]] = {name: [] for name in trees}
    load = os.getloadavg()[0]
    for r in range(rounds):
        for name in list(trees)[:: 1 if r % 2 == 0 else -1]:
            runs[name].append(child(trees[name], path, LIMITS[section], warm))
    prev, now = runs["previous"], runs["this"]
    if {r["status"] for r in prev + now} == {"optimal"} and len(
        {round(r["objective"], 6) for r in prev + now}
    ) > 1:
        raise SystemExit(f"{path.name}: the two trees prove different optima")
    name = path.stem.split("-", 1)[1]
    cells = [
        f"{_med(prev, 'wall'):.2f} | {_med(now, 'wall'):.2f} | "
        f"**{_med(now, 'wall') / _med(prev, 'wall'):.2f}**",
        f"{_med(prev, 'process'):.2f} | {_med(now, 'process'):.2f} | "
        f"**{_med(now, 'process') / _med(prev, 'process'):.2f}**",
        f"{_med(prev, 'mb'):.0f} | {_med(now, 'mb'):.0f}",
    ]
    return (
        f"| {path.name[0]} | {name} | {prev[0]['status']} / {now[0]['status']} | "
        f"{now[0]['objective']:.10g} | {' | '.join(cells)} | "
        f"{'yes' if any(r['numba'] for r in now) else 'no'} | {load:.1f} |"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--previous", type=Path, required=True, help="the previous release's tree")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--seeds", default="0", help="section 6's seeds, comma-separated")
    ap.add_argument("--hetero", type=int, default=6, help="section 7's instances")
    ap.add_argument("--only", default="", help="run only files whose name contains this")
    ap.add_argument("--cold", action="store_true", help="no warm-up run before each")
    ap.add_argument("--out", type=Path, default=None)
    args = ap.parse_args()
    trees = {"previous": args.previous.resolve(), "this": ROOT}
    lines = [
        "| section | instance | status (previous / this) | objective | method s: previous "
        "| this | ratio | process s: previous | this | ratio | peak MB: previous | this "
        "| numba loaded (this) | load |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    with tempfile.TemporaryDirectory() as tmp:
        make = [sys.executable, "-c", MAKE, tmp, args.seeds, str(args.hetero), str(HERE)]
        subprocess.run(make, check=True, env={**os.environ, "PYTHONPATH": str(ROOT)})
        files = sorted(p for p in Path(tmp).glob("*.json") if not p.name.startswith("warm"))
        for tree in trees.values():  # untimed: bytecode and numba's caches written
            child(tree, files[0], 5.0)
        for path in files:
            if args.only in path.name:
                lines.append(compare(path, trees, args.rounds, args.cold))
                print(lines[-1], flush=True)
    head = (
        f"`python benchmarks/exact_regression.py{' --cold' if args.cold else ''}` "
        f"({args.rounds} alternating rounds, medians; "
        f"{os.cpu_count()} cores; load average at the end {os.getloadavg()[0]:.1f})"
    )
    out = "\n".join([head, "", *lines, ""])
    print(out)
    if args.out is not None:
        args.out.write_text(out)


if __name__ == "__main__":
    main()
