"""Matrix models solved by HiGHS directly, and lower bounds that hold by construction.

A :class:`MatrixModel` is ``min c x + offset`` subject to ``row_lower <= A x <= row_upper``,
``col_lower <= x <= col_upper`` and optional integrality, with ``A`` a scipy CSC matrix
(infinite sides are ``±inf``). :func:`solve_matrix` hands it to HiGHS column-wise and maps the
outcome with :func:`dlsched.solvers.certify.solver_status`; :func:`safe_dual_bound` turns any
row multipliers into a proven lower bound on the LP optimum. :class:`RowBlock` and
:func:`stack_rows` let a model builder write one small function per constraint family.
"""

from __future__ import annotations

import math
import signal
import threading
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.sparse as sp

from dlsched.errors import OptionError
from dlsched.solvers.base import SolveOptions, SolveResult
from dlsched.solvers.certify import solver_status
from dlsched.solvers.deadline import MIN_SOLVER_SECONDS, Deadline
from dlsched.solvers.highs_scheduler import use_threads

#: Unit roundoff of IEEE double precision.
UNIT_ROUNDOFF = 2.0**-53
#: Relative margin, of the sum of the magnitudes of the terms, taken off the bound of
#: :func:`safe_dual_bound` against the rounding of its products and of its sum (each at most
#: one unit roundoff per term).
SUM_MARGIN = 1e-12
#: HiGHS's callbacks that ask whether to stop: simplex, interior point, branch and bound.
INTERRUPT_CALLBACKS = ("cbSimplexInterrupt", "cbIpmInterrupt", "cbMipInterrupt")


@dataclass(frozen=True, eq=False)
class MatrixModel:
    """``min cost x + offset`` s.t. ``row_lower <= matrix x <= row_upper``, ``col_lower <= x <=
    col_upper``; ``integrality`` (booleans, True = integer) makes it a MIP. Any other matrix
    (dense, CSR, duplicate entries) is converted to canonical CSC. Compared by identity."""

    cost: np.ndarray
    matrix: sp.csc_matrix
    row_lower: np.ndarray
    row_upper: np.ndarray
    col_lower: np.ndarray
    col_upper: np.ndarray
    integrality: np.ndarray | None = None
    offset: float = 0.0

    def __post_init__(self) -> None:
        if not (sp.issparse(self.matrix) and self.matrix.format == "csc"):
            object.__setattr__(self, "matrix", sp.csc_matrix(self.matrix))
        if not self.matrix.has_canonical_format:
            canonical = self.matrix.copy()
            canonical.sum_duplicates()
            object.__setattr__(self, "matrix", canonical)
        rows, cols = self.matrix.shape
        sizes = {
            "cost": (self.cost, cols),
            "col_lower": (self.col_lower, cols),
            "col_upper": (self.col_upper, cols),
            "row_lower": (self.row_lower, rows),
            "row_upper": (self.row_upper, rows),
        }
        if self.integrality is not None:
            sizes["integrality"] = (self.integrality, cols)
        for name, (arr, size) in sizes.items():
            if np.shape(arr) != (size,):
                raise ValueError(f"MatrixModel.{name}: shape {np.shape(arr)}, expected ({size},)")

    @property
    def num_rows(self) -> int:
        return int(self.matrix.shape[0])

    @property
    def num_cols(self) -> int:
        return int(self.matrix.shape[1])

    @property
    def is_mip(self) -> bool:
        return self.integrality is not None and bool(np.any(self.integrality))


@dataclass(frozen=True, eq=False)
class RowBlock:
    """Rows of one constraint family: triplets with block-local row indices ``0..count-1`` and
    each row's sides."""

    row: np.ndarray
    col: np.ndarray
    val: np.ndarray
    lower: np.ndarray
    upper: np.ndarray

    @staticmethod
    def of(row: Any, col: Any, val: Any, lower: float, upper: float, count: int) -> RowBlock:
        """``count`` rows sharing the sides ``lower`` and ``upper``."""
        return RowBlock(
            np.asarray(row, dtype=np.int64),
            np.asarray(col, dtype=np.int64),
            np.asarray(val, dtype=float),
            np.full(count, float(lower)),
            np.full(count, float(upper)),
        )

    @property
    def count(self) -> int:
        return int(self.lower.size)


def segment_offsets(counts: Any) -> np.ndarray:
    """0, 1, .., c - 1 for each count c, concatenated: the offset of each entry of
    ``np.repeat(x, counts)`` within its run."""
    c = np.asarray(counts, dtype=np.int64)
    starts = np.cumsum(c) - c
    return np.arange(int(c.sum()), dtype=np.int64) - np.repeat(starts, c)


def stack_rows(
    blocks: Sequence[RowBlock], num_cols: int
) -> tuple[sp.csc_matrix, np.ndarray, np.ndarray]:
    """The blocks one under the other: (CSC matrix, row_lower, row_upper)."""
    offsets = np.cumsum([0] + [b.count for b in blocks])
    rows = np.concatenate([b.row + off for b, off in zip(blocks, offsets, strict=False)])
    cols = np.concatenate([b.col for b in blocks])
    vals = np.concatenate([b.val for b in blocks])
    matrix = sp.csc_matrix((vals, (rows, cols)), shape=(int(offsets[-1]), num_cols))
    lower = np.concatenate([b.lower for b in blocks])
    upper = np.concatenate([b.upper for b in blocks])
    return matrix, lower, upper


class ColumnValues(Mapping[str, float]):
    """Primal values as a read-only mapping ``"x[j]" -> value`` over the array (no copy)."""

    def __init__(self, x: np.ndarray) -> None:
        self._x = x

    def __getitem__(self, key: str) -> float:
        if not (key.startswith("x[") and key.endswith("]")) or not key[2:-1].isdigit():
            raise KeyError(key)
        j = int(key[2:-1])
        if j >= self._x.size:
            raise KeyError(key)
        return float(self._x[j])

    def __iter__(self) -> Iterator[str]:
        return (f"x[{j}]" for j in range(self._x.size))

    def __len__(self) -> int:
        return int(self._x.size)


# --- a lower bound from any row multipliers --------------------------------------------------


def _usable_duals(model: MatrixModel, row_dual: Any) -> np.ndarray:
    """The multipliers, with 0 for a sign whose side is infinite (and for non-finite values)."""
    y = np.array(row_dual, dtype=float).reshape(-1)
    if y.size != model.num_rows:
        raise ValueError(f"row_dual has {y.size} entries, the model {model.num_rows} rows")
    y[~np.isfinite(y)] = 0.0
    y[(y > 0) & ~np.isfinite(model.row_lower)] = 0.0
    y[(y < 0) & ~np.isfinite(model.row_upper)] = 0.0
    return y


def _row_terms(model: MatrixModel, y: np.ndarray) -> np.ndarray:
    """y_i times the side its sign selects (row_lower if y_i > 0, row_upper if y_i < 0)."""
    side = np.where(y > 0, model.row_lower, model.row_upper)
    out = np.zeros_like(y)
    np.multiply(y, side, out=out, where=y != 0)
    return out


def _reduced_cost_interval(model: MatrixModel, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """An interval holding each exact reduced cost c_j - (A^T y)_j: the computed value widened
    by twice the classical rounding-error bound of a (k_j + 1)-term dot product,
    (k_j + 2) u (|c_j| + sum_i |a_ij y_i|), k_j the nonzeros of column j."""
    a = model.matrix
    reduced = model.cost - a.T @ y
    magnitude = np.abs(model.cost) + abs(a).T @ np.abs(y)
    radius = 2.0 * (np.diff(a.indptr) + 2) * UNIT_ROUNDOFF * magnitude
    return reduced - radius, reduced + radius


def _column_minima(r_lo: np.ndarray, r_hi: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> Any:
    """min of r x over r in [r_lo, r_hi], x in [lo, hi] (a bilinear minimum: at a corner);
    -inf where an infinite bound meets a reduced cost that may have the wrong sign."""
    fin_lo, fin_hi = np.isfinite(lo), np.isfinite(hi)
    lo_f, hi_f = np.where(fin_lo, lo, 0.0), np.where(fin_hi, hi, 0.0)
    corners = np.stack([r_lo * lo_f, r_hi * lo_f, r_lo * hi_f, r_hi * hi_f])
    corners[:2, ~fin_lo] = np.inf
    corners[2:, ~fin_hi] = np.inf
    out = np.where(fin_lo | fin_hi, corners.min(axis=0), 0.0)
    unbounded = (~fin_hi & (r_lo < 0)) | (~fin_lo & (r_hi > 0))
    return np.where(unbounded, -np.inf, out)


def safe_dual_bound(model: MatrixModel, row_dual: Any) -> float:
    """A lower bound on the optimum of the LP relaxation of ``model``, valid for ANY row
    multipliers ``row_dual`` (optimal or not; Neumaier and Shcherbina 2004).

    Why: for every x with row_lower <= A x <= row_upper and col_lower <= x <= col_upper,
    c x = y (A x) + (c - A^T y) x. Each y_i (A x)_i >= y_i row_lower_i if y_i > 0 and
    >= y_i row_upper_i if y_i < 0, and (c - A^T y)_j x_j >= its minimum over [l_j, u_j]. So

        c x + offset >= sum_i y_i side_i + sum_j min_{x_j in [l_j, u_j]} (c - A^T y)_j x_j + offset,

    with no assumption on y. A multiplier whose selected side is infinite is replaced by 0 (any
    y is allowed). A column with an infinite bound whose reduced cost may have the wrong sign
    makes its minimum, hence the bound, -inf: the caller then has no certified bound (give
    such columns finite bounds, valid for the optimum, to get one).

    Floating point: each reduced cost is taken as an interval (the computed value widened by
    twice the rounding-error bound of its dot product) and minimised over it too; the terms are
    summed with ``math.fsum`` and :data:`SUM_MARGIN` times the sum of their magnitudes is
    subtracted, which covers the rounding of each product and of the sum. The HiGHS sign
    convention (c = A^T y + reduced costs, y_i > 0 at an active lower side) is the one used.
    """
    y = _usable_duals(model, row_dual)
    r_lo, r_hi = _reduced_cost_interval(model, y)
    cols = _column_minima(r_lo, r_hi, model.col_lower, model.col_upper)
    if np.any(np.isneginf(cols)):
        return -math.inf
    terms = [*_row_terms(model, y).tolist(), *cols.tolist(), float(model.offset)]
    total = math.fsum(terms)
    return total - SUM_MARGIN * math.fsum(abs(t) for t in terms)


# --- solving ---------------------------------------------------------------------------------


def _highs_lp(model: MatrixModel) -> Any:
    import highspy

    lp = highspy.HighsLp()
    lp.num_col_ = model.num_cols
    lp.num_row_ = model.num_rows
    lp.col_cost_ = np.asarray(model.cost, dtype=float)
    lp.col_lower_ = np.asarray(model.col_lower, dtype=float)
    lp.col_upper_ = np.asarray(model.col_upper, dtype=float)
    lp.row_lower_ = np.asarray(model.row_lower, dtype=float)
    lp.row_upper_ = np.asarray(model.row_upper, dtype=float)
    lp.offset_ = float(model.offset)
    lp.a_matrix_.format_ = highspy.MatrixFormat.kColwise
    lp.a_matrix_.start_ = model.matrix.indptr
    lp.a_matrix_.index_ = model.matrix.indices
    lp.a_matrix_.value_ = model.matrix.data
    if model.is_mip:
        kinds = (highspy.HighsVarType.kContinuous, highspy.HighsVarType.kInteger)
        lp.integrality_ = [kinds[int(v)] for v in np.asarray(model.integrality, dtype=bool)]
    return lp


def run_highs(h: Any) -> None:
    """``h.run()`` on a ``highspy.Highs`` that Ctrl-C stops: the handler in place before (Python's
    raises KeyboardInterrupt) is called once HiGHS has returned.

    HiGHS does not watch SIGINT, and Python runs its handler only between bytecodes of the main
    thread, so a Ctrl-C used to wait for HiGHS's own time limit. During the run SIGINT only
    records itself: Python's handler would raise inside a HiGHS callback, across C++ frames.
    HiGHS's interrupt callbacks (:data:`INTERRUPT_CALLBACKS`, called from the solving thread,
    the main one, about once a millisecond of simplex) run the recording handler and then ask
    HiGHS to stop, and HiGHS returns as from any limit. Only in the main thread with a Python
    handler in place, as for CP-SAT. (Pyomo's interface stops its runs by letting Python's
    handler raise inside highspy's own interrupt callback;
    tests/solvers/test_highs_interrupt.py checks both.)"""
    previous = signal.getsignal(signal.SIGINT)
    if threading.current_thread() is not threading.main_thread() or not callable(previous):
        h.run()
        return
    frames: list[Any] = []

    def ask(event: Any) -> None:
        if frames:
            event.interrupt()

    callbacks = [getattr(h, name) for name in INTERRUPT_CALLBACKS]
    signal.signal(signal.SIGINT, lambda _signum, frame: frames.append(frame))
    try:
        for cb in callbacks:
            cb.subscribe(ask)
        h.run()
    finally:
        for cb in callbacks:
            cb.unsubscribe(ask)
        signal.signal(signal.SIGINT, previous)
    if frames:
        previous(signal.SIGINT, frames[0])


def _set_options(h: Any, options: SolveOptions) -> None:
    import highspy

    settings: dict[str, Any] = {
        "output_flag": False,
        "random_seed": int(options.seed),
        "threads": int(options.threads),
        "mip_rel_gap": float(options.mip_gap),
    }
    if options.time_limit is not None:
        settings["time_limit"] = max(float(options.time_limit), MIN_SOLVER_SECONDS)
    settings.update(options.extra)
    use_threads(int(settings["threads"]))
    for key, value in settings.items():
        if h.setOptionValue(key, value) == highspy.HighsStatus.kError:
            raise OptionError(key, value, "rejected by HiGHS")


def _set_start(h: Any, model: MatrixModel, start: Any) -> None:
    """A MIP start (a full vector of column values; HiGHS checks and may discard it)."""
    import highspy

    x0 = np.asarray(start, dtype=float).reshape(-1)
    if x0.size != model.num_cols:
        raise ValueError(f"start has {x0.size} values, the model {model.num_cols} columns")
    sol = highspy.HighsSolution()
    sol.col_value = x0.tolist()
    sol.value_valid = True
    h.setSolution(sol)


def _duals(model: MatrixModel, sol: Any) -> tuple[np.ndarray | None, np.ndarray | None]:
    """(row duals, column duals) of an LP; (None, None) for a MIP or without a dual solution."""
    if model.is_mip or not sol.dual_valid:
        return None, None
    return np.asarray(sol.row_dual, dtype=float), np.asarray(sol.col_dual, dtype=float)


def _bound(model: MatrixModel, info: Any, row_dual: np.ndarray | None) -> float | None:
    """A MIP's mip_dual_bound, an LP's safe_dual_bound; None when unknown or infinite."""
    if model.is_mip:
        bound = float(info.mip_dual_bound)
    elif row_dual is not None:
        bound = safe_dual_bound(model, row_dual)
    else:
        return None
    return bound if math.isfinite(bound) else None


def _result(h: Any, model: MatrixModel, wall: float) -> SolveResult:
    import highspy

    status, info, sol = h.getModelStatus(), h.getInfo(), h.getSolution()
    feasible = info.primal_solution_status == 2  # kSolutionStatusFeasible
    x = np.asarray(sol.col_value, dtype=float) if feasible else None
    row_dual, col_dual = _duals(model, sol)
    failed = {"kLoadError", "kModelError", "kPresolveError", "kSolveError", "kPostsolveError"}
    bound = None if status.name in failed else _bound(model, info, row_dual)
    objective = float(info.objective_function_value) if feasible else None
    claimed = status == highspy.HighsModelStatus.kOptimal
    return SolveResult(
        solver_status(
            objective,
            bound,
            claimed_optimal=claimed,
            infeasible=status == highspy.HighsModelStatus.kInfeasible,
            hit_limit=status == highspy.HighsModelStatus.kTimeLimit,
        ),
        objective,
        bound,
        wall,
        "highs",
        h.version(),
        values=ColumnValues(x) if x is not None else {},
        message=h.modelStatusToString(status),
        info={
            "highs_status": h.modelStatusToString(status),
            "claimed_optimal": claimed,
            "hit_limit": status == highspy.HighsModelStatus.kTimeLimit,
            "mip_nodes": int(info.mip_node_count) if model.is_mip else 0,
            "simplex_iterations": int(info.simplex_iteration_count),
        },
        col_value=x,
        row_dual=row_dual,
        col_dual=col_dual,
    )


def solve_matrix(
    model: MatrixModel,
    options: SolveOptions,
    *,
    start: Any = None,
) -> SolveResult:
    """Solve ``model`` with HiGHS (minimisation).

    Options, as every backend reads them: ``seed``, ``threads``, ``mip_gap`` (mip_rel_gap),
    ``time_limit`` (a route hands what is left of its deadline:
    :meth:`~dlsched.solvers.deadline.Deadline.solve_options`; handing the model to HiGHS
    counts against it, and HiGHS is given what is left then), output off, then
    ``options.extra`` as HiGHS options (an option HiGHS rejects raises :class:`OptionError`).
    ``start``: column values passed as a MIP start.

    The result carries the primal values (``col_value``, and ``values`` keyed ``"x[j]"``); for an
    LP also ``row_dual``/``col_dual``, and its ``bound`` is :func:`safe_dual_bound` of the row
    duals (None if there are none or it is -inf); for a MIP the bound is HiGHS's
    ``mip_dual_bound``. The status is :func:`solver_status` of these numbers.
    """
    import highspy

    run = Deadline.after(options.time_limit)  # handing the model over counts against it
    h = highspy.Highs()
    _set_options(h, options)
    h.passModel(_highs_lp(model))
    if start is not None:
        _set_start(h, model, start)
    left = run.seconds()
    if left is not None and "time_limit" not in options.extra:  # HiGHS times its run only
        h.setOptionValue("time_limit", left)
    run_highs(h)
    return _result(h, model, run.elapsed())


__all__ = [
    "ColumnValues",
    "MatrixModel",
    "RowBlock",
    "SUM_MARGIN",
    "UNIT_ROUNDOFF",
    "safe_dual_bound",
    "run_highs",
    "segment_offsets",
    "solve_matrix",
    "stack_rows",
    "use_threads",
]
