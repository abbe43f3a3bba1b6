"""GPU_Grouping (4)-(6) proven by listing every grouping (small clusters): the listing holds
each partition once, and its optimum is the MILPs' and a brute force's."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from strategies import brute_force_spread, mixed
from strategies import partitions as brute_partitions

from dlsched.models.hare.online.enumerate_groups import (
    ENUMERATE_MAX,
    best_grouping,
    partition_count,
    partitions,
)
from dlsched.models.hare.online.grouping import group_gpus, speed_matrix, spread
from dlsched.solvers.base import Status
from dlsched.solvers.deadline import Deadline


def _stirling(n: int, k: int) -> int:
    """S(n, k) by its closed form (inclusion-exclusion), independent of the recurrence."""
    return sum((-1) ** j * math.comb(k, j) * (k - j) ** n for j in range(k + 1)) // math.factorial(
        k
    )


@pytest.mark.parametrize(("n", "k"), [(1, 1), (4, 2), (6, 3), (7, 7), (8, 3), (9, 4)])
def test_the_listing_holds_every_partition_once(n: int, k: int) -> None:
    listed = list(partitions(n, k))
    assert len(listed) == len(set(listed)) == partition_count(n, k) == _stirling(n, k)
    as_sets = {
        frozenset(frozenset(m for m in range(n) if g[m] == u) for u in range(k)) for g in listed
    }
    assert as_sets == {
        frozenset(frozenset(b) for b in p) for p in brute_partitions(list(range(n)), k)
    }


@settings(max_examples=25, deadline=None)
@given(
    counts=st.lists(st.integers(0, 2), min_size=4, max_size=4).filter(lambda c: sum(c) >= 2),
    jobs=st.integers(1, 4),
    seed=st.integers(0, 10**6),
    data=st.data(),
)
def test_the_listed_optimum_is_the_brute_force_one(counts, jobs, seed, data) -> None:
    inst = mixed(tuple(counts), jobs=jobs, seed=seed)
    s = speed_matrix(inst)
    groups = data.draw(st.integers(1, s.shape[1]))
    got = best_grouping(s, groups)
    assert got is not None
    g, count = got
    assert count == partition_count(s.shape[1], groups)
    assert spread(s, g) == pytest.approx(brute_force_spread(s, groups), abs=1e-12)


@pytest.mark.parametrize(("counts", "groups"), [((2, 1, 1, 2), 2), ((3, 2, 1), 3)])
def test_the_exact_route_lists_small_clusters_and_agrees_with_the_milp(counts, groups) -> None:
    inst = mixed(counts)
    listed = group_gpus(inst, groups, "exact", deadline=Deadline.after(20))
    assert listed.info["route"] == "enumeration" and listed.status == Status.OPTIMAL
    milp = group_gpus(inst, groups, "exact", pooled=False, deadline=Deadline.after(20))
    assert "route" not in milp.info and milp.status == Status.OPTIMAL
    assert listed.spread == pytest.approx(milp.spread, abs=1e-9)


def test_a_cluster_beyond_the_listing_is_left_to_the_milp() -> None:
    s = np.ones((1, 14))
    assert partition_count(14, 2) > ENUMERATE_MAX
    assert best_grouping(s, 2) is None
