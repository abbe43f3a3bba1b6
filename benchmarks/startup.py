"""What a first call costs: a tiny solve's start-up beside ``python -c pass``, and the first exact
solve after a fresh, non-editable install (no compiled branch and bound yet).

    python benchmarks/startup.py [--rounds 5] [--skip-install] [--out FILE]

1. Start-up, in this checkout's environment: each command runs ``--rounds`` times, the commands
   alternating, and the CPU time of each run (user + system of the child, from
   ``resource.getrusage``) is recorded; the table gives medians. Target: the tiny solve
   (``hare/tcc2024-fig12 --method hlas``) at most 0.5 s of CPU.
2. First exact solve after a fresh install: a new virtual environment, ``uv pip install .`` (not
   editable; bytecode compiled as pip does), then ``dlsched solve hare/tcc2024-fig12 --method
   exact --json`` three times: at once (numba has compiled nothing: the route proves by CP-SAT
   and starts compiling the search in a detached process), once that compilation has written its
   cache, and again. Wall and CPU time of each, with the route's strategy. Target: the first at
   most 3 s. The CPU of the detached compilation is not the call's, and is reported apart.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TINY = ["solve", "hare/tcc2024-fig12", "--method", "hlas"]
EXACT = ["solve", "hare/tcc2024-fig12", "--method", "exact", "--json"]
#: further tiny solves, one per family (reported, no target)
OTHERS = [
    ["solve", "placement/liu2024-motivating", "--method", "has", "--category", "3,1"],
    ["solve", "ddlwmp/toy-2x4", "--method", "a-srpt"],
    ["solve", "elastic/intro-cifar10", "--method", "a-online"],
    ["solve", "hare/toy-2gpu", "--method", "greedy"],
]


def timed(
    argv: list[str], env: dict[str, str] | None = None, cwd: str | None = None
) -> tuple[float, float, str]:
    """(wall seconds, CPU seconds of the child and its children, stdout) of one run."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    out = subprocess.run(argv, capture_output=True, text=True, env=env, cwd=cwd, check=True)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, out.stdout


def startup(rounds: int) -> list[str]:
    python, cli = sys.executable, str(Path(sys.executable).parent / "dlsched")
    commands = {"python -c pass": [python, "-c", "pass"], "dlsched " + " ".join(TINY): [cli, *TINY]}
    commands |= {"dlsched " + " ".join(c): [cli, *c] for c in OTHERS}
    cpu: dict[str, list[float]] = {k: [] for k in commands}
    for _ in range(rounds):
        for name, argv in commands.items():
            cpu[name].append(timed(argv)[1])
    base = statistics.median(cpu["python -c pass"])
    lines = [
        f"Medians of {rounds} alternating rounds; CPU = user + system of the process.\n",
        "| command | CPU s | CPU s beyond `python -c pass` |",
        "|---|---:|---:|",
    ]
    for name, values in cpu.items():
        med = statistics.median(values)
        lines.append(f"| `{name}` | {med:.2f} | {med - base:.2f} |")
    return lines


def fresh_install(folder: Path) -> tuple[Path, float]:
    """A new environment with the package installed from this checkout, not editable."""
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-m", "venv", str(folder)], check=True)
    py = folder / "bin" / "python"
    uv = shutil.which("uv") or str(Path(sys.executable).parent / "uv")
    subprocess.run(
        [uv, "pip", "install", "--quiet", "--compile-bytecode", "--python", str(py), str(ROOT)],
        check=True,
    )
    return folder / "bin", time.perf_counter() - t0


def compiled(bin_dir: Path) -> bool:
    """Whether that environment's search is compiled (run outside this checkout, whose
    package would otherwise be imported)."""
    code = "from dlsched.models.hare import branch; print(branch.search_compiled())"
    argv = [str(bin_dir / "python"), "-c", code]
    out = subprocess.run(argv, capture_output=True, text=True, cwd=bin_dir)
    return out.stdout.strip() == "True"


def first_calls() -> list[str]:
    with tempfile.TemporaryDirectory(prefix="dlsched-fresh-") as tmp:
        bin_dir, install = fresh_install(Path(tmp) / "venv")
        env = {**os.environ, "TMPDIR": tmp}  # the compile lock of this environment alone
        assert not compiled(bin_dir), "a fresh install has a compiled search already"
        call = [str(bin_dir / "dlsched"), *EXACT]
        rows = [("at once, after installing", *timed(call, env, tmp))]
        t0 = time.perf_counter()
        while not compiled(bin_dir) and time.perf_counter() - t0 < 600:
            time.sleep(2)
        waited = time.perf_counter() - t0
        for label in ("once the search is compiled", "again"):
            rows.append((label, *timed(call, env, tmp)))
    lines = [
        f"A new environment, `uv pip install .` (not editable) in {install:.0f} s. The "
        f"background compilation finished {waited:.0f} s after the first call returned.\n",
        "| call | wall s | CPU s | status | objective | strategy |",
        "|---|---:|---:|---|---:|---|",
    ]
    for label, wall, cpu, out in rows:
        got = json.loads(out)
        strategy = got.get("details", {}).get("strategy", "-")
        lines.append(
            f"| {label} | {wall:.2f} | {cpu:.2f} | {got['status']} | {got['objective']:g} | "
            f"{strategy} |"
        )
    return lines


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--skip-install", action="store_true", help="only the start-up table")
    ap.add_argument("--out", type=Path, default=None)
    args = ap.parse_args()
    load = os.getloadavg()[0]
    head = [
        f"Python {platform.python_version()}, {os.cpu_count()} cores, load average at start "
        f"{load:.2f}.\n",
        "### Start-up of a tiny solve\n",
    ]
    lines = head + startup(args.rounds)
    if not args.skip_install:
        lines += ["", "### The first exact solve after a fresh install\n", *first_calls()]
    lines.append(f"\nLoad average at the end {os.getloadavg()[0]:.2f}.")
    text = "\n".join(lines) + "\n"
    print(text)
    if args.out:
        args.out.write_text(text)


if __name__ == "__main__":
    main()
