"""Resumable sweeps: :func:`~dlsched.bounds.comparisons.compare` over many instances, in this
process or on Dask (:mod:`dlsched.runner`, the runner ``dlsched verify`` uses), one JSON line
per record in a :mod:`~dlsched.bounds.log`, each keyed so that a rerun runs only what is
missing."""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from contextlib import ExitStack
from pathlib import Path
from typing import Any

from dlsched import usercode
from dlsched.bounds.comparisons import Comparison, against_reference, check_methods
from dlsched.bounds.counterexample import save_counterexample
from dlsched.bounds.log import append_line, locked_log, parse_record, repair_tail
from dlsched.instances import instance_hash
from dlsched.models import MethodOptions
from dlsched.runner import (
    IN_PROCESS,
    Call,
    Pool,
    RunnerOptions,
    Watchdog,
    check_scheduler,
    progress_bar,
)
from dlsched.solvers.progress import say

#: The fields of a sweep record that key it: a rerun skips a (instance, method) pair whose key is
#: already in the file, and runs every other pair.
SWEEP_KEY = ("instance_hash", "method", "reference_method", "time_limit", "seed")

_Key = tuple[Any, ...]
#: One instance's task: what to run on it (methods, and whether the reference's own record).
_Task = tuple[Any, tuple[str, ...], bool]


def sweep(
    instances: Iterable[Any],
    methods: Sequence[str],
    path: str | Path,
    reference: str = "exact",
    options: MethodOptions | None = None,
    counterexamples: str | Path | None = None,
    *,
    runner: RunnerOptions = IN_PROCESS,
    pool: Pool | None = None,
) -> list[Comparison]:
    """Compare over many instances, appending one JSON line per record to ``path``. Each line
    carries its key (instance hash, method, reference method, time limit, seed), so a rerun
    resumes: it runs only the (instance, method) pairs missing under the same options, and the
    reference again only when some method is missing (its own record is written once per
    instance and key). An instance is one call (the reference, then its missing methods), run
    where ``runner`` says (in this process by default; ``processes``, ``scheduler``: on Dask,
    see :mod:`dlsched.runner`) or on ``pool`` when given (left open); this process alone writes
    the file, each finished task's records in one write and one fsync, so a kill at any moment
    loses only the tasks still running and a rerun repeats no record. The file is locked for the
    whole sweep (a second sweep on it fails at once) and a torn last line left by a killed sweep
    is repaired. Any record whose guarantee fails is also saved as a counterexample (instance +
    record) under ``counterexamples``, before the record is written. Every method name and the
    reference are checked on the first instance before the file is opened, and a file that is
    not wholly sweep records is refused untouched. Returns the new records only, in the order
    they were written."""
    path = Path(path)
    options = options or MethodOptions()
    insts = list(instances)
    if not insts:
        return []
    check_methods(insts[0].family, methods, reference)
    if pool is None:
        check_scheduler(runner)  # reachable before anything is written
    with locked_log(path) as fd, ExitStack() as stack:
        tasks = _plan(insts, methods, reference, options, _done_keys(path, fd))
        if not tasks:
            return []
        if pool is None:
            needed = worker_modules(insts[0].family, [reference, *methods])
            pool = stack.enter_context(Pool(runner, needed))
        return _run(tasks, reference, options, counterexamples, fd, pool, runner)


def _run(
    tasks: list[_Task],
    reference: str,
    options: MethodOptions,
    counterexamples: str | Path | None,
    fd: int,
    pool: Pool,
    runner: RunnerOptions,
) -> list[Comparison]:
    """Run the tasks on ``pool``, appending each finished task's records to ``fd``."""
    extra = {"time_limit": options.time_limit, "seed": options.solve.seed}
    names = [reference, *(m for _, todo, _ in tasks for m in todo)]
    users = usercode.portable(tasks[0][0].family, names)  # the user's methods travel along
    calls: list[Call] = [
        (compare_task, (i, todo, reference, options, ref, users)) for i, todo, ref in tasks
    ]
    out: list[Comparison] = []

    def stuck(n: int, why: str) -> list[Comparison]:  # no record: it runs again on resume
        say(f"{instance_hash(tasks[n][0])}: {why}; no record written (a rerun tries it again)")
        return []

    watchdog = Watchdog.past(options.time_limit, stuck)
    with progress_bar(len(calls), "sweep", runner) as bar:
        for finished in pool.map(calls, [(todo, ref) for _, todo, ref in tasks], watchdog):
            text = []
            for n, records in finished:
                for r in records:
                    record = {**r.to_json(), **extra}
                    if r.holds is False and counterexamples is not None:
                        save_counterexample(tasks[n][0], record, counterexamples)
                    text.append(json.dumps(record) + "\n")
                out += records
            if text:  # a task's records in one write and one fsync
                append_line(fd, "".join(text))
            bar.update(len(finished))
    return out


def compare_task(
    instance: Any,
    methods: Sequence[str],
    reference: str,
    options: MethodOptions,
    with_reference: bool,
    users: Sequence[Any] = (),
) -> list[Comparison]:
    """One instance's records (a worker's task): the reference's (when ``with_reference``),
    then one per method; ``users``: the user's methods to register here first
    (:func:`dlsched.usercode.portable`)."""
    usercode.install(users)
    return list(against_reference(instance, methods, reference, options, with_reference))


def _plan(
    instances: Sequence[Any],
    methods: Sequence[str],
    reference: str,
    options: MethodOptions,
    done: set[_Key],
) -> list[_Task]:
    """Each instance with the methods missing from ``done`` and whether its reference record is;
    an instance with nothing missing is left out, and one given twice runs once."""
    limit, seed = options.time_limit, options.solve.seed
    tasks = []
    for inst in instances:
        h = instance_hash(inst)

        def key(method: str, h: str = h) -> _Key:
            return (h, method, reference, limit, seed)

        todo = tuple(m for m in dict.fromkeys(methods) if m != reference and key(m) not in done)
        with_reference = key(reference) not in done
        if todo or with_reference:
            tasks.append((inst, todo, with_reference))
            done.update(key(m) for m in (*todo, reference))
    return tasks


def worker_modules(family: str, methods: Sequence[str]) -> list[str]:
    """The modules a worker imports to run ``methods`` of ``family``: this one, the family's,
    each method's own (a method named by ``"module:function"`` is not imported here), and
    :data:`~dlsched.solvers.MODEL_MODULES`."""
    from dlsched import families
    from dlsched.models import find_method
    from dlsched.solvers import MODEL_MODULES

    found = [__name__, families.REGISTRY[family], *MODEL_MODULES]
    for name in methods:
        run = find_method(family, name).run
        module = run.partition(":")[0] if isinstance(run, str) else getattr(run, "__module__", None)
        if isinstance(module, str) and module != "__main__":
            found.append(module)
    return list(dict.fromkeys(found))


def _record_key(record: dict[str, Any]) -> _Key:
    # A record written before keys existed has no "seed" (None never equals a seed): rerun.
    return tuple(record.get(f) for f in SWEEP_KEY)


def _done_keys(path: Path, fd: int) -> set[_Key]:
    """The keys of the complete records in ``path``, after repairing a torn last line."""
    lines = repair_tail(path, fd).split(b"\n")
    done: set[_Key] = set()
    for n, line in enumerate(lines, 1):
        if line.strip():
            done.add(_record_key(parse_record(path, n, line)))
    return done


__all__ = ["SWEEP_KEY", "compare_task", "sweep", "worker_modules"]
