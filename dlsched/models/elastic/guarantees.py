"""Theorems 1, 3, 5 and 6 of Zhou et al. checked instance by instance, each with its
assumptions checked and reported beside the ratio.

- Theorems 1 and 6: Algorithms 4-7 (:mod:`.mincost`) solve problem (13) (PS) or (21)
  (Ring-AllReduce) optimally for fixed m', p', L and t^-. :func:`theorem1_record` compares one
  algorithm's cost with the exact MILP of the same problem (:func:`build_problem13`, HiGHS).
- Theorem 3: A_maxweight's total weight is within a factor 2 log lambda of the optimum of ILP
  (8)/(17) (:func:`theorem3_record`, the optimum by enumeration and HiGHS), under the
  assumptions 1 <= w_j / sum f(l) <= F and f_jh^r(l) / C_h^r <= 1 / log lambda.
- Theorem 5: A_online is 4 alpha-competitive against the certified offline optimum
  (:func:`theorem5_record`). Jobs A_online had to place by the fallback (no interval before
  the horizon) are reported: the theorem speaks of the algorithm without a horizon.

Any record with a violation is saved as a counterexample by :func:`save_counterexample`. The
theorems themselves (Theorem 5's guarantee in ``dlsched compare``, every record ``dlsched
verify`` checks) are defined once, in :mod:`.theorems`.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np
import pyomo.environ as pyo

from dlsched.models import MethodOptions, run_method
from dlsched.models.elastic.algorithms import Ledger, a_maxweight, alpha_theorem5, lam
from dlsched.models.elastic.enumerate import enumerate_all
from dlsched.models.elastic.exact import all_columns
from dlsched.models.elastic.instance import ElasticInstance
from dlsched.models.elastic.mincost import Placement, _fixed, mincost1_fixed
from dlsched.models.elastic.problem13 import build_problem13
from dlsched.result import json_safe
from dlsched.solvers import Status, solve

#: Relative slack before a ratio or a cost counts as a violation (solver tolerances).
SLACK = 1e-6


def theorem5_guarantee(inst: ElasticInstance) -> float:
    return 4.0 * alpha_theorem5(inst, lam(inst)[1])


# --- Theorems 1 and 6 ------------------------------------------------------------------------


@dataclass(frozen=True)
class Theorem1Record:
    instance: str
    algorithm: str  # A_mincost1/2, A_RAmincost1/2
    shape: dict[str, Any]  # m, p, n, q, L, t
    paper: float  # the algorithm's cost (inf: found nothing)
    exact: float | None  # MILP optimum (None: infeasible)
    violations: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()
    #: A_mincost1's cost under the other reading of Algorithm 4, lines 15-19 (the largest g
    #: that keeps a PS on server n, :func:`.mincost.mincost1_fixed`); PS with q = 0 only.
    other_reading: float | None = None
    #: For a violation: "reading" when the other reading reaches the optimum, "both" when it
    #: misses it too (a counterexample to Theorem 1 whichever way lines 15-19 are read).
    kind: str = ""


ALGORITHM_NAMES = {
    (True, False): "A_mincost1",
    (True, True): "A_mincost2",
    (False, True): "A_RAmincost1",
    (False, False): "A_RAmincost2",
}


def theorem1_record(
    inst: ElasticInstance,
    m: int,
    p: int,
    n: int,
    q: bool,
    win: np.ndarray,
    room: np.ndarray,
    shape: dict[str, Any] | None = None,
) -> Theorem1Record:
    """The algorithm's cost on problem (13)/(21) against the MILP's optimum."""
    paper: Placement = _fixed(inst, m, p, n, q, win, room)
    res = solve(build_problem13(inst, m, p, n, q, win, room), "highs")
    exact = res.objective if res.status == Status.OPTIMAL else None
    name = ALGORITHM_NAMES[(inst.is_ps, q)]
    bad, notes = [], []
    theorem = f"Theorem {1 if inst.is_ps else 6}"
    tol = SLACK * max(1.0, abs(exact or 0.0))
    if exact is None and math.isfinite(paper[0]):  # e.g. one server where q = 0 is demanded
        notes.append(f"{name} returns cost {paper[0]} with a placement (13a)/(21a) excludes")
    elif exact is not None and not math.isfinite(paper[0]):
        bad.append(f"{theorem}: {name} finds nothing; the MILP's optimum is {exact}")
    elif exact is not None and paper[0] > exact + tol:
        bad.append(f"{theorem}: {name} cost {paper[0]} > optimum {exact}")
    elif exact is not None and paper[0] < exact - tol:
        notes.append(f"{name} cost {paper[0]} below the optimum {exact}: placement outside (13)")
    info = {"m": m, "p": p, "n": n, "q": q, **(shape or {})}
    other = None
    if inst.is_ps and not q:
        other = mincost1_fixed(inst, m, p, n, win, room, keep_ps=True)[0]
    kind = ""
    if bad:
        kind = "reading" if other is not None and other <= (exact or 0.0) + tol else "both"
    return Theorem1Record(
        inst.name, name, info, paper[0], exact, tuple(bad), tuple(notes), other, kind
    )


def load_counterexample(path: Path) -> tuple[ElasticInstance, dict[str, Any]]:
    """The instance and the record of a file written by :func:`save_counterexample`."""
    from dlsched.instances import from_dict

    data = json.loads(Path(path).read_text())
    return from_dict(data["instance"], str(path)), data["record"]


def recheck_theorem1(path: Path) -> Theorem1Record:
    """:func:`theorem1_record` rerun on a saved Theorem 1/6 counterexample (its shape, prices
    over the window and free capacity)."""
    inst, rec = load_counterexample(path)
    sh = rec["shape"]
    win, room = np.array(sh["prices"], dtype=float), np.array(sh["free"], dtype=float)
    return theorem1_record(inst, sh["m"], sh["p"], sh["n"], sh["q"], win, room)


@dataclass(frozen=True)
class OracleRecord:
    """Theorem 1/6 for the whole oracle: the cheaper of Algorithms 4 and 5 (6 and 7) over
    every (m', p', L, t^-) against the exact minimum of (12)/(20), for one job."""

    instance: str
    job: int
    window: tuple[int, int]
    paper: float  # Algorithms 4-7 as written (:func:`.mincost.paper_mincost`)
    exact: float  # exact minimization of (12)/(20) (:mod:`.pricing`)
    other_reading: float | None  # Algorithm 4 with the other reading of lines 15-19 (PS)
    prices: list  # [t][h][r]
    free: list  # [t][h][r]
    violations: tuple[str, ...] = ()
    kind: str = ""  # for a violation: "reading" or "both", as in Theorem1Record


def oracle_record(
    inst: ElasticInstance, j: int, prices: np.ndarray, free: np.ndarray, window: tuple[int, int]
) -> OracleRecord:
    from dlsched.models.elastic.mincost import paper_mincost
    from dlsched.models.elastic.pricing import Pricer, price_job

    paper = paper_mincost(inst, j, prices, free, window).cost
    exact = price_job(Pricer(inst, prices, free, window), j, weight=0.0).cost
    other = paper_mincost(inst, j, prices, free, window, keep_ps=True).cost if inst.is_ps else None
    tol = SLACK * max(1.0, abs(exact)) if math.isfinite(exact) else 0.0
    bad, kind = [], ""
    if paper > exact + tol:
        theorem = f"Theorem {1 if inst.is_ps else 6}"
        bad.append(f"{theorem}: the algorithms' cheapest schedule {paper} > minimum {exact}")
        kind = "reading" if other is not None and other <= exact + tol else "both"
    return OracleRecord(
        inst.name, j, window, paper, exact, other, prices.tolist(), free.tolist(),
        tuple(bad), kind,
    )  # fmt: skip


def recheck_oracle(path: Path) -> OracleRecord:
    """:func:`oracle_record` rerun on a saved whole-oracle counterexample."""
    inst, rec = load_counterexample(path)
    prices, free = np.array(rec["prices"], dtype=float), np.array(rec["free"], dtype=float)
    return oracle_record(inst, rec["job"], prices, free, tuple(rec["window"]))


#: Where the benchmark saves every violation of Theorems 1/6 it finds (instance + record).
COUNTEREXAMPLES = Path(__file__).parent / "data" / "violations"


def theorem1_sweep(
    count: int,
    seed: int = 0,
    *,
    architecture: str = "ps",
    servers: int = 3,
    directory: Path | None = None,
) -> list[Theorem1Record]:
    """``count`` random cases: a small generated instance, random prices and random free
    capacity (capacity minus a random load), a random (m', p', n, q) and window. Violations
    are saved as counterexamples in ``directory`` when given."""
    from dlsched.models.elastic.generate import generate

    rng = np.random.default_rng(seed)
    out = []
    for k in range(count):
        inst = generate(2, servers, int(rng.integers(2**31)), architecture=architecture)
        inst = replace(inst, name=f"theorem1-{architecture}-s{seed}-{k}")
        cap = np.array([s.capacity for s in inst.servers])
        shape = (inst.num_servers, len(inst.resources))
        win = rng.random(shape) * (rng.random(shape) < 0.7) * rng.integers(1, 6)
        room = np.maximum(cap - rng.integers(0, 3, shape) * (rng.random(shape) < 0.5), 0)
        m = int(rng.integers(len(inst.worker_types)))
        p = int(rng.integers(len(inst.ps_choices())))
        n = int(rng.integers(1, inst.jobs[0].chunks + 1))
        q = bool(rng.random() < 0.5)
        rec = theorem1_record(inst, m, p, n, q, win, room, {"case": k})
        rec = replace(rec, shape={**rec.shape, "prices": win.tolist(), "free": room.tolist()})
        if rec.violations and directory is not None:
            save_counterexample(inst, rec, directory)
        out.append(rec)
    return out


# --- Theorem 3 --------------------------------------------------------------------------------


@dataclass(frozen=True)
class Theorem3Record:
    instance: str
    tau: int
    lam: float
    guarantee: float  # 2 log2 lambda
    optimum: float  # max scheduled weight, ILP (8)/(17)
    algorithm: float  # A_maxweight's scheduled weight
    ratio: float | None  # optimum / algorithm
    assumptions: dict[str, Any] = field(default_factory=dict)
    violations: tuple[str, ...] = ()


def max_weight_optimum(inst: ElasticInstance, tau: int) -> float:
    """ILP (8)/(17): the most weight completed by tau (Gamma_j enumerated, HiGHS)."""
    cols = [c for c in all_columns(inst, enumerate_all(inst)) if c.end <= tau]
    md = pyo.ConcreteModel()
    md.x = pyo.Var(range(len(cols)), domain=pyo.Binary)
    md.at_most_one = pyo.ConstraintList()  # (8b)
    for j in range(inst.num_jobs):
        ks = [k for k, c in enumerate(cols) if c.job == j]
        if ks:
            md.at_most_one.add(sum(md.x[k] for k in ks) <= 1)
    md.capacity = pyo.ConstraintList()  # (8a)
    for t in range(tau):
        for h, srv in enumerate(inst.servers):
            for r, cap in enumerate(srv.capacity):
                terms = [
                    (k, float(c.config.usage[h, r]))
                    for k, c in enumerate(cols)
                    if c.start <= t < c.end and c.config.usage[h, r] > 0
                ]
                if sum(a for _, a in terms) > cap:
                    md.capacity.add(sum(a * md.x[k] for k, a in terms) <= cap)
    md.weight = pyo.Objective(  # (8)
        expr=sum(inst.jobs[c.job].weight * md.x[k] for k, c in enumerate(cols)),
        sense=pyo.maximize,
    )
    res = solve(md, "highs")
    assert res.status == Status.OPTIMAL and res.objective is not None
    return res.objective


def assumptions(inst: ElasticInstance, lam_value: float, f_value: float) -> dict[str, Any]:
    """The two assumptions of Section 5.1 over every enumerated schedule."""
    worst_low, worst_share = math.inf, 0.0
    cap = np.array([s.capacity for s in inst.servers])
    for g in enumerate_all(inst):
        w = inst.jobs[g.job].weight
        for c in g.configs:
            worst_low = min(worst_low, w / (c.duration * float(c.usage.sum())))
            share = np.divide(c.usage, cap, out=np.zeros_like(c.usage), where=cap > 0)
            worst_share = max(worst_share, float(share.max()))
    limit = 1 / math.log2(lam_value)
    return {
        "F": f_value,
        "min_weight_per_consumption": worst_low,
        "weight_at_least_consumption": worst_low >= 1,
        "max_share": worst_share,
        "share_limit": limit,
        "small_demand": worst_share <= limit,
    }


def theorem3_record(inst: ElasticInstance, tau: int | None = None) -> Theorem3Record:
    tau = inst.horizon if tau is None else tau
    f_value, lam_value = lam(inst)
    opt = max_weight_optimum(inst, tau)
    got = a_maxweight(inst, list(range(inst.num_jobs)), (0, tau), Ledger(inst), lam_value)
    alg = sum(inst.jobs[j].weight for j, _, _ in got)
    guarantee = 2 * math.log2(lam_value)
    ratio = opt / alg if alg > 0 else None
    bad = []
    if alg > opt * (1 + SLACK):
        bad.append(f"A_maxweight's weight {alg} exceeds the optimum {opt}")
    if ratio is not None and ratio > guarantee * (1 + SLACK):
        bad.append(f"Theorem 3: OPT/ALG = {ratio:.4f} > 2 log lambda = {guarantee:.4f}")
    if ratio is None and opt > 0:
        bad.append(f"Theorem 3: A_maxweight schedules nothing, the optimum is {opt}")
    return Theorem3Record(
        inst.name, tau, lam_value, guarantee, opt, alg, ratio,
        assumptions(inst, lam_value, f_value), tuple(bad),
    )  # fmt: skip


# --- Theorem 5 --------------------------------------------------------------------------------


@dataclass(frozen=True)
class Theorem5Record:
    instance: str
    alpha: int
    guarantee: float  # 4 alpha
    optimum: float | None
    online: float | None  # None: a-online found no schedule within the horizon
    ratio: float | None
    fallback_jobs: int
    assumptions: dict[str, Any] = field(default_factory=dict)
    violations: tuple[str, ...] = ()
    unscheduled_jobs: tuple[str, ...] = ()  # left no room before T (no ratio then)


def theorem5_record(inst: ElasticInstance, options: MethodOptions | None = None) -> Theorem5Record:
    opts = options or MethodOptions()
    exact = run_method(inst, "exact", opts)
    online = run_method(inst, "a-online", MethodOptions(opts.solve, time_limit=opts.time_limit))
    f_value, lam_value = lam(inst)
    alpha = alpha_theorem5(inst, lam_value)
    opt = exact.objective if exact.status == Status.OPTIMAL else None
    ratio = None if opt is None or online.objective is None else online.objective / opt
    bad = []
    if ratio is not None and ratio < 1 - SLACK:
        bad.append(f"a-online {online.objective} beats the certified optimum {opt}")
    if ratio is not None and ratio > 4 * alpha * (1 + SLACK):
        bad.append(f"Theorem 5: a-online/OPT = {ratio:.4f} > 4 alpha = {4 * alpha}")
    return Theorem5Record(
        inst.name, alpha, 4.0 * alpha, opt, online.objective, ratio,
        len(online.details["fallback_jobs"]), assumptions(inst, lam_value, f_value),
        tuple(bad), tuple(online.details.get("unscheduled_jobs", ())),
    )  # fmt: skip


def save_counterexample(inst: ElasticInstance, record: Any, directory: Path) -> Path:
    """``{"instance": ..., "record": ...}`` in ``directory/counterexample-<name>.json``
    (:func:`dlsched.bounds.save_counterexample`)."""
    from dlsched import bounds

    rec = json.loads(json.dumps(json_safe(asdict(record)), default=str))
    return bounds.save_counterexample(inst, rec, directory, stem=f"counterexample-{inst.name}")


# --- sweeps -----------------------------------------------------------------------------------


def theorem5_sweep(
    instances: Iterable[ElasticInstance],
    path: Path,
    counterexamples: Path | None = None,
    options: MethodOptions | None = None,
) -> list[dict[str, Any]]:
    """Theorem 5 over ``instances`` by :func:`dlsched.bounds.sweep` (a-online against the
    certified ``exact``, guarantee 4 alpha; records appended to ``path``, resumable, violations
    saved under ``counterexamples``), each new record returned with Section 5.1's assumptions
    beside its ratio."""
    from dlsched import bounds

    out = []
    for inst in instances:
        for rec in bounds.sweep([inst], ["a-online"], path, "exact", options, counterexamples):
            if rec.method != "a-online":
                continue
            f_value, lam_value = lam(inst)
            row = {**rec.to_json(), "alpha": alpha_theorem5(inst, lam_value)}
            out.append({**row, "assumptions": assumptions(inst, lam_value, f_value)})
    return out


def theorem3_sweep(
    instances: Iterable[ElasticInstance], tau: int | None = None, directory: Path | None = None
) -> list[Theorem3Record]:
    """:func:`theorem3_record` of every instance; violations saved in ``directory``."""
    out = []
    for inst in instances:
        rec = theorem3_record(inst, tau)
        if rec.violations and directory is not None:
            save_counterexample(inst, rec, directory)
        out.append(rec)
    return out
