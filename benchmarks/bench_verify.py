"""Throughput of ``dlsched verify``: small instances with certified references per minute.

    python benchmarks/bench_verify.py [--quick] [--out benchmarks/RESULTS_verify.md]

1. In this process (``--workers 0``), warm: instances per minute of each of the cheapest
   theorems (a certified optimum or exact reference on every instance).
2. On a Dask LocalCluster (processes, one thread each) of 1 and then 2 workers, warmed (every
   worker has imported the families): the same tasks the runner submits (one per instance,
   results streamed back with ``as_completed``), instances per minute and the speed-up of 2
   workers over 1; then one end-to-end ``dlsched verify`` run (cluster start, log, report)
   for scale.
"""

from __future__ import annotations

import argparse
import logging
import os
import platform
import tempfile
import time
from pathlib import Path

from dlsched.solvers import SolveOptions
from dlsched.verify import select
from dlsched.verify.runner import WORKER_CONFIG, VerifyOptions, measure_instance, run

SO = SolveOptions(time_limit=30, threads=1)
CHEAP = ("000-has", "000-thm2", "002-lemma2", "001-thm1-perfect", "003-thm1")


def _warm() -> int:
    from dlsched.verify import registry

    return len(registry())


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


def dask_rate(theorem_id: str, count: int, workers: int) -> float:
    """Instances per minute on a warmed LocalCluster of ``workers`` processes."""
    import dask
    from distributed import Client, LocalCluster, as_completed

    (t,) = select([theorem_id])
    insts = [t.instance(s) for s in range(count)]
    with (
        dask.config.set(WORKER_CONFIG),
        LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                     dashboard_address=None, silence_logs=logging.ERROR) as cluster,
        Client(cluster) as client,
    ):  # fmt: skip
        client.run(_warm)
        warm = [client.submit(measure_instance, t.id, t.instance(10_000 + k), SO, t, pure=False)
                for k in range(2 * workers)]  # fmt: skip
        client.gather(warm)
        t0 = time.perf_counter()
        futures = [client.submit(measure_instance, t.id, i, SO, t, pure=False) for i in insts]
        for f in as_completed(futures):
            assert all(r["status"] != "error" for r in f.result()), f.result()
        return count / (time.perf_counter() - t0) * 60


def end_to_end(theorem_id: str, count: int, workers: int) -> tuple[float, int]:
    with tempfile.TemporaryDirectory() as d:
        t0 = time.perf_counter()
        s = run(select([theorem_id]), Path(d),
                VerifyOptions(count=count, solve=SO, workers=workers, progress=False))  # fmt: skip
        return time.perf_counter() - t0, s.rows


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    n_serial, n_dask = (10, 60) if args.quick else (40, 400)
    lines = ["## verify (dlsched verify throughput)", "",
             f"Machine: {platform.machine()}, {os.cpu_count()} cores, Python "
             f"{platform.python_version()}; solver threads 1 per task; load average at the "
             f"start {os.getloadavg()[0]:.1f} (a shared machine).", "",
             "### In one process, warm (`--workers 0`)", "",
             "| theorem | instances | instances / min |", "|---|---|---|"]  # fmt: skip
    for tid, n, rate in serial_rates(n_serial):
        lines.append(f"| {tid} | {n} | {rate:,.0f} |")
    lines += ["", "### Dask LocalCluster, warmed workers (processes, 1 thread each)", "",
              "| theorem | instances | 1 worker / min | 2 workers / min | speed-up |",
              "|---|---|---|---|---|"]  # fmt: skip
    for tid in ("000-has", "002-lemma2"):
        n = n_dask if tid == "000-has" else n_dask // 4
        one, two = dask_rate(tid, n, 1), dask_rate(tid, n, 2)
        lines.append(f"| {tid} | {n} | {one:,.0f} | {two:,.0f} | {two / one:.2f}x |")
    n = n_dask // 2
    wall, rows = end_to_end("000-has", n, 2)
    lines += ["", f"End to end, `dlsched verify 000-has --count {n} --workers 2` (cluster start, "
              f"log, shrinking; no report): {wall:.1f} s for {rows} rows, "
              f"{n / wall * 60:,.0f} instances / min.", ""]  # fmt: skip
    text = "\n".join(lines) + "\n"
    print(text)
    if args.out:
        Path(args.out).write_text(text)


if __name__ == "__main__":
    main()
