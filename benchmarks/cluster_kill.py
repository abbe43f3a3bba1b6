"""A sweep on an existing Dask cluster loses nothing when a worker is killed -9 mid-run.

    python benchmarks/cluster_kill.py [--count 200] [--method FILE.py:FUNCTION]

Starts ``dask scheduler`` and ``dask worker ADDRESS --nworkers 2 --nthreads 1`` on 127.0.0.1
(Dask's defaults: daemonic worker processes under a nanny), runs ``dlsched sweep placement
--count N --methods has,METHOD --scheduler ADDRESS`` (METHOD by default
``examples/rules.py:placement_all_on_fastest``), kills one worker process with SIGKILL once
a tenth of the records are written, and checks the file when the sweep ends: every (instance,
method) record present once, none an error. Prints one JSON line of figures.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent


def free_address() -> str:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return f"tcp://127.0.0.1:{s.getsockname()[1]}"


def start_cluster(address: str, logs: Path) -> list[subprocess.Popen[bytes]]:
    port = address.rsplit(":", 1)[1]
    commands = [
        ["scheduler", "--host", "127.0.0.1", "--port", port, "--no-dashboard"],
        ["worker", address, "--nworkers", "2", "--nthreads", "1", "--no-dashboard"],
    ]
    procs = []
    for i, args in enumerate(commands):
        log = (logs / f"dask{i}.log").open("w")
        procs.append(
            subprocess.Popen(
                [str(BIN / "dask"), *args],
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )  # fmt: skip
        )
    from distributed import Client

    with Client(address, timeout=120) as client:
        client.wait_for_workers(2, timeout=120)
    return procs


def worker_pid(address: str) -> int:
    """The process id of one worker (not its nanny)."""
    from distributed import Client

    with Client(address, timeout=60) as client:
        return int(next(iter(client.run(os.getpid).values())))


def lines(path: Path) -> int:
    return len(path.read_text().splitlines()) if path.exists() else 0


def run(count: int, method: str, folder: Path) -> dict[str, object]:
    address = free_address()
    procs = start_cluster(address, folder)
    out = folder / "sweep.jsonl"
    cmd = [str(BIN / "dlsched"), "sweep", "placement", "--count", str(count), "--jobs", "3",
           "--gpus", "6", "--methods", f"has,{method}", "--time-limit", "60",
           "--scheduler", address, "--quiet", "-o", str(out)]  # fmt: skip
    t0 = time.perf_counter()
    sweep = subprocess.Popen(cmd, cwd=ROOT)
    killed_at = None
    try:
        while sweep.poll() is None:
            if killed_at is None and lines(out) >= 3 * count // 10:
                os.kill(worker_pid(address), signal.SIGKILL)
                killed_at = lines(out)
            time.sleep(0.2)
    finally:
        for p in reversed(procs):
            os.killpg(p.pid, signal.SIGKILL)
            p.wait()
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    keys = [(r["instance_hash"], r["method"]) for r in rows]
    return {
        "count": count,
        "method": method,
        "exit": sweep.returncode,
        "seconds": round(time.perf_counter() - t0, 1),
        "killed_after_records": killed_at,
        "records": len(rows),
        "expected": 3 * count,
        "each_once": len(keys) == len(set(keys)),
        "errors": sum(r["status"] not in ("optimal", "feasible") for r in rows),
        "load": round(os.getloadavg()[0], 1),
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--count", type=int, default=200)
    ap.add_argument("--method", default="examples/rules.py:placement_all_on_fastest")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        figures = run(args.count, args.method, Path(folder))
    print(json.dumps(figures))
    whole = figures["records"] == figures["expected"] and figures["each_once"]
    ok = whole and not figures["errors"] and figures["exit"] == 0
    return 0 if ok and figures["killed_after_records"] is not None else 1


if __name__ == "__main__":
    sys.exit(main())
