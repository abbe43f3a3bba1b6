"""The event loop of :mod:`dlsched.simulate`."""

from __future__ import annotations

import heapq
import itertools
import math
from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from dlsched.errors import InternalError

#: Capacity slack for floating-point resource amounts (a share of a server's CPU, ...).
CAPACITY_TOL = 1e-9


@dataclass(frozen=True, slots=True)
class Activity:
    """A request to run ``key`` now for ``duration``, holding ``usage`` (resource -> amount)."""

    key: Hashable
    duration: float
    usage: Mapping[Any, float]
    payload: Any = None


@dataclass(frozen=True, slots=True)
class Started:
    """An activity as it ran."""

    key: Hashable
    start: float
    end: float
    usage: Mapping[Any, float]
    payload: Any = None


class Policy(Protocol):
    """What the engine asks of an online policy. ``decide`` is called once after every batch
    of simultaneous events and may start any activities that fit the free capacity."""

    def on_arrival(self, job: Hashable, now: float, sim: Simulator) -> None: ...

    def on_complete(self, activity: Started, now: float, sim: Simulator) -> None: ...

    def decide(self, now: float, sim: Simulator) -> Sequence[Activity]: ...


@dataclass
class SimResult:
    activities: list[Started]
    end: float
    events: int
    decisions: int = 0
    stats: dict[str, Any] = field(default_factory=dict)


class Simulator:
    """The state a policy may read: clock, free capacity, running activities; and
    :meth:`wake`, the one thing it may ask besides starting activities."""

    def __init__(self, capacity: Mapping[Any, float]) -> None:
        self.capacity = dict(capacity)
        self.used: dict[Hashable, float] = dict.fromkeys(self.capacity, 0.0)
        self.now = 0.0
        self.running: dict[int, Started] = {}
        self.log: list[Started] = []
        self._events: list[tuple[float, int, int, Any]] = []  # (time, kind, seq, data)
        self._seq = itertools.count()

    def free(self, resource: Hashable) -> float:
        return self.capacity[resource] - self.used[resource]

    def fits(self, usage: Mapping[Any, float]) -> bool:
        return all(self.free(r) + CAPACITY_TOL >= a for r, a in usage.items())

    def wake(self, at: float) -> None:
        """Consult the policy again at time ``at`` (``decide`` runs then, after that time's
        completions and arrivals): a timer that holds nothing and leaves no record."""
        if not at >= self.now:
            raise InternalError(f"policy asked to wake at {at}, before now ({self.now})")
        heapq.heappush(self._events, (float(at), 2, next(self._seq), None))

    def _start(self, act: Activity) -> None:
        if not (act.duration >= 0 and math.isfinite(act.duration)):
            raise InternalError(f"policy started {act.key!r} with duration {act.duration}")
        for r, a in act.usage.items():
            if r not in self.capacity:
                raise InternalError(f"policy used unknown resource {r!r} for {act.key!r}")
            if self.free(r) + CAPACITY_TOL < a:
                raise InternalError(
                    f"policy overcommitted {r!r} at t={self.now}: {act.key!r} needs {a}, "
                    f"{self.free(r)} free"
                )
        for r, a in act.usage.items():
            self.used[r] += a
        s = Started(act.key, self.now, self.now + act.duration, dict(act.usage), act.payload)
        seq = next(self._seq)
        self.running[seq] = s
        self.log.append(s)
        heapq.heappush(self._events, (s.end, 0, seq, seq))  # completions first at a time

    def _finish(self, seq: int) -> Started:
        s = self.running.pop(seq)
        for r, a in s.usage.items():
            self.used[r] -= a
        return s


def simulate(
    arrivals: Iterable[tuple[float, Hashable]],
    capacity: Mapping[Any, float],
    policy: Policy,
    *,
    tick: float | None = None,
    horizon: float = math.inf,
    max_events: int = 50_000_000,
) -> SimResult:
    """Run ``policy`` over ``arrivals`` ((time, job) pairs) until nothing is left to happen.

    With ``tick``, the policy is also consulted at every multiple of ``tick`` (time-slotted
    policies) while work may remain; ``horizon`` stops the clock. Completions at a time are
    processed before arrivals at the same time, then ``decide`` runs once.
    """
    sim = Simulator(capacity)
    for t, job in arrivals:
        heapq.heappush(sim._events, (float(t), 1, next(sim._seq), job))
    events = decisions = 0
    last_tick = -math.inf
    while sim._events and events < max_events:
        now = sim._events[0][0]
        if now > horizon:
            break
        sim.now = now
        while sim._events and sim._events[0][0] == now:
            _, kind, seq, data = heapq.heappop(sim._events)
            events += 1
            if kind == 0:
                policy.on_complete(sim._finish(data), now, sim)
            elif kind == 1:
                policy.on_arrival(data, now, sim)
        for act in policy.decide(now, sim):
            sim._start(act)
        decisions += 1
        if tick is not None and (sim.running or sim._events or _waiting(policy)):
            nxt = (math.floor(now / tick + 1e-9) + 1) * tick
            if nxt > last_tick:
                last_tick = nxt
                heapq.heappush(sim._events, (nxt, 2, next(sim._seq), None))
    if events >= max_events:
        raise InternalError(f"simulation exceeded {max_events} events (policy never finishes?)")
    end = max((s.end for s in sim.log), default=0.0)
    return SimResult(sim.log, end, events, decisions)


def _waiting(policy: Policy) -> bool:
    """Whether a time-slotted policy still has work (it may say so with ``pending()``)."""
    pending = getattr(policy, "pending", None)
    return bool(pending()) if callable(pending) else False


__all__ = ["CAPACITY_TOL", "Activity", "Policy", "SimResult", "Simulator", "Started", "simulate"]
