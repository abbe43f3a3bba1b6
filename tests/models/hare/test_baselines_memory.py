"""Sched_Allox on a huge instance (dlsched/models/hare/baselines.py): its cost table has jobs^2 x
GPUs entries, so it refuses, before allocating, a table that does not fit in the memory free
(status no_solution with the size in the reason) instead of being killed by the kernel; the
exact route's hint then goes on without it."""

from __future__ import annotations

import pytest

from dlsched.models import MethodOptions, run_method
from dlsched.models.hare import baselines, generate
from dlsched.models.hare.hint import hint_candidates
from dlsched.solvers import SolveOptions, Status


@pytest.fixture
def little_memory(monkeypatch):
    """As if the machine had 1 MiB free: 10 jobs on 4 GPUs need 2 x 8 x 400 = 6,400 bytes,
    40 jobs on 8 GPUs 204,800 and 120 jobs 1.8 MB."""
    real = baselines.os.sysconf
    pages = {"SC_AVPHYS_PAGES": 256, "SC_PAGE_SIZE": 4096}
    monkeypatch.setattr(baselines.os, "sysconf", lambda k: pages.get(k) or real(k))


def test_a_table_too_large_is_refused_with_its_size(little_memory):
    inst = generate(120, 8, 0)
    out = run_method(inst, "sched-allox", MethodOptions(SolveOptions(time_limit=30)))
    assert out.status == Status.NO_SOLUTION and out.objective is None
    reason = out.details["reason"]
    assert "115,200 entries" in reason  # 120^2 x 8
    assert "0.0 GiB free" in reason  # 1 MiB, printed in GiB


def test_a_table_that_fits_still_runs(little_memory):
    inst = generate(40, 8, 0)  # 12,800 entries, 204,800 bytes
    out = run_method(inst, "sched-allox", MethodOptions(SolveOptions(time_limit=30)))
    assert out.status == Status.FEASIBLE and out.objective is not None


def test_the_hint_skips_a_refused_allox(little_memory):
    inst = generate(120, 8, 0)
    names = [name for name, _ in hint_candidates(inst)]
    assert "sched-allox" not in names
    assert {"gavel-fifo", "srtf", "sched-homo"} <= set(names)
