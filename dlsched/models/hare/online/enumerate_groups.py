"""GPU_Grouping (4)-(6) by exhaustion on small clusters (seed 004, Section IV-C).

Every partition of the |M| GPUs into |U| non-empty groups is one restricted growth string
g_1..g_|M| (g_1 = 0, g_m <= 1 + max(g_1..g_{m-1}), exactly |U| values used), so listing those
strings lists each grouping once, whatever the groups' labels. The least spread among them is the
optimum of (4)-(6): proven by exhaustion, with no solver and no import beyond NumPy. There are
S(|M|, |U|) of them (Stirling numbers of the second kind: S(8, 3) = 966, S(10, 4) = 34,105), so
this route serves clusters up to :data:`ENUMERATE_MAX` partitions; the MILPs of
:mod:`.grouping` serve the rest.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

#: Most partitions enumerated (S(|M|, |U|)); above it the MILP route is taken.
ENUMERATE_MAX = 5_000

Groups = tuple[tuple[int, ...], ...]


def partition_count(gpus: int, groups: int) -> int:
    """S(gpus, groups): the partitions of ``gpus`` items into ``groups`` non-empty blocks."""
    row = [1] + [0] * groups  # S(0, k)
    for _ in range(gpus):
        row = [0] + [k * row[k] + row[k - 1] for k in range(1, groups + 1)]
    return row[groups]


def partitions(gpus: int, groups: int) -> Iterator[tuple[int, ...]]:
    """Every restricted growth string of length ``gpus`` with exactly ``groups`` values."""

    def grow(prefix: list[int], used: int) -> Iterator[tuple[int, ...]]:
        left = gpus - len(prefix)
        if left == 0:
            if used == groups:
                yield tuple(prefix)
            return
        if groups - used > left:  # too few GPUs left to open the missing groups
            return
        for g in range(min(used + 1, groups)):
            yield from grow([*prefix, g], max(used, g + 1))

    yield from grow([0], 1) if gpus else iter(())


def best_grouping(s: np.ndarray, groups: int) -> tuple[Groups, int] | None:
    """The grouping of least spread max_n (p_n^max - p_n^min) (ties: the first listed) and the
    number of partitions searched; None when there are more than :data:`ENUMERATE_MAX`."""
    n_gpus = s.shape[1]
    count = partition_count(n_gpus, groups)
    if count > ENUMERATE_MAX:
        return None
    member = np.array(list(partitions(n_gpus, groups)), dtype=np.int64)  # (count, |M|)
    onehot = member[:, :, None] == np.arange(groups)[None, None, :]  # (count, |M|, |U|)
    p = np.einsum("nm,cmu->cnu", s, onehot)  # group speeds P[n, u] of every partition
    worst = (p.max(axis=2) - p.min(axis=2)).max(axis=1)
    best = member[int(np.argmin(worst))]
    return tuple(tuple(int(m) for m in np.flatnonzero(best == u)) for u in range(groups)), count


__all__ = ["ENUMERATE_MAX", "best_grouping", "partition_count", "partitions"]
