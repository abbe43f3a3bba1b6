"""The paper's algorithms: A_maxweight (Algorithm 3), A_dual (Algorithm 2), A_online
(Algorithm 1) on the shared event engine :mod:`dlsched.simulate`.

Zhou et al., Sections 4-6. A_maxweight visits the jobs once, prices each job's cheapest
schedule under the price function (11) with an oracle for the cost minimization (12)/(20), and
schedules the job when its weight exceeds that cost. The oracle is ``exact`` (the exact
minimization of :mod:`.pricing`, which Theorems 1 and 6 claim Algorithms 4-7 compute) or
``paper`` (Algorithms 4-7 as written, :mod:`.mincost`). A_dual runs alpha rounds of A_maxweight
on consecutive windows of length tau; A_online waits until tau_i = 2^(i-1), batches the jobs
that arrived and are not scheduled, and runs A_dual's schedule from alpha tau_i on.

Logarithms are base 2 (Theorem 5's denominator 1 + log log lambda - log(2 log lambda - 1) is
Lemma 2's log gamma - log(gamma - 1) with gamma = 2 log lambda only in base 2); see
docs/errata.md for this and the other readings.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from dlsched.errors import InfeasibleSolutionError, OptionError
from dlsched.models import MethodOptions
from dlsched.models.elastic.enumerate import Config
from dlsched.models.elastic.instance import ElasticInstance
from dlsched.models.elastic.pricing import Priced, Pricer, price_job
from dlsched.models.elastic.solution import ElasticSchedule, JobSchedule
from dlsched.simulate import Activity, Simulator, Started, simulate

#: oracle(instance, job, prices [T,H,R], free [T,H,R], (lo, hi)) -> cheapest schedule
Oracle = Callable[[ElasticInstance, int, np.ndarray, np.ndarray, tuple[int, int]], Priced]


def exact_oracle(
    inst: ElasticInstance, j: int, prices: np.ndarray, free: np.ndarray, window: tuple[int, int]
) -> Priced:
    """Problem (12)/(20) solved exactly (resource cost only; ties: earlier completion)."""
    return price_job(Pricer(inst, prices, free, window), j, weight=0.0)


def paper_oracle(
    inst: ElasticInstance, j: int, prices: np.ndarray, free: np.ndarray, window: tuple[int, int]
) -> Priced:
    """Algorithms 4 and 5 (PS) or 6 and 7 (Ring-AllReduce) as written, the cheaper result."""
    from dlsched.models.elastic.mincost import paper_mincost

    return paper_mincost(inst, j, prices, free, window)


ORACLES: dict[str, Oracle] = {"exact": exact_oracle, "paper": paper_oracle}


def capacity(inst: ElasticInstance) -> np.ndarray:
    """C [H, R]."""
    return np.array([s.capacity for s in inst.servers], dtype=float)


def consumption_bounds(inst: ElasticInstance) -> list[float]:
    """Per job, the least total resource consumption sum_{t,h,r} f(l) of any schedule (the
    denominator of F in the first assumption of Section 5.1), by exact pricing at unit
    prices."""
    ones = np.ones((inst.horizon, inst.num_servers, len(inst.resources)))
    pr = Pricer(inst, ones)
    return [price_job(pr, j, weight=0.0).cost for j in range(inst.num_jobs)]


def lam(inst: ElasticInstance) -> tuple[float, float]:
    """(F, lambda) of (11): lambda = 2 T H R F + 1, F = max_j w_j / min_l consumption."""
    cons = consumption_bounds(inst)
    f = max(j.weight / c for j, c in zip(inst.jobs, cons, strict=True) if c > 0)
    r = len(inst.resources)
    return f, 2 * inst.horizon * inst.num_servers * r * f + 1


def alpha_theorem5(inst: ElasticInstance, lam_value: float) -> int:
    """alpha of Theorem 5: floor((log w(J) - log w_min) / (1 + log log lambda -
    log(2 log lambda - 1))) + 1 (base 2)."""
    w = [j.weight for j in inst.jobs]
    ll = math.log2(lam_value)
    denom = 1 + math.log2(ll) - math.log2(2 * ll - 1)
    return math.floor((math.log2(sum(w)) - math.log2(min(w))) / denom) + 1


def price_function(used: np.ndarray, cap: np.ndarray, lam_value: float) -> np.ndarray:
    """delta_h^r(t) = lambda^(beta_h^r(t) / C_h^r) - 1, eq. (11) (0 where C = 0)."""
    safe = np.where(cap > 0, cap, 1.0)
    return np.where(cap > 0, np.power(lam_value, used / safe) - 1.0, 0.0)


@dataclass
class Ledger:
    """Usage [T, H, R] committed so far (what the cluster runs in every slot)."""

    inst: ElasticInstance
    used: np.ndarray = field(init=False)

    def __post_init__(self) -> None:
        self.used = np.zeros((self.inst.horizon, self.inst.num_servers, len(self.inst.resources)))

    def free(self) -> np.ndarray:
        return capacity(self.inst) - self.used

    def commit(self, cfg: Config, start: int) -> None:
        self.used[start : start + cfg.duration] += cfg.usage


def a_maxweight(
    inst: ElasticInstance,
    jobs: Sequence[int],
    window: tuple[int, int],
    ledger: Ledger,
    lam_value: float,
    oracle: Oracle = exact_oracle,
) -> list[tuple[int, Config, int]]:
    """Algorithm 3 on ``jobs`` (in the given order) within ``window``; commits to ``ledger``.

    Returns (job, configuration, start) of every job scheduled (u_j = w_j - cost_j > 0).
    """
    cap = capacity(inst)
    out = []
    for j in jobs:
        prices = price_function(ledger.used, cap, lam_value)  # (11), line 14
        got = oracle(inst, j, prices, ledger.free(), window)  # lines 3-7
        if got.config is None or inst.jobs[j].weight - got.cost <= 0:  # line 9
            continue
        ledger.commit(got.config, got.start)  # lines 10-13
        out.append((j, got.config, got.start))
    return out


def a_dual(
    inst: ElasticInstance,
    jobs: Sequence[int],
    tau: int,
    offset: int,
    alpha: int,
    ledger: Ledger,
    lam_value: float,
    oracle: Oracle = exact_oracle,
) -> list[tuple[int, Config, int]]:
    """Algorithm 2: alpha rounds of A_maxweight, round iota on [offset + (iota-1) tau,
    offset + iota tau), stopping once every job is scheduled."""
    left = list(jobs)
    out: list[tuple[int, Config, int]] = []
    for iota in range(1, alpha + 1):
        lo, hi = offset + (iota - 1) * tau, min(offset + iota * tau, inst.horizon)
        if not left or lo >= hi:
            break
        got = a_maxweight(inst, left, (lo, hi), ledger, lam_value, oracle)
        done = {j for j, _, _ in got}
        left = [j for j in left if j not in done]
        out += got
    return out


def _usage_map(cfg: Config) -> dict[Hashable, float]:
    hs, rs = cfg.usage.nonzero()
    return {(int(h), int(r)): float(cfg.usage[h, r]) for h, r in zip(hs, rs, strict=True)}


class OnlinePolicy:
    """A_online (Algorithm 1) as a slotted policy of :func:`dlsched.simulate.simulate`."""

    def __init__(self, inst: ElasticInstance, alpha: int, lam_value: float, oracle: Oracle):
        self.inst, self.alpha, self.lam, self.oracle = inst, alpha, lam_value, oracle
        self.ledger = Ledger(inst)
        self.waiting: list[int] = []
        self.plans: dict[int, list[tuple[int, Config]]] = {}
        self.round = 1  # i; tau_i = 2^(i-1)
        self.rounds: list[dict[str, Any]] = []
        self.fallback: list[int] = []

    def pending(self) -> bool:
        return bool(self.waiting or self.plans)

    def on_arrival(self, job: Hashable, now: float, sim: Simulator) -> None:
        assert isinstance(job, int)
        self.waiting.append(job)

    def on_complete(self, activity: Started, now: float, sim: Simulator) -> None:
        pass

    def decide(self, now: float, sim: Simulator) -> list[Activity]:
        t = round(now)
        while 2 ** (self.round - 1) <= t:  # line 2: a round at every tau_i reached
            self._round(2 ** (self.round - 1))
            self.round += 1
        if self.waiting and self.alpha * 2 ** (self.round - 1) >= self.inst.horizon:
            self._fall_back(t)  # no further interval starts before the horizon
        return [
            Activity(j, float(cfg.duration), _usage_map(cfg), cfg.at(t))
            for j, cfg in self.plans.pop(t, [])
        ]

    def _round(self, tau: int) -> None:
        batch = sorted(j for j in self.waiting if self.inst.jobs[j].arrival <= tau)  # J_i
        got = a_dual(
            self.inst, batch, tau, self.alpha * tau, self.alpha, self.ledger, self.lam, self.oracle
        )
        for j, cfg, start in got:  # lines 7-9: run from alpha tau_i on
            self.plans.setdefault(start, []).append((j, cfg))
        done = {j for j, _, _ in got}
        self.waiting = [j for j in self.waiting if j not in done]  # line 10
        self.rounds.append({"tau": tau, "batch": len(batch), "scheduled": len(done)})

    def _fall_back(self, now: int) -> None:
        """Jobs no interval can hold before T: each at its earliest completion in what is
        left (recorded in ``fallback``)."""
        for j in sorted(self.waiting, key=lambda k: -self.inst.jobs[k].weight):
            zero = np.zeros_like(self.ledger.used)
            lo = max(now, self.inst.jobs[j].arrival)
            got = price_job(Pricer(self.inst, zero, self.ledger.free(), (lo, self.inst.horizon)), j)
            if got.config is None:
                raise InfeasibleSolutionError(
                    f"a-online: job {self.inst.jobs[j].name} cannot complete by the horizon "
                    f"T = {self.inst.horizon} in what is left of the cluster"
                )
            self.ledger.commit(got.config, got.start)
            self.plans.setdefault(got.start, []).append((j, got.config))
            self.fallback.append(j)
        self.waiting = []


def _oracle(options: MethodOptions) -> Oracle:
    name = options.param("oracle", "exact")
    if name not in ORACLES:
        raise OptionError("--param oracle", name, f"expected one of {', '.join(ORACLES)}")
    return ORACLES[name]


def _alpha(options: MethodOptions, inst: ElasticInstance, lam_value: float) -> int:
    value = options.param("alpha", None)
    if value is None:
        return alpha_theorem5(inst, lam_value)
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise OptionError("--param alpha", value, "expected a positive integer")
    return value


def run_online(inst: ElasticInstance, options: MethodOptions) -> tuple[ElasticSchedule, dict]:
    f, lam_value = lam(inst)
    alpha = _alpha(options, inst, lam_value)
    policy = OnlinePolicy(inst, alpha, lam_value, _oracle(options))
    arrivals = [(float(j.arrival), k) for k, j in enumerate(inst.jobs)]
    cap = {(h, r): c for h, s in enumerate(inst.servers) for r, c in enumerate(s.capacity)}
    res = simulate(arrivals, cap, policy, tick=1.0)
    entries = [a.payload for a in res.activities]
    info = {
        "F": f,
        "lambda": lam_value,
        "alpha": alpha,
        "rounds": policy.rounds,
        "fallback_jobs": [inst.jobs[j].name for j in policy.fallback],
    }
    return ElasticSchedule.of(entries), info


def run_dual(inst: ElasticInstance, options: MethodOptions) -> tuple[ElasticSchedule, dict]:
    """A_dual offline on every job at once, for tau = 1, 2, 4, ... until it schedules every
    job (its schedule then has length at most alpha tau, Lemma 2) or alpha tau reaches T; the
    jobs of the last attempt left unscheduled follow at their earliest completion."""
    f, lam_value = lam(inst)
    alpha = _alpha(options, inst, lam_value)
    oracle = _oracle(options)
    jobs = list(range(inst.num_jobs))
    tau = 1
    while True:
        ledger = Ledger(inst)
        got = a_dual(inst, jobs, tau, 0, alpha, ledger, lam_value, oracle)
        if len(got) == len(jobs) or alpha * tau >= inst.horizon:
            break
        tau *= 2
    entries = [cfg.at(t) for _, cfg, t in got]
    rest = sorted(set(jobs) - {j for j, _, _ in got}, key=lambda k: -inst.jobs[k].weight)
    entries += _earliest(inst, rest, ledger)
    info = {"F": f, "lambda": lam_value, "alpha": alpha, "tau": tau, "fallback": len(rest)}
    return ElasticSchedule.of(entries), info


def run_maxweight(inst: ElasticInstance, options: MethodOptions) -> tuple[ElasticSchedule, dict]:
    """A_maxweight on every job over the whole horizon (the jobs it rejects follow at their
    earliest completion in what remains)."""
    f, lam_value = lam(inst)
    ledger = Ledger(inst)
    jobs = list(range(inst.num_jobs))
    got = a_maxweight(inst, jobs, (0, inst.horizon), ledger, lam_value, _oracle(options))
    entries = [cfg.at(t) for _, cfg, t in got]
    rest = sorted(set(jobs) - {j for j, _, _ in got}, key=lambda k: -inst.jobs[k].weight)
    entries += _earliest(inst, rest, ledger)
    info = {
        "F": f,
        "lambda": lam_value,
        "scheduled_weight": sum(inst.jobs[j].weight for j, _, _ in got),
    }
    return ElasticSchedule.of(entries), {**info, "rejected": len(rest)}


def _earliest(inst: ElasticInstance, jobs: Sequence[int], ledger: Ledger) -> list[JobSchedule]:
    out = []
    zero = np.zeros_like(ledger.used)
    for j in jobs:
        got = price_job(Pricer(inst, zero, ledger.free()), j)
        if got.config is None:
            raise InfeasibleSolutionError(
                f"job {inst.jobs[j].name} cannot complete by the horizon T = {inst.horizon} "
                "in what is left of the cluster"
            )
        ledger.commit(got.config, got.start)
        out.append(got.config.at(got.start))
    return out


ALGORITHMS: dict[str, Callable[[ElasticInstance, MethodOptions], tuple[ElasticSchedule, dict]]] = {
    "a-online": run_online,
    "a-dual": run_dual,
    "a-maxweight": run_maxweight,
}
