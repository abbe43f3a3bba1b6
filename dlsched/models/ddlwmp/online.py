"""A-SRPT (Algorithm 1 of Luo et al., seed 001) and the baselines of Section V as policies of
the shared event engine :mod:`dlsched.simulate`, non-preemptive.

Resources are the servers (capacity g each); an activity is one job holding its GPUs per server
for its busy slots (:func:`~dlsched.models.ddlwmp.check.busy_slots`). Every event lies on the
slot grid (releases are whole slots, busy times whole slots), so a policy that starts jobs only
at events starts them on the grid. A policy that must wake up with no event due (a virtual
SRPT completion, the end of a delay) starts a timer: an activity that holds nothing.

The engine's clock counts seconds from the beginning of the first slot, as the instance's
releases do. How the slots are numbered (``cluster.slots``: from 1 as the paper's [T], or
from 0) moves every release, start, A~_1 completion and slot boundary by the same
``first_slot_s``, so no policy decides differently under either numbering: the schedule is the
same, and the checker counts its completion times t_i + n_i alpha_i from the first slot's
number (:attr:`~dlsched.models.ddlwmp.instance.Cluster.first_slot_s`).

- ``a-srpt``: jobs enter ``pending_queue`` in the order they complete on the virtual single
  machine A~_1 (preemptive SRPT on sizes (g_i / G) n~_i alpha~_i^min); the head starts when g_i
  GPUs are free (strict order). Communication-heavy jobs (alpha^max / alpha~^min >=
  COMM_HEAVY) take the servers with the most free GPUs and, if their alpha is above
  COMM_HEAVY alpha~^min, wait up to tau (g_i / G) n~_i alpha~^min for a better placement
  (blocking the queue, as the proof of Lemma 2 counts it); the others take the servers with
  the fewest free GPUs (fragmentation-aware). Heavy-Edge maps every job.
- ``spjf`` / ``spwf``: predicted duration / workload order, strict (the head blocks);
- ``wcs-duration`` / ``wcs-workload`` / ``wcs-subtime``: work-conserving, any job that fits in
  that order. The baselines take the servers with the most free GPUs.
- ``wcs-reserve`` (a baseline of this package, not of the paper): ``wcs-duration`` with a
  reserve for short jobs: jobs predicted to run longer than a day hold at most 3/4 of the GPUs
  together (:class:`Reserve`), so that GPUs keep coming free for the short ones. Without it, on
  a crowded trace every GPU ends up held by a job of weeks, and a job of minutes waits for one
  of them to end (Gavel's 6214e9 pooled: flow time 1.85e9 s, 1.29e9 s with the reserve).

Every policy reads n~_i from a predictor object (:mod:`.predict`: ``fit``/``predict``) when one
is given, else from the jobs' ``predicted_iterations``; ``a-srpt-perfect`` uses n_i (the
predictor :data:`~.predict.PERFECT`).

``pooled=True`` (``--param pooled=true``) runs a policy on the pooled cluster, as PAI's own
simulator models one: a single pool of the G GPUs, every job holding g_i of them for its
fixed duration n_i alpha~_i^min (its run on its best placement, whatever the servers), no
placement (the schedule is a :class:`~.solution.PooledSchedule`, which the checker verifies
against the pool). The placement-aware flow time less the pooled one is what placement costs
the policy. A-SRPT there never delays a job (its alpha is alpha~^min).

Every online result also reports its flow time beside a certified lower bound on it
(:func:`flow_report`, :func:`.flowlp.flow_bound`: the larger of Lemma 1's and an
interval-indexed LP of mean busy times) and the gap between them.
"""

from __future__ import annotations

import heapq
import math
from collections import deque
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from dlsched.errors import InternalError, OptionError
from dlsched.models.ddlwmp.alpha import Placement, alpha_max_ms, alpha_ms
from dlsched.models.ddlwmp.check import busy_slots, run_seconds
from dlsched.models.ddlwmp.instance import DdlwmpInstance
from dlsched.models.ddlwmp.mapping import alpha_tilde_min, heavy_edge
from dlsched.models.ddlwmp.predict import GIVEN, PERFECT, Predictor
from dlsched.models.ddlwmp.solution import Schedule, pooled
from dlsched.simulate import Activity, SimResult, Simulator, Started, simulate
from dlsched.solvers.base import relative_gap
from dlsched.solvers.deadline import NEVER, Deadline

if TYPE_CHECKING:
    from dlsched.result import Outcome

#: the paper's threshold of a communication-heavy job (Section IV-C)
COMM_HEAVY = 1.5
#: the one resource of the pooled cluster
POOL = "pool"


@dataclass(frozen=True, slots=True)
class JobInfo:
    gpus: int
    config: int  # index of the job's (stages, allreduce) among the instance's distinct ones
    predicted: float  # n~_i (or n_i for perfect predictions)
    alpha_tilde: float  # ms
    alpha_max: float  # ms


def job_infos(instance: DdlwmpInstance, predictor: Predictor | None = None) -> list[JobInfo]:
    """Per job: GPUs, configuration, n~_i (from ``predictor`` when given, else the instance's
    ``predicted_iterations``; n_i with :data:`~.predict.PERFECT`), alpha~^min and alpha^max
    (these once per job shape)."""
    c, shapes = instance.cluster, instance.shapes
    preds = (predictor or GIVEN).predict(instance.jobs)
    per_shape = []
    for k, i in enumerate(shapes.first):
        j = instance.jobs[i]
        per_shape.append((int(shapes.gpus[k]), alpha_tilde_min(j, c)[0], alpha_max_ms(j, c)))
    out = []
    for cid, pred in zip(shapes.of_job.tolist(), preds.tolist(), strict=True):
        g, a_t, a_max = per_shape[cid]
        out.append(JobInfo(g, cid, float(pred), a_t, a_max))
    return out


class PolicyTimeUp(Exception):
    """A policy's deadline passed before it had started every job (``started`` had)."""

    def __init__(self, started: int) -> None:
        super().__init__("deadline passed")
        self.started = started


@dataclass(frozen=True)
class PolicyOptions:
    """How any policy runs: ``predictor`` gives n~_i (:func:`job_infos`); ``pooled``: on the
    pooled cluster (see the module docstring)."""

    predictor: Predictor | None = None
    pooled: bool = False


class ClusterPolicy:
    """What every ddlwmp policy shares: free GPUs per server, Heavy-Edge with a cache, timers;
    :class:`PolicyTimeUp` when a job would start past ``deadline``."""

    deadline: Deadline = NEVER
    started = 0

    def __init__(self, instance: DdlwmpInstance, options: PolicyOptions = PolicyOptions()) -> None:
        if not isinstance(options.pooled, bool):
            raise OptionError("pooled", options.pooled, "expected true or false")
        self.inst, self.pooled = instance, options.pooled
        self.info = job_infos(instance, options.predictor)
        c = instance.cluster
        self.g, self.slot = c.gpus_per_server, c.slot_s
        self.free = [c.gpus_per_server] * c.servers
        self.total_free = c.total_gpus
        #: servers by free GPU count (index 0..g)
        self.by_free: list[set[int]] = [set() for _ in range(c.gpus_per_server + 1)]
        self.by_free[c.gpus_per_server] = set(range(c.servers))
        self._map_cache: dict[
            tuple[int, tuple[int, ...]], tuple[tuple[tuple[int, ...], ...], float]
        ] = {}
        self._timers: set[float] = set()
        self._placements: dict[Placement, Placement] = {}

    # --- placement ---------------------------------------------------------------------------
    def caps(self, need: int, most: bool) -> list[tuple[int, int]]:
        """(server, GPUs) taking ``need`` GPUs from the servers with the most (or the fewest)
        free GPUs first, ties by server index."""
        caps, left = [], need
        for count in range(self.g, 0, -1) if most else range(1, self.g + 1):
            bucket = self.by_free[count]
            if not bucket:
                continue
            for m in heapq.nsmallest(-(-left // count), bucket):
                take = min(count, left)
                caps.append((m, take))
                left -= take
                if left == 0:
                    return caps
        return caps

    def _take(self, m: int, delta: int) -> None:
        self.by_free[self.free[m]].discard(m)
        self.free[m] += delta
        self.by_free[self.free[m]].add(m)

    def capacity(self) -> dict[Any, float]:
        """The engine's resources: the servers, or the one pool."""
        c = self.inst.cluster
        if self.pooled:
            return {POOL: float(c.total_gpus)}
        return dict.fromkeys(range(c.servers), float(c.gpus_per_server))

    def place(self, i: int, most: bool) -> tuple[Placement, float]:
        """Heavy-Edge on the chosen servers; (placement, alpha ms). Pooled: no placement,
        alpha~^min."""
        if self.pooled:
            return (), self.info[i].alpha_tilde
        return self.map_on(i, self.caps(self.info[i].gpus, most))

    def map_on(self, i: int, caps: list[tuple[int, int]]) -> tuple[Placement, float]:
        """Heavy-Edge of job i on ``caps`` ((server, GPUs) pairs, GPUs summing to its g_i);
        (placement, alpha ms)."""
        if len(caps) > 1:
            caps.sort(key=lambda mc: (-mc[1], mc[0]))
        key = (self.info[i].config, tuple(c for _, c in caps))
        if key not in self._map_cache:
            job = self.inst.jobs[i]
            local = heavy_edge(job, [(k, c) for k, (_, c) in enumerate(caps)])
            local_rows = dict(local)
            rows = tuple(local_rows.get(k, (0,) * len(job.stages)) for k in range(len(caps)))
            self._map_cache[key] = (rows, alpha_ms(job, self.inst.cluster, local))
        cached, alpha = self._map_cache[key]
        if len(caps) == 1:
            placement: Placement = ((caps[0][0], cached[0]),)
        else:
            placement = tuple(
                sorted((m, r) for (m, _), r in zip(caps, cached, strict=True) if any(r))
            )
        return self._placements.setdefault(placement, placement), alpha  # equal ones kept once

    def start(self, i: int, placement: Placement, alpha: float) -> Activity:
        if self.deadline.passed():
            raise PolicyTimeUp(self.started)
        self.started += 1
        g = self.info[i].gpus
        usage: dict[Any, int] = {m: sum(r) for m, r in placement} if placement else {POOL: g}
        if not self.pooled:
            for m, u in usage.items():
                self._take(m, -u)
        self.total_free -= g
        dur = busy_slots(run_seconds(self.inst.jobs[i], alpha), self.slot) * self.slot
        return Activity(i, dur, usage, placement)

    def timer(self, now: float, at: float, sim: Simulator) -> None:
        """Wake up at the first slot boundary at or after ``at``."""
        when = math.ceil(at / self.slot - 1e-9) * self.slot
        if when > now and when not in self._timers:
            self._timers.add(when)
            sim.wake(when)

    # --- engine callbacks --------------------------------------------------------------------
    def on_complete(self, act: Started, now: float, sim: Simulator) -> None:
        if not self.pooled:
            for m, u in act.usage.items():
                self._take(m, int(u))
        self.total_free += self.info[int(act.key)].gpus  # type: ignore[call-overload]


class ASRPT(ClusterPolicy):
    """Algorithm 1."""

    def __init__(
        self, instance: DdlwmpInstance, tau: float, options: PolicyOptions = PolicyOptions()
    ) -> None:
        super().__init__(instance, options)
        self.tau = tau
        g_total = instance.cluster.total_gpus
        self.size = [f.gpus / g_total * f.predicted * f.alpha_tilde / 1000 for f in self.info]
        self.virtual: list[tuple[float, int]] = []  # (remaining seconds, job)
        self.vnow = 0.0
        self.pending: deque[int] = deque()
        self.delayed: tuple[int, float, float] | None = None  # (job, kappa, until)
        self.delays = 0

    def advance(self, now: float) -> None:
        """Run the virtual SRPT machine A~_1 up to ``now``; completions join pending_queue."""
        while self.virtual:
            left, i = self.virtual[0]
            if self.vnow + left <= now:
                heapq.heappop(self.virtual)
                self.vnow += left
                self.pending.append(i)
            else:
                heapq.heapreplace(self.virtual, (left - (now - self.vnow), i))
                break
        self.vnow = now

    def on_arrival(self, job: Hashable, now: float, sim: Simulator) -> None:
        self.advance(now)
        i = int(job)  # type: ignore[call-overload]
        heapq.heappush(self.virtual, (self.size[i], i))

    def decide(self, now: float, sim: Simulator) -> Sequence[Activity]:
        self.advance(now)
        self._timers.discard(now)
        out: list[Activity] = []
        while True:
            if self.delayed is not None and not self._retry(now, out):
                break
            if not self.pending or self.info[self.pending[0]].gpus > self.total_free:
                break
            self._head(now, out, sim)
        if self.virtual:
            self.timer(now, self.vnow + self.virtual[0][0], sim)
        return out

    def _head(self, now: float, out: list[Activity], sim: Simulator) -> None:
        i = self.pending.popleft()
        f = self.info[i]
        if f.alpha_max / f.alpha_tilde < COMM_HEAVY:  # lines 21-23
            out.append(self.start(i, *self.place(i, most=False)))
            return
        p, a = self.place(i, most=True)  # lines 9-11
        until = now + self.tau * self.size[i]
        if a / f.alpha_tilde <= COMM_HEAVY or until <= now:  # lines 12-13
            out.append(self.start(i, p, a))
            return
        self.delayed = (i, a, until)  # lines 15-20
        self.delays += 1
        self.timer(now, until, sim)

    def _retry(self, now: float, out: list[Activity]) -> bool:
        """Reassess the delayed job; True when it started (the queue may move on)."""
        assert self.delayed is not None
        i, kappa, until = self.delayed
        p, a = self.place(i, most=True)
        if a < kappa or now >= until - 1e-9 * max(1.0, until):
            self.delayed = None
            out.append(self.start(i, p, a))
            return True
        return False

    def pending_jobs(self) -> int:
        return len(self.pending) + len(self.virtual) + (self.delayed is not None)


class OrderedPolicy(ClusterPolicy):
    """A priority order over released jobs; ``strict``: the head blocks the others."""

    def __init__(
        self,
        instance: DdlwmpInstance,
        key: Callable[[int], float],
        strict: bool,
        options: PolicyOptions = PolicyOptions(),
    ) -> None:
        super().__init__(instance, options)
        self.key, self.strict = key, strict
        self.buckets: dict[int, list[tuple[float, int]]] = {}

    def on_arrival(self, job: Hashable, now: float, sim: Simulator) -> None:
        i = int(job)  # type: ignore[call-overload]
        g = 0 if self.strict else self.info[i].gpus  # one bucket when strict
        heapq.heappush(self.buckets.setdefault(g, []), (self.key(i), i))

    def decide(self, now: float, sim: Simulator) -> Sequence[Activity]:
        out: list[Activity] = []
        while True:
            heads = [(b[0], g) for g, b in self.buckets.items() if b and g <= self.total_free]
            if not heads:
                break
            (_, i), g = min(heads)
            if self.info[i].gpus > self.total_free:
                break  # strict: the head does not fit
            heapq.heappop(self.buckets[g])
            out.append(self.start(i, *self.place(i, most=True)))
        return out


@dataclass(frozen=True)
class Reserve:
    """``wcs-reserve``'s rule: jobs whose predicted run exceeds ``long_s`` seconds hold at
    most ``1 - share`` of the G GPUs together (``share`` of them kept for the others)."""

    long_s: float = 86_400.0
    share: float = 0.25


class ReservePolicy(OrderedPolicy):
    """Work-conserving by predicted duration, with a reserve for short jobs: a long job (see
    :class:`Reserve`) starts only when the long jobs running and it hold at most
    (1 - share) G GPUs, or when nothing runs (so a job wider than the cap still starts)."""

    def __init__(
        self, instance: DdlwmpInstance, reserve: Reserve, options: PolicyOptions = PolicyOptions()
    ) -> None:
        super().__init__(instance, lambda i: 0.0, False, options)
        self.key = _duration(self)
        total = instance.cluster.total_gpus
        self.cap = (1.0 - reserve.share) * total
        self.long = [self.key(i) > reserve.long_s * 1000.0 for i in range(instance.num_jobs)]
        self.held_long = 0

    def allowed(self, i: int) -> bool:
        idle = self.total_free == self.inst.cluster.total_gpus
        return not self.long[i] or idle or self.held_long + self.info[i].gpus <= self.cap

    def decide(self, now: float, sim: Simulator) -> Sequence[Activity]:
        out: list[Activity] = []
        while True:
            heads = [
                (b[0], g)
                for g, b in self.buckets.items()
                if b and g <= self.total_free and self.allowed(b[0][1])
            ]
            if not heads:
                break
            (_, i), g = min(heads)
            heapq.heappop(self.buckets[g])
            self.held_long += self.info[i].gpus if self.long[i] else 0
            out.append(self.start(i, *self.place(i, most=True)))
        return out

    def on_complete(self, act: Started, now: float, sim: Simulator) -> None:
        super().on_complete(act, now, sim)
        i = int(act.key)  # type: ignore[call-overload]
        self.held_long -= self.info[i].gpus if self.long[i] else 0


def _duration(p: ClusterPolicy) -> Callable[[int], float]:
    return lambda i: p.info[i].predicted * p.info[i].alpha_tilde


def _workload(p: ClusterPolicy) -> Callable[[int], float]:
    return lambda i: p.info[i].predicted * p.info[i].alpha_tilde * p.info[i].gpus


def make_policy(
    instance: DdlwmpInstance,
    name: str,
    tau: float = 1.0,
    options: PolicyOptions = PolicyOptions(),
    reserve: Reserve | None = None,
) -> ClusterPolicy:
    """The policy ``name`` run with ``options``: its ``predictor`` (a fitted
    :class:`~.predict.Predictor`) gives n~_i, else the instance's ``predicted_iterations`` do
    (``a-srpt-perfect`` uses n_i); ``reserve``: the rule of ``wcs-reserve`` (default
    :class:`Reserve`)."""
    if name in ("a-srpt", "a-srpt-perfect"):
        if name == "a-srpt-perfect":
            options = replace(options, predictor=PERFECT)
        return ASRPT(instance, tau, options)
    if name == "wcs-reserve":
        return ReservePolicy(instance, reserve or Reserve(), options)
    if name not in POLICIES:
        raise OptionError("policy", name, f"expected one of {', '.join(POLICIES)}")
    strict = name in ("spjf", "spwf")
    pol = OrderedPolicy(instance, lambda i: 0.0, strict, options)
    keys = {
        "spjf": _duration(pol),
        "spwf": _workload(pol),
        "wcs-duration": _duration(pol),
        "wcs-workload": _workload(pol),
        "wcs-subtime": lambda i: instance.jobs[i].release,
    }
    pol.key = keys[name]
    return pol


POLICIES = (
    "a-srpt",
    "a-srpt-perfect",
    "spjf",
    "spwf",
    "wcs-duration",
    "wcs-workload",
    "wcs-subtime",
    "wcs-reserve",
)


def run_policy(
    instance: DdlwmpInstance,
    name: str,
    tau: float = 1.0,
    predictor: Predictor | None = None,
    deadline: Deadline = NEVER,
    pooled: bool = False,
    reserve: Reserve | None = None,
) -> tuple[Schedule, dict]:
    """Simulate ``name`` on the instance; (schedule, statistics). ``predictor``: a fitted
    predictor of n~_i (see :func:`make_policy`); ``pooled``: on the pooled cluster;
    ``reserve``: ``wcs-reserve``'s rule. :class:`PolicyTimeUp` when ``deadline`` passes before
    every job started."""
    policy = make_policy(instance, name, tau, PolicyOptions(predictor, pooled), reserve)
    policy.deadline = deadline
    return simulate_policy(instance, policy, name)


def simulate_policy(
    instance: DdlwmpInstance, policy: ClusterPolicy, name: str
) -> tuple[Schedule, dict]:
    """Simulate a built ``policy`` (``name`` for messages) on the shared engine; (schedule,
    statistics). :class:`PolicyTimeUp` when its deadline passes before every job started."""
    arrivals = [(j.release, i) for i, j in enumerate(instance.jobs)]
    res = simulate(arrivals, policy.capacity(), policy)  # type: ignore[arg-type]
    return recorded(instance, policy, res, name)


def recorded(
    instance: DdlwmpInstance, policy: ClusterPolicy, res: SimResult, name: str
) -> tuple[Schedule, dict]:
    """The schedule and statistics of the engine's record ``res`` of ``policy`` (``name``
    for messages); InternalError if a job never started."""
    starts = [math.nan] * instance.num_jobs
    places: list[Placement] = [()] * instance.num_jobs
    for a in res.activities:
        starts[int(a.key)] = a.start  # type: ignore[call-overload]
        places[int(a.key)] = a.payload  # type: ignore[call-overload]
    stats: dict[str, Any] = {"events": res.events, "decisions": res.decisions}
    del res  # the engine's record: a few hundred bytes per job
    missing = [instance.jobs[i].name for i, t in enumerate(starts) if math.isnan(t)]
    if missing:
        raise InternalError(f"policy {name} never started {missing[:5]}")
    if isinstance(policy, ASRPT):
        stats["delays"] = policy.delays
    if policy.pooled:
        return pooled(tuple(starts)), {**stats, "cluster": "pooled"}
    return Schedule(tuple(starts), tuple(places)), stats


def flow_report(outcome: Outcome, instance: DdlwmpInstance, deadline: Deadline) -> Outcome:
    """``outcome`` (an online policy's, verified) with a certified lower bound on the total
    flow time (:func:`.flowlp.flow_bound`, once per instance object) beside the checker's
    flow time, and the gap (flow - bound) / flow, in its details (``flow_time_bound_s``,
    ``flow_time_gap``; ``flow_time_bound_lemma1_s``, ``flow_time_bound_lp_s``: the two
    pieces); the bound shares ``deadline`` (a probe or an LP it cuts leaves a weaker bound,
    still valid)."""
    from dlsched.models.ddlwmp.flowlp import flow_bound

    flow = outcome.details.get("flow_time_s")
    if flow is None:
        return outcome
    b = flow_bound(instance, deadline)
    details = {
        **outcome.details,
        "flow_time_bound_s": b.flow,
        "flow_time_gap": relative_gap(flow, b.flow),
        "flow_time_bound_lemma1_s": b.lemma1,
        "flow_time_bound_lp_s": b.interval_lp,
    }
    return replace(outcome, details=details)


__all__ = [
    "ASRPT",
    "COMM_HEAVY",
    "POOL",
    "POLICIES",
    "OrderedPolicy",
    "PolicyOptions",
    "PolicyTimeUp",
    "Reserve",
    "ReservePolicy",
    "flow_report",
    "make_policy",
    "recorded",
    "run_policy",
    "simulate_policy",
]
