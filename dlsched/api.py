"""The toolkit in a few calls: what a notebook or a script types, and the path the ``dlsched``
command takes.

>>> import dlsched
>>> out = dlsched.solve("hare/toy-2gpu", "exact", time_limit=30)
>>> str(out.status), out.objective
('optimal', 13.5)

- :func:`load`, :func:`instances`, :func:`generate`: instances, bundled, from a file or drawn;
- :func:`methods`: a family's methods as a table;
- :func:`solve`: one method, its verified :class:`~dlsched.result.Outcome` (``.plot()``,
  ``.to_frame()``);
- :func:`compare`: methods against a reference, with their ratios and guarantees
  (:func:`dlsched.plotting.plot_ratios` draws the ratios of several instances);
- :func:`verify`: the papers' theorems checked on seeded instances, in this process.

Every method runs as on the command line: under a time limit
(:class:`~dlsched.solvers.deadline.Deadline`), its answer re-verified by the family's checker
(:func:`dlsched.result.verified_outcome`). A bad argument (an unknown family or method, a
parameter the method does not take) raises a one-line :class:`~dlsched.errors.OptionError`.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd

    from dlsched.bounds import Comparison
    from dlsched.result import Outcome

from dlsched.api_models import model, programs, solve_model  # the papers' programs
from dlsched.errors import OptionError
from dlsched.solvers.base import DEFAULT_TIME_LIMIT  # seconds, when solve() is given none

#: The time limit of :func:`verify`, per method and instance (``dlsched verify``'s default).
VERIFY_TIME_LIMIT = 60.0


def load(instance: Any) -> Any:
    """An instance: a bundled name (``"hare/toy-2gpu"``, see :func:`instances`), a path to a
    JSON file, or an instance already loaded (returned as it is).

    >>> load("placement/liu2024-motivating").num_workers
    4
    """
    if isinstance(instance, str | os.PathLike):
        from dlsched.instances import load as load_file

        return load_file(instance)
    return instance


def instances(family: str | None = None) -> list[str]:
    """The bundled instances' names (``family/name``), sorted; only ``family``'s if given.

    >>> instances("elastic")[0]
    'elastic/intro-cifar10'
    """
    from dlsched import families
    from dlsched.instances import bundled

    if family is None:
        return bundled()
    families.get(family)  # OptionError for an unknown family
    return [name for name in bundled() if name.startswith(f"{family}/")]


def generate(family: str, jobs: int, gpus: int | None = None, seed: int = 0, **params: Any) -> Any:
    """A random instance of ``family`` with ``jobs`` jobs on a cluster of ``gpus`` (its GPUs,
    or servers; required), drawn from ``seed``; ``params`` are the family generator's
    (``dlsched generate``). The former ``workers=`` is refused with a line naming ``gpus=``.

    >>> inst = generate("hare", jobs=3, gpus=2, seed=1)
    >>> inst.num_jobs, inst.num_gpus
    (3, 2)
    """
    from dlsched import families

    if "workers" in params:
        raise OptionError("workers", params["workers"], "is now gpus= (the cluster size)")
    if gpus is None:
        raise OptionError("gpus", gpus, "give the cluster size (GPUs, servers)")
    return families.get(family).generate(jobs, gpus, seed, **params)


def methods(family: str) -> pd.DataFrame:
    """The methods of ``family``, one row each: ``name``, ``summary``, ``exact`` (certifies
    an optimum), ``params`` (the parameter names :func:`solve` passes it), ``rounds`` (the
    relaxation a rounding method rounds, else empty) and ``guarantee`` (with its reference).

    >>> table = methods("placement")
    >>> table.loc[table.exact, "name"].tolist()
    ['exact', 'exhaustive']
    """
    import pandas as pd

    from dlsched.models import methods as family_methods

    rows = [
        {
            "name": name,
            "summary": m.summary,
            "exact": m.exact,
            "params": m.params,
            "rounds": m.rounds,
            "guarantee": m.guarantee,
        }
        for name, m in family_methods(family).items()
    ]
    return pd.DataFrame(rows, columns=["name", "summary", "exact", "params", "rounds", "guarantee"])


def solve(
    instance: Any,
    method: str = "exact",
    *,
    time_limit: float | None = DEFAULT_TIME_LIMIT,
    seed: int = 0,
    threads: int = 1,
    mip_gap: float = 0.0,
    bound: bool = False,
    **params: Any,
) -> Outcome:
    """Run ``method`` of the instance's family (:func:`methods` lists them) and return its
    verified :class:`~dlsched.result.Outcome`: status, objective, bound, gap, the solution and
    the details. ``params`` are the method's parameters (``route="cpsat"``,
    ``category=(3, 1)``, ...); ``time_limit`` counts model building (None: no limit).
    ``bound=True``: a heuristic of an online family also computes the certified flow-time
    bound (``details["flow_time_bound_s"]``, its gap, ``details["bound_time"]``: its
    seconds, apart from ``wall_time``); off, it reports its own run (status feasible, no gap).

    >>> out = solve("elastic/intro-cifar10", "exact")
    >>> str(out.status), out.objective
    ('optimal', 25.0)
    """
    from dlsched.models import MethodOptions, run_method
    from dlsched.solvers.base import SolverSettings

    settings = SolverSettings(seed=seed, threads=threads, mip_gap=mip_gap)
    options = MethodOptions(settings, params, time_limit=time_limit, bound=bound)
    return run_method(load(instance), method, options)


def compare(
    instance: Any,
    methods: str | Sequence[str],
    reference: str = "exact",
    *,
    time_limit: float | None = DEFAULT_TIME_LIMIT,
    seed: int = 0,
    as_frame: bool = True,
    bound: bool = False,
) -> pd.DataFrame | list[Comparison]:
    """Run ``reference`` (the certified optimum, or its certified lower bound when stopped by
    the time limit: ``reference_kind``) and each of ``methods`` on ``instance``, each under
    ``time_limit``: one row per method, the reference's first, with its ``ratio`` to the
    reference, the guarantee a theorem gives it (``guarantee``, ``holds``) and the instance's
    number of ``jobs``. Several instances' frames concatenated are what
    :func:`dlsched.plotting.plot_ratios` draws. ``as_frame=False``: the records themselves
    (:class:`~dlsched.bounds.Comparison`, what ``dlsched compare`` prints). Every name is
    checked before anything runs. ``bound=True``: the heuristics of an online family also give
    their flow time's gap to the certified bound (``flow_time_gap``), computed once for the
    instance and shared (``bound_time``: the seconds each method spent on it).

    >>> frame = compare("hare/toy-2gpu", ["hare", "relaxation"])
    >>> frame[["reference_kind", "reference"]].iloc[0].to_dict()
    {'reference_kind': 'optimum', 'reference': 13.5}
    >>> frame[["method", "status", "ratio"]].round(4).values.tolist()
    [['exact', 'optimal', 1.0], ['hare', 'feasible', 1.1852], ['relaxation', 'bound', 0.8519]]
    """
    from dlsched.bounds import compare as compare_records
    from dlsched.bounds import to_frame
    from dlsched.models import MethodOptions
    from dlsched.solvers.base import SolverSettings

    inst = load(instance)
    names = [methods] if isinstance(methods, str) else list(methods)
    options = MethodOptions(SolverSettings(seed=seed), time_limit=time_limit, bound=bound)
    records = compare_records(inst, names, reference, options)
    if not as_frame:
        return records
    return to_frame(records)


def verify(
    theorems: str | Sequence[str] = (),
    count: int = 10,
    *,
    jobs: int | None = None,
    gpus: int | None = None,
    first_seed: int = 0,
    time_limit: float | None = VERIFY_TIME_LIMIT,
    seed: int = 0,
    out: str | os.PathLike[str] | None = None,
    processes: int | None = 0,
    scheduler: str | None = None,
    search: bool = False,
    budget: float | None = None,
) -> pd.DataFrame:
    """Check the papers' theorems (``dlsched verify``) on ``count`` seeded instances each:
    ``theorems`` are ids or prefixes (``"002"``, ``"000-has"``; all if none), ``jobs`` and
    ``gpus`` the instances' size (each theorem's default if None). They run in this process
    (``processes=0``), on a Dask LocalCluster of ``processes`` processes (None: the machine's
    cores) or on the Dask ``scheduler`` at that address. The log, the counterexamples
    (shrunk) go to the folder ``out``, resumed if it holds a run already; with no ``out``, to a
    temporary folder removed afterwards. Returns the log's rows: one per instance, method and
    case, ``holds`` False for a violation.

    With ``search=True`` (``dlsched verify --search``), each (theorem, method) is searched for
    its worst case for ``budget`` seconds (default 60), a seeded sample with as many certified
    solves beside it; returns the rows of ``search.json`` instead (``worst_ratio``,
    ``sample_worst_ratio``, ``solves``, ``violated``, ``instance``, ...).

    >>> rows = verify("002-thm4", count=2)
    >>> len(rows), int(rows.holds.eq(False).sum())  # rows, violations
    (6, 0)
    """
    import pandas as pd

    from dlsched.solvers.base import SolveOptions
    from dlsched.verify import select
    from dlsched.verify.runner import LOG, VerifyOptions, read_log, run

    chosen = select([theorems] if isinstance(theorems, str) else list(theorems))
    options = VerifyOptions(
        count=count,
        first_seed=first_seed,
        jobs=jobs,
        gpus=gpus,
        solve=SolveOptions(time_limit=time_limit, seed=seed, threads=1),
        processes=processes,
        scheduler=scheduler,
        progress=False,
    )
    where = tempfile.TemporaryDirectory(prefix="dlsched-verify-") if out is None else None
    with where or contextlib.nullcontext(os.fspath(out)) as folder:  # type: ignore[arg-type]
        if search or budget is not None:
            from dlsched.verify.search import command, read_rows

            command(chosen, Path(folder), options, search, budget)
            return pd.DataFrame(read_rows(Path(folder)))
        run(chosen, folder, options)
        return pd.DataFrame(read_log(Path(folder) / LOG))


__all__ = [
    "DEFAULT_TIME_LIMIT",
    "VERIFY_TIME_LIMIT",
    "compare",
    "generate",
    "instances",
    "load",
    "methods",
    "model",
    "programs",
    "solve",
    "solve_model",
    "verify",
]
