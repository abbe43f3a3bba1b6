"""The paper's algorithms: A_maxweight (Algorithm 3), A_dual (Algorithm 2), A_online
(Algorithm 1) on the shared event engine :mod:`dlsched.simulate`.

Zhou et al., Sections 4-6. A_maxweight visits the jobs once, prices each job's cheapest
schedule under the price function (11) with an oracle for the cost minimization (12)/(20), and
schedules the job when its weight exceeds that cost. The oracle is ``fast`` (the default:
Algorithms 4-7 computed for every start and server at once, :mod:`.fastprice`), ``paper`` (the
same algorithms as literal loops, :mod:`.mincost`) or ``exact`` (the exact minimization of
:mod:`.pricing`, which Theorems 1 and 6 claim Algorithms 4-7 compute).

A_dual runs alpha rounds of A_maxweight on consecutive windows of length tau. A_online waits
until tau_i = 2^(i-1), batches the jobs that arrived and are not scheduled, and runs A_dual's
schedule from alpha tau_i on. A job that the next round could not complete before the
horizon T (alpha tau_(i+1) plus its shortest duration beyond T) is placed at once at its
earliest completion in what is left (the fallback, ``details["fallback_jobs"]``). When earlier
commitments leave a job no room at all before T, no schedule is returned: the method's outcome
says so (``details["no_schedule"]``, the jobs in ``details["unscheduled_jobs"]``), with status
``infeasible`` when that job cannot complete by T even alone on the empty cluster
(:func:`alone_infeasible`) and ``no_solution`` otherwise.

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

from dlsched.errors import OptionError
from dlsched.models import MethodOptions
from dlsched.models.elastic.enumerate import Config
from dlsched.models.elastic.instance import ElasticInstance
from dlsched.models.elastic.pricing import Priced, Pricer, price_job
from dlsched.models.elastic.solution import ElasticSchedule, JobSchedule, Run
from dlsched.simulate import Activity, Simulator, Started, simulate
from dlsched.solvers.deadline import NEVER, Deadline

#: oracle(instance, job, prices [T,H,R], free [T,H,R], (lo, hi), limit) -> cheapest schedule;
#: ``limit``: only schedules cheaper than it matter (an oracle may ignore it).
Oracle = Callable[..., Priced]


@dataclass(frozen=True)
class LoopOracle:
    """An oracle as literal loops (``limit`` is not used): with ``exact``, problem (12)/(20)
    solved exactly (:mod:`.pricing`; resource cost only, ties: earlier completion); else
    Algorithms 4 and 5 (PS) or 6 and 7 (Ring-AllReduce) as written (:mod:`.mincost`), the
    cheaper result, or with ``only_q`` the algorithm of that colocation alone."""

    exact: bool = False
    only_q: bool | None = None

    def __call__(
        self,
        inst: ElasticInstance,
        j: int,
        prices: np.ndarray,
        free: np.ndarray,
        window: tuple[int, int],
        limit: float = math.inf,
    ) -> Priced:
        if self.exact:
            return price_job(Pricer(inst, prices, free, window), j, weight=0.0)
        from dlsched.models.elastic.mincost import paper_mincost

        return paper_mincost(inst, j, prices, free, window, only_q=self.only_q)


#: Problem (12)/(20) solved exactly.
exact_oracle = LoopOracle(exact=True)
#: Algorithms 4-7 as written (loops).
paper_oracle = LoopOracle()


def fast_oracle(inst: ElasticInstance) -> Oracle:
    """Algorithms 4-7 vectorised with pruning and caches (:mod:`.fastprice`), for ``inst``."""
    from dlsched.models.elastic.fastprice import FastOracle

    return FastOracle(inst)


#: Oracle factories by name: each builds the oracle of one instance.
ORACLES: dict[str, Callable[[ElasticInstance], Oracle]] = {
    "fast": fast_oracle,
    "exact": lambda inst: exact_oracle,
    "paper": lambda inst: paper_oracle,
}
#: The oracle of A_online, A_dual and A_maxweight unless ``--param oracle`` says otherwise.
DEFAULT_ORACLE = "fast"


def capacity(inst: ElasticInstance) -> np.ndarray:
    """C [H, R]."""
    return np.array([s.capacity for s in inst.servers], dtype=float)


def _unit_pricer(inst: ElasticInstance) -> Callable[[int], float]:
    """j -> the least total resource consumption sum_{t,h,r} f(l) of any schedule of job j: the
    exact pricing (12)/(20) at unit prices on the empty cluster."""
    from dlsched.models.elastic.fastprice import FastOracle

    ones = np.ones((1, inst.num_servers, len(inst.resources)))
    ones = np.broadcast_to(ones, (inst.horizon, *ones.shape[1:]))
    free = np.broadcast_to(capacity(inst), ones.shape)
    oracle = FastOracle(inst, exact=True, stationary=True)
    return lambda j: oracle(inst, j, ones, free, (0, inst.horizon)).cost


def consumption_bounds(inst: ElasticInstance) -> list[float]:
    """Per job, the least total resource consumption sum_{t,h,r} f(l) of any schedule (the
    denominator of F in the first assumption of Section 5.1), by exact pricing at unit
    prices."""
    least = _unit_pricer(inst)
    return [least(j) for j in range(inst.num_jobs)]


def lam(inst: ElasticInstance) -> tuple[float, float]:
    """(F, lambda) of (11): lambda = 2 T H R F + 1, F = max_j w_j / min_l consumption.

    The least consumption is priced exactly only for the jobs whose lower bound
    (:func:`.fastprice.consumption_floor`) could still give the maximum."""
    from dlsched.models.elastic.fastprice import consumption_floor

    least = _unit_pricer(inst)
    floors = [consumption_floor(inst, j) for j in range(inst.num_jobs)]
    f = 0.0
    for j in sorted(range(inst.num_jobs), key=lambda k: -inst.jobs[k].weight / floors[k]):
        if inst.jobs[j].weight / floors[j] <= f:
            break
        c = least(j)
        if 0 < c < math.inf:
            f = max(f, inst.jobs[j].weight / c)
    r = len(inst.resources)
    return f, 2 * inst.horizon * inst.num_servers * r * f + 1


def alpha_theorem5(inst: ElasticInstance, lam_value: float) -> int:
    """alpha of Theorem 5: floor((log w(J) - log w_min) / (1 + log log lambda -
    log(2 log lambda - 1))) + 1 (base 2); 1 when gamma = 2 log lambda <= 1 (lambda <= sqrt 2,
    e.g. no job fits the cluster), the limit of the formula as gamma falls to 1."""
    w = [j.weight for j in inst.jobs]
    ll = math.log2(lam_value)
    if 2 * ll <= 1:  # gamma = 2 log lambda <= 1: the denominator's limit is infinite
        return 1
    denom = 1 + math.log2(ll) - math.log2(2 * ll - 1)
    return math.floor((math.log2(sum(w)) - math.log2(min(w))) / denom) + 1


def price_function(used: np.ndarray, cap: np.ndarray, lam_value: float) -> np.ndarray:
    """delta_h^r(t) = lambda^(beta_h^r(t) / C_h^r) - 1, eq. (11) (0 where C = 0)."""
    safe = np.where(cap > 0, cap, 1.0)
    return np.where(cap > 0, np.power(lam_value, used / safe) - 1.0, 0.0)


@dataclass
class Ledger:
    """Usage [T, H, R] committed so far (what the cluster runs in every slot).

    :meth:`free` and :meth:`prices` return arrays that stay the same objects until the next
    :meth:`commit` (which replaces them, updating only the slots it touches): oracles may
    cache what they derive from them.
    """

    inst: ElasticInstance
    used: np.ndarray = field(init=False)
    _free: np.ndarray = field(init=False)
    _prices: dict[float, np.ndarray] = field(init=False)

    def __post_init__(self) -> None:
        self.used = np.zeros((self.inst.horizon, self.inst.num_servers, len(self.inst.resources)))
        self._free = capacity(self.inst) - self.used
        self._prices = {}

    def free(self) -> np.ndarray:
        return self._free

    def prices(self, lam_value: float) -> np.ndarray:
        """The price function (11) on the current usage."""
        if lam_value not in self._prices:
            self._prices[lam_value] = price_function(self.used, capacity(self.inst), lam_value)
        return self._prices[lam_value]

    def commit(self, cfg: Config, start: int) -> None:
        end = start + cfg.duration
        self.used[start:end] += cfg.usage
        self._free = self._free.copy()
        self._free[start:end] = capacity(self.inst) - self.used[start:end]
        for lam_value, old in list(self._prices.items()):
            new = old.copy()
            new[start:end] = price_function(self.used[start:end], capacity(self.inst), lam_value)
            self._prices[lam_value] = new


class TimeUp(Exception):
    """A heuristic's deadline passed before every job was priced (A_maxweight) or started (a
    baseline): ``priced`` were."""

    def __init__(self, priced: int) -> None:
        super().__init__("deadline passed")
        self.priced = priced


def a_maxweight(
    inst: ElasticInstance,
    jobs: Sequence[int],
    window: tuple[int, int],
    ledger: Ledger,
    lam_value: float,
    oracle: Oracle = exact_oracle,
    deadline: Deadline | None = None,
) -> list[tuple[int, Config, int]]:
    """Algorithm 3 on ``jobs`` (in the given order) within ``window``; commits to ``ledger``.

    Returns (job, configuration, start) of every job scheduled (u_j = w_j - cost_j > 0).
    :class:`TimeUp` when ``deadline`` passes before a job is priced (checked between jobs).
    """
    out = []
    for k, j in enumerate(jobs):
        if deadline is not None and deadline.passed():
            raise TimeUp(k)
        prices = ledger.prices(lam_value)  # (11), line 14
        w = inst.jobs[j].weight
        got = oracle(inst, j, prices, ledger.free(), window, w)  # lines 3-7 (only < w_j matters)
        if got.config is None or w - got.cost <= 0:  # line 9
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
    deadline: Deadline | None = None,
) -> list[tuple[int, Config, int]]:
    """Algorithm 2: alpha rounds of A_maxweight, round iota on [offset + (iota-1) tau,
    offset + iota tau), stopping once every job is scheduled; :class:`TimeUp` when
    ``deadline`` passes before a job is priced."""
    left = list(jobs)
    out: list[tuple[int, Config, int]] = []
    for iota in range(1, alpha + 1):
        lo, hi = offset + (iota - 1) * tau, min(offset + iota * tau, inst.horizon)
        if not left or lo >= hi:
            break
        got = a_maxweight(inst, left, (lo, hi), ledger, lam_value, oracle, deadline)
        done = {j for j, _, _ in got}
        left = [j for j in left if j not in done]
        out += got
    return out


def _usage_map(cfg: Config) -> dict[Hashable, float]:
    hs, rs = cfg.usage.nonzero()
    return {(int(h), int(r)): float(cfg.usage[h, r]) for h, r in zip(hs, rs, strict=True)}


class ArrivalQueue:
    """The events of a slotted policy that decides once per slot: each arriving job joins
    ``waiting`` (arrival order); a completion needs nothing."""

    waiting: list[int]

    def pending(self) -> bool:
        return bool(self.waiting)

    def on_arrival(self, job: Hashable, now: float, sim: Simulator) -> None:
        assert isinstance(job, int)
        self.waiting.append(job)

    def on_complete(self, activity: Started, now: float, sim: Simulator) -> None:
        pass


class OnlinePolicy(ArrivalQueue):
    """A_online (Algorithm 1) as a slotted policy of :func:`dlsched.simulate.simulate`."""

    def __init__(
        self,
        inst: ElasticInstance,
        alpha: int,
        lam_value: float,
        oracle: Oracle,
        deadline: Deadline = NEVER,
    ):
        """:class:`TimeUp` out of a round when ``deadline`` passes in it; the jobs of a
        fallback past it stay unplaced."""
        self.inst, self.alpha, self.lam, self.oracle = inst, alpha, lam_value, oracle
        self.deadline = deadline
        self.ledger = Ledger(inst)
        self.waiting: list[int] = []
        self.plans: dict[int, list[tuple[int, Config]]] = {}
        self.round = 1  # i; tau_i = 2^(i-1)
        self.rounds: list[dict[str, Any]] = []
        self.fallback: list[int] = []
        self.unplaced: list[int] = []  # no room before T in what the commitments leave

    def pending(self) -> bool:
        return bool(self.waiting or self.plans)

    def decide(self, now: float, sim: Simulator) -> list[Activity]:
        t = round(now)
        while 2 ** (self.round - 1) <= t:  # line 2: a round at every tau_i reached
            self._round(2 ** (self.round - 1))
            self.round += 1
        late = [j for j in self.waiting if self._late(j)]
        if late:
            self._fall_back(t, late)  # no later interval can complete them before T
        return [
            Activity(j, float(cfg.duration), _usage_map(cfg), cfg.at(t))
            for j, cfg in self.plans.pop(t, [])
        ]

    def _round(self, tau: int) -> None:
        batch = sorted(j for j in self.waiting if self.inst.jobs[j].arrival <= tau)  # J_i
        got = a_dual(
            self.inst,
            batch,
            tau,
            self.alpha * tau,
            self.alpha,
            self.ledger,
            self.lam,
            self.oracle,
            self.deadline,
        )
        for j, cfg, start in got:  # lines 7-9: run from alpha tau_i on
            self.plans.setdefault(start, []).append((j, cfg))
        done = {j for j, _, _ in got}
        self.waiting = [j for j in self.waiting if j not in done]  # line 10
        self.rounds.append({"tau": tau, "batch": len(batch), "scheduled": len(done)})

    def _late(self, j: int) -> bool:
        """Whether the next round (tau = 2^(i-1), run from alpha tau on) cannot complete job
        j by the horizon even with its shortest schedule."""
        from dlsched.models.elastic.fastprice import all_shapes

        shapes = all_shapes(self.inst)[j]
        shortest = int(shapes[0, 4]) if len(shapes) else self.inst.horizon + 1
        return self.alpha * 2 ** (self.round - 1) + shortest > self.inst.horizon

    def _fall_back(self, now: int, jobs: list[int]) -> None:
        """Jobs no later interval can complete before T: each at its earliest completion in
        what is left, heaviest first (recorded in ``fallback``)."""
        order = sorted(jobs, key=lambda k: -self.inst.jobs[k].weight)
        placed, unplaced = _earliest(self.inst, order, self.ledger, now, self.deadline)
        for j, cfg, start in placed:
            self.plans.setdefault(start, []).append((j, cfg))
            self.fallback.append(j)
        self.unplaced += unplaced
        self.waiting = [j for j in self.waiting if j not in set(jobs)]


def one_algorithm_oracle(inst: ElasticInstance, name: str) -> Oracle:
    """One of Algorithms 4-7 alone (``a-mincost1`` ... ``a-ramincost2``, literal loops): only
    the schedules of its colocation q are priced."""
    from dlsched.models.elastic.mincost import ALGORITHMS as ONE

    arch, q = ONE[name]
    if arch != inst.architecture:
        other = ", ".join(k for k, (a, _) in ONE.items() if a == inst.architecture)
        raise OptionError(
            "--param oracle", name, f"prices {arch} jobs; for {inst.architecture}: {other}"
        )
    return LoopOracle(only_q=q)


def _oracle(options: MethodOptions, inst: ElasticInstance) -> Oracle:
    from dlsched.models.elastic.mincost import ALGORITHMS as ONE

    name = options.param("oracle", DEFAULT_ORACLE)
    if isinstance(name, str) and name in ONE:
        return one_algorithm_oracle(inst, name)
    if name not in ORACLES:
        known = ", ".join([*ORACLES, *ONE])
        raise OptionError("--param oracle", name, f"expected one of {known}")
    return ORACLES[name](inst)


def _alpha(options: MethodOptions, inst: ElasticInstance, lam_value: float) -> int:
    value = options.param("alpha", None)
    if value is None:
        return alpha_theorem5(inst, lam_value)
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise OptionError("--param alpha", value, "expected a positive integer")
    return value


def _result(inst: ElasticInstance, entries: list, unplaced: Sequence[int], info: dict) -> Run:
    """The schedule of ``entries``, or None with ``unscheduled_jobs`` when some job got none."""
    if unplaced:
        names = [inst.jobs[j].name for j in sorted(unplaced)]
        return None, {**info, "unscheduled_jobs": names, "scheduled_jobs": len(entries)}
    return ElasticSchedule.of(entries), info


def run_online(inst: ElasticInstance, options: MethodOptions) -> Run:
    """A_online within ``options.deadline``; when it passes, no schedule (status time_limit)."""
    deadline = options.deadline
    f, lam_value = lam(inst)
    alpha = _alpha(options, inst, lam_value)
    policy = OnlinePolicy(inst, alpha, lam_value, _oracle(options, inst), deadline)
    arrivals = [(float(j.arrival), k) for k, j in enumerate(inst.jobs)]
    cap = {(h, r): c for h, s in enumerate(inst.servers) for r, c in enumerate(s.capacity)}
    info: dict[str, Any] = {"F": f, "lambda": lam_value, "alpha": alpha}
    try:
        res = simulate(arrivals, cap, policy, tick=1.0)
    except TimeUp:
        return None, cut_details(options, info, f"in round {policy.round}")
    if policy.unplaced and deadline.passed():
        return None, cut_details(options, info, "while placing the jobs of a fallback")
    entries = [a.payload for a in res.activities]
    info["rounds"] = policy.rounds
    info["fallback_jobs"] = [inst.jobs[j].name for j in policy.fallback]
    return _result(inst, entries, policy.unplaced, info)


def run_dual(inst: ElasticInstance, options: MethodOptions) -> Run:
    """A_dual offline on every job at once, for tau = 1, 2, 4, ... until it schedules every
    job (its schedule then has length at most alpha tau, Lemma 2) or alpha tau reaches T; the
    jobs of the last attempt left unscheduled follow at their earliest completion. Within
    ``options.deadline``; when it passes, no schedule (status time_limit)."""
    deadline = options.deadline
    f, lam_value = lam(inst)
    alpha = _alpha(options, inst, lam_value)
    info: dict[str, Any] = {"F": f, "lambda": lam_value, "alpha": alpha}
    oracle = _oracle(options, inst)
    jobs = list(range(inst.num_jobs))
    tau = 1
    while True:
        ledger = Ledger(inst)
        try:
            got = a_dual(inst, jobs, tau, 0, alpha, ledger, lam_value, oracle, deadline)
        except TimeUp:
            return None, cut_details(options, info, f"in A_dual's run with tau = {tau}")
        if len(got) == len(jobs) or alpha * tau >= inst.horizon:
            break
        tau *= 2
    entries, rest, unplaced = _then_earliest(inst, jobs, got, ledger, deadline)
    if unplaced and deadline.passed():
        return None, cut_details(options, info, f"while placing the {len(rest)} jobs left")
    info |= {"tau": tau, "fallback": len(rest)}
    return _result(inst, entries, unplaced, info)


def run_maxweight(inst: ElasticInstance, options: MethodOptions) -> Run:
    """A_maxweight on every job over the whole horizon (the jobs it rejects follow at their
    earliest completion in what remains), within ``options.deadline``: checked between jobs,
    and when it passes no schedule (a schedule must hold every job), ``details["hit_limit"]``
    and the reason (the method's status is then time_limit)."""
    deadline = options.deadline
    f, lam_value = lam(inst)
    info: dict[str, Any] = {"F": f, "lambda": lam_value}
    ledger = Ledger(inst)
    jobs = list(range(inst.num_jobs))
    oracle = _oracle(options, inst)
    try:
        got = a_maxweight(inst, jobs, (0, inst.horizon), ledger, lam_value, oracle, deadline)
    except TimeUp as cut:
        return None, cut_details(options, info, f"after pricing {cut.priced} of {len(jobs)} jobs")
    entries, rest, unplaced = _then_earliest(inst, jobs, got, ledger, deadline)
    if unplaced and deadline.passed():
        return None, cut_details(options, info, f"while placing the {len(rest)} jobs it rejected")
    info["scheduled_weight"] = sum(inst.jobs[j].weight for j, _, _ in got)
    info["rejected"] = len(rest)
    return _result(inst, entries, unplaced, info)


def _then_earliest(
    inst: ElasticInstance,
    jobs: Sequence[int],
    got: list[tuple[int, Config, int]],
    ledger: Ledger,
    deadline: Deadline,
) -> tuple[list[JobSchedule], list[int], list[int]]:
    """The schedules ``got``, then the jobs of ``jobs`` they leave out, heaviest first, each at
    its earliest completion in what ``ledger`` leaves: (schedules, the jobs left out, those of
    them that found no room or no time before ``deadline``)."""
    entries = [cfg.at(t) for _, cfg, t in got]
    rest = sorted(set(jobs) - {j for j, _, _ in got}, key=lambda k: -inst.jobs[k].weight)
    placed, unplaced = _earliest(inst, rest, ledger, deadline=deadline)
    return entries + [cfg.at(t) for _, cfg, t in placed], rest, unplaced


def cut_details(options: MethodOptions, info: dict[str, Any], when: str) -> dict[str, Any]:
    """The details of a run its time limit cut ``when``: no schedule, ``hit_limit``."""
    limit = options.time_limit
    reason = f"time limit of {limit:g} s reached {when}: no schedule of every job"
    return {**info, "hit_limit": True, "time_limit": limit, "reason": reason}


def _earliest(
    inst: ElasticInstance,
    jobs: Sequence[int],
    ledger: Ledger,
    now: int = 0,
    deadline: Deadline = NEVER,
) -> tuple[list[tuple[int, Config, int]], list[int]]:
    """Each job in turn at its earliest completion from ``now`` on in what ``ledger`` leaves
    (exact: (12)/(20) at zero prices with the completion term), committed; and the jobs that
    cannot complete by T there, or were not reached by ``deadline``."""
    from dlsched.models.elastic.fastprice import FastOracle

    oracle = FastOracle(inst, exact=True)
    zero = np.zeros((1, *ledger.used.shape[1:]))
    zero = np.broadcast_to(zero, ledger.used.shape)
    placed: list[tuple[int, Config, int]] = []
    unplaced: list[int] = []
    for k, j in enumerate(jobs):
        if deadline.passed():
            unplaced.extend(jobs[k:])
            break
        got = oracle(inst, j, zero, ledger.free(), (now, inst.horizon), weight=1.0)
        if got.config is None:
            unplaced.append(j)
            continue
        ledger.commit(got.config, got.start)
        placed.append((j, got.config, got.start))
    return placed, unplaced


def alone_completion(inst: ElasticInstance, j: int) -> int | None:
    """The earliest completion of job j alone on the empty cluster from its arrival (None: it
    cannot complete by T). No schedule completes j earlier: the cluster is never emptier."""
    placed, _ = _earliest(inst, [j], Ledger(inst))
    return placed[0][1].at(placed[0][2]).end if placed else None


def alone_infeasible(inst: ElasticInstance, jobs: Sequence[int]) -> list[int]:
    """The jobs of ``jobs`` that cannot complete by T even alone on the empty cluster (from
    their arrival): each proves program (2)/(15) infeasible."""
    return [j for j in jobs if alone_completion(inst, j) is None]


def alone_completions(inst: ElasticInstance, deadline: Deadline = NEVER) -> list[int | None]:
    """:func:`alone_completion` of the jobs in order, as many as ``deadline`` allows: a prefix
    of the jobs."""
    out: list[int | None] = []
    for j in range(inst.num_jobs):
        if deadline.passed():
            break
        out.append(alone_completion(inst, j))
    return out


def smith_list(
    inst: ElasticInstance,
    completions: Sequence[int | None] | None = None,
    deadline: Deadline = NEVER,
) -> ElasticSchedule | None:
    """A quick incumbent: jobs by Smith's rule (w_j over its duration alone, largest first),
    each at its earliest completion in what the earlier ones leave; None when one of them
    then cannot complete by T, or ``deadline`` passes first. ``completions``: those of
    :func:`alone_completions`, if already known (a prefix short of every job: None)."""
    if completions is None:
        completions = alone_completions(inst, deadline)
    known = [c for c in completions if c is not None]
    if len(known) < inst.num_jobs:  # not every job reached, or one cannot complete by T
        return None
    span = [max(c - job.arrival, 1) for c, job in zip(known, inst.jobs, strict=True)]
    order = sorted(range(inst.num_jobs), key=lambda j: (-inst.jobs[j].weight / span[j], j))
    placed, unplaced = _earliest(inst, order, Ledger(inst), deadline=deadline)
    if unplaced:
        return None
    return ElasticSchedule.of(cfg.at(start) for _, cfg, start in placed)


def alone_bound(inst: ElasticInstance, completions: Sequence[int | None] | None = None) -> float:
    """sum_j w_j c_j with each c_j its earliest completion alone: a lower bound on (2)/(15)
    (math.inf when some job cannot complete by T, i.e. the program is infeasible).
    ``completions``: a prefix from :func:`alone_completions` (default: every job); the sum
    over a prefix is a lower bound too, every term being >= 0."""
    if completions is None:
        completions = alone_completions(inst)
    total = 0.0
    for job, c in zip(inst.jobs, completions, strict=False):
        if c is None:
            return math.inf
        total += job.weight * c
    return total


ALGORITHMS: dict[str, Callable[[ElasticInstance, MethodOptions], Run]] = {
    "a-online": run_online,
    "a-dual": run_dual,
    "a-maxweight": run_maxweight,
}
