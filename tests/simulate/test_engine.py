"""The shared event-driven engine: capacities hold, events come in order, ticks are regular."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dlsched.errors import InternalError
from dlsched.simulate import Activity, simulate


class GreedyFIFO:
    """Jobs in arrival order, each on the first GPU free; (job -> (gpus, duration))."""

    def __init__(self, jobs, gpus):
        self.jobs, self.gpus, self.queue = jobs, gpus, []

    def on_arrival(self, job, now, sim):
        self.queue.append(job)

    def on_complete(self, act, now, sim):
        pass

    def decide(self, now, sim):
        out = []
        while self.queue:
            need, dur = self.jobs[self.queue[0]]
            free = [g for g in self.gpus if sim.free(g) >= 1 and all(g not in a.usage for a in out)]
            if len(free) < need:
                break
            out.append(Activity(self.queue.pop(0), dur, dict.fromkeys(free[:need], 1.0)))
        return out


@settings(max_examples=60, derandomize=True, deadline=None)
@given(
    st.lists(
        st.tuples(st.integers(0, 20), st.integers(1, 3), st.integers(1, 9)), min_size=1, max_size=25
    )
)
def test_capacity_never_exceeded_and_every_job_runs_once(rows):
    jobs = {f"j{i}": (need, float(dur)) for i, (_, need, dur) in enumerate(rows)}
    arrivals = [(float(t), f"j{i}") for i, (t, _, _) in enumerate(rows)]
    res = simulate(arrivals, dict.fromkeys(range(3), 1.0), GreedyFIFO(jobs, list(range(3))))
    assert sorted(a.key for a in res.activities) == sorted(jobs)
    arrival = dict((j, t) for t, j in arrivals)
    for a in res.activities:
        assert a.start >= arrival[a.key] and a.end == a.start + jobs[a.key][1]
    for a in res.activities:  # at any start, the GPUs in use are used once
        live = [b for b in res.activities if b.start <= a.start < b.end]
        for g in range(3):
            assert sum(b.usage.get(g, 0) for b in live) <= 1
    # FIFO: starts are in arrival order (ties by list order)
    order = sorted(arrivals, key=lambda x: x[0])
    starts = {a.key: a.start for a in res.activities}
    assert all(starts[a[1]] <= starts[b[1]] for a, b in zip(order, order[1:], strict=False))


def test_overcommitting_policy_is_an_internal_error():
    class Greedy:
        def on_arrival(self, job, now, sim):
            self.job = job

        def on_complete(self, act, now, sim):
            pass

        def decide(self, now, sim):
            return [Activity(self.job, 1.0, {"gpu": 1}), Activity("x", 1.0, {"gpu": 1})]

    with pytest.raises(InternalError, match="overcommitted"):
        simulate([(0.0, "a")], {"gpu": 1}, Greedy())


def test_ticks_call_a_slotted_policy_at_every_slot_until_it_is_done():
    class Slotted:
        def __init__(self):
            self.left, self.calls = 3, []

        def on_arrival(self, job, now, sim):
            pass

        def on_complete(self, act, now, sim):
            pass

        def pending(self):
            return self.left > 0

        def decide(self, now, sim):
            self.calls.append(now)
            if self.left and sim.free("cpu") > 0:
                self.left -= 1
                return [Activity(("slot", now), 1.0, {"cpu": 0.5})]
            return []

    pol = Slotted()
    res = simulate([(0.5, "a")], {"cpu": 1.0}, pol, tick=1.0)
    assert [a.start for a in res.activities] == [0.5, 1.0, 1.5]  # 1.5: a completion
    assert pol.calls[:4] == [0.5, 1.0, 1.5, 2.0]
