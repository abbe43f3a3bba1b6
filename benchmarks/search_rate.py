"""Does ``verify --search`` certify candidates as fast as ``verify`` certifies its samples, and
does it scale with Dask processes as ``verify`` does?

    python benchmarks/search_rate.py [--budget 40] [--rounds 2]
                                     [--only 000-has,002-lemma2,003-thm1]

For each theorem (narrowed to its first method) and each cluster size (1 and 2 processes, one
thread each), on one warmed LocalCluster per size: the search with ``--budget`` seconds
(``search.hunt_pair``: proposals, certified solves, the log), then ``verify``'s seeded run
(``verify.runner.run``: draw, solve, log) of as many instances as the search certified, on the
same cluster, back to back. Rates are certified instances per minute of wall time; each
theorem's rounds alternate the order of the two sizes, and the median is reported. *search /
verify* is the search's rate over the sample's at one size; the speed-up is that of 2
processes over 1 for each. The machine may be shared: the load average is printed beside each
row.
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
from dlsched.runner import Pool
from dlsched.solvers.base import SolveOptions
from dlsched.verify import registry
from dlsched.verify.runner import VerifyOptions, worker_modules
from dlsched.verify.runner import run as run_sample
from dlsched.verify.search import SEARCH_LOG, SearchOptions, hunt_pair

TIME_LIMIT = 10.0


def one_round(theorem_id: str, processes: int, budget: float, root: Path) -> tuple[float, float]:
    """(search, sample) certified instances per minute on a cluster of ``processes``."""
    t = registry()[theorem_id]
    t = dataclasses.replace(t, methods=t.methods[:1])
    options = VerifyOptions(
        solve=SolveOptions(time_limit=TIME_LIMIT, threads=1), processes=processes, progress=False
    )
    d = Path(tempfile.mkdtemp(dir=root))
    import dlsched.verify.search as search_module

    with Pool(options, [*worker_modules([t]), search_module.__name__]) as pool:
        started = time.monotonic()
        with locked_log(d / SEARCH_LOG) as fd:
            res = hunt_pair(t, t.methods[0], d, options, SearchOptions(budget), pool, fd)
        search_rate = 60 * res.hunt.solves / (time.monotonic() - started)
        count = max(res.hunt.solves, 1)
        started = time.monotonic()
        run_sample([t], d / "sample", dataclasses.replace(options, count=count, shrink=0), pool)
        sample_rate = 60 * count / (time.monotonic() - started)
    return search_rate, sample_rate


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--budget", type=float, default=40.0)
    p.add_argument("--rounds", type=int, default=2)
    p.add_argument("--only", default="000-has,002-lemma2,003-thm1")
    a = p.parse_args()
    root = Path(tempfile.mkdtemp(prefix="search-rate-"))
    print(
        "| theorem | method | search / min, 1 process | verify / min, 1 | search / verify, 1 "
        "| search / min, 2 processes | verify / min, 2 | search / verify, 2 "
        "| speed-up search | speed-up verify | load |"
    )
    print("|" + "---|" * 11, flush=True)
    for theorem_id in a.only.split(","):
        rates: dict[int, list[tuple[float, float]]] = {1: [], 2: []}
        loads = [os.getloadavg()[0]]
        for r in range(a.rounds):
            for processes in (1, 2) if r % 2 == 0 else (2, 1):
                rates[processes].append(one_round(theorem_id, processes, a.budget, root))
        loads.append(os.getloadavg()[0])
        s = {k: median(x for x, _ in v) for k, v in rates.items()}
        v = {k: median(y for _, y in v) for k, v in rates.items()}
        method = registry()[theorem_id].methods[0]
        print(
            f"| {theorem_id} | {method} | {s[1]:,.0f} | {v[1]:,.0f} | {s[1] / v[1]:.2f} "
            f"| {s[2]:,.0f} | {v[2]:,.0f} | {s[2] / v[2]:.2f} | {s[2] / s[1]:.2f}x "
            f"| {v[2] / v[1]:.2f}x | {loads[0]:.1f}-{loads[1]:.1f} |",
            flush=True,
        )
    print(
        f"\nBudget {a.budget:g} s a search, {a.rounds} rounds (medians), certification time "
        f"limit {TIME_LIMIT:g} s, {os.cpu_count()} cores."
    )


if __name__ == "__main__":
    main()
