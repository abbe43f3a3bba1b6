"""Exact P1 over columns: Lagrangian bound, reduced-cost enumeration, one MIP (seed 000).

The route (``route="columns"`` of :func:`dlsched.models.placement.exact.solve_exact`) works
on the structure of :mod:`dlsched.models.placement.structure`: a job's cost depends only on its
count vector x over worker types and on its mode (spread / local), and the jobs are coupled
only by the supply of each type (and, for local jobs, by the room on a node).

1. Bound. For any prices pi on the types, relaxing the supply rows gives the Lagrangian bound

       L(pi) = pi . supply + sum_j q_j min_x (cost_j(x) - pi . x),

   valid for every pi (weak duality) and computed exactly by pricing every column of every job
   class j (q_j identical jobs). Column generation on the master LP (supply rows + one row per
   job class) drives pi to the LP dual optimum, where L(pi) equals the Dantzig-Wolfe bound.
2. Incumbent. The integer master over the generated columns (with node slots for local jobs)
   gives a placement; the checker values it (UB).
3. Proof. Any placement of value <= UB uses only columns whose reduced cost
   cost_j(x) - pi . x - min_j is at most UB - L(pi) (the reduced costs of the jobs add up to
   value - L(pi), and each is >= 0). The integer master over exactly those columns is solved by
   HiGHS; its optimum is P1's optimum and its bound, capped by UB, is a bound on P1.

Applies when the spread grid (every count vector) is small enough to price by enumeration:
few worker types, as in the paper's clusters (V100/P100/T4 nodes).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from dlsched.models.placement.evaluate import Evaluator
from dlsched.models.placement.instance import PlacementInstance
from dlsched.models.placement.structure import Structure, structure
from dlsched.solvers.base import SolveResult, SolverSettings, Status
from dlsched.solvers.certify import tolerance
from dlsched.solvers.deadline import Deadline
from dlsched.solvers.highs import MatrixModel, RowBlock, solve_matrix, stack_rows

#: Largest spread grid (count vectors per job class) priced by enumeration.
MAX_GRID = 4_000_000
#: Largest number of priced columns over all job classes (memory: 8 bytes each, a few times).
MAX_PRICED = 20_000_000
#: Largest number of columns enumerated for the final MIP.
MAX_COLUMNS = 400_000


@dataclass
class Columns:
    """Columns of the master: job class, count vector, node class (-1: spread), cost."""

    job_class: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=int))
    x: np.ndarray = field(default_factory=lambda: np.zeros((0, 0), dtype=int))
    node_class: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=int))
    cost: np.ndarray = field(default_factory=lambda: np.zeros(0))

    def __len__(self) -> int:
        return int(self.job_class.size)

    def add(
        self, job_class: np.ndarray, x: np.ndarray, node_class: np.ndarray, cost: np.ndarray
    ) -> None:
        if len(self) == 0:
            self.x = np.zeros((0, x.shape[1]), dtype=int)
        self.job_class = np.concatenate([self.job_class, job_class])
        self.x = np.vstack([self.x, x])
        self.node_class = np.concatenate([self.node_class, node_class])
        self.cost = np.concatenate([self.cost, cost])

    def unique(self) -> Columns:
        key = np.column_stack([self.job_class, self.node_class, self.x])
        _, first = np.unique(key, axis=0, return_index=True)
        first = np.sort(first)
        return Columns(
            self.job_class[first], self.x[first], self.node_class[first], self.cost[first]
        )


Block = tuple[np.ndarray, np.ndarray, np.ndarray, int]


class Pricing:
    """Every column of every job class, priced at once for given type prices."""

    def __init__(self, st: Structure) -> None:
        self.st = st
        grid = st.spread_grid
        sizes = grid.sum(axis=1)
        self.blocks: list[list[tuple[np.ndarray, np.ndarray, int]]] = []
        for js in st.class_jobs:
            i = js[0]
            x = grid if st.size[i] == 0 else grid[sizes == st.size[i]]
            blocks = [(x, st.cost(i, x, local=False), -1)]
            if st.comm_spread[i] > st.comm_local[i]:  # otherwise local costs what spread does
                for c in range(len(st.class_nodes)):
                    y = st.local_grid(c)
                    if st.size[i]:
                        y = y[y.sum(axis=1) == st.size[i]]
                    if len(y):
                        blocks.append((y, st.cost(i, y, local=True), c))
            self.blocks.append(blocks)

    def reduced(self, j: int, pi: np.ndarray) -> list[Block]:
        """(x, cost, reduced cost, node class) blocks of job class j at prices pi."""
        return [(x, cost, cost - x @ pi, c) for x, cost, c in self.blocks[j]]

    def price(self, pi: np.ndarray) -> list[list[Block]]:
        return [self.reduced(j, pi) for j in range(len(self.st.class_jobs))]

    def lagrangian(self, pi: np.ndarray, priced: list[list[Block]]) -> tuple[float, np.ndarray]:
        """L(pi) (a lower bound on S x P1's optimum, with a margin for rounding) and the
        per-class minima of the reduced costs."""
        mins = np.array([min(float(b[2].min()) for b in blocks if b[2].size) for blocks in priced])
        q = np.array([len(js) for js in self.st.class_jobs])
        terms = [*(pi * self.st.supply).tolist(), *(q * mins).tolist()]
        return math.fsum(terms) - 1e-12 * math.fsum(abs(t) for t in terms), mins


def best_columns(priced: list[list[Block]], mu: np.ndarray, count: int) -> Columns:
    """Per job class, up to ``count`` columns of each block with reduced cost below mu_j."""
    out = Columns()
    for j, blocks in enumerate(priced):
        for x, cost, rc, c in blocks:
            take = np.argpartition(rc, count)[:count] if rc.size > count else np.arange(rc.size)
            take = take[rc[take] - mu[j] < -1e-9 * max(1.0, abs(mu[j]))]
            out.add(np.full(take.size, j), x[take], np.full(take.size, c), cost[take])
    return out


def columns_within(priced: list[list[Block]], mins: np.ndarray, gap: float) -> Columns:
    """Every column whose reduced cost is within ``gap`` of its class minimum."""
    out = Columns()
    for j, blocks in enumerate(priced):
        for x, cost, rc, c in blocks:
            take = np.flatnonzero(rc - mins[j] <= gap)
            out.add(np.full(take.size, j), x[take], np.full(take.size, c), cost[take])
    return out


# --- the master ----------------------------------------------------------------------------


def _slots(st: Structure) -> list[tuple[int, int]]:
    """Node slots (node class, position) that local jobs may use: at most S per class."""
    s = int(st.job_class.size)
    return [(c, p) for c, nodes in enumerate(st.class_nodes) for p in range(min(len(nodes), s))]


@dataclass(frozen=True)
class Master:
    model: MatrixModel
    column: np.ndarray  # master variable -> column index
    slot: np.ndarray  # master variable -> slot index (-1: none)


def build_master(st: Structure, cols: Columns, integer: bool) -> Master:
    """min sum cost lambda  s.t. supply per type, q_j per job class (and, when ``integer``,
    local columns placed in node slots that they fit, slots of a class ordered by load)."""
    slots = _slots(st) if integer else []
    var_col, var_slot = [], []
    for n in range(len(cols)):
        c = int(cols.node_class[n])
        if c < 0 or not integer:
            var_col.append(n)
            var_slot.append(-1)
        else:
            for s_idx, (sc, _) in enumerate(slots):
                if sc == c:
                    var_col.append(n)
                    var_slot.append(s_idx)
    col = np.array(var_col, dtype=int)
    slot = np.array(var_slot, dtype=int)
    nv = col.size
    q = np.array([len(js) for js in st.class_jobs], dtype=float)
    blocks = [_supply_rows(st, cols, col), _class_rows(st, cols, col)]
    if integer and slots:
        blocks += [
            _slot_room_rows(st, cols, col, slot, slots),
            _slot_order_rows(cols, col, slot, slots),
        ]
    matrix, lower, upper = stack_rows(blocks, nv)
    model = MatrixModel(
        cost=cols.cost[col].astype(float),
        matrix=matrix,
        row_lower=lower,
        row_upper=upper,
        col_lower=np.zeros(nv),
        col_upper=q[cols.job_class[col]],
        integrality=np.full(nv, True) if integer else None,
    )
    return Master(model, col, slot)


def _supply_rows(st: Structure, cols: Columns, col: np.ndarray) -> RowBlock:
    """Every worker of type t serves exactly one job: sum x_t lambda = supply_t  (8c)+(8d)."""
    x = cols.x[col]
    v, t = np.nonzero(x)
    block = RowBlock.of(t, v, x[v, t], 0, 0, st.num_types)
    return RowBlock(
        block.row, block.col, block.val, st.supply.astype(float), st.supply.astype(float)
    )


def _class_rows(st: Structure, cols: Columns, col: np.ndarray) -> RowBlock:
    """Every job takes exactly one column (8b): sum lambda = q_j per job class."""
    q = np.array([len(js) for js in st.class_jobs], dtype=float)
    j = cols.job_class[col]
    block = RowBlock.of(j, np.arange(col.size), np.ones(col.size), 0, 0, q.size)
    return RowBlock(block.row, block.col, block.val, q, q)


def _slot_room_rows(
    st: Structure, cols: Columns, col: np.ndarray, slot: np.ndarray, slots: list[tuple[int, int]]
) -> RowBlock:
    """Local jobs of one slot fit its node: sum y_t lambda <= cap_t per (slot, type)."""
    v = np.flatnonzero(slot >= 0)
    x = cols.x[col[v]]
    vv, t = np.nonzero(x)
    rows = slot[v[vv]] * st.num_types + t
    cap = np.array([st.node_cap[c] for c, _ in slots], dtype=float).reshape(-1)
    return RowBlock(rows, v[vv], x[vv, t].astype(float), np.full(cap.size, -np.inf), cap)


def _slot_order_rows(
    cols: Columns, col: np.ndarray, slot: np.ndarray, slots: list[tuple[int, int]]
) -> RowBlock:
    """Identical nodes: slot p of a class holds at least as many workers as slot p + 1 (any
    placement can permute identical nodes into this order)."""
    pairs = [(a, a + 1) for a in range(len(slots) - 1) if slots[a][0] == slots[a + 1][0]]
    rows, vars_, vals = [], [], []
    size = cols.x[col].sum(axis=1)
    for r, (a, b) in enumerate(pairs):
        for s_idx, sign in ((a, 1.0), (b, -1.0)):
            v = np.flatnonzero(slot == s_idx)
            rows += [r] * v.size
            vars_ += v.tolist()
            vals += (sign * size[v]).tolist()
    return RowBlock.of(rows, vars_, vals, 0, np.inf, len(pairs))


# --- placements <-> columns ---------------------------------------------------------------


def realize(st: Structure, cols: Columns, master: Master, counts: np.ndarray) -> tuple[int, ...]:
    """A worker-level assignment from integer master values (local jobs on their slot's node,
    spread jobs on what is left of each type)."""
    slots = _slots(st)
    free: dict[tuple[int, int], list[int]] = {}  # (node, type) -> free workers
    for k, (h, t) in enumerate(zip(st.node_of, st.type_of, strict=True)):
        free.setdefault((int(h), int(t)), []).append(k)
    queue = [list(js) for js in st.class_jobs]
    assignment = [-1] * int(st.type_of.size)
    spread: list[tuple[int, np.ndarray]] = []
    for v in np.flatnonzero(np.round(counts) > 0):
        n = int(master.column[v])
        for _ in range(int(round(counts[v]))):
            job = queue[int(cols.job_class[n])].pop(0)
            if master.slot[v] < 0:
                spread.append((job, cols.x[n]))
                continue
            c, p = slots[int(master.slot[v])]
            node = st.class_nodes[c][p]
            for t, cnt in enumerate(cols.x[n]):
                for _ in range(int(cnt)):
                    assignment[free[(node, t)].pop()] = job
    pool: dict[int, list[int]] = {}
    for (_h, t), ks in sorted(free.items()):
        pool.setdefault(t, []).extend(ks)
    for job, x in spread:
        for t, cnt in enumerate(x):
            for _ in range(int(cnt)):
                assignment[pool[t].pop()] = job
    return tuple(assignment)


def columns_of(st: Structure, assignment: tuple[int, ...]) -> Columns:
    """The columns of a worker-level assignment (spread unless the job sits on one node)."""
    a = np.asarray(assignment)
    out = Columns()
    node_class = np.empty(int(st.node_of.max()) + 1, dtype=int)
    for c, nodes in enumerate(st.class_nodes):
        node_class[list(nodes)] = c
    for i in range(int(st.job_class.size)):
        ks = np.flatnonzero(a == i)
        x = np.bincount(st.type_of[ks], minlength=st.num_types)[None, :]
        used = sorted(set(st.node_of[ks].tolist()))
        local = len(used) == 1 and ks.size >= 2 and st.comm_spread[i] > st.comm_local[i]
        c = int(node_class[used[0]]) if local else -1
        out.add(np.array([st.job_class[i]]), x, np.array([c]), st.cost(i, x, local=local))
    return out


def _slot_of_nodes(st: Structure, assignment: tuple[int, ...], local: np.ndarray) -> dict[int, int]:
    """Node -> slot for the nodes hosting local jobs: per class, by decreasing local load (the
    order the slot rows ask for)."""
    a = np.asarray(assignment)
    load: dict[int, int] = {}
    for i in np.flatnonzero(local):
        ks = np.flatnonzero(a == i)
        load[int(st.node_of[ks[0]])] = load.get(int(st.node_of[ks[0]]), 0) + ks.size
    slots = _slots(st)
    out = {}
    for c, nodes in enumerate(st.class_nodes):
        hosting = sorted((h for h in nodes if h in load), key=lambda h: -load[h])
        for p, h in enumerate(hosting):
            out[h] = slots.index((c, p))
    return out


def master_start(
    st: Structure, cols: Columns, master: Master, assignment: tuple[int, ...]
) -> np.ndarray | None:
    """Master values of a placement whose columns are all in ``cols`` (None otherwise)."""
    mine = columns_of(st, assignment)
    key = {
        (int(cols.job_class[n]), int(cols.node_class[n]), *map(int, cols.x[n])): n
        for n in range(len(cols))
    }
    slot_of = _slot_of_nodes(st, assignment, mine.node_class >= 0)
    var_of = {(int(master.column[v]), int(master.slot[v])): v for v in range(master.column.size)}
    a = np.asarray(assignment)
    values = np.zeros(master.column.size)
    for i in range(len(mine)):
        n = key.get((int(mine.job_class[i]), int(mine.node_class[i]), *map(int, mine.x[i])))
        local = mine.node_class[i] >= 0
        v = (
            None
            if n is None
            else var_of.get((n, slot_of[int(st.node_of[a == i][0])] if local else -1))
        )
        if v is None:
            return None
        values[v] += 1
    return values


def column_generation(
    st: Structure, pricing: Pricing, cols: Columns, deadline: Deadline, settings: SolverSettings
) -> tuple[np.ndarray, float, np.ndarray, int]:
    """Master LP + pricing until no column prices out (``cols`` grows in place); returns the
    prices with the best Lagrangian bound, that bound, the class minima there, the rounds.
    The first round runs even past ``deadline``, so that a bound is always known."""
    best_pi = np.zeros(st.num_types)  # L(0): every job alone on the whole cluster
    best_l, best_mins = pricing.lagrangian(best_pi, pricing.price(best_pi))
    rounds = 0
    while rounds == 0 or not deadline.passed():  # one round always: a bound
        rounds += 1
        m = build_master(st, cols, integer=False)
        res = solve_matrix(m.model, deadline.solve_options(settings.with_(mip_gap=0.0)))
        if res.row_dual is None or res.objective is None:
            break
        pi = res.row_dual[: st.num_types]
        mu = res.row_dual[st.num_types :]
        priced = pricing.price(pi)
        bound, mins = pricing.lagrangian(pi, priced)
        if bound > best_l:
            best_pi, best_l, best_mins = pi.copy(), bound, mins
        if res.objective - bound <= 1e-10 * abs(res.objective):
            break
        new = best_columns(priced, mu, 4)
        if len(new) == 0:
            break
        cols.add(new.job_class, new.x, new.node_class, new.cost)
    return best_pi, best_l, best_mins, rounds


def solve_master_mip(
    st: Structure,
    cols: Columns,
    settings: SolverSettings,
    deadline: Deadline,
    start: tuple[int, ...] | None,
) -> tuple[Master, SolveResult]:
    """The integer master over ``cols`` (HiGHS, presolve off: it is slow on these rows and
    gains nothing), warm-started from ``start`` when its columns are all there."""
    master = build_master(st, cols, integer=True)
    x0 = master_start(st, cols, master, start) if start is not None else None
    extra = {"presolve": "off", **settings.extra}
    tight = settings.with_(mip_gap=min(settings.mip_gap, 1e-9), extra=extra)
    return master, solve_matrix(master.model, deadline.solve_options(tight), start=x0)


# --- the route -----------------------------------------------------------------------------


def applies(st: Structure) -> bool:
    """Whether every column can be priced by enumeration."""
    return st.grid_size <= MAX_GRID and st.grid_size * len(st.class_jobs) <= MAX_PRICED


@dataclass
class ColumnRun:
    """What the route found: the best placement, its value (sum of JCTs, the checker's
    arithmetic), a proven lower bound on the sum of JCTs, and what it did."""

    assignment: tuple[int, ...] | None = None
    value: float = float("inf")
    bound: float = -float("inf")
    hit_limit: bool = False
    details: dict = field(default_factory=dict)


def run(
    instance: PlacementInstance,
    category: tuple[int, ...] | None,
    settings: SolverSettings,
    start: tuple[int, ...],
    deadline: Deadline,
) -> ColumnRun:
    """Steps 1-3 of the module docstring, from the feasible placement ``start``."""
    st = structure(instance, category)
    evaluator = Evaluator(instance)
    out = ColumnRun(
        details={"route": "columns", "types": st.num_types, "job_classes": len(st.class_jobs)}
    )

    def offer(assignment: tuple[int, ...]) -> None:
        value = float(evaluator.avg_jct(np.array([assignment]))[0]) * instance.num_jobs
        if value < out.value:
            out.assignment, out.value = assignment, value

    offer(start)
    pricing = Pricing(st)
    cols = columns_of(st, start)
    pi, lower, mins, rounds = column_generation(st, pricing, cols, deadline, settings)
    out.bound = lower
    out.details.update(pricing_rounds=rounds, lagrangian_bound=lower / instance.num_jobs)
    if deadline.passed() or not np.isfinite(lower):
        out.hit_limit = True
        return out
    master, res = solve_master_mip(st, cols.unique(), settings, deadline, start)
    if res.col_value is not None:
        offer(realize(st, cols.unique(), master, res.col_value))
    _prove(st, pricing.price(pi), mins, lower, out, settings, deadline, offer)
    return out


def _prove(
    st: Structure,
    priced: list[list[Block]],
    mins: np.ndarray,
    lower: float,
    out: ColumnRun,
    settings: SolverSettings,
    deadline: Deadline,
    offer: Callable[[tuple[int, ...]], None],
) -> None:
    """Step 3 with a growing reduced-cost threshold delta: the MIP over the columns within
    delta of their class minimum holds every placement of value <= lower + delta, so it proves
    min(lower + delta, its own bound); delta grows (x4) until that closes the gap or reaches
    UB - lower. ``priced``/``mins``: every column priced at the prices of ``lower``."""
    delta = (out.value - lower) / 16
    mips = []
    while True:
        full = out.value - lower
        delta = min(delta, full)
        margin = 1e-9 * abs(out.value) + 1e-9
        cols = columns_within(priced, mins, delta + margin)
        if len(cols) > MAX_COLUMNS:
            out.hit_limit = True
            out.details["stopped"] = f"{len(cols)} columns within the gap"
            break
        master, res = solve_master_mip(st, cols, settings, deadline, out.assignment)
        mips.append(
            {"delta": delta / len(st.job_class), "columns": len(cols), "status": str(res.status)}
        )
        if res.col_value is not None:
            offer(realize(st, cols, master, res.col_value))
        # every placement of value <= lower + delta is a solution of this MIP
        if res.status == Status.INFEASIBLE:
            out.bound = max(out.bound, lower + delta)
        elif res.bound is not None:
            out.bound = max(out.bound, min(lower + delta, res.bound))
        if res.status not in (Status.OPTIMAL, Status.INFEASIBLE):
            out.hit_limit = True
            break
        s = len(st.job_class)
        if (out.value - out.bound) / s <= tolerance(out.value / s) or delta >= full:
            break
        delta *= 4
    out.details["mips"] = mips
