"""The list rules of online hare (``online-srtf``, ``srtf-fit``, clairvoyant; ``las-fit``, not):
cases worked by hand (one against the certified optimum), SRPT's optimum where rounds are unit
preemptions, a plain scan of every ready job as the reference of the heaps, decisions that
use only the jobs arrived so far, LAS blind to a job's rounds, and the checker and the
flow-time bound on random instances."""

from __future__ import annotations

import math
from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dlsched.errors import OptionError
from dlsched.models import MethodOptions, run_method
from dlsched.models.hare.instance import HareInstance, HareJob
from dlsched.models.hare.online.common import OnlineHare, run_policy
from dlsched.models.hare.online.listrules import LeastAttained, ShortestRemaining
from dlsched.online.bounds import srpt_total
from dlsched.simulate import Activity
from dlsched.solvers import Status

#: Every list rule of the family.
RULES = ("online-srtf", "srtf-fit", "las-fit")
#: Round times of a job on each GPU type: V100, P100, K80 (unrelated: a job may be faster on
#: the P100, or as fast on the K80).
SPEEDS = ((1.0, 1.5, 4.0), (1.0, 0.5, 1.0), (2.0, 2.0, 7.0))


def _run(inst, method, **params):
    """``method`` on ``inst`` with its flow-time bound."""
    return run_method(inst, method, MethodOptions(params=params, bound=True))


def _flow(out, inst):
    done = out.evaluation.completion
    return math.fsum(c - j.arrival for c, j in zip(done, inst.jobs, strict=True))


@st.composite
def crowded(draw, max_jobs=6, max_gpus=4):
    """Random jobs on a few GPUs of three types, arrivals close together."""
    kinds = [draw(st.integers(0, 2)) for _ in range(draw(st.integers(1, max_gpus)))]
    jobs = []
    for n in range(draw(st.integers(1, max_jobs))):
        speed = SPEEDS[draw(st.integers(0, 2))]
        scale = draw(st.integers(1, 3))
        sync = draw(st.integers(0, 2)) / 4
        jobs.append(
            HareJob(
                f"j{n}",
                float(draw(st.integers(0, 5))),
                1.0,
                draw(st.integers(1, 4)),
                draw(st.integers(1, 3)),
                tuple(scale * speed[k] for k in kinds),
                tuple(sync * scale * speed[k] for k in kinds),
            )
        )
    return HareInstance("crowded", tuple(f"g{m}" for m in range(len(kinds))), tuple(jobs))


class Scan(OnlineHare):
    """The list rule written plainly: every ready job by remaining time (``las``: by rounds
    done), each on its fastest free GPUs within ``slowdown`` of its fastest."""

    def __init__(self, instance: HareInstance, slowdown: float, las: bool = False) -> None:
        super().__init__(instance)
        self.per = instance.tc + instance.ts
        self.slowdown, self.las = slowdown, las

    def assign(self, now: float) -> list[Activity]:
        out, free, jobs = [], set(self.free_gpus), self.instance.jobs
        best = self.per.min(axis=1)

        def key(n: int) -> float:
            done = self.jobs[n].rounds_done
            return (done if self.las else jobs[n].rounds - done) * jobs[n].tasks_per_round * best[n]

        for n in sorted(self.ready, key=lambda n: (key(n), n)):
            for g in sorted(free, key=lambda m: (self.per[n][m], m)):  # noqa: B023
                if self.jobs[n].left == 0 or self.per[n][g] > self.slowdown * best[n]:
                    break
                out.append(self.start_task(n, g, now))
                free.discard(g)
        return out


def _items(schedule):
    return sorted((e.task, e.gpu, e.start) for e in schedule.entries)


# --- by hand -----------------------------------------------------------------------------------
def test_a_slow_gpu_left_idle_reaches_the_certified_optimum():
    """a: one round of 1 on the V100 (10 on the K80); b: three rounds of 1 on the V100, 4 on the
    K80. srtf starts a on the V100 and b on the K80 (0-4), then b's two last rounds on the V100
    (4-6): flow 1 + 6. srtf-fit leaves the K80 idle (4 > 3 x 1): b runs 1-4 on the V100, flow
    1 + 4, the optimum."""
    inst = HareInstance(
        "by-hand",
        ("V100", "K80"),
        (
            HareJob("a", 0.0, 1.0, 1, 1, (1.0, 10.0), (0.0, 0.0)),
            HareJob("b", 0.0, 1.0, 3, 1, (1.0, 4.0), (0.0, 0.0)),
        ),
    )
    plain, fit = _run(inst, "online-srtf"), _run(inst, "srtf-fit")
    assert plain.evaluation.completion == (1.0, 6.0)
    assert fit.evaluation.completion == (1.0, 4.0)
    exact = run_method(inst, "exact")
    assert exact.status == Status.OPTIMAL and exact.objective == fit.objective == 5.0
    assert fit.details["flow_time_s"] == 5.0 and fit.details["slowdown"] == 3.0


@settings(max_examples=30, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 8), st.integers(1, 5)), min_size=1, max_size=8))
def test_unit_rounds_on_one_gpu_are_srpt_and_meet_the_bound(spec):
    """One GPU, rounds of 1: SRTF at round ends is preemptive SRPT at integer times, optimal
    for 1|r_j, pmtn|sum C_j; the certified bound (its pooled SRPT) is then met exactly."""
    jobs = tuple(
        HareJob(f"j{n}", float(a), 1.0, r, 1, (1.0,), (0.0,)) for n, (a, r) in enumerate(spec)
    )
    inst = HareInstance("one-gpu", ("GPU",), jobs)
    out = _run(inst, "online-srtf")
    want = srpt_total([float(a) for a, _ in spec], [float(r) for _, r in spec])
    assert _flow(out, inst) == pytest.approx(want - sum(a for a, _ in spec))
    assert out.details["flow_time_bound_s"] == pytest.approx(out.details["flow_time_s"])


# --- random instances --------------------------------------------------------------------------
@settings(max_examples=40, deadline=None)
@given(crowded(), st.sampled_from([math.inf, 1.0, 1.5, 3.0]))
def test_the_heaps_serve_as_a_scan_of_every_ready_job(inst, slowdown):
    for rule, las in ((ShortestRemaining, False), (LeastAttained, True)):
        fast, _ = run_policy(inst, rule(inst, slowdown))
        plain, _ = run_policy(inst, Scan(inst, slowdown, las))
        assert _items(fast) == _items(plain), rule


@settings(max_examples=30, deadline=None)
@given(crowded(), st.data())
def test_decisions_before_an_arrival_ignore_the_jobs_not_yet_arrived(inst, data):
    """Online: the tasks started before time t are the same whether or not the jobs arriving
    at t or later exist."""
    t = data.draw(st.sampled_from(sorted({j.arrival for j in inst.jobs})))
    keep = [n for n, j in enumerate(inst.jobs) if j.arrival < t]
    if not keep:
        return
    part = HareInstance("part", inst.gpus, tuple(inst.jobs[n] for n in keep))
    for method in RULES:
        whole = {i for i in _items(_run(inst, method).solution) if i[2] < t}
        sub = {
            ((keep[task[0]], *task[1:]), g, s)
            for task, g, s in _items(_run(part, method).solution)
            if s < t
        }
        assert whole == sub, method


@settings(max_examples=25, deadline=None)
@given(crowded())
def test_the_checker_accepts_every_schedule_above_the_bound(inst):
    for method in RULES:
        out = _run(inst, method)  # verified: the hare checker ran inside
        assert out.status == Status.FEASIBLE and len(out.solution.entries) == inst.num_tasks
        d = out.details
        assert d["flow_time_s"] == pytest.approx(_flow(out, inst))
        assert d["flow_time_s"] >= d["flow_time_bound_s"] - 1e-6 * d["flow_time_s"]
        assert d["clairvoyant"] is (method != "las-fit")


@pytest.mark.parametrize("bad", [0.5, True, "fast", -1])
def test_a_slowdown_below_one_is_refused(bad):
    inst = HareInstance("one", ("GPU",), (HareJob("a", 0.0, 1.0, 1, 1, (1.0,), (0.0,)),))
    for method in ("srtf-fit", "las-fit"):
        with pytest.raises(OptionError, match="slowdown"):
            _run(inst, method, slowdown=bad)


def test_las_serves_the_least_served_first_and_srtf_the_shortest():
    """One GPU, rounds of 1; a: 3 rounds, b: 1, both at 0. LAS: a first (a tie, by index),
    then b (no service yet) at 1-2, then a 2-4. SRTF: b at 0-1, then a 1-4."""
    jobs = (
        HareJob("a", 0.0, 1.0, 3, 1, (1.0,), (0.0,)),
        HareJob("b", 0.0, 1.0, 1, 1, (1.0,), (0.0,)),
    )
    inst = HareInstance("two", ("GPU",), jobs)
    assert _run(inst, "las-fit").evaluation.completion == (4.0, 2.0)
    assert _run(inst, "online-srtf").evaluation.completion == (4.0, 1.0)


@settings(max_examples=25, deadline=None)
@given(crowded(), st.data())
def test_las_never_reads_a_jobs_rounds_before_it_ends(inst, data):
    """Non-clairvoyance: give one job more rounds; until it ended in the shorter instance,
    las-fit starts the same tasks at the same times on the same GPUs."""
    x = data.draw(st.integers(0, inst.num_jobs - 1))
    more = tuple(replace(j, rounds=j.rounds + 2) if n == x else j for n, j in enumerate(inst.jobs))
    short = _run(inst, "las-fit")
    end = short.evaluation.completion[x]
    longer = _run(replace(inst, jobs=more), "las-fit")
    before = {i for i in _items(short.solution) if i[2] < end - 1e-9}
    assert before == {i for i in _items(longer.solution) if i[2] < end - 1e-9}
