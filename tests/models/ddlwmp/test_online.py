"""ddlwmp's wcs-reserve baseline (dlsched/models/ddlwmp/online.py): a small case by hand, the
checker on its schedules, its rule on random instances, and its options."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dlsched.errors import OptionError
from dlsched.models import MethodOptions, run_method
from dlsched.models.ddlwmp.check import busy_slots, check, run_seconds
from dlsched.models.ddlwmp.generate import generate
from dlsched.models.ddlwmp.instance import Cluster, DdlwmpInstance, Job, Stage
from dlsched.models.ddlwmp.mapping import alpha_tilde_min
from dlsched.models.ddlwmp.online import Reserve, run_policy

ONE = (Stage(1, 15.0, 30.0, 0.0, 0.0, 50.0),)  # one GPU, 45 ms an iteration


def _toy() -> DdlwmpInstance:
    # four 1-GPU jobs of 180 s at 0 and four of 45 s at 1 s, on one server of 4 GPUs
    jobs = [Job(f"long{i}", 0.0, 4000, ONE) for i in range(4)]
    jobs += [Job(f"short{i}", 1.0, 1000, ONE) for i in range(4)]
    cluster = Cluster(servers=1, gpus_per_server=4, inter_gbps=10.0, intra_gbps=2400.0)
    return DdlwmpInstance("reserve", cluster, tuple(jobs))


@pytest.mark.parametrize("pooled", [False, True])
def test_reserve_keeps_gpus_for_the_short_job_by_hand(pooled: bool) -> None:
    inst = _toy()
    # wcs-duration: the four long jobs take every GPU at 0, the short ones wait until 180:
    # flow 4 x 180 + 4 x 224 = 1616
    plain, _ = run_policy(inst, "wcs-duration", pooled=pooled)
    assert plain.starts == (0.0,) * 4 + (180.0,) * 4
    assert check(inst, plain).flow_time == pytest.approx(1616)
    # long = above 100 s, half the GPUs kept: two long jobs at 0, two short ones at their
    # release and two when these end (46), the other two long ones only when the first two
    # end (180: at 91 two GPUs are free, but the long jobs hold the cap already)
    sched, _ = run_policy(inst, "wcs-reserve", pooled=pooled, reserve=Reserve(100.0, 0.5))
    assert sched.starts == (0.0, 0.0, 180.0, 180.0, 1.0, 1.0, 46.0, 46.0)
    assert check(inst, sched).flow_time == pytest.approx(180 * 2 + 360 * 2 + 45 * 2 + 90 * 2)


def test_reserve_lets_a_job_wider_than_the_cap_start_on_an_idle_cluster() -> None:
    inst = _toy()
    wide = Job("wide", 0.0, 4000, (Stage(4, 15.0, 30.0, 0.0, 0.0, 50.0),), "ring")
    inst = DdlwmpInstance("wide", inst.cluster, (wide,))
    sched, _ = run_policy(inst, "wcs-reserve", pooled=True, reserve=Reserve(1.0, 0.5))
    assert sched.starts == (0.0,)


def _durations(inst: DdlwmpInstance) -> list[float]:
    c = inst.cluster
    return [
        busy_slots(run_seconds(j, alpha_tilde_min(j, c)[0]), c.slot_s) * c.slot_s for j in inst.jobs
    ]


@settings(max_examples=8, derandomize=True, deadline=None)
@given(
    st.integers(0, 10_000),
    st.integers(10, 40),
    st.floats(0.0, 0.9),
    st.sampled_from([0.0, 60.0, 600.0, 3600.0]),
)
def test_reserve_rule_holds_and_the_checker_accepts(seed, jobs, share, long_s) -> None:
    inst = generate(jobs, 16, seed, setting="paper", load=2.0)
    rule = Reserve(long_s, share)
    long = [j.predicted * alpha_tilde_min(j, inst.cluster)[0] > long_s * 1000 for j in inst.jobs]
    dur = _durations(inst)  # pooled: the run on the best placement
    sched, _ = run_policy(inst, "wcs-reserve", pooled=True, reserve=rule)
    check(inst, sched)
    starts = sched.starts
    for i, t in enumerate(starts):
        before = [k for k, s in enumerate(starts) if s < t < s + dur[k]]
        if long[i] and before:  # a long job joins a busy cluster only within the cap
            running = [k for k, s in enumerate(starts) if s <= t < s + dur[k]]
            held = sum(inst.jobs[k].gpus for k in running if long[k])
            assert held <= (1 - share) * inst.cluster.total_gpus + 1e-9
    placed, _ = run_policy(inst, "wcs-reserve", reserve=rule)
    check(inst, placed)
    # no reserve: wcs-duration itself
    for pooled in (False, True):
        free, _ = run_policy(inst, "wcs-reserve", pooled=pooled, reserve=Reserve(long_s, 0.0))
        same, _ = run_policy(inst, "wcs-duration", pooled=pooled)
        assert free.starts == same.starts


def test_reserve_options_reach_the_policy_and_are_validated() -> None:
    inst = _toy()
    params = {"long_s": 100.0, "reserve": 0.5, "pooled": True}
    out = run_method(inst, "wcs-reserve", MethodOptions(params=params))
    assert out.details["flow_time_s"] == pytest.approx(1350)
    for key, bad in (("reserve", 1.0), ("reserve", -0.1), ("long_s", "day"), ("long_s", True)):
        with pytest.raises(OptionError, match=key):
            run_method(inst, "wcs-reserve", MethodOptions(params={key: bad}))
