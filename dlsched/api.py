"""The toolkit in a few calls: what a notebook or a script types, and the path the ``dlsched``
command takes.

>>> import dlsched
>>> out = dlsched.solve("hare/toy-2gpu", "exact", time_limit=30)
>>> str(out.status), out.objective
('optimal', 13.5)

- :func:`load`, :func:`list_instances`, :func:`generate`: instances, bundled, from a file or
  drawn;
- :func:`methods`: a family's methods as a table;
- :func:`solve`: one method, its verified :class:`~dlsched.result.Outcome` (``.plot()``,
  ``.to_frame()``);
- :func:`compare`: methods against a reference, with their ratios and guarantees
  (:func:`dlsched.plotting.plot_ratios` draws the ratios of several instances);
- :func:`verify_theorems`: the papers' theorems checked on seeded instances, in this process;
- :func:`search`: the worst case of any method (its worst ratio to the certified optimum, the
  instance that shows it).

``list_instances`` and ``verify_theorems`` are also ``dlsched.api.instances`` and
``dlsched.api.verify`` (the commands' names); at the top level ``dlsched.instances`` and
``dlsched.verify`` are the subpackages of those names.

Every method runs as on the command line: under a time limit
(:class:`~dlsched.solvers.deadline.Deadline`), its answer re-verified by the family's checker
(:func:`dlsched.result.verified_outcome`). Every argument is checked before any work
(:mod:`dlsched.arguments`): a value of the wrong type raises a one-line :class:`TypeError`
naming the argument, an impossible one (an unknown family or method, a parameter the method
does not take, a negative count) a one-line :class:`~dlsched.errors.OptionError`, a bad
instance an :class:`~dlsched.errors.InstanceError`.
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

from dlsched import arguments
from dlsched.errors import OptionError
from dlsched.solvers.base import DEFAULT_TIME_LIMIT  # seconds, when solve() is given none

#: The time limit of :func:`verify`, per method and instance (``dlsched verify``'s default).
VERIFY_TIME_LIMIT = 60.0


def load(instance: Any) -> Any:
    """An instance: a bundled name (``"hare/toy-2gpu"``, see :func:`list_instances`), a path
    to a JSON file, a dict as in such a file (validated by its family), or an instance already
    loaded (returned as it is). Anything else is a TypeError.

    >>> load("placement/liu2024-motivating").num_workers
    4
    """
    from dlsched import families

    if isinstance(instance, str | os.PathLike):
        from dlsched.instances import load as load_file

        arguments.check_lengths("instance", os.fspath(instance))  # type: ignore[arg-type]
        return load_file(instance)
    if isinstance(instance, dict):
        from dlsched.instances import from_dict

        return from_dict(instance, "argument instance")
    # an instance: of a family's own types (a look-alike with a family attribute is not one)
    family = getattr(instance, "family", None) if not isinstance(instance, type) else None
    home = families.REGISTRY.get(family) if isinstance(family, str) else None
    if home is None or not type(instance).__module__.startswith(f"{home}."):
        raise arguments.wrong_type(
            "instance", instance, "a bundled name, a path, a dict or an instance"
        )
    return instance


def list_instances(family: str | None = None) -> list[str]:
    """The bundled instances' names (``family/name``), sorted; only ``family``'s if given
    (``dlsched instances list``).

    >>> list_instances("elastic")[0]
    'elastic/intro-cifar10'
    """
    from dlsched import families
    from dlsched.instances import bundled

    if family is None:
        return bundled()
    families.get(arguments.text("family", family))  # OptionError for an unknown family
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

    families.get(arguments.text("family", family))
    arguments.integer("jobs", jobs, 1)
    arguments.integer("gpus", gpus, 1, none=True)
    arguments.seed("seed", seed)
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

    from dlsched import families
    from dlsched.models import methods as family_methods

    families.get(arguments.text("family", family))
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
    method: Any = "exact",
    *,
    time_limit: float | None = DEFAULT_TIME_LIMIT,
    seed: int = 0,
    threads: int = 1,
    mip_gap: float = 0.0,
    bound: bool = False,
    start: float | None = None,
    **params: Any,
) -> Outcome:
    """Run ``method`` of the instance's family (:func:`methods` lists them) and return its
    verified :class:`~dlsched.result.Outcome`: status, objective, bound, gap, the solution and
    the details. ``method`` may be your own (docs/user-methods.md): a function ``instance ->
    solution`` or an online policy, passed itself (registered under a readable name,
    :func:`register`), or named by ``"path/to/file.py:function"`` or
    ``"package.module:function"``; what it does wrong is a
    :class:`~dlsched.errors.UserCodeError` (``user_traceback``: its own frames). ``params``
    are the method's parameters (``route="cpsat"``, ``category=(3, 1)``, ...);
    ``time_limit`` counts model building (None: no limit), from ``start`` if given (a
    ``time.perf_counter()`` reading already past, such as
    :func:`dlsched.solvers.deadline.process_start`: the command line counts its whole
    process), else from when the method starts.
    ``bound=True``: a heuristic of an online family also computes the certified flow-time
    bound (``details["flow_time_bound_s"]``, its gap, ``details["bound_time"]``: its
    seconds, apart from ``wall_time``); off, it reports its own run (status feasible, no gap).

    >>> out = solve("elastic/intro-cifar10", "exact")
    >>> str(out.status), out.objective
    ('optimal', 25.0)
    """
    from dlsched import usercode
    from dlsched.models import MethodOptions, run_method
    from dlsched.solvers.base import SolverSettings

    inst = load(instance)
    method = usercode.as_names(inst.family, [method])[0]
    arguments.text("method", method)
    arguments.settings(time_limit, seed, threads, mip_gap)
    arguments.flag("bound", bound)
    if start is not None:
        arguments.real("start", start, "a time.perf_counter() reading or None")
    params = arguments.method_params(params)
    settings = SolverSettings(seed=seed, threads=threads, mip_gap=mip_gap)
    options = MethodOptions(settings, params, time_limit=time_limit, bound=bound, start=start)
    return run_method(inst, method, options)


def compare(
    instance: Any,
    methods: Any,
    reference: Any = "exact",
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
    number of ``jobs``. ``methods`` is a list of names or one string of names separated by
    commas (``"hare,relaxation"``, as on the command line). Several instances' frames
    concatenated are what :func:`dlsched.plotting.plot_ratios` draws. ``as_frame=False``: the
    records themselves (:class:`~dlsched.bounds.Comparison`, what ``dlsched compare``
    prints). A method (or the reference) may be your own, passed itself or named by its spec
    (:func:`solve`); one that fails is a record of status ``error`` with its message and
    traceback (``error``, ``traceback``), the others' records still made.
    Every name is checked before anything runs. ``bound=True``: the heuristics of an
    online family also give their flow time's gap to the certified bound (``flow_time_gap``),
    computed once for the instance and shared (``bound_time``: the seconds each method spent on
    it).

    >>> frame = compare("hare/toy-2gpu", ["hare", "relaxation"])
    >>> frame[["reference_kind", "reference"]].iloc[0].to_dict()
    {'reference_kind': 'optimum', 'reference': 13.5}
    >>> frame[["method", "status", "ratio"]].round(4).values.tolist()
    [['exact', 'optimal', 1.0], ['hare', 'feasible', 1.1852], ['relaxation', 'bound', 0.8519]]
    """
    from dlsched import usercode
    from dlsched.bounds import compare as compare_records
    from dlsched.bounds import to_frame
    from dlsched.models import MethodOptions
    from dlsched.solvers.base import SolverSettings

    inst = load(instance)
    if not isinstance(methods, str):
        methods = usercode.as_names(inst.family, list(methods) if _many(methods) else [methods])
    names = arguments.names("methods", methods)
    reference = usercode.as_names(inst.family, [reference])[0]
    arguments.text("reference", reference)
    arguments.seconds("time_limit", time_limit)
    arguments.seed("seed", seed)
    arguments.flag("as_frame", as_frame)
    arguments.flag("bound", bound)
    options = MethodOptions(SolverSettings(seed=seed), time_limit=time_limit, bound=bound)
    records = compare_records(inst, names, reference, options)
    if not as_frame:
        return records
    return to_frame(records)


def _many(value: Any) -> bool:
    """Whether ``value`` is several methods (a list, a tuple), not one (a function, a
    policy object)."""
    return isinstance(value, list | tuple)


def register(
    obj: Any,
    *,
    family: str,
    name: str | None = None,
    guarantee: Any = None,
    summary: str = "",
) -> str:
    """Register your own method of ``family`` under ``name`` and return the name: every call
    and command of this process (:func:`methods`, :func:`solve`, :func:`compare`, ``dlsched
    methods``) then lists and runs it like a shipped one. ``obj`` is a function ``instance ->
    solution`` (an offline rule: the family's solution object, or the form ``dlsched solve
    --json`` prints under ``solution``) or an online policy (a class, or an object with
    ``decide``); ``guarantee`` a number or a function of the instance bounding its ratio to the
    optimum, which ``compare`` checks (``holds``). See docs/user-methods.md.

    >>> def all_on_gpu0(instance):
    ...     tasks, now = [], 0.0
    ...     for job in instance.jobs:
    ...         now = max(now, job.arrival)
    ...         for r in range(job.rounds):
    ...             for k in range(job.tasks_per_round):
    ...                 tasks.append({"job": job.name, "round": r, "index": k, "gpu": 0,
    ...                               "start": now})
    ...                 now += job.train_time[0] + job.sync_time[0]
    ...     return {"tasks": tasks}
    >>> register(all_on_gpu0, family="hare", name="gpu0", guarantee=10)
    'gpu0'
    >>> out = solve("hare/toy-2gpu", "gpu0")
    >>> str(out.status), out.objective
    ('feasible', 32.0)
    """
    from dlsched import usercode

    return usercode.register(obj, family=family, name=name, guarantee=guarantee, summary=summary)


def verify_theorems(
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

    >>> rows = verify_theorems("002-thm4", count=2)
    >>> len(rows), int(rows.holds.eq(False).sum())  # rows, violations
    (6, 0)
    """
    keys = arguments.verify_arguments(locals())  # before any import or work
    import pandas as pd

    from dlsched.solvers.base import SolveOptions
    from dlsched.verify import select
    from dlsched.verify.runner import LOG, VerifyOptions, read_log, run

    try:
        chosen = select(keys)
    except OptionError as e:  # select names the command line's THEOREM
        raise OptionError("theorems", e.value, e.reason) from None
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
            from dlsched.verify.runner import read_rows
            from dlsched.verify.search import command

            command(chosen, Path(folder), options, search, budget)
            return pd.DataFrame(read_rows(Path(folder)))
        run(chosen, folder, options)
        return pd.DataFrame(read_log(Path(folder) / LOG))


def search(
    method: Any,
    family: str,
    *,
    guarantee: Any = None,
    budget: float = 60.0,
    processes: int | None = 0,
    scheduler: str | None = None,
    out: str | os.PathLike[str] | None = None,
    seed: int = 0,
    jobs: int | None = None,
    gpus: int | None = None,
    time_limit: float | None = VERIFY_TIME_LIMIT,
) -> dict[str, Any]:
    """Search for the instance of ``family`` on which ``method`` is furthest from the
    certified optimum (``dlsched search``), for ``budget`` seconds in all: the lanes, moves,
    CMA-ES, certification, shrinking, log and resume of ``dlsched verify --search``, on a
    record made for the method (:mod:`dlsched.verify.user`: the family's draws, exact
    reference and shrinking). ``method`` is a method's name (:func:`methods`, a registered
    name, or a spec ``"file.py:function"``) or a Python object, registered first
    (``dlsched.register``). ``guarantee``: None (the worst ratio is reported, per size), a
    number or a function of the instance; a ratio above it is a violation, shrunk and saved.
    ``jobs``, ``gpus``: the size of the seeded draws (the search grows candidates to 3 times
    the jobs and twice the GPUs); ``seed`` the search's; ``time_limit`` each solve's. It runs
    in this process (``processes=0``), on ``processes`` Dask workers (None: the machine's
    cores) or on the Dask ``scheduler``. The log and the instances found go to the folder
    ``out`` (resumed when it holds a search of the same method); with no ``out``, to a
    temporary folder removed afterwards.

    Returns the row of ``DIR/search.json``: ``worst_ratio``, ``sample_worst_ratio``,
    ``solves``, ``seconds``, ``violated``, ``instance`` (the worst instance's file),
    ``minimal_instance`` (its shrunk violation's), ``sizes`` (per size: ``jobs``, ``gpus``,
    ``worst_ratio``, ``instance``), ...; with no ``out``, each ``instance`` is the instance
    itself (its file is gone).
    """
    arguments.search_arguments(locals())  # before any import or work
    from dlsched.solvers.base import SolveOptions
    from dlsched.verify.runner import VerifyOptions
    from dlsched.verify.search import SearchOptions
    from dlsched.verify.user_search import prepare, run

    theorem = prepare(family, method, guarantee, "method")
    options = VerifyOptions(
        jobs=jobs,
        gpus=gpus,
        solve=SolveOptions(time_limit=time_limit, seed=0, threads=1),
        processes=processes,
        scheduler=scheduler,
        progress=False,
    )
    where = tempfile.TemporaryDirectory(prefix="dlsched-search-") if out is None else None
    with where or contextlib.nullcontext(os.fspath(out)) as folder:  # type: ignore[arg-type]
        row = run(theorem, Path(folder), options, SearchOptions(float(budget), seed=seed))
        return row if out is not None else _with_instances(row)


def _with_instances(row: dict[str, Any]) -> dict[str, Any]:
    """``row`` with each instance file it names replaced by the instance (loaded)."""
    out = dict(row)
    for key in ("instance", "minimal_instance"):
        if out.get(key):
            out[key] = load(out[key])
    out["sizes"] = [{**s, "instance": load(s["instance"])} for s in row.get("sizes", [])]
    return out


#: The names of :func:`list_instances` and :func:`verify_theorems` on the command line
#: (``dlsched instances``, ``dlsched verify``), kept here; at the top level of the package
#: these names are the subpackages :mod:`dlsched.instances` and :mod:`dlsched.verify`.
instances = list_instances
verify = verify_theorems


__all__ = [
    "DEFAULT_TIME_LIMIT",
    "VERIFY_TIME_LIMIT",
    "compare",
    "generate",
    "instances",
    "list_instances",
    "load",
    "methods",
    "register",
    "search",
    "solve",
    "verify",
    "verify_theorems",
]
