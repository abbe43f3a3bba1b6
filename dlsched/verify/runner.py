"""``dlsched verify``: every selected theorem on ``count`` seeded instances, serially or on Dask
(consecutive instances of a theorem grouped into tasks of about ``TASK_SECONDS``, each instance's
rows streamed back as its task returns); one JSON line per comparison, resumable after a kill at
any moment; violations saved, then shrunk to a smallest counterexample.

The log is :mod:`dlsched.bounds`' (locked for the whole run, each write fsynced, a torn last
line repaired) and its keys are the sweep's plus the theorem and the sub-case:
(theorem, case, instance hash, method, reference method, time limit, seed). Every row says how
many rows its instance has (``rows``), so an instance whose rows were cut short by a kill runs
again and only its missing rows are appended.
"""

from __future__ import annotations

import json
import math
import os
import sys
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dlsched.bounds import (
    SWEEP_KEY,
    append_line,
    locked_log,
    parse_record,
    repair_tail,
    save_counterexample,
)
from dlsched.errors import OptionError
from dlsched.instances import from_dict, instance_hash, to_dict
from dlsched.models import MethodOptions
from dlsched.result import json_safe
from dlsched.solvers.base import SolveOptions
from dlsched.solvers.deadline import Deadline
from dlsched.verify.theorem import Measurement, Theorem, registry

LOG = "verify.jsonl"
COUNTEREXAMPLES = "counterexamples"
KEY = ("theorem", "case", *SWEEP_KEY)

#: Environment of every worker process: one thread per numerical library (no oversubscription).
SINGLE_THREAD = {
    name: "1"
    for name in (
        "OMP_NUM_THREADS",
        "MKL_NUM_THREADS",
        "OPENBLAS_NUM_THREADS",
        "NUMEXPR_MAX_THREADS",
    )
}

#: Dask configuration of the workers the runner starts: one thread per library, and
#: non-daemonic, since exact routes build large models in a child process under their deadline
#: (:mod:`dlsched.solvers.deadline`) and a daemonic process may not have children.
WORKER_CONFIG = {
    "distributed.nanny.pre-spawn-environ": SINGLE_THREAD,
    "distributed.worker.daemon": False,
}

#: Wall time a Dask task aims at: consecutive instances of one theorem are grouped into one task
#: of about this long, from the times their first instances took (:class:`Batcher`). A task of
#: a few milliseconds costs Dask more than it computes.
TASK_SECONDS = 0.3


@dataclass(frozen=True)
class VerifyOptions:
    count: int = 10
    first_seed: int = 0  # instance k of a theorem is drawn with seed first_seed + k
    jobs: int | None = None  # instance size (None: each theorem's default)
    gpus: int | None = None
    solve: SolveOptions = field(default_factory=lambda: SolveOptions(time_limit=60.0))
    workers: int | None = None  # Dask worker processes; None: the machine's cores; 0: serial
    scheduler: str | None = None  # address of an existing Dask scheduler
    shrink: int = 3  # violations shrunk per (theorem, method)
    shrink_budget: int = 60  # candidate instances tried per shrink
    progress: bool = True
    task_seconds: float = TASK_SECONDS  # a Dask task's aim (instances grouped); 0: one each


@dataclass
class Summary:
    directory: Path
    tasks: int = 0  # instances run in this call
    skipped: int = 0  # instances already complete in the log
    rows: int = 0  # rows appended
    violations: list[dict[str, Any]] = field(default_factory=list)
    minimal: list[Path] = field(default_factory=list)


# --- one instance -----------------------------------------------------------------------------


def _row(theorem: Theorem, inst: Any, m: Measurement, why: str | None, solve: SolveOptions,
         count: int) -> dict[str, Any]:  # fmt: skip
    holds = m.verdict(why is None)
    return {
        "theorem": theorem.id,
        "family": theorem.family,
        "instance": inst.name,
        "instance_hash": instance_hash(inst),
        "applies": why is None,
        "why_not": why,
        "method": m.method,
        "case": m.case,
        "status": m.status,
        "value": json_safe(m.value),
        "reference_method": theorem.reference,
        "reference": json_safe(m.reference),
        "reference_kind": m.reference_kind,
        "ratio": json_safe(m.ratio),
        "ratio_infinite": m.ratio is not None and math.isinf(m.ratio),
        "bound": json_safe(m.bound),
        "holds": holds,
        "wall_time": m.wall_time,
        "note": m.note,
        "details": json.loads(json.dumps(dict(m.details), default=str)),
        "rows": count,
        "time_limit": solve.time_limit,
        "seed": solve.seed,
    }


def measure_instance(theorem_id: str, inst: Any, solve: SolveOptions,
                     theorem: Theorem | None = None) -> list[dict[str, Any]]:  # fmt: skip
    """The rows of one instance (the task every worker runs). A failure becomes one row with
    status "error" and the message, so one bad instance never stops a run."""
    t = theorem if theorem is not None else registry()[theorem_id]
    why = t.why_not(inst)
    try:
        ms = t.run(inst, MethodOptions(solve=solve))
    except Exception as e:  # noqa: BLE001 - recorded in the log and the report
        ms = [Measurement("*", None, None, "none", None, None, "error",
                          note=f"{type(e).__name__}: {e}")]  # fmt: skip
    return [_row(t, inst, m, why, solve, len(ms)) for m in ms]


# --- shrinking --------------------------------------------------------------------------------


def violates(theorem: Theorem, inst: Any, method: str, solve: SolveOptions,
             case: Case | None = None) -> dict | None:  # fmt: skip
    """The row of ``method`` violating ``theorem`` on ``inst``, if any (assumptions met); with
    ``case`` (a row's case and details), that sub-case only, replayed (``theorem.replay``)."""
    if not theorem.applies(inst):
        return None
    if case is not None and theorem.replay is not None:
        rows = _replay_rows(theorem, inst, case, solve)
    else:
        rows = measure_instance(theorem.id, inst, solve, theorem)
    for r in rows:
        if r["method"] == method and r["holds"] is False:
            return r
    return None


Case = tuple[str, dict[str, Any]]  # a row's "case" and "details"


def _replay_rows(theorem: Theorem, inst: Any, case: Case, solve: SolveOptions) -> list[dict]:
    assert theorem.replay is not None
    try:
        ms = theorem.replay(theorem, inst, case[0], case[1], MethodOptions(solve=solve))
    except Exception:  # noqa: BLE001 - a candidate the measure cannot take is not a violation
        return []
    return [_row(theorem, inst, m, None, solve, len(ms)) for m in ms]


def _candidates(
    theorem: Theorem, inst: Any, case: Case | None
) -> Iterator[tuple[Any, Case | None]]:
    if case is not None and theorem.shrink_case is not None and theorem.replay is not None:
        for cand, details in theorem.shrink_case(inst, case[1]):
            yield cand, (case[0], dict(details))
    elif theorem.shrink is not None:
        for cand in theorem.shrink(inst):
            yield cand, None


def shrink(theorem: Theorem, inst: Any, method: str, solve: SolveOptions, budget: int = 60,
           case: Case | None = None) -> tuple[Any, dict[str, Any] | None, int]:  # fmt: skip
    """Greedy shrinking: take the first smaller candidate (``theorem.shrink``; or, for a
    sub-case ``case`` of a theorem with ``replay``, ``theorem.shrink_case``, the case kept fixed
    on the smaller instance) on which ``method`` still violates the theorem, until none does or
    ``budget`` candidates were tried. Returns the smallest instance found, its violating row
    and the candidates tried."""
    current, row = inst, violates(theorem, inst, method, solve, case)
    tries = 0
    if row is None or not theorem.shrinkable:
        return current, row, tries
    progress = True
    while progress and tries < budget:
        progress = False
        for cand, cand_case in _candidates(theorem, current, case):
            tries += 1
            got = violates(theorem, cand, method, solve, cand_case)
            if got is not None:
                current, row, case, progress = cand, got, cand_case, True
                break
            if tries >= budget:
                break
    return current, row, tries


def shrink_task(theorem: Theorem, data: dict[str, Any], method: str, solve: SolveOptions,
                budget: int, case: Case | None = None,
                ) -> tuple[dict[str, Any], dict[str, Any] | None, int]:  # fmt: skip
    """:func:`shrink` on an instance given as JSON data (a worker's task)."""
    small, row, tries = shrink(theorem, from_dict(data), method, solve, budget, case)
    return to_dict(small), row, tries


# --- execution --------------------------------------------------------------------------------

Call = tuple[Callable[..., Any], tuple[Any, ...]]


def run_calls(calls: Sequence[Call]) -> list[tuple[Any, float]]:
    """Each call's result with its own wall time, in order (one task: one or more calls)."""
    out = []
    for fn, args in calls:
        started = Deadline.never()
        result = fn(*args)
        out.append((result, started.elapsed()))
    return out


class Batcher:
    """Which consecutive calls form the next task. Calls of the same kind (a theorem) are
    grouped until the task should last ``target`` seconds, judged from the median time of the
    last calls of that kind that finished; a kind not seen yet goes one call per task. A task
    never takes more than 1 / (2 x workers) of the calls not yet submitted, so the last tasks are
    small and the workers finish together. ``target`` 0: one call per task."""

    def __init__(self, kinds: Sequence[Any], workers: int, target: float = TASK_SECONDS) -> None:
        self.kinds, self.workers, self.target = list(kinds), max(1, workers), target
        self.next_index = 0
        self.seen: dict[Any, list[float]] = {}

    def observe(self, kind: Any, seconds: float) -> None:
        times = self.seen.setdefault(kind, [])
        times.append(seconds)
        del times[:-16]

    def size(self, kind: Any) -> int:
        times = self.seen.get(kind)
        if not times or self.target <= 0:
            return 1
        typical = sorted(times)[len(times) // 2]
        share = (len(self.kinds) - self.next_index) // (2 * self.workers)
        return max(1, min(int(self.target / max(typical, 1e-6)), share))

    def take(self) -> list[int]:
        """The indices of the next task (empty when every call was taken)."""
        start = self.next_index
        if start >= len(self.kinds):
            return []
        kind = self.kinds[start]
        end, limit = start + 1, start + self.size(kind)
        while end < min(limit, len(self.kinds)) and self.kinds[end] == kind:
            end += 1
        self.next_index = end
        return list(range(start, end))


def fork_server(modules: Sequence[str]) -> None:
    """Start multiprocessing's fork server (once per process; later calls do nothing) with
    ``modules`` imported and one thread per numerical library, so that the LocalCluster's worker
    processes, forked from it, start with the families already imported: the imports (seconds,
    a task costs milliseconds) are paid once instead of once per worker, and no worker imports
    while the others compute."""
    import multiprocessing
    from multiprocessing import forkserver

    multiprocessing.get_context("forkserver").set_forkserver_preload(list(modules))
    saved = {name: os.environ.get(name) for name in SINGLE_THREAD}
    os.environ.update(SINGLE_THREAD)
    try:
        forkserver.ensure_running()
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def worker_modules(theorems: Iterable[Theorem]) -> list[str]:
    """The modules that define the theorems' functions (what a worker imports to run them)."""
    found = set()
    for t in theorems:
        for fn in (t.generate, t.measure, t.bound, t.assumptions, t.shrink):
            module = getattr(fn, "__module__", None)
            if isinstance(module, str) and module != "__main__":
                found.add(module)
    return sorted(found)


def connect(scheduler: str, timeout: float = 10) -> Any:
    """A Client of the Dask scheduler at ``scheduler``; OptionError naming it if unreachable."""
    from distributed import Client

    try:
        return Client(scheduler, timeout=timeout)
    except (OSError, ValueError, TypeError) as e:
        raise OptionError("--scheduler", scheduler, f"cannot connect: {e}") from None


class Pool:
    """Where tasks run: in this process (``workers == 0``), or on Dask, the cluster started on
    first use (a LocalCluster of ``workers`` processes, or the client of ``scheduler``) and
    shared by every :meth:`map` until the pool is closed."""

    def __init__(self, options: VerifyOptions, preload: Sequence[str] = ()) -> None:
        self.serial = options.workers == 0 and options.scheduler is None
        self.workers, self.scheduler = options.workers, options.scheduler
        self.target = options.task_seconds
        self.preload = ["distributed", "numpy", __name__, *preload]
        self.client: Any = None
        self.cluster: Any = None

    def __enter__(self) -> Pool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def start(self) -> Any:
        """The Dask client (the cluster started on the first call)."""
        import logging

        import dask
        from distributed import Client, LocalCluster

        if self.client is None:
            with dask.config.set(
                {**WORKER_CONFIG, "distributed.worker.multiprocessing-method": "forkserver"}
            ):
                if self.scheduler is not None:
                    self.client = connect(self.scheduler)
                else:
                    fork_server(self.preload)
                    self.cluster = LocalCluster(
                        n_workers=self.workers or os.cpu_count() or 1, threads_per_worker=1,
                        processes=True, dashboard_address=":0", silence_logs=logging.ERROR,
                    )  # fmt: skip
                    self.client = Client(self.cluster)
        return self.client

    def size(self) -> int:
        """Worker processes (those connected to the scheduler; 1 in this process)."""
        if self.serial:
            return 1
        return max(1, len(self.start().scheduler_info().get("workers", {})))

    def map(self, calls: Sequence[Call], kinds: Sequence[Any] | None = None,
            ) -> Iterator[list[tuple[int, Any]]]:  # fmt: skip
        """(index, result) of every call, one list per task as each task finishes; consecutive
        calls of one kind (``kinds``, default all alike) grouped into tasks (:class:`Batcher`)."""
        if not calls:
            return
        batcher = Batcher(kinds if kinds is not None else [0] * len(calls), self.size(),
                          self.target)  # fmt: skip
        if self.serial:
            while picked := batcher.take():
                yield self._finished(batcher, picked, run_calls([calls[i] for i in picked]))
            return
        yield from self._stream(calls, batcher)

    def _stream(self, calls: Sequence[Call], batcher: Batcher) -> Iterator[list[tuple[int, Any]]]:
        """Dask: two tasks in flight per worker, the next submitted as each one finishes."""
        from distributed import as_completed

        client = self.start()
        running: dict[Any, list[int]] = {}
        done = as_completed()

        def submit() -> None:
            if picked := batcher.take():
                fut = client.submit(run_calls, [calls[i] for i in picked], pure=False)
                running[fut] = picked
                done.add(fut)

        for _ in range(2 * batcher.workers):
            submit()
        for fut in done:
            picked = running.pop(fut)
            results = fut.result()
            submit()  # before the client's own work on these results
            yield self._finished(batcher, picked, results)

    @staticmethod
    def _finished(batcher: Batcher, picked: list[int], results: list[tuple[Any, float]],
                  ) -> list[tuple[int, Any]]:  # fmt: skip
        for i, (_, seconds) in zip(picked, results, strict=True):
            batcher.observe(batcher.kinds[i], seconds)
        return [(i, result) for i, (result, _) in zip(picked, results, strict=True)]

    def close(self) -> None:
        if self.client is not None:
            self.client.close()
        if self.cluster is not None:
            self.cluster.close()
        self.client = self.cluster = None


def execute(calls: Sequence[Call], options: VerifyOptions) -> Iterator[tuple[int, Any]]:
    """(index, result) of every call, as each finishes, on a pool of its own."""
    with Pool(options) as pool:
        for finished in pool.map(calls):
            yield from finished


def _bar(total: int, desc: str, options: VerifyOptions) -> Any:
    from tqdm import tqdm

    return tqdm(total=total, desc=desc, unit="inst", file=sys.stderr, disable=not options.progress,
                dynamic_ncols=True, smoothing=0.1)  # fmt: skip


# --- the log ----------------------------------------------------------------------------------


def row_key(row: dict[str, Any]) -> tuple[Any, ...]:
    return tuple(row.get(f) for f in KEY)


def _group(row: dict[str, Any]) -> tuple[Any, ...]:
    """The instance a row belongs to, under the run's options."""
    return (row.get("theorem"), row.get("instance_hash"), row.get("time_limit"), row.get("seed"))


def read_log(path: Path, only: bytes = b"") -> list[dict[str, Any]]:
    """Every complete row of a verify log (a torn last line is ignored, not repaired); with
    ``only``, the rows whose line contains it."""
    if not path.exists():
        return []
    data = path.read_bytes()
    lines = data.split(b"\n")[:-1] if not data.endswith(b"\n") else data.split(b"\n")
    return [
        parse_record(path, n, line)
        for n, line in enumerate(lines, 1)
        if line.strip() and only in line
    ]


def _done(path: Path, fd: int) -> tuple[set[tuple[Any, ...]], dict[tuple[Any, ...], int]]:
    """Keys present, and the instances whose rows are all present (failed ones are not)."""
    rows = [
        parse_record(path, n, line)
        for n, line in enumerate(repair_tail(path, fd).split(b"\n"), 1)
        if line.strip()
    ]
    keys = {row_key(r) for r in rows}
    have: dict[tuple[Any, ...], set[tuple[Any, ...]]] = {}
    want: dict[tuple[Any, ...], int] = {}
    for r in rows:  # an instance that failed (status "error") runs again on resume
        if r.get("status") != "error":
            have.setdefault(_group(r), set()).add(row_key(r))
            want[_group(r)] = int(r.get("rows") or 0)
    complete = {g: len(k) for g, k in have.items() if len(k) >= want[g]}
    return keys, complete


# --- the run ----------------------------------------------------------------------------------


def _instances(theorems: Iterable[Theorem], options: VerifyOptions) -> list[tuple[Theorem, Any]]:
    out = []
    for t in theorems:
        for k in range(options.count):
            try:
                inst = t.instance(options.first_seed + k, options.jobs, options.gpus)
            except OptionError as e:  # the family's generator names its own parameters
                size = f"--jobs {options.jobs or 'default'}, --gpus {options.gpus or 'default'}"
                reason = f"the {t.family} instances of {t.id} cannot have this size ({e})"
                raise OptionError("--jobs/--gpus", size, reason) from None
            out.append((t, inst))
    return out


def _stem(row: dict[str, Any]) -> str:
    case = f"-{row['case']}" if row.get("case") else ""
    return f"{row['theorem']}-{row['instance_hash']}-{row['method']}{case}"


def run(theorems: Sequence[Theorem], directory: str | Path, options: VerifyOptions,
        pool: Pool | None = None) -> Summary:  # fmt: skip
    """Run (or resume) a verification into ``directory``: the log ``verify.jsonl``, violations
    and minimal counterexamples under ``counterexamples/``. Returns what this call did. The
    tasks run on ``pool`` when given (left open), else on a pool of ``options``' own."""
    if pool is None and options.scheduler is not None:  # reachable before anything is written
        connect(options.scheduler).close()
    drawn = _instances(theorems, options)  # a size a family refuses: nothing written
    d = Path(directory)
    d.mkdir(parents=True, exist_ok=True)
    cx = d / COUNTEREXAMPLES
    log = d / LOG
    summary = Summary(d)
    with ExitStack() as stack:
        if pool is None:
            pool = stack.enter_context(Pool(options, worker_modules(theorems)))
        _measure(drawn, log, cx, options, pool, summary)
        summary.minimal = shrink_violations(theorems, d, options, pool)
    return summary


def _measure(drawn: list[tuple[Theorem, Any]], log: Path, cx: Path, options: VerifyOptions,
             pool: Pool, summary: Summary) -> None:  # fmt: skip
    """Every instance of ``drawn`` not complete in ``log``, one task each; rows appended."""
    with locked_log(log) as fd:
        keys, complete = _done(log, fd)
        todo = []
        for t, inst in drawn:
            g = (t.id, instance_hash(inst), options.solve.time_limit, options.solve.seed)
            if g in complete:
                summary.skipped += 1
            else:
                todo.append((t, inst))
        calls: list[Call] = [(measure_instance, (t.id, inst, options.solve, t)) for t, inst in todo]
        summary.tasks = len(calls)
        with _bar(len(calls), "verify", options) as bar:
            for finished in pool.map(calls, [t.id for t, _ in todo]):
                text = []
                for n, rows in finished:
                    new = [r for r in rows if row_key(r) not in keys]
                    for r in new:  # saved before the rows: a kill never loses a counterexample
                        if r["holds"] is False:
                            save_counterexample(todo[n][1], r, cx, stem=_stem(r))
                            summary.violations.append(r)
                    keys.update(row_key(r) for r in new)
                    text += [json.dumps(r) + "\n" for r in new]
                if text:  # a task's rows in one write and one fsync
                    append_line(fd, "".join(text))
                summary.rows += len(text)
                bar.update(len(finished))
                bar.set_postfix(violations=len(summary.violations), refresh=False)


def shrink_violations(theorems: Sequence[Theorem], directory: Path, options: VerifyOptions,
                      pool: Pool | None = None) -> list[Path]:  # fmt: skip
    """Shrink up to ``options.shrink`` violations of each (theorem, method) found in the log
    whose minimal counterexample is not saved yet; save each as ``<stem>-min.json``."""
    cx = directory / COUNTEREXAMPLES
    chosen: dict[tuple[str, str], list[dict[str, Any]]] = {}
    ids = {t.id: t for t in theorems}
    for r in read_log(directory / LOG, only=b'"holds": false'):
        t = ids.get(r["theorem"])
        if r.get("holds") is not False or t is None or not t.shrinkable:
            continue
        picked = chosen.setdefault((r["theorem"], r["method"]), [])
        if len(picked) < options.shrink:
            picked.append(r)
    calls: list[Call] = []
    rows = []
    for picked in chosen.values():
        for r in picked:
            if (cx / f"{_stem(r)}-min.json").exists():
                continue
            data = json.loads((cx / f"{_stem(r)}.json").read_text())["instance"]
            t = ids[r["theorem"]]
            case = (r.get("case") or "", r.get("details") or {}) if t.replay else None
            args = (t, data, r["method"], options.solve, options.shrink_budget, case)
            calls.append((shrink_task, args))
            rows.append(r)
    saved = []
    with _bar(len(calls), "shrink", options) as bar, ExitStack() as stack:
        own = (
            pool
            if pool is not None
            else stack.enter_context(Pool(options, worker_modules(theorems)))
        )
        for finished in own.map(calls, [(r["theorem"], r["method"]) for r in rows]):
            for n, (data, row, tries) in finished:
                r = rows[n]
                if row is not None:
                    record = {**row, "shrunk_from": r["instance_hash"], "shrink_tries": tries}
                    inst = from_dict(data)
                    saved.append(save_counterexample(inst, record, cx, stem=f"{_stem(r)}-min"))
                bar.update(1)
    return saved


__all__ = [
    "COUNTEREXAMPLES",
    "KEY",
    "LOG",
    "Summary",
    "VerifyOptions",
    "Pool",
    "execute",
    "measure_instance",
    "read_log",
    "run",
    "shrink",
    "shrink_violations",
    "violates",
]
