"""One user policy per online family on Gavel's traces, beside the family's shipped policy it
re-implements: flow time, the family's certified flow-time bound and the gap.

    python benchmarks/user_policies.py [--traces all | NAME,...] [--families hare,ddlwmp,elastic]
                                       [--time-limit 600] [-o benchmarks/RESULTS_user_policies.md]

The user policies are the examples of ``examples/policies.py``, loaded from the file as a
user's is, and run through ``dlsched.families.get(F).run_policy`` (the public policy interface:
the policy sees the family's view, never the instance): ``HareFifo`` beside hare's
``online-fifo``, ``DdlwmpFifo`` beside ddlwmp's ``wcs-subtime`` (placement-aware), ``ElasticFifo``
beside elastic's ``fifo``. The traces are those of ``benchmarks/trace_online.py``: the 15
Philly-derived traces of ``../shared/data/gavel/msr-traces-seed0``, read by each family as
``dlsched`` reads them (docs/traces.md). The family's bound is computed once per trace
(``bound s``), then both policies run with the bound asked for (``MethodOptions(bound=True)``,
found computed); ``s`` is each run's wall time. Rows are printed as they come, and the table is
written to ``-o`` at the end.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import platform
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

import trace_online  # noqa: E402

from dlsched import families  # noqa: E402
from dlsched.instances import load  # noqa: E402
from dlsched.models import MethodOptions, run_method  # noqa: E402

#: family -> (the example policy's class, the shipped policy it re-implements)
PAIRS = {
    "hare": ("HareFifo", "online-fifo"),
    "ddlwmp": ("DdlwmpFifo", "wcs-subtime"),
    "elastic": ("ElasticFifo", "fifo"),
}


def examples() -> Any:
    spec = importlib.util.spec_from_file_location("policies", ROOT / "examples" / "policies.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def bound_of(family: str, instance: Any) -> float:
    """The family's flow-time bound on ``instance`` computed (and kept with the instance
    object, as the benchmark of every policy does it); the seconds it took."""
    trace_online.INSTANCE = instance
    try:
        return trace_online.warm(family)
    finally:
        trace_online.INSTANCE = None


def figures(out: Any, seconds: float) -> dict[str, Any]:
    d = out.details
    keep = ("flow_time_s", "flow_time_bound_s", "flow_time_gap", "reason")
    return {"status": str(out.status), "seconds": seconds} | {k: d.get(k) for k in keep}


def one_trace(family: str, trace: Path, limit: float, policy: type) -> list[str]:
    """The rows of one trace: the user policy, then the shipped one."""
    instance = load(f"{trace_online.PREFIX[family]}{trace}")
    bound_s = bound_of(family, instance)
    opts = MethodOptions(time_limit=limit, bound=True)
    t = time.perf_counter()
    yours = families.get(family).run_policy(instance, policy(), opts)
    mine = figures(yours, time.perf_counter() - t)
    shipped_name = PAIRS[family][1]
    t = time.perf_counter()
    shipped = run_method(instance, shipped_name, MethodOptions(time_limit=limit, bound=True))
    theirs = figures(shipped, time.perf_counter() - t)
    same = mine["flow_time_s"] == theirs["flow_time_s"]
    rows = []
    for name, got in ((f"{policy.__name__} (yours)", mine), (shipped_name, theirs)):
        rows.append(row(trace.stem, instance.num_jobs, name, got, bound_s, same))
        print(rows[-1], file=sys.stderr, flush=True)
    return rows


def num(x: Any) -> str:
    return "-" if x is None else format(x, ".4g")


def row(trace: str, jobs: int, name: str, got: dict[str, Any], bound_s: float, same: bool) -> str:
    flow, bound, gap = got.get("flow_time_s"), got.get("flow_time_bound_s"), got["flow_time_gap"]
    ratio = "-" if flow is None or not bound else f"{flow / bound:.2f}"
    gap_text = "-" if gap is None else f"{gap:.1%}"
    if flow is None:
        gap_text = str(got.get("reason") or got["status"])[:60]
    return (
        f"| {trace} | {jobs} | {name} | {num(flow)} | {num(bound)} | {gap_text} | {ratio} "
        f"| {'yes' if same else 'no'} | {got['seconds']:.1f} | {bound_s:.1f} |"
    )


NOTE = (
    "The user policies are those of `examples/policies.py`, run through the public policy "
    "interface\n(`dlsched.families.get(F).run_policy`: they see the family's view, never the "
    "instance); each\nre-implements the shipped policy in the row below it, and `same flow` "
    "says whether the two flow\ntimes are equal. The bound is the family's certified lower "
    "bound on the total flow time (the\nsame for every policy of a family on a trace), gap = "
    "1 - bound / flow time; `bound s`: the\nseconds it took, once per trace; `s`: each run's "
    "wall time.\n"
)
HEAD = (
    "| trace | jobs | policy | flow time (s) | bound (s) | gap | flow / bound | same flow "
    "| s | bound s |\n|---|---|---|---|---|---|---|---|---|---|"
)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--traces", default="all", help="all, or trace names (file stems)")
    ap.add_argument("--families", default="hare,ddlwmp,elastic")
    ap.add_argument("--time-limit", type=float, default=600.0, help="seconds per policy run")
    ap.add_argument("-o", type=Path, default=ROOT / "benchmarks" / "RESULTS_user_policies.md")
    args = ap.parse_args()
    every = sorted(trace_online.TRACES.glob("*.trace"))
    if not every:
        raise SystemExit(f"no Gavel traces at {trace_online.TRACES}")
    names = None if args.traces == "all" else set(args.traces.split(","))
    traces = [t for t in every if names is None or t.stem in names]
    mod = examples()
    lines = [
        "## Your own online policy on Gavel's traces: flow time against the certified bound\n",
        f"`python benchmarks/user_policies.py`: {len(traces)} Philly-derived traces of Gavel, "
        f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, "
        f"load average {os.getloadavg()[0]:.1f} at the start; {args.time_limit:g} s per run.\n",
        NOTE,
    ]
    for family in args.families.split(","):
        t = time.perf_counter()
        policy = getattr(mod, PAIRS[family][0])
        rows = [r for trace in traces for r in one_trace(family, trace, args.time_limit, policy)]
        lines += [f"### {family} ({time.perf_counter() - t:.0f} s)\n", HEAD, *rows, ""]
    lines.append(f"Load average at the end {os.getloadavg()[0]:.1f}.")
    args.o.write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
