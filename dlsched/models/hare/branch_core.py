"""The compiled core of :mod:`branch`: the depth-first search, its bounds and its dominance
over integer arrays (numba, ``nopython``, releasing the GIL). :mod:`branch` documents the
search and proves its cuts; this module only carries them out. It visits the same nodes as
the same steps written with Python objects, 3.5-6.7 times faster (benchmarks/READING_hare.md,
section 7).

Conventions: J jobs, M GPUs, T tasks. Times and costs are the scaled integers of
:mod:`scaling`. A node's state is (counts[J], free[M], rel[J], pm[J], cost): tasks placed per
job, the GPUs' free times, each job's round release (0 once done), the latest finish so far of
each job's partial round, and the cost of the finished jobs.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

from .branch_layout import BEST, COST, FOUND, KEYS, LAST_M, LAST_N, NODES, ROWS, STOPPED, TAU, TRIED

#: Largest integer the state uses: above every scaled time and cost (scaling.MAX_SCALED).
BIG = np.int64(2**62)


class Tables(NamedTuple):
    """The instance's data as arrays (built once by :func:`branch.tables`)."""

    size: np.ndarray  # [J] tasks per round
    rounds: np.ndarray  # [J]
    total: np.ndarray  # [J] tasks of the job
    w: np.ndarray  # [J] scaled weights
    tc: np.ndarray  # [J, M] scaled training times
    ts: np.ndarray  # [J, M] scaled sync times
    rho: np.ndarray  # [J] shortest round of the job on idle GPUs
    movable: np.ndarray  # [J, M] 1 where the job's sync is at most its shortest training + sync
    twin: np.ndarray  # [M] an earlier identical GPU, or -1
    order_tc: np.ndarray  # [M, J] trainings on each GPU in increasing order ...
    order_job: np.ndarray  # [M, J] ... and whose they are
    radix: np.ndarray  # [J] mixed radix of the task counts (dominance's key)
    slack: float  # branch.FLOAT_SLACK


@njit(cache=True)
def best_end(tc: np.ndarray, ts: np.ndarray, avail: np.ndarray, k: int) -> np.int64:
    """The earliest the last of k interchangeable tasks can finish, GPU m free from avail[m]:
    the k-th smallest place avail[m] + c tc[m] + ts[m] (c = 1 .. k). The k smallest places
    take a prefix 1 .. c_m on every GPU (its places grow with c), so they are a split of the k
    tasks over the GPUs, and none ends later."""
    m_count = avail.shape[0]
    if k == 1:
        best = BIG
        for m in range(m_count):
            v = avail[m] + tc[m] + ts[m]
            if v < best:
                best = v
        return best
    vals = np.empty(m_count * k, dtype=np.int64)
    for m in range(m_count):
        for c in range(k):
            vals[m * k + c] = avail[m] + (c + 1) * tc[m] + ts[m]
    vals.sort()
    return vals[k - 1]


@njit(cache=True)
def alone(t: Tables, counts, free, rel, pm, ends, tails) -> int:
    """Fills ends[n] (earliest end of the current round of job n alone, no earlier than its
    partial round's latest finish) and tails[n] (its later rounds at rho_n each) for every
    unfinished job; returns sum over them of w_n (ends + tails)."""
    m_count = free.shape[0]
    avail = np.empty(m_count, dtype=np.int64)
    total = 0
    for n in range(counts.shape[0]):
        if counts[n] == t.total[n]:
            ends[n] = 0
            tails[n] = 0
            continue
        r = counts[n] // t.size[n]
        left = t.size[n] - counts[n] % t.size[n]
        for m in range(m_count):
            avail[m] = free[m] if free[m] > rel[n] else rel[n]
        end = best_end(t.tc[n], t.ts[n], avail, left)
        ends[n] = end if end > pm[n] else pm[n]
        tails[n] = (t.rounds[n] - r - 1) * t.rho[n]
        total += t.w[n] * (ends[n] + tails[n])
    return total


@njit(cache=True)
def _ahead(t: Tables, counts, q: int) -> np.ndarray:
    """[M, q]: column p, row m: the sum of the p shortest trainings on m among every task left
    (the places of :func:`queue_bound`)."""
    m_count = t.tc.shape[1]
    out = np.zeros((m_count, max(q, 1)), dtype=np.int64)
    for m in range(m_count):
        p, acc, need = 1, 0, q - 1
        for i in range(t.order_tc.shape[1]):
            if need <= 0:
                break
            n = t.order_job[m, i]
            tc = t.order_tc[m, i]
            c = min(t.total[n] - counts[n], need)
            for _ in range(c):
                acc += tc
                out[m, p] = acc
                p += 1
            need -= c
    return out


@njit(cache=True)
def queue_bound(t: Tables, counts, free, rel, ends, tails) -> np.int64:
    """The alone bound with the GPUs' queues (:mod:`branch`, the bound): every task left takes
    a distinct place (GPU m, p-th from now) at or after free_m plus the p shortest trainings
    left on m and its round's release; a job costs the mean over its tasks of the larger of
    their finish plus later rounds and its alone bound; the cheapest assignment, rounded up
    after taking off a relative slack."""
    n_jobs, m_count = counts.shape[0], free.shape[0]
    q = 0
    for n in range(n_jobs):
        q += t.total[n] - counts[n]
    if q == 0:
        return np.int64(0)
    ahead = _ahead(t, counts, q)
    cost = np.empty((q, m_count * q), dtype=np.float64)
    i = 0
    for n in range(n_jobs):
        left = t.total[n] - counts[n]
        if left == 0:
            continue
        size, rho = t.size[n], t.rho[n]
        k = size - counts[n] % size
        floor = ends[n] + tails[n]
        weight = t.w[n] / left
        for j in range(left):
            if j < k:
                release, tail = rel[n], tails[n]
            else:
                later = (j - k) // size
                release, tail = ends[n] + later * rho, tails[n] - (later + 1) * rho
            for m in range(m_count):
                busy = t.tc[n, m] + t.ts[n, m] + tail
                for p in range(q):
                    start = free[m] + ahead[m, p]
                    if start < release:
                        start = release
                    fin = start + busy
                    cost[i, m * q + p] = (fin if fin > floor else floor) * weight
            i += 1
    total = assignment_cost(cost)
    return np.int64(np.ceil(total - t.slack * (1.0 + abs(total))))


@njit(cache=True)
def assignment_cost(cost: np.ndarray) -> float:
    """The least sum of cost[i, col(i)] over injective maps of the rows to the columns (rows <=
    columns): shortest augmenting paths with potentials (Jonker-Volgenant as in Crouse, *On
    implementing 2D rectangular assignment algorithms*, 2016, the method of scipy's
    ``linear_sum_assignment``; tests compare the two)."""
    nr, nc = cost.shape
    u = np.zeros(nr)
    v = np.zeros(nc)
    col4row = np.full(nr, -1, dtype=np.int64)
    row4col = np.full(nc, -1, dtype=np.int64)
    shortest = np.empty(nc)
    path = np.empty(nc, dtype=np.int64)
    remaining = np.empty(nc, dtype=np.int64)
    in_sr = np.zeros(nr, dtype=np.bool_)
    in_sc = np.zeros(nc, dtype=np.bool_)
    for cur in range(nr):
        shortest[:] = np.inf
        path[:] = -1
        in_sr[:] = False
        in_sc[:] = False
        for it in range(nc):
            remaining[it] = nc - it - 1
        n_rem, min_val, i, sink = nc, 0.0, cur, -1
        while sink == -1:
            in_sr[i] = True
            lowest, index = np.inf, -1
            for it in range(n_rem):
                j = remaining[it]
                r = min_val + cost[i, j] - u[i] - v[j]
                if r < shortest[j]:
                    path[j] = i
                    shortest[j] = r
                if shortest[j] < lowest or (shortest[j] == lowest and row4col[j] == -1):
                    lowest, index = shortest[j], it
            min_val = lowest
            j = remaining[index]
            if row4col[j] == -1:
                sink = j
            else:
                i = row4col[j]
            in_sc[j] = True
            n_rem -= 1
            remaining[index] = remaining[n_rem]
        u[cur] += min_val
        for i in range(nr):
            if in_sr[i] and i != cur:
                u[i] += min_val - shortest[col4row[i]]
        for j in range(nc):
            if in_sc[j]:
                v[j] -= min_val - shortest[j]
        j = sink
        while True:
            i = path[j]
            row4col[j] = i
            col4row[i], j = j, col4row[i]
            if i == cur:
                break
    total = 0.0
    for i in range(nr):
        total += cost[i, col4row[i]]
    return total


@njit(cache=True)
def place(t: Tables, n: int, m: int, s: int, counts, free, rel, pm, cost: int, c2, f2, r2, p2):
    """Writes the child state after job n's next task on GPU m at s (times raised to s) into
    c2, f2, r2, p2 and returns its cost of finished jobs."""
    size = t.size[n]
    finish = s + t.tc[n, m] + t.ts[n, m]
    r, k = counts[n] // size, counts[n] % size
    c2[:] = counts
    c2[n] += 1
    for g in range(free.shape[0]):
        f2[g] = free[g] if free[g] > s else s
    f2[m] = s + t.tc[n, m]
    p2[:] = pm
    if finish > p2[n]:
        p2[n] = finish
    r2[:] = rel
    cost2 = cost
    if k + 1 == size:  # the round is complete: its latest finish is the next barrier
        r2[n], p2[n] = p2[n], 0
        if r + 1 == t.rounds[n]:  # the job is done: only its cost matters now
            cost2 += t.w[n] * r2[n]
            r2[n] = 0
    for j in range(counts.shape[0]):
        if c2[j] < t.total[j] and r2[j] < s:
            r2[j] = s
    return cost2


@njit(cache=True)
def _first_end(t: Tables, counts, free, rel) -> np.int64:
    """The earliest end of training of any job's next task on a GPU where its sync is no longer
    than its shortest training plus sync: no child starts at or after it (cut c)."""
    best = BIG
    for n in range(counts.shape[0]):
        if counts[n] == t.total[n]:
            continue
        for m in range(free.shape[0]):
            if t.movable[n, m]:
                e = (free[m] if free[m] > rel[n] else rel[n]) + t.tc[n, m]
                if e < best:
                    best = e
    return best


@njit(cache=True)
def _less(a: np.ndarray, b: np.ndarray, width: int) -> bool:
    for i in range(width):
        if a[i] != b[i]:
            return a[i] < b[i]
    return False


@njit(cache=True)
def _sort_rows(rows: np.ndarray, count: int, width: int) -> None:
    """Insertion sort of rows[:count] by their first ``width`` entries (a few dozen rows)."""
    for i in range(1, count):
        row = rows[i].copy()
        j = i - 1
        while j >= 0 and _less(row, rows[j], width):
            rows[j + 1] = rows[j]
            j -= 1
        rows[j + 1] = row


@njit(cache=True)
def children(t: Tables, counts, free, rel, tau: int, last_n: int, last_m: int, out) -> int:
    """Writes the (s, n, m) of the children in order of start into out and returns their
    number; cuts (b) one order for equal starts, (c) the active-schedule cut, (d) twins."""
    first_end = _first_end(t, counts, free, rel)
    k = 0
    for n in range(counts.shape[0]):
        if counts[n] == t.total[n]:
            continue
        for m in range(free.shape[0]):
            tw = t.twin[m]
            if tw >= 0 and free[tw] == free[m]:
                continue  # (d)
            s = max(free[m], rel[n], tau)
            if s == tau and last_n >= 0 and (n < last_n or (n == last_n and m < last_m)):
                continue  # (b)
            if s >= first_end:
                continue  # (c)
            out[k, 0], out[k, 1], out[k, 2] = s, n, m
            k += 1
    _sort_rows(out, k, 3)
    return k


@njit(cache=True)
def _slot(keys: np.ndarray, key: int) -> int:
    """The slot of ``key`` in the open-addressing table ``keys`` (-1: empty; size a power
    of two): where it is, or the empty slot where it goes."""
    mask = keys.shape[0] - 1
    h = (key * 2654435761) & mask
    while keys[h] != -1 and keys[h] != key:
        h = (h + 1) & mask
    return h


@njit(cache=True)
def _dominated(dom: Dominance, stats, key: int, vec: np.ndarray, cost: int, weight: int) -> bool:
    """Dominance (a) against the prefixes kept for the same counts (a linked list of rows of
    ``dom.pool`` per key); keeps ``vec`` if not. A prefix later by at most delta in every time
    and cheaper by delta times the weight of the unfinished jobs dominates too. The caller
    leaves room for one more row and one more key (:func:`_room`)."""
    width = vec.shape[0]
    pool, nxt = dom.pool, dom.nxt
    h = _slot(dom.keys, key)
    if dom.keys[h] == -1:
        dom.keys[h], dom.heads[h] = key, -1
        stats[KEYS] += 1
    r = dom.heads[h]
    while r != -1:  # is vec dominated?
        late = 0
        for x in range(width):
            late = max(late, pool[r, x] - vec[x])
        if pool[r, width] + late * weight <= cost:
            return True
        r = nxt[r]
    prev, r = -1, dom.heads[h]
    while r != -1:  # drop what vec dominates
        early = 0
        for x in range(width):
            early = max(early, vec[x] - pool[r, x])
        if cost + early * weight <= pool[r, width]:
            if prev == -1:
                dom.heads[h] = nxt[r]
            else:
                nxt[prev] = nxt[r]
        else:
            prev = r
        r = nxt[r]
    row = stats[ROWS]
    stats[ROWS] += 1
    pool[row, :width] = vec
    pool[row, width] = cost
    nxt[row], dom.heads[h] = dom.heads[h], row
    return False


class Dominance(NamedTuple):
    """The prefixes kept for dominance (a): an open-addressing table of task-count keys, each
    with the head of a linked list of rows (times, then cost) of ``pool``."""

    keys: np.ndarray
    heads: np.ndarray
    pool: np.ndarray
    nxt: np.ndarray


@njit(cache=True)
def _room(dom: Dominance, stats) -> Dominance:
    """``dom`` with room for one more key and one more row (doubled when full)."""
    keys, heads, pool, nxt = dom
    if stats[ROWS] == pool.shape[0]:
        pool2 = np.empty((2 * pool.shape[0], pool.shape[1]), dtype=np.int64)
        pool2[: pool.shape[0]] = pool
        nxt2 = np.empty(2 * nxt.shape[0], dtype=np.int64)
        nxt2[: nxt.shape[0]] = nxt
        pool, nxt = pool2, nxt2
    if 2 * (stats[KEYS] + 1) > keys.shape[0]:
        keys2 = np.full(2 * keys.shape[0], -1, dtype=np.int64)
        heads2 = np.empty(2 * keys.shape[0], dtype=np.int64)
        for h in range(keys.shape[0]):
            if keys[h] != -1:
                h2 = _slot(keys2, keys[h])
                keys2[h2], heads2[h2] = keys[h], heads[h]
        keys, heads = keys2, heads2
    return Dominance(keys, heads, pool, nxt)


class Levels(NamedTuple):
    """The depth-first search's stack: row d holds the node at depth d (d tasks placed) and
    the children it has left to try."""

    counts: np.ndarray  # [T + 1, J]
    free: np.ndarray  # [T + 1, M]
    rel: np.ndarray  # [T + 1, J]
    pm: np.ndarray  # [T + 1, J]
    ends: np.ndarray  # [T + 1, J] the alone bound's round ends ...
    tails: np.ndarray  # [T + 1, J] ... and later rounds
    scalars: np.ndarray  # [T + 1, 5] cost, tau, last job, last GPU, children tried
    kids: np.ndarray  # [T + 1, J M, 4] (s, alone bound, n, m), in the order tried
    n_kids: np.ndarray  # [T + 1] children of the node
    moves: np.ndarray  # [T + 1, 3] (n, m, s) of the path to the node


def new_levels(n_jobs: int, n_gpus: int, n_tasks: int) -> Levels:
    d = n_tasks + 1
    ij = (d, n_jobs)
    return Levels(
        np.zeros(ij, np.int64),
        np.zeros((d, n_gpus), np.int64),
        np.zeros(ij, np.int64),
        np.zeros(ij, np.int64),
        np.zeros(ij, np.int64),
        np.zeros(ij, np.int64),
        np.zeros((d, 5), np.int64),
        np.zeros((d, n_jobs * n_gpus, 4), np.int64),
        np.zeros(d, np.int64),
        np.zeros((d, 3), np.int64),
    )


@njit(cache=True)
def child(t: Tables, lv: Levels, d: int, n: int, m: int, s: int) -> int:
    """Places (n, m, s) after the node at depth d into row d + 1; returns the child's cost."""
    return place(
        t, n, m, s, lv.counts[d], lv.free[d], lv.rel[d], lv.pm[d], lv.scalars[d, COST],
        lv.counts[d + 1], lv.free[d + 1], lv.rel[d + 1], lv.pm[d + 1],
    )  # fmt: skip


@njit(cache=True)
def _expand(t: Tables, lv: Levels, d: int, stats, control, dom: Dominance, best_moves) -> bool:
    """Enter the node at depth d: cut it by the queue bound or dominance, or list its children
    (each cut by its alone bound) in row d and return True. Leaves update the incumbent."""
    stats[NODES] += 1
    if stats[NODES] & 255 == 0 and control[0] != 0:
        stats[STOPPED] = 1
    counts, free, rel = lv.counts[d], lv.free[d], lv.rel[d]
    ends, tails, cost = lv.ends[d], lv.tails[d], lv.scalars[d, COST]
    if stats[STOPPED] or cost + queue_bound(t, counts, free, rel, ends, tails) >= stats[BEST]:
        return False
    n_jobs, n_gpus = counts.shape[0], free.shape[0]
    vec = np.concatenate((free, rel, ends))  # ends: 0 for finished jobs
    weight, key = 0, 0
    for n in range(n_jobs):
        key += counts[n] * t.radix[n]
        if counts[n] < t.total[n]:
            weight += t.w[n]
    if _dominated(dom, stats, key, vec, cost, weight):
        return False
    cand = np.empty((n_jobs * n_gpus, 3), dtype=np.int64)
    k = children(t, counts, free, rel, lv.scalars[d, TAU], lv.scalars[d, LAST_N],
                 lv.scalars[d, LAST_M], cand)  # fmt: skip
    kept = 0
    for i in range(k):
        s, n, m = cand[i, 0], cand[i, 1], cand[i, 2]
        cost2 = child(t, lv, d, n, m, s)
        if (lv.counts[d + 1] == t.total).all():
            if cost2 < stats[BEST]:
                stats[BEST], stats[FOUND] = cost2, 1
                best_moves[:d] = lv.moves[:d]
                best_moves[d, 0], best_moves[d, 1], best_moves[d, 2] = n, m, s
            continue
        lb = cost2 + alone(t, lv.counts[d + 1], lv.free[d + 1], lv.rel[d + 1], lv.pm[d + 1],
                           lv.ends[d + 1], lv.tails[d + 1])  # fmt: skip
        if lb < stats[BEST]:
            kid = lv.kids[d, kept]
            kid[0], kid[1], kid[2], kid[3] = s, lb, n, m
            kept += 1
    _sort_rows(lv.kids[d], kept, 4)
    lv.n_kids[d] = kept
    lv.scalars[d, TRIED] = 0
    return True


@njit(cache=True, nogil=True)
def search(t: Tables, lv: Levels, stats, control, best_moves) -> None:
    """The depth-first search from the root in row 0 of ``lv`` (its counts, free, rel, pm and
    cost set), below the incumbent stats[BEST]; stops when control[0] is set."""
    width = lv.free.shape[1] + 2 * lv.rel.shape[1] + 1
    dom = Dominance(
        np.full(1024, -1, dtype=np.int64),
        np.empty(1024, dtype=np.int64),
        np.empty((1024, width), dtype=np.int64),
        np.empty(1024, dtype=np.int64),
    )
    alone(t, lv.counts[0], lv.free[0], lv.rel[0], lv.pm[0], lv.ends[0], lv.tails[0])
    lv.scalars[0, TAU], lv.scalars[0, LAST_N], lv.scalars[0, LAST_M] = 0, -1, -1
    if not _expand(t, lv, 0, stats, control, dom, best_moves):
        return
    d = 0
    while d >= 0:
        i = lv.scalars[d, TRIED]
        if i == lv.n_kids[d]:
            d -= 1
            continue
        lv.scalars[d, TRIED] = i + 1
        s, lb, n, m = lv.kids[d, i, 0], lv.kids[d, i, 1], lv.kids[d, i, 2], lv.kids[d, i, 3]
        if lb >= stats[BEST]:
            continue
        # row d + 1 held each sibling in turn while _expand listed them: placing the child
        # again is cheaper than keeping every child's state
        lv.scalars[d + 1, COST] = child(t, lv, d, n, m, s)
        alone(t, lv.counts[d + 1], lv.free[d + 1], lv.rel[d + 1], lv.pm[d + 1],
              lv.ends[d + 1], lv.tails[d + 1])  # fmt: skip
        lv.moves[d, 0], lv.moves[d, 1], lv.moves[d, 2] = n, m, s
        lv.scalars[d + 1, TAU], lv.scalars[d + 1, LAST_N], lv.scalars[d + 1, LAST_M] = s, n, m
        dom = _room(dom, stats)
        if _expand(t, lv, d + 1, stats, control, dom, best_moves):
            d += 1
