"""Native CP-SAT models: parameters, hints, progress and status in one place.

Every CP-SAT model of dlsched (the Pyomo bridge, the hare routes) is solved by
:func:`run_cpsat`, which sets the parameters from :class:`SolveOptions` (seed, workers, the time
left to a deadline, a zero relative gap: "optimal" is for :func:`certify` to decide), reports
progress on stderr for long solves, and returns the raw numbers as a :class:`CpsatRun`.
"""

from __future__ import annotations

import os
import signal
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from dlsched.errors import InternalError
from dlsched.solvers.base import SolveOptions
from dlsched.solvers.deadline import MIN_SOLVER_SECONDS, Deadline
from dlsched.solvers.progress import PROGRESS_EVERY, say


@dataclass(frozen=True)
class CpsatRun:
    """What CP-SAT returned, in the model's own (integer-scaled) objective units."""

    status_name: str
    has_solution: bool
    infeasible: bool
    hit_limit: bool
    objective: float | None
    bound: float | None
    wall_time: float
    workers: int
    value: Callable[[Any], int]

    @property
    def proven_optimal(self) -> bool:
        return self.status_name == "OPTIMAL"


def load_cpsat() -> None:
    """Import CP-SAT now (a second or more when cold): a route calls it before it first asks
    its deadline whether to build a CP-SAT model, so that the import counts in that answer
    instead of overrunning a stage begun with little time left."""
    from ortools.sat.python import cp_model  # noqa: F401


def _progress_callback(label: str, run: Deadline) -> Any:
    """Says on stderr how the search goes, at most every :data:`PROGRESS_EVERY` seconds of
    the ``run``."""
    from ortools.sat.python import cp_model

    class Progress(cp_model.CpSolverSolutionCallback):  # type: ignore[misc]
        def __init__(self) -> None:
            super().__init__()
            self.said = 0.0  # seconds into the run of the last line

        def on_solution_callback(self) -> None:
            now = run.elapsed()
            if now - self.said >= PROGRESS_EVERY:
                self.said = now
                say(
                    f"{label}: {now:.0f} s, incumbent {self.objective_value:g}, "
                    f"bound {self.best_objective_bound:g} (model units)"
                )

    return Progress()


@contextmanager
def _stop_on_interrupt(solver: Any) -> Iterator[None]:
    """Ctrl-C stops the solve at once and raises KeyboardInterrupt after it. CP-SAT's own
    SIGINT catching (``catch_sigint_signal``) ends the search quietly, so the caller carried on
    to its next stage, and it left SIGINT's handler at the system default afterwards (a later
    Ctrl-C killed the process without cleanup). Instead Python keeps its handler, whose wakeup
    byte makes a watcher thread stop the search; the main thread then raises as usual. Only in
    the main thread, with Python's handler in place and no other wakeup fd."""
    solver.parameters.catch_sigint_signal = False
    if threading.current_thread() is not threading.main_thread() or not callable(
        signal.getsignal(signal.SIGINT)
    ):
        yield
        return
    read, write = os.pipe()
    os.set_blocking(write, False)
    old = signal.set_wakeup_fd(write, warn_on_full_buffer=False)
    if old != -1:  # someone else listens (an event loop): leave it theirs
        signal.set_wakeup_fd(old)
        os.close(read)
        os.close(write)
        yield
        return

    def watch() -> None:
        while data := os.read(read, 64):
            if signal.SIGINT in data:
                solver.stop_search()

    thread = threading.Thread(target=watch, name="dlsched-sigint", daemon=True)
    thread.start()
    try:
        yield
    finally:
        signal.set_wakeup_fd(-1)
        os.close(write)  # the watcher reads end-of-file and returns
        thread.join()
        os.close(read)


def run_cpsat(
    model: Any,
    options: SolveOptions,
    *,
    label: str = "cp-sat",
    params: dict[str, Any] | None = None,
) -> CpsatRun:
    """Solve a ``cp_model.CpModel`` with the seed, workers, gap and time limit of ``options``,
    as every backend reads them (a route hands what is left of its deadline:
    :meth:`~dlsched.solvers.deadline.Deadline.solve_options`). ``params`` are CP-SAT
    parameters set before ``options.extra`` (which wins)."""
    from ortools.sat.python import cp_model

    run = Deadline.after(options.time_limit)
    solver = cp_model.CpSolver()
    p = solver.parameters
    p.random_seed = options.seed
    p.num_workers = max(1, options.threads)
    p.relative_gap_limit = options.mip_gap
    p.absolute_gap_limit = 0.0
    limit = options.time_limit
    if limit is not None:
        p.max_time_in_seconds = max(limit, MIN_SOLVER_SECONDS)
    for key, val in {**(params or {}), **options.extra}.items():
        setattr(p, key, val)
    with _stop_on_interrupt(solver):
        code = solver.solve(model, _progress_callback(label, run))
    if code == cp_model.MODEL_INVALID:
        raise InternalError(f"CP-SAT rejected the {label} model: {model.validate()}")
    wall = run.elapsed()
    has = code in (cp_model.OPTIMAL, cp_model.FEASIBLE)
    return CpsatRun(
        status_name=solver.status_name(code),
        has_solution=has,
        infeasible=code == cp_model.INFEASIBLE,
        hit_limit=limit is not None and code != cp_model.OPTIMAL and wall >= 0.95 * limit,
        objective=solver.objective_value if has else None,
        bound=solver.best_objective_bound if code != cp_model.INFEASIBLE else None,
        wall_time=wall,
        workers=p.num_workers,
        value=solver.value,
    )


__all__ = ["CpsatRun", "load_cpsat", "run_cpsat"]
