"""One event-driven engine for every online policy (seeds 001, 003, 004).

A policy sees events (job arrivals, activity completions, and optional time-slot ticks) and
answers with activities to start now: an :class:`Activity` holds amounts of named resources
(a GPU id with capacity 1, a server's GPU count, a server's CPU share, ...) for a duration,
non-preemptively. The engine keeps the clock and the event queue, enforces the capacities,
and records everything that ran; the family's checker then verifies the schedule built from it.

>>> from dlsched.simulate import Activity, simulate
>>> class FIFO:
...     def __init__(self): self.queue = []
...     def on_arrival(self, job, now, sim): self.queue.append(job)
...     def on_complete(self, act, now, sim): pass
...     def decide(self, now, sim):
...         if self.queue and sim.free("gpu") >= 1:
...             return [Activity(self.queue.pop(0), 2.0, {"gpu": 1})]
...         return []
>>> res = simulate([(0.0, "a"), (0.0, "b")], {"gpu": 1}, FIFO())
>>> [(a.key, a.start, a.end) for a in res.activities]
[('a', 0.0, 2.0), ('b', 2.0, 4.0)]
"""

from dlsched.simulate.engine import Activity, Policy, SimResult, Simulator, Started, simulate

__all__ = ["Activity", "Policy", "SimResult", "Simulator", "Started", "simulate"]
