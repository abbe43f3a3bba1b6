"""Rounding the LP of the packing ILP (8)/(17) into schedules: ``lp-round`` and
``lp-random-round`` (seed 003).

``lp-bound`` solves the LP relaxation of (8)/(17) in its minimization form (min sum_l w_j c_l x_l,
one schedule per job (2a), capacities (8a)/(17a), x >= 0) by column generation
(:mod:`.colgen`, pricing (12)/(20)). Its last restricted master gives each job j values x_l > 0
on a few schedules l in Gamma_j, its *support*, summing to 1 - art_j (art_j > 0 only while the
master still leaves part of job j to its artificial column). Each method picks one column per
job (:func:`largest`, :func:`sample`):

- ``lp-round``: the support column of largest value (ties: earlier completion, then the
  master's column order);
- ``lp-random-round``: column l with probability x_l, independently per job, and none with
  probability art_j (randomized rounding, Raghavan and Thompson 1987), from ``--seed``.

Both are deterministic for a seed, which also reaches HiGHS: where the master LP has several
optima, another seed may return another, so ``lp-round`` too may change with the seed.

The picks fit together only on average: (8a)/(17a) hold for x, not for one column per job. The
repair (:func:`repair`, the same for both) visits the jobs heaviest first (ties: earlier LP mean
completion sum_l x_l c_l / sum_l x_l, then job index) and gives each

1. its pick, if it fits the capacity the jobs before it leave in every slot it runs;
2. else its cheapest schedule in what is left at the LP's prices: the exact pricing (12)/(20)
   with the completion term, w_j c_l + sum_{t in T(l)} Y_t . f(l), at the last master's duals Y
   (column generation's own reduced cost, :class:`.fastprice.FastOracle` ``exact``; ties:
   earlier completion), over the remaining capacity;
3. else nothing: no schedule of the job fits before T. The objective needs every job (2a), so
   a job cannot be rejected; the method then returns no schedule
   (:func:`.methods.no_schedule_outcome`).

Step 2 already considers the job's other support columns: at a converged master every support
column has reduced cost 0 (complementary slackness), the least of any schedule at Y, so the
pricing returns one of them when one fits, unless a schedule of the same priced cost completes
earlier. Trying the support columns by LP value before pricing prefers later completions: on
``elastic/intro-cifar10`` it gives 30, this rule 25 (the optimum); on the 40-job instances below
the two differ by at most 1.3 % either way (4,938 against 4,924 summed over the six).

Measured with ``lp-round`` on 6 generated instances of 40 jobs x 8 servers, T = 40 (seeds 0-2,
both architectures; LP values 741-823): heaviest first keeps the heavy jobs, which weigh most in
sum w_j c_j, on their LP columns, and beat visiting the jobs by their pick's completion on 5 of
the 6 (815 against 853 on small-ps-j40-h8-s0, LP 757); the duals steer a displaced job away
from the slots the LP expects the jobs after it to need, and beat zero prices (the earliest
completion in what is left) on 4 of the 6 (918 against 957 on small-ps-j40-h8-s2, LP 823; 837
against 822 on small-ps-j40-h8-s1 the other way).

Guarantee: none. Raghavan and Thompson's argument bounds the picks before repair: each job's
expected cost is its LP cost, so the picks cost the LP value in expectation
(``details["picked_cost"]``), and each capacity row is met in expectation, exceeded by a
factor O(log m / log log m) with high probability (m = T H R rows) when every demand is small
beside its capacity. Neither carries over to the repaired schedule: capacities are hard, and a
displaced job may complete as late as T, far past its LP columns, displacing others in turn;
nor are demands small here (one job's workers may fill a server). The certified Lagrangian
bound of column generation is the outcome's ``bound``; ``details["lp_value"]`` is the last
master's value (the LP optimum when ``lp_converged``) and ``details["ratio_to_lp"]`` the
objective over it, at least 1 for this minimization once converged.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from dlsched.models import MethodOptions
from dlsched.models.elastic.algorithms import Ledger, cut_details
from dlsched.models.elastic.colgen import ColumnGeneration, MasterLP
from dlsched.models.elastic.exact import Column, schedule_of
from dlsched.models.elastic.fastprice import FastOracle
from dlsched.models.elastic.instance import ElasticInstance
from dlsched.models.elastic.methods import (
    lp_iterations,
    no_schedule_outcome,
    objective_unit,
    solve_lp,
)
from dlsched.result import Outcome, verified_outcome
from dlsched.solvers.certify import Proof
from dlsched.solvers.deadline import NEVER, Deadline

#: A column's LP value above this puts it in its job's support.
SUPPORT_TOL = 1e-9
#: Absolute slack of the fit test of a column in the capacity left (as :mod:`.pricing`).
FIT_TOL = 1e-9
#: Share of the method's limit column generation may use (from the method's start); the repair
#: (a fit test per job, at most one pricing per job) runs in what is left.
LP_SHARE = 0.8

#: (support, rng) -> each job's pick: an index into its support, or None (no column).
Picker = Callable[["Support", np.random.Generator], list[int | None]]


@dataclass(frozen=True)
class Support:
    """Each job's support columns and values, largest value first (ties: earlier completion,
    then the master's column order), and its artificial value art_j."""

    columns: tuple[tuple[tuple[float, Column], ...], ...]  # [job][k] = (x_l, column l)
    art: tuple[float, ...]

    @classmethod
    def of(cls, inst: ElasticInstance, master: MasterLP) -> Support:
        by_job: list[list[tuple[float, int, Column]]] = [[] for _ in range(inst.num_jobs)]
        for k, (col, value) in enumerate(zip(master.columns, master.x.tolist(), strict=True)):
            if value > SUPPORT_TOL:
                by_job[col.job].append((value, k, col))
        ordered = [sorted(s, key=lambda v: (-v[0], v[2].end, v[1])) for s in by_job]
        columns = tuple(tuple((v, c) for v, _, c in s) for s in ordered)
        return cls(columns, tuple(max(0.0, float(a)) for a in master.art))

    def mean_completion(self, j: int) -> float:
        """sum_l x_l c_l / sum_l x_l over job j's support (inf when it has none)."""
        total = sum(v for v, _ in self.columns[j])
        if total <= 0:
            return math.inf
        return sum(v * c.end for v, c in self.columns[j]) / total

    def fractional(self) -> int:
        """Jobs whose LP is not one column at value 1 (several columns, or art_j > 0)."""
        return sum(
            1 for s, a in zip(self.columns, self.art, strict=True) if len(s) != 1 or a > 1e-9
        )


def largest(support: Support, rng: np.random.Generator | None = None) -> list[int | None]:
    """``lp-round``'s picks: each job's first support column (None when it has none)."""
    return [0 if s else None for s in support.columns]


def sample(support: Support, rng: np.random.Generator) -> list[int | None]:
    """``lp-random-round``'s picks: job j's column l with probability x_l, none with
    probability art_j (one uniform draw per job, in job order)."""
    picks: list[int | None] = []
    for s in support.columns:
        u, acc, pick = float(rng.random()), 0.0, None
        for k, (value, _) in enumerate(s):
            acc += value
            if u < acc:
                pick = k
                break
        picks.append(pick)
    return picks


@dataclass
class Repair:
    """What :func:`repair` did: the columns placed, and per job the step that placed it."""

    placed: list[Column]
    step: dict[int, str]  # job -> "pick" | "priced"
    unplaced: list[int]  # jobs with no schedule before T in what was left
    reached: int  # jobs visited before the deadline


def repair_order(inst: ElasticInstance, support: Support) -> list[int]:
    """Heaviest first; ties by LP mean completion, then job index."""
    key = {j: (-inst.jobs[j].weight, support.mean_completion(j), j) for j in range(inst.num_jobs)}
    return sorted(range(inst.num_jobs), key=key.__getitem__)


def repair(
    inst: ElasticInstance,
    support: Support,
    picks: Sequence[int | None],
    prices: np.ndarray,
    deadline: Deadline = NEVER,
) -> Repair:
    """Steps 1-3 of the module docstring over :func:`repair_order`, checked against
    ``deadline`` between jobs (``reached`` says how far it got)."""
    ledger, oracle = Ledger(inst), FastOracle(inst, exact=True)
    out = Repair([], {}, [], 0)
    for j in repair_order(inst, support):
        if deadline.passed():
            return out
        out.reached += 1
        k = picks[j]
        pick = None if k is None else support.columns[j][k][1]
        if pick is not None and _fits(ledger, pick):
            col, out.step[j] = pick, "pick"
        else:
            w = inst.jobs[j].weight
            got = oracle(inst, j, prices, ledger.free(), (0, inst.horizon), weight=w)
            if got.config is None:
                out.unplaced.append(j)
                continue
            col, out.step[j] = Column(got.config, got.start), "priced"
        ledger.commit(col.config, col.start)
        out.placed.append(col)
    return out


def _fits(ledger: Ledger, col: Column) -> bool:
    """Whether ``col`` fits the capacity ``ledger`` leaves in every slot it runs."""
    return bool((ledger.free()[col.start : col.end] >= col.config.usage - FIT_TOL).all())


def _lp_details(cg: ColumnGeneration) -> dict[str, Any]:
    return {
        "lp_value": cg.lp_value,
        "lp_bound": cg.bound,
        "lp_converged": cg.converged,
        "lp_iterations": cg.iterations,
        "lp_columns": cg.columns,
    }


def _rounding(name: str, picker: Picker) -> Callable[[ElasticInstance, MethodOptions], Outcome]:
    """The method ``name``: column generation within :data:`LP_SHARE` of the limit, the picks
    of ``picker`` from the last master, then :func:`repair`."""

    def run(instance: ElasticInstance, options: MethodOptions) -> Outcome:
        deadline = options.deadline
        lp_budget = deadline.share_from_start(LP_SHARE)
        cg = solve_lp(instance, options.solve, lp_budget, lp_iterations(options))
        info = _lp_details(cg)
        if cg.master is None:
            return _no_lp(instance, name, cg, deadline, info)
        support = Support.of(instance, cg.master)
        rng = np.random.default_rng(options.solve.seed)
        picks = picker(support, rng)
        info |= _pick_details(instance, support, picks, options.solve.seed, picker)
        fixed = repair(instance, support, picks, cg.master.prices, deadline)
        lp_cut = not cg.converged and lp_budget.passed()
        return _outcome(instance, name, options, cg, fixed, info, lp_cut)

    return run


def _pick_details(
    inst: ElasticInstance,
    support: Support,
    picks: Sequence[int | None],
    seed: int,
    picker: Picker,
) -> dict[str, Any]:
    """The picks before repair: their cost (None when some job has no pick), the jobs the LP
    splits, the master's artificial share (a positive one is in its value, at a penalty above
    any schedule's cost), and the seed of a random picker."""
    chosen = [support.columns[j][k][1] for j, k in enumerate(picks) if k is not None]
    whole = len(chosen) == inst.num_jobs
    out: dict[str, Any] = {
        "fractional_jobs": support.fractional(),
        "lp_artificial": sum(support.art),
        "picked_cost": sum(c.cost(inst) for c in chosen) if whole else None,
    }
    if picker is sample:
        out["seed"] = seed
    return out


def _no_lp(
    instance: ElasticInstance,
    name: str,
    cg: ColumnGeneration,
    deadline: Deadline,
    info: dict[str, Any],
) -> Outcome:
    """No master LP to round: some job has no schedule at all (infeasible, the jobs named, as
    the heuristics name them), or the limit passed before the first master was solved."""
    if cg.bound == math.inf:
        info["unscheduled_jobs"] = [j.name for j in instance.jobs]
        return no_schedule_outcome(instance, name, info, deadline.elapsed())
    reason = "time limit reached before column generation solved a master LP: nothing to round"
    return verified_outcome(
        instance,
        name,
        None,
        wall_time=deadline.elapsed(),
        proof=Proof(bound=cg.bound, hit_limit=True),
        details={**info, "hit_limit": True, "reason": reason},
    )


def _outcome(
    instance: ElasticInstance,
    name: str,
    options: MethodOptions,
    cg: ColumnGeneration,
    fixed: Repair,
    info: dict[str, Any],
    lp_cut: bool,
) -> Outcome:
    """The repaired schedule verified, with the LP beside it; or no schedule when the
    deadline passed during the repair or a job found no room."""
    wall = options.deadline.elapsed()
    steps = list(fixed.step.values())
    info |= {f"{s}_jobs": steps.count(s) for s in ("pick", "priced")}
    if fixed.reached < instance.num_jobs:
        when = f"while repairing, after {fixed.reached} of {instance.num_jobs} jobs"
        info = cut_details(options, info, when)
        return verified_outcome(
            instance, name, None, wall_time=wall, proof=Proof(hit_limit=True), details=info
        )
    if fixed.unplaced:
        info["unscheduled_jobs"] = [instance.jobs[j].name for j in sorted(fixed.unplaced)]
        return no_schedule_outcome(instance, name, info, wall)
    schedule = schedule_of(fixed.placed, range(len(fixed.placed)))
    claimed = sum(c.cost(instance) for c in fixed.placed)
    if cg.lp_value and info["lp_artificial"] <= SUPPORT_TOL:  # an LP value of (8)/(17)
        info["ratio_to_lp"] = claimed / cg.lp_value
    return verified_outcome(
        instance,
        name,
        schedule,
        wall_time=wall,
        proof=Proof(bound=cg.bound, hit_limit=lp_cut, unit=objective_unit(instance)),
        claimed=claimed,
        details=info,
    )


run_lp_round = _rounding("lp-round", largest)
run_lp_random_round = _rounding("lp-random-round", sample)

__all__ = [
    "LP_SHARE",
    "Repair",
    "Support",
    "largest",
    "repair",
    "repair_order",
    "run_lp_random_round",
    "run_lp_round",
    "sample",
]
