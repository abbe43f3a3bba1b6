"""``dlsched verify``: every selected theorem on ``count`` seeded instances, in this process or
on Dask (:mod:`dlsched.runner`, the runner ``dlsched sweep`` uses too: consecutive instances of a
theorem grouped into tasks, each instance's rows streamed back as its task returns); one JSON
line per comparison, resumable after a kill at any moment; violations saved, then shrunk to a
smallest counterexample.

The log is :mod:`dlsched.bounds`' (locked for the whole run, each write fsynced, a torn last
line repaired) and its keys are the sweep's plus the theorem and the sub-case:
(theorem, case, instance hash, method, reference method, time limit, seed). Every row says how
many rows its instance has (``rows``), so an instance whose rows were cut short by a kill runs
again and only its missing rows are appended.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable, Iterator, Sequence
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
from dlsched.runner import Call, Pool, RunnerOptions, Watchdog, check_scheduler, progress_bar
from dlsched.solvers.base import SolveOptions, SolverSettings
from dlsched.solvers.deadline import NEVER, UNLIMITED, Allowance, Deadline
from dlsched.verify.theorem import Measurement, Theorem, registry

LOG = "verify.jsonl"
COUNTEREXAMPLES = "counterexamples"
#: The rows of ``verify --search`` (one per theorem and method), beside the log.
SEARCH_JSON = "search.json"
KEY = ("theorem", "case", *SWEEP_KEY)


@dataclass(frozen=True, kw_only=True)
class VerifyOptions(RunnerOptions):
    """A verification's instances and solver options; where it runs (``processes``,
    ``scheduler``, ``task_seconds``, ``progress``) is :class:`~dlsched.runner.RunnerOptions`'."""

    count: int = 10
    first_seed: int = 0  # instance k of a theorem is drawn with seed first_seed + k
    jobs: int | None = None  # instance size (None: each theorem's default)
    gpus: int | None = None
    solve: SolveOptions = field(default_factory=lambda: SolveOptions(time_limit=60.0))
    shrink: int = 3  # violations shrunk per (theorem, method)
    shrink_budget: int = 60  # candidate instances tried per shrink


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
    try:
        ms = t.run(inst, MethodOptions(solve=solve.settings, time_limit=solve.time_limit))
    except Exception as e:  # noqa: BLE001 - recorded in the log and the report
        return failed_instance(t, inst, solve, f"{type(e).__name__}: {e}")
    why = t.why_not(inst)
    return [_row(t, inst, m, why, solve, len(ms)) for m in ms]


def failed_instance(t: Theorem, inst: Any, solve: SolveOptions, note: str) -> list[dict[str, Any]]:
    """The one row of an instance that failed (status "error", ``note`` saying why): it runs
    again on resume."""
    m = Measurement("*", None, None, "none", None, None, "error", note=note)
    return [_row(t, inst, m, t.why_not(inst), solve, 1)]


# --- shrinking --------------------------------------------------------------------------------


def violates(theorem: Theorem, inst: Any, method: str, solve: SolveOptions,
             case: Case | None = None) -> dict | None:  # fmt: skip
    """The row of ``method`` violating ``theorem`` on ``inst``, if any (assumptions met); with
    ``case`` (a row's case and details), that sub-case only, replayed (``theorem.replay``)."""
    if not theorem.applies(inst):
        return None
    for r in measure_case(theorem, inst, solve, case):
        if r["method"] == method and r["holds"] is False:
            return r
    return None


def measure_case(theorem: Theorem, inst: Any, solve: SolveOptions,
                 case: Case | None = None) -> list[dict[str, Any]]:  # fmt: skip
    """The rows of ``inst``; with ``case`` (a row's case and details) and a theorem that replays
    its sub-cases, the rows of that sub-case only (none when the measure cannot take it)."""
    if case is not None and theorem.replay is not None:
        return replay_rows(theorem, inst, case, solve)
    return measure_instance(theorem.id, inst, solve, theorem)


Case = tuple[str, dict[str, Any]]  # a row's "case" and "details"


def replay_rows(theorem: Theorem, inst: Any, case: Case, solve: SolveOptions) -> list[dict]:
    """The rows of one recorded sub-case of ``inst`` measured again (``theorem.replay``); none
    when the measure cannot take it (a candidate it refuses is no violation)."""
    assert theorem.replay is not None
    try:
        opts = MethodOptions(solve=solve.settings, time_limit=solve.time_limit)
        ms = theorem.replay(theorem, inst, case[0], case[1], opts)
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
    return shrink_within(theorem, inst, method, solve.settings, solve.time_limit, NEVER, budget,
                         case)  # fmt: skip


def shrink_within(theorem: Theorem, inst: Any, method: str, settings: SolverSettings,
                  time_limit: float | None, deadline: Deadline, budget: int = 60,
                  case: Case | None = None) -> tuple[Any, dict[str, Any] | None, int]:  # fmt: skip
    """:func:`shrink` until ``deadline`` too: each measure given ``settings`` and at most what
    is left of it (and ``time_limit``); nothing started once it has passed."""
    if deadline.passed():  # not started: nothing shrunk
        return inst, None, 0
    current, row = inst, violates(theorem, inst, method, _left(settings, time_limit, deadline),
                                  case)  # fmt: skip
    tries = 0
    if row is None or not theorem.shrinkable:
        return current, row, tries
    progress = True
    while progress and tries < budget and not deadline.passed():
        progress = False
        for cand, cand_case in _candidates(theorem, current, case):
            tries += 1
            solve = _left(settings, time_limit, deadline)
            got = violates(theorem, cand, method, solve, cand_case)
            if got is not None:
                current, row, case, progress = cand, got, cand_case, True
                break
            if tries >= budget or deadline.passed():
                break
    return current, row, tries


def _left(settings: SolverSettings, time_limit: float | None, deadline: Deadline) -> SolveOptions:
    """The options of one measure: ``settings`` and what is left of ``deadline``, at most
    ``time_limit``."""
    return settings.limited(deadline.seconds(cap=time_limit))


def shrink_task(theorem: Theorem, data: dict[str, Any], method: str, solve: SolveOptions,
                budget: int, case: Case | None = None, allowance: Allowance = UNLIMITED,
                ) -> tuple[dict[str, Any], dict[str, Any] | None, int]:  # fmt: skip
    """:func:`shrink` on an instance given as JSON data (a worker's task), until the deadline
    of ``allowance``."""
    deadline = allowance.deadline()
    small, row, tries = shrink_within(theorem, from_dict(data), method, solve.settings,
                                      solve.time_limit, deadline, budget, case)  # fmt: skip
    return to_dict(small), row, tries


def worker_modules(theorems: Iterable[Theorem]) -> list[str]:
    """The modules a worker imports to measure the theorems: this one, those that define the
    theorems' functions, and :data:`~dlsched.solvers.MODEL_MODULES`."""
    from dlsched.solvers import MODEL_MODULES

    found = {__name__, *MODEL_MODULES}
    for t in theorems:
        for fn in (t.generate, t.measure, t.bound, t.assumptions, t.shrink):
            module = getattr(fn, "__module__", None)
            if isinstance(module, str) and module != "__main__":
                found.add(module)
    return sorted(found)


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


def read_rows(directory: Path) -> list[dict[str, Any]]:
    """The rows of ``DIR/search.json`` (none if no search ran there)."""
    path = Path(directory) / SEARCH_JSON
    return json.loads(path.read_text()) if path.exists() else []


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


def file_safe(name: str) -> str:
    """``name`` as part of a file name: every character but letters, digits, ``.``, ``_`` and
    ``-`` made ``_`` (a method named by a spec, ``path/to/file.py:function``, has ``/`` and
    ``:``; the shipped names are unchanged)."""
    return re.sub(r"[^A-Za-z0-9._-]", "_", name)


def counterexample_stem(row: dict[str, Any]) -> str:
    """The file name (without ``.json``) a row's violation is saved under in
    ``counterexamples/``; ``-min`` added for its shrunk copy."""
    case = f"-{row['case']}" if row.get("case") else ""
    return f"{row['theorem']}-{row['instance_hash']}-{file_safe(row['method'])}{case}"


def run(theorems: Sequence[Theorem], directory: str | Path, options: VerifyOptions,
        pool: Pool | None = None, deadline: Deadline = NEVER) -> Summary:  # fmt: skip
    """Run (or resume) a verification into ``directory``: the log ``verify.jsonl``, violations
    and minimal counterexamples under ``counterexamples/``. Returns what this call did. The
    tasks run on ``pool`` when given (left open), else on a pool of ``options``' own. With a
    ``deadline`` (``verify --search``'s sample), no instance is taken up and no shrinking
    started once it has passed (the tasks under way end within their own limit)."""
    if pool is None:  # the scheduler reachable before anything is written
        check_scheduler(options)
    drawn = _instances(theorems, options)  # a size a family refuses: nothing written
    d = Path(directory)
    d.mkdir(parents=True, exist_ok=True)
    cx = d / COUNTEREXAMPLES
    log = d / LOG
    summary = Summary(d)
    with ExitStack() as stack:
        if pool is None:
            pool = stack.enter_context(Pool(options, worker_modules(theorems)))
        _measure(drawn, log, cx, options, pool, summary, deadline)
        summary.minimal = shrink_violations(theorems, d, options, pool, deadline)
    return summary


def _measure(drawn: list[tuple[Theorem, Any]], log: Path, cx: Path, options: VerifyOptions,
             pool: Pool, summary: Summary, deadline: Deadline = NEVER) -> None:  # fmt: skip
    """Every instance of ``drawn`` not complete in ``log``, one task each, until ``deadline``;
    rows appended."""
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
        watchdog = Watchdog.past(
            options.solve.time_limit, lambda n, why: failed_instance(*todo[n], options.solve, why)
        )
        with progress_bar(len(calls), "verify", options) as bar:
            for finished in pool.map(calls, [t.id for t, _ in todo], watchdog, until=deadline):
                text = []
                for n, rows in finished:
                    new = [r for r in rows if row_key(r) not in keys]
                    for r in new:  # saved before the rows: a kill never loses a counterexample
                        if r["holds"] is False:
                            save_counterexample(todo[n][1], r, cx, stem=counterexample_stem(r))
                            summary.violations.append(r)
                    keys.update(row_key(r) for r in new)
                    text += [json.dumps(r) + "\n" for r in new]
                if text:  # a task's rows in one write and one fsync
                    append_line(fd, "".join(text))
                summary.rows += len(text)
                bar.update(len(finished))
                bar.set_postfix(violations=len(summary.violations), refresh=False)
                if deadline.passed():  # the tasks still out are dropped
                    break


def shrink_violations(theorems: Sequence[Theorem], directory: Path, options: VerifyOptions,
                      pool: Pool | None = None, deadline: Deadline = NEVER,
                      ) -> list[Path]:  # fmt: skip
    """Shrink up to ``options.shrink`` violations of each (theorem, method) found in the log
    whose minimal counterexample is not saved yet, until ``deadline``; save each as
    ``<stem>-min.json``."""
    if deadline.passed():
        return []
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
    allowance = Allowance.of(deadline)
    for picked in chosen.values():
        for r in picked:
            if (cx / f"{counterexample_stem(r)}-min.json").exists():
                continue
            data = json.loads((cx / f"{counterexample_stem(r)}.json").read_text())["instance"]
            t = ids[r["theorem"]]
            case = (r.get("case") or "", r.get("details") or {}) if t.replay else None
            args = (t, data, r["method"], options.solve, options.shrink_budget, case, allowance)
            calls.append((shrink_task, args))
            rows.append(r)
    saved = []
    with progress_bar(len(calls), "shrink", options) as bar, ExitStack() as stack:
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
                    saved.append(
                        save_counterexample(inst, record, cx, stem=f"{counterexample_stem(r)}-min")
                    )
                bar.update(1)
            if deadline.passed():  # the tasks still out are dropped
                break
    return saved


__all__ = [
    "UNLIMITED",
    "Allowance",
    "COUNTEREXAMPLES",
    "KEY",
    "LOG",
    "SEARCH_JSON",
    "Summary",
    "VerifyOptions",
    "counterexample_stem",
    "file_safe",
    "failed_instance",
    "measure_case",
    "measure_instance",
    "read_log",
    "read_rows",
    "replay_rows",
    "run",
    "shrink",
    "shrink_violations",
    "shrink_within",
    "violates",
    "worker_modules",
]
