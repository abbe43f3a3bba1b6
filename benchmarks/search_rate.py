"""Does ``verify --search`` certify candidates as fast as ``verify`` certifies its samples, and
does it scale with Dask processes as ``verify`` does?

    python benchmarks/search_rate.py [--budget 40] [--rounds 2]
                                     [--only 000-has,002-lemma2,003-thm1]

For each theorem (narrowed to its first method) and each cluster size (1 and 2 processes, one
thread each), on one LocalCluster per size, back to back: the search with ``--budget`` seconds
(``search.hunt_pair``: proposals, certified solves, the log); ``verify``'s seeded run
(``verify.runner.run``: draw, solve, log) of as many instances as the search certified; and
``verify``'s own measuring (``verify.runner._measure``: a task per instance, rows logged) of
the search's very candidates, so that the last two differ only in the instances (the search
drifts to larger ones, which cost more to certify). Rates are certified instances per minute of
wall time; each theorem's rounds alternate the order of the two sizes, and the median is
reported. *search / verify* is the search's rate over the sample's at one size, *search /
same* over verify's on the same candidates; the speed-up is that of 2 processes over 1 for
each. The machine may be shared: the load average is printed beside each row. (For a theorem
measured on recorded sub-cases, verify measures a candidate's every sub-case, the search one.)
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import tempfile
import time
from pathlib import Path
from statistics import median

from dlsched.bounds import locked_log
from dlsched.instances import from_dict
from dlsched.runner import Pool
from dlsched.solvers.base import SolveOptions
from dlsched.solvers.deadline import Deadline
from dlsched.verify import registry
from dlsched.verify.runner import LOG, Summary, VerifyOptions, _measure
from dlsched.verify.runner import run as run_sample
from dlsched.verify.search import (
    SEARCH_LOG,
    SearchOptions,
    hunt_pair,
    read_search_log,
    search_modules,
)

TIME_LIMIT = 10.0


def one_round(theorem_id: str, processes: int, budget: float, root: Path,
              ) -> tuple[float, float, float]:  # fmt: skip
    """(search, sample, same candidates) certified instances per minute on a cluster of
    ``processes``."""
    t = registry()[theorem_id]
    t = dataclasses.replace(t, methods=t.methods[:1])
    options = VerifyOptions(
        solve=SolveOptions(time_limit=TIME_LIMIT, threads=1), processes=processes, progress=False
    )
    d = Path(tempfile.mkdtemp(dir=root))
    with Pool(options, search_modules([t])) as pool:
        started = time.monotonic()
        with locked_log(d / SEARCH_LOG) as fd:
            res = hunt_pair(t, t.methods[0], d, options, SearchOptions(budget), pool, fd,
                            Deadline.after(budget))  # fmt: skip
        search_rate = 60 * res.record.solves / (time.monotonic() - started)
        count = max(res.record.solves, 1)
        started = time.monotonic()
        run_sample([t], d / "sample", dataclasses.replace(options, count=count, shrink=0), pool)
        sample_rate = 60 * count / (time.monotonic() - started)
        points = [r["point"]["instance"] for r in read_search_log(d / SEARCH_LOG) if "batch" in r]
        started = time.monotonic()
        drawn = [(t, from_dict(p)) for p in points]
        (d / "same").mkdir()
        _measure(drawn, d / "same" / LOG, d / "same", options, pool, Summary(d / "same"))
        same_rate = 60 * len(points) / (time.monotonic() - started)
    return search_rate, sample_rate, same_rate


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--budget", type=float, default=40.0)
    p.add_argument("--rounds", type=int, default=2)
    p.add_argument("--only", default="000-has,002-lemma2,003-thm1")
    a = p.parse_args()
    root = Path(tempfile.mkdtemp(prefix="search-rate-"))
    print(
        "| theorem | method | processes | search / min | verify / min | same / min "
        "| search / verify | search / same | load |"
    )
    print("|" + "---|" * 9, flush=True)
    for theorem_id in a.only.split(","):
        rates: dict[int, list[tuple[float, float, float]]] = {1: [], 2: []}
        loads = [os.getloadavg()[0]]
        for r in range(a.rounds):
            for processes in (1, 2) if r % 2 == 0 else (2, 1):
                rates[processes].append(one_round(theorem_id, processes, a.budget, root))
        loads.append(os.getloadavg()[0])
        method = registry()[theorem_id].methods[0]
        load = f"{loads[0]:.1f}-{loads[1]:.1f}"
        m = {k: [median(x[j] for x in v) for j in range(3)] for k, v in rates.items()}
        for k, (s, v, same) in m.items():
            print(f"| {theorem_id} | {method} | {k} | {s:,.0f} | {v:,.0f} | {same:,.0f} "
                  f"| {s / v:.2f} | {s / same:.2f} | {load} |", flush=True)  # fmt: skip
        up = [m[2][j] / m[1][j] for j in range(3)]
        print(f"| {theorem_id} | {method} | speed-up 2 / 1 | {up[0]:.2f}x | {up[1]:.2f}x "
              f"| {up[2]:.2f}x | | | {load} |", flush=True)  # fmt: skip
    print(
        f"\nBudget {a.budget:g} s a search, {a.rounds} rounds (medians), certification time "
        f"limit {TIME_LIMIT:g} s, {os.cpu_count()} cores."
    )


if __name__ == "__main__":
    main()
