"""Every online policy of every online family on Gavel's Philly-derived traces, with its total
flow time beside a certified lower bound on it.

    python benchmarks/trace_online.py [--traces all | NAME,...] [--families ddlwmp,hare,elastic]
                                      [--time-limit 60] [--parallel 2] [--pai-simulator PATH]

Each trace of ``../shared/data/gavel/msr-traces-seed0`` (read where it lies, with Gavel's
``isolated_throughputs.json``; nothing is copied) is read by each family as ``dlsched`` reads
it in place of an instance (docs/traces.md: ddlwmp on 8 x 8 V100s, placement-aware and pooled;
online hare on 36 V100 + 36 P100 + 36 K80 in rounds of an hour; elastic on the same GPUs in
servers of 4 and slots of six hours). The family's policies are imported and its flow-time
bound computed once per trace (``bound computed in``), then each policy runs in its own
process, forked from that state (``--parallel`` at once, default 2), as
``dlsched.models.run_method`` with ``--time-limit`` seconds and the bound asked for
(``MethodOptions(bound=True)``: each child finds it computed, the families keep it per
instance object):

- flow time, bound, gap: the outcome's details ``flow_time_s``, ``flow_time_bound_s`` (the
  family's certified bound, the same for every policy of a family on a trace) and
  ``flow_time_gap``; a run the limit cut has none;
- seconds: the child's wall time for ``run_method`` (simulation, check, the details; the
  bound found already computed);
- peak MB: the child's maximum resident set (``os.wait4``), what it shares with the process
  it was forked from (imports, the instance, the bound) included.

A last row per trace and family, ``reference``, is a clairvoyant list schedule: for hare the
family's own ``online-srtf`` baseline (online, clairvoyant about sizes: shortest remaining first on
the fastest free GPUs, tasks at round boundaries), the same schedule as its ``online-srtf`` row; for
elastic one written here (not a policy of the family, not online: it knows every job's size),
shortest first on whichever GPU type finishes a job soonest. Every feasible schedule's flow
time is at least the optimum's, so ``reference / bound`` bounds how far the bound is from the
optimum, whatever the policies. Below each family's table, per trace: the best policy's flow
time over the bound (hare's list rules ``online-srtf``, ``srtf-fit`` and ``las-fit`` among the
policies).

The PAI simulator (Alibaba's cluster-trace-gpu-v2020/simulator, the simulator of the trace of
seed 001) published 20,000 jobs on 6,500 GPUs in 51-110 s per policy on its own hardware (its
log, logs/0228-...-20000j-1x-42r.log). With ``--pai-simulator PATH`` (a local copy of that
folder, never copied into this repository) it runs beside ddlwmp's pooled policies on the same
jobs: each trace's ddlwmp jobs with their pooled durations written as the simulator's CSV
(job_id, user, submit_time, duration, num_gpu, num_cpu, num_inst), one node of the cluster's
GPUs, original submit times; its FIFO beside ``wcs-subtime`` and its SJF (duration known)
beside ``wcs-duration``, flow time and seconds each.
"""

from __future__ import annotations

import argparse
import csv
import importlib
import json
import math
import os
import pickle
import platform
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from dlsched.models.ddlwmp.online import POLICIES as DDLWMP  # noqa: E402
from dlsched.online.traces import gavel_dir  # noqa: E402

TRACES = gavel_dir(ROOT) / "msr-traces-seed0"
#: The policies of each family, in the order of its table.
POLICIES = {
    "ddlwmp": tuple(DDLWMP),
    "hare": (
        "hlas",
        "hlas-p",
        "online-fifo",
        "2d-las",
        "sched-homo-unit",
        "sched-allox-unit",
        "online-srtf",
        "srtf-fit",
        "las-fit",
    ),
    "elastic": (
        "a-online",
        "a-dual",
        "a-maxweight",
        "fifo",
        "drf",
        "tiresias",
        "antman",
        "sjf-any",
    ),
}
#: The family's reading of a trace, ``dlsched solve FAMILY:TRACE`` (``ddlwmp``: the suffix).
PREFIX = {"ddlwmp": "", "hare": "hare:", "elastic": "elastic:"}
#: The published figure of the PAI simulator (its own log, its own hardware).
PAI_NOTE = (
    "PAI simulator, published (its log, its hardware): 20,000 jobs on 6,500 GPUs "
    "in 51-110 s per policy"
)

INSTANCE: Any = None  # the instance of the current trace and family, read before each fork


def _child(fn: Callable[..., Any], args: tuple[Any, ...], w: int) -> None:
    """In a forked child: ``fn(*args)`` pickled to the pipe ``w`` (or ``("error", text)``)."""
    try:
        data = pickle.dumps(fn(*args))
    except BaseException as e:  # reported by the parent
        data = pickle.dumps(("error", f"{type(e).__name__}: {e}"))
    with os.fdopen(w, "wb") as fh:
        fh.write(data)
    os._exit(0)


class Forks:
    """At most ``size`` forked children at once, each running ``fn(*args)`` on the state of
    this process at its fork; :meth:`join` gives every ``key``'s (result, peak RSS MB)."""

    def __init__(self, size: int) -> None:
        self.size = size
        self.running: dict[int, tuple[int, Any]] = {}
        self.done: dict[Any, tuple[Any, float]] = {}

    def start(self, key: Any, fn: Callable[..., Any], *args: Any) -> None:
        while len(self.running) >= self.size:
            self._reap()
        r, w = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.close(r)
            _child(fn, args, w)
        os.close(w)
        self.running[pid] = (r, key)

    def _reap(self) -> None:
        pid, _, usage = os.wait4(-1, 0)
        r, key = self.running.pop(pid)
        with os.fdopen(r, "rb") as fh:  # answers are small: the child wrote all before exit
            data = fh.read()
        got = pickle.loads(data) if data else ("error", "no answer")
        if isinstance(got, tuple):
            got = {"error": got[1]}
        self.done[key] = (got, usage.ru_maxrss / 1024)

    def join(self) -> dict[Any, tuple[Any, float]]:
        while self.running:
            self._reap()
        done, self.done = self.done, {}
        return done


def forked(fn: Callable[..., Any], *args: Any) -> tuple[Any, float]:
    """``fn(*args)`` in one forked child: (its result, its peak RSS MB)."""
    pool = Forks(1)
    pool.start(0, fn, *args)
    return pool.join()[0]


def warm(family: str) -> float:
    """Import the family's policies and compute its flow-time bound on :data:`INSTANCE` here,
    before the forks, so that every child shares them; the seconds the bound took."""
    from dlsched import families

    families.get(family).methods()
    t = time.perf_counter()
    if family == "ddlwmp":
        from dlsched.models.ddlwmp.flowlp import flow_bound  # Lemma 1's and the LP, cached

        flow_bound(INSTANCE)
    else:
        from dlsched.online.bounds import cached

        module = "hare.online.bounds" if family == "hare" else "elastic.flowbound"
        make = importlib.import_module(f"dlsched.models.{module}").flow_bound
        cached(INSTANCE, make)  # the instance object the children see
    return time.perf_counter() - t


def run_policy(policy: str, params: dict[str, Any], limit: float) -> dict[str, Any]:
    """One policy on :data:`INSTANCE` (in the child)."""
    from dlsched.models import MethodOptions, run_method

    t = time.perf_counter()
    opts = MethodOptions(time_limit=limit, params=params, bound=True)  # the bound of warm()
    out = run_method(INSTANCE, policy, opts)
    d = out.details
    keep = ("flow_time_s", "flow_time_bound_s", "flow_time_gap", "reason")
    return {"status": str(out.status), "seconds": time.perf_counter() - t} | {
        k: d.get(k) for k in keep
    }


# --- the clairvoyant references (upper bounds on the optimum's flow time) ----------------------


def hare_reference() -> dict[str, Any]:
    """The family's ``online-srtf`` policy (shortest remaining first, each ready task on the fastest
    free GPU for its job, tasks at round boundaries): its flow time and the family's bound."""
    from dlsched.models.hare.check import check_schedule
    from dlsched.models.hare.online.bounds import flow_bound
    from dlsched.models.hare.online.common import run_policy
    from dlsched.models.hare.online.listrules import srtf
    from dlsched.online.bounds import cached

    inst = INSTANCE
    t = time.perf_counter()
    schedule, _ = run_policy(inst, srtf(inst))
    done = check_schedule(inst, schedule).completion
    flow = math.fsum(c - j.arrival for c, j in zip(done, inst.jobs, strict=True))
    seconds = time.perf_counter() - t
    bound = cached(inst, flow_bound).flow
    return {"flow_time_s": flow, "flow_time_bound_s": bound, "seconds": seconds}


def elastic_reference() -> dict[str, Any]:
    """Shortest least-duration first; each job, when it can start, on the GPU type whose free
    workers (up to D_j, spread over servers) finish it soonest, if within 3 times its least
    duration (else it waits); its flow time in seconds and the family's bound."""
    import numpy as np

    from dlsched.models import MethodOptions
    from dlsched.models.elastic.baselines import ListPolicy, _config, _run
    from dlsched.models.elastic.check import check_schedule
    from dlsched.models.elastic.flowbound import flow_bound, least_use
    from dlsched.models.elastic.instance import duration, most_workers
    from dlsched.online.bounds import cached

    inst = INSTANCE
    most = most_workers(inst)
    least = [least_use(inst, j, most)[0] for j in range(inst.num_jobs)]

    class Soonest(ListPolicy):
        def _fit(self, j: int, free: Any, t: int) -> Any:
            best = None
            for m, kind in enumerate(inst.worker_types):
                e = np.array(kind.demand)
                caps = np.floor(free[:, e > 0] / e[e > 0] + 1e-9).min(axis=1).astype(int)
                n = min(inst.jobs[j].chunks, int(caps.sum()))
                if n < 1:
                    continue
                y, left = {}, n
                for h in np.argsort(-caps, kind="stable").tolist():
                    take = min(int(caps[h]), left)
                    if take:
                        y[h], left = take, left - take
                d = duration(inst, j, m, None, n, len(y) == 1)
                if best is None or d < best[0]:
                    best = (d, m, y)
            if best is None or best[0] > 3 * least[j]:
                return None
            return _config(inst, j, best[1], 0, best[2], {}, t, best[0])

    t = time.perf_counter()
    policy = Soonest(inst, lambda j: (least[j], j), lambda j, _: 1)
    schedule, _ = _run(inst, policy, MethodOptions())
    if schedule is None:
        return {"status": "no schedule"}
    done = check_schedule(inst, schedule).completion
    flow = math.fsum(c - j.arrival for c, j in zip(done, inst.jobs, strict=True))
    seconds = time.perf_counter() - t
    bound = cached(inst, flow_bound).flow * inst.slot_seconds
    return {"flow_time_s": flow * inst.slot_seconds, "flow_time_bound_s": bound, "seconds": seconds}


REFERENCES = {"hare": hare_reference, "elastic": elastic_reference}


# --- the PAI simulator on the same jobs -------------------------------------------------------

#: Runs the PAI simulator (argv: its folder, the CSV, GPUs, jobs, alloc policy, log file) and
#: prints [jobs done, average JCT, average wait, makespan] and the seconds it took.
PAI_CHILD = """
import json, logging, sys, time
from pathlib import Path
folder, csv_file, gpus, jobs, policy, log = sys.argv[1:7]
sys.path.insert(0, folder)
logging.basicConfig(level=logging.WARNING, filename=log, filemode="a", format="%(message)s")
from simulator import Simulator
t = time.perf_counter()
sim = Simulator(csv_file=Path(csv_file), alloc_policy=int(policy), preempt_policy=2,
                sort_node_policy=3, num_nodes=1, random_seed=42, max_time=int(1e12),
                num_spare_node=0, pattern=0, hetero=False, num_gpus=int(gpus),
                num_cpus=round(23.22 * int(gpus)), log_file=Path(log), arrival_rate=-1,
                num_jobs_limit=int(jobs), gpu_type_matching=0, verbose=0)
res = sim.simulator_go(repeat=1)[0]
print(json.dumps([list(res), time.perf_counter() - t]))
"""
#: PAI's allocation policies beside the ddlwmp pooled policy run on the same jobs.
PAI_POLICIES = {"FIFO": (8, "wcs-subtime"), "SJF": (0, "wcs-duration")}


def pai_csv(inst: Any, path: Path) -> None:
    """The ddlwmp jobs as the PAI simulator's CSV: each job's pooled duration (its run on its
    best placement, whole slots), its GPUs, its release as the submit time."""
    from dlsched.models.ddlwmp.check import busy_slots, run_seconds
    from dlsched.models.ddlwmp.mapping import alpha_tilde_min

    slot = inst.cluster.slot_s
    with open(path, "w", newline="") as fh:
        out = csv.writer(fh)
        out.writerow(
            ["job_id", "user", "submit_time", "duration", "num_gpu", "num_cpu", "num_inst"]
        )
        for k, j in enumerate(inst.jobs):
            run = run_seconds(j, alpha_tilde_min(j, inst.cluster)[0])
            dur = busy_slots(run, slot) * slot
            out.writerow([k, j.group or "u", int(j.release), int(dur), j.gpus, 0, 1])


def pai_run(folder: Path, inst: Any, policy: int, tmp: Path) -> dict[str, Any]:
    """The PAI simulator's ``policy`` on the jobs of ``inst``, as a child process."""
    csv_file = tmp / "pai_jobs.csv"
    pai_csv(inst, csv_file)
    argv = [sys.executable, "-c", PAI_CHILD, str(folder), str(csv_file)]
    argv += [str(inst.cluster.total_gpus), str(inst.num_jobs), str(policy), str(tmp / "pai.log")]
    t = time.perf_counter()
    got = subprocess.run(argv, capture_output=True, text=True, cwd=tmp, check=False)
    wall = time.perf_counter() - t
    if got.returncode != 0:
        last = (got.stderr.strip().splitlines() or ["failed"])[-1]
        return {"error": last[:120], "process_s": wall}
    (done, avg_jct, _, _), seconds = json.loads(got.stdout.strip().splitlines()[-1])
    return {"flow_time_s": avg_jct * done, "jobs": done, "seconds": seconds, "process_s": wall}


# --- the tables -------------------------------------------------------------------------------


def _num(x: Any, fmt: str = ".4g") -> str:
    return "-" if x is None else format(x, fmt)


def _row(trace: str, jobs: int, policy: str, cluster: str, got: dict[str, Any], mb: float) -> str:
    if got.get("flow_time_s") is None:
        why = str(got.get("reason") or got.get("error") or got.get("status") or "-")
        flow = "cut by the time limit" if "time limit" in why else f"none ({why[:60]})"
        secs = _num(got.get("seconds"), ".1f")
        return f"| {trace} | {jobs} | {policy} | {cluster} | {flow} | - | - | {secs} | {mb:.0f} |"
    gap = got.get("flow_time_gap")
    return (
        f"| {trace} | {jobs} | {policy} | {cluster} | {_num(got['flow_time_s'])} "
        f"| {_num(got['flow_time_bound_s'])} | {'-' if gap is None else f'{gap:.1%}'} "
        f"| {got['seconds']:.1f} | {mb:.0f} |"
    )


def read(family: str, trace: Path) -> Any:
    from dlsched.instances import load

    return load(f"{PREFIX[family]}{trace}")


def family_table(
    family: str, traces: list[Path], limit: float, reference: bool, parallel: int
) -> tuple[list[str], list[str]]:
    """(rows of the family's table, rows of its summary) over ``traces``."""
    global INSTANCE
    rows, summary = [], []
    modes = ((False, "placement"), (True, "pooled")) if family == "ddlwmp" else ((None, "-"),)
    pool = Forks(parallel)
    for trace in traces:
        INSTANCE = read(family, trace)
        jobs, bound_s = INSTANCE.num_jobs, warm(family)
        runs = [
            (policy, pooled, cluster) for policy in POLICIES[family] for pooled, cluster in modes
        ]
        for policy, pooled, cluster in runs:
            params = {} if pooled is None else {"pooled": pooled}
            pool.start((policy, cluster), run_policy, policy, params, limit)
        if reference and family in REFERENCES:
            pool.start(("reference (clairvoyant)", "-"), REFERENCES[family])
        done = pool.join()
        best, bound = None, None
        for key in [(p, c) for p, _, c in runs] + [k for k in done if k[0].startswith("ref")]:
            got, mb = done[key]
            rows.append(_row(trace.stem, jobs, key[0], key[1], got, mb))
            print(rows[-1], file=sys.stderr, flush=True)
            flow, bound = got.get("flow_time_s"), got.get("flow_time_bound_s") or bound
            if flow is not None and not key[0].startswith("ref") and (not best or flow < best[0]):
                best = (flow, key[0] + (" (pooled)" if key[1] == "pooled" else ""))
        ref = done.get(("reference (clairvoyant)", "-"), ({}, 0))[0].get("flow_time_s")
        if best is not None and bound:
            line = f"| {trace.stem} | {jobs} | {bound:.4g} | {bound_s:.1f} | {best[1]} "
            line += f"| {best[0]:.4g} | {best[0] / bound:.2f} |"
            if family in REFERENCES:
                line += f" {ref / bound:.2f} |" if ref else " - |"
            summary.append(line)
    INSTANCE = None
    return rows, summary


def pai_table(folder: Path, traces: list[Path]) -> list[str]:
    global INSTANCE
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for trace in traces:
            INSTANCE = read("ddlwmp", trace)
            warm("ddlwmp")
            for name, (code, ours) in PAI_POLICIES.items():
                pai = pai_run(folder, INSTANCE, code, Path(tmp))
                got, _ = forked(run_policy, ours, {"pooled": True}, 600.0)
                head = f"| {trace.stem} | {INSTANCE.num_jobs} | {name} "
                if "error" in pai:
                    rows.append(head + f"| failed: {pai['error']} | - | {ours} | - | - |")
                    continue
                rows.append(
                    head + f"| {_num(pai['flow_time_s'])} "
                    f"| {pai['seconds']:.2f} | {ours} (pooled) | {_num(got.get('flow_time_s'))} "
                    f"| {_num(got.get('seconds'), '.2f')} |"
                )
                print(rows[-1], file=sys.stderr, flush=True)
    INSTANCE = None
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--traces", default="all", help="all, or trace names (file stems)")
    ap.add_argument("--families", default="ddlwmp,hare,elastic")
    ap.add_argument("--time-limit", type=float, default=60.0, help="seconds per policy run")
    ap.add_argument("--no-reference", action="store_true", help="skip the clairvoyant rows")
    ap.add_argument("--parallel", type=int, default=2, help="policy runs at once (forks)")
    ap.add_argument("--pai-simulator", type=Path, default=None, help="a local copy's folder")
    args = ap.parse_args()
    if not TRACES.is_dir():
        raise SystemExit(f"no Gavel traces at {TRACES}")
    every = sorted(TRACES.glob("*.trace"))
    names = None if args.traces == "all" else set(args.traces.split(","))
    traces = [t for t in every if names is None or t.stem in names]
    print(
        f"{len(traces)} Philly-derived traces of Gavel ({TRACES.parent.name}/{TRACES.name}), "
        f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, "
        f"load average {os.getloadavg()[0]:.1f}; {args.time_limit:g} s per policy run.\n"
    )
    head = "| trace | jobs | policy | cluster | flow time (s) | bound (s) | gap | s | peak MB |"
    for family in args.families.split(","):
        t = time.perf_counter()
        rows, summary = family_table(
            family, traces, args.time_limit, not args.no_reference, args.parallel
        )
        print(f"### {family} ({time.perf_counter() - t:.0f} s)\n")
        print(head)
        print("|---|---|---|---|---|---|---|---|---|")
        print("\n".join(rows))
        print(f"\n{PAI_NOTE}.\n")
        ref = " reference / bound |" if family in REFERENCES else ""
        print(
            "| trace | jobs | bound (s) | bound computed in (s) | best policy "
            f"| its flow time (s) | best / bound |{ref}"
        )
        print("|---|---|---|---|---|---|---|" + ("---|" if ref else ""))
        print("\n".join(summary) + "\n")
    if args.pai_simulator is None:
        print("PAI simulator side by side: skipped (give --pai-simulator PATH).")
        return
    if not (args.pai_simulator / "simulator.py").is_file():
        raise SystemExit(f"--pai-simulator {args.pai_simulator}: no simulator.py there")
    print("### PAI simulator side by side (ddlwmp's jobs, pooled durations)\n")
    print("| trace | jobs | PAI policy | PAI flow time (s) | PAI s | dlsched | flow time (s) | s |")
    print("|---|---|---|---|---|---|---|---|")
    print("\n".join(pai_table(args.pai_simulator, traces)))


if __name__ == "__main__":
    main()
