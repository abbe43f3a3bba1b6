"""The toolkit in a few calls: what a notebook or a script types.

>>> import dlsched
>>> out = dlsched.solve("hare/toy-2gpu", "exact", time_limit=30)
>>> str(out.status), out.objective
('optimal', 13.5)

Every call goes through the same path as the ``dlsched`` command: the family's method under a
time limit (:class:`~dlsched.solvers.deadline.Deadline`), its answer re-verified by the
family's checker (:func:`dlsched.result.verified_outcome`).
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from dlsched.result import Outcome

from dlsched.api_models import model, programs, solve_model  # the papers' programs
from dlsched.solvers.base import DEFAULT_TIME_LIMIT  # seconds, when solve() is given none


def load(instance: Any) -> Any:
    """An instance: a bundled name (``"hare/toy-2gpu"``, see ``dlsched instances list``), a
    path to a JSON file, or an instance already loaded (returned as it is)."""
    if isinstance(instance, str | os.PathLike):
        from dlsched.instances import load as load_file

        return load_file(instance)
    return instance


def solve(
    instance: Any,
    method: str = "exact",
    *,
    time_limit: float | None = DEFAULT_TIME_LIMIT,
    seed: int = 0,
    threads: int = 1,
    mip_gap: float = 0.0,
    **params: Any,
) -> Outcome:
    """Run ``method`` of the instance's family (``dlsched methods FAMILY`` lists them) and
    return its verified :class:`~dlsched.result.Outcome`: status, objective, bound, gap, the
    solution and the details. ``params`` are the method's parameters (``route="cpsat"``,
    ``category=(3, 1)``, ...); ``time_limit`` counts model building (None: no limit)."""
    from dlsched.models import MethodOptions, run_method
    from dlsched.solvers.base import SolveOptions

    solve_options = SolveOptions(time_limit=time_limit, seed=seed, threads=threads, mip_gap=mip_gap)
    return run_method(load(instance), method, MethodOptions(solve_options, params))


__all__ = ["DEFAULT_TIME_LIMIT", "load", "model", "programs", "solve", "solve_model"]
