"""``dlsched demo``: every method on the bundled instances, verified, beside the certified
optimum (or bound) and the applicable guarantee."""

from __future__ import annotations

import time

from dlsched.bounds import TABLE_COLUMNS, compare, format_table
from dlsched.bounds.hare import theorem4_record
from dlsched.instances import load
from dlsched.models import MethodOptions
from dlsched.solvers import SolveOptions

PLACEMENT = [
    ("placement/liu2024-motivating", ["has", "jps", "optimus", "optimus-lb", "las", "exhaustive"]),
    ("placement/liu2024-s4k15-seed0", ["has", "jps", "optimus", "optimus-lb", "las"]),
    ("placement/liu2024-s4k30-seed0", ["has", "jps", "optimus", "optimus-lb", "las"]),
    ("placement/liu2024-s5k100-seed0", ["jps", "optimus", "optimus-lb", "las"]),
]
HARE = [
    ("hare/toy-2gpu", ["hare", "hare-strong", "gavel-fifo", "srtf", "sched-homo", "sched-allox"]),
    ("hare/theorem4-counterexample", ["hare", "hare-strong", "sched-homo"]),
]
COLUMNS = tuple(c for c in TABLE_COLUMNS if c != "guarantee_name")


def _show(name: str, rows: list) -> None:
    print(f"\n== {name}")
    print(format_table(rows, COLUMNS))


def run_demo(quick: bool = False) -> int:
    t0 = time.perf_counter()
    opts = MethodOptions(solve=SolveOptions(time_limit=60, seed=0))
    print("dlsched demo: each objective is re-verified by dlsched.check from the raw instance;")
    print("'ratio' is objective / certified optimum ('reference_kind' says if only a bound).")
    print("\n# placement (Liu et al., TPDS 2024): average JCT in seconds")
    for name, methods in PLACEMENT[: 2 if quick else None]:
        _show(name, compare(load(name), methods, "exact", opts))
    print("\n# hare (Chen et al., HPDC 2022): total weighted completion time")
    for name, methods in HARE:
        inst = load(name)
        rows = compare(inst, ["relaxation", *methods], "exact", opts)
        _show(name, rows)

    rec = theorem4_record(load("hare/theorem4-counterexample"))
    print(
        "\nTheorem 4 on hare/theorem4-counterexample: alpha =",
        rec.alpha,
        "guarantee =",
        rec.guarantee,
        "measured ratio =",
        rec.ratio,
        "violations:",
        list(rec.violations) or "none",
    )
    print(f"\ndemo finished in {time.perf_counter() - t0:.1f} s")
    return 0
