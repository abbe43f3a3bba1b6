"""``dlsched verify THEOREM... --search --budget SECONDS``: for each (claim, method) pair, a
search for the instance that maximizes the claim's ratio, instead of a seeded sample of it.
What it maximizes and how it proposes candidates (moves on the raw instance, simulated
annealing with restarts and a tabu set, CMA-ES over the numbers) is :mod:`.hunt`'s; this module
runs it: :data:`LANES` independent searches of each pair side by side, each worker's task a
lane's *leg* (its batches proposed and certified in the worker for about ``--task-seconds``),
the parent logging each leg as it returns and handing out the lane's next, the budget kept.

**The budget** is the whole command's (:func:`search`): each theorem gets its pairs' part of
what is left when it starts; its pairs' searches :data:`SEARCH_SHARE` of that part, shared
equally (the family's exact worst cases first in each, at most :data:`EXACT_SHARE` of it), the
shrinking at most :data:`SHRINK_SHARE`, and the seeded sample what is left. Every solve is
given at most what is left of its stage (and ``--time-limit``), no candidate is started once
its stage has passed, and a worker's task counts the time it waited for a worker
(:class:`~dlsched.verify.runner.Allowance`).

**Log and resume.** Each certified candidate is one line of ``DIR/search.jsonl`` (its lane,
batch and slot, the point, the method's rows, the seconds spent), a leg's lines in one write,
under the lock of :mod:`dlsched.bounds`' log. A lane's proposals depend only on the seed and
on its own results, so a killed search replays each lane through its log (no candidate solved
again) and goes on where it stopped; the seconds its search already spent count against its
search's budget.

**Then** the worst violation of each pair is shrunk (``verify``'s :func:`.runner.shrink`) and
saved, and a plain seeded sample (``verify``'s own run, into ``verify.jsonl``) is taken with at
least as many certified solves; ``DIR/search.json`` holds one row per pair.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math
import time
from collections.abc import Callable, Sequence
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dlsched import families
from dlsched.bounds import append_line, locked_log, repair_tail, save_counterexample
from dlsched.errors import DlschedError, OptionError
from dlsched.instances import from_dict, instance_hash, write_text_atomic
from dlsched.runner import Call, Pool, check_scheduler, progress_bar
from dlsched.solvers.base import SolverSettings
from dlsched.solvers.deadline import MIN_SOLVER_SECONDS, Deadline
from dlsched.verify import moves
from dlsched.verify.hunt import (
    BATCH,
    Hunt,
    Limits,
    Point,
    Proposal,
    Record,
    Scored,
    family_layout,
    score,
)
from dlsched.verify.runner import (
    COUNTEREXAMPLES,
    LOG,
    SEARCH_JSON,
    Allowance,
    VerifyOptions,
    file_safe,
    measure_instance,
    read_log,
    read_rows,
    replay_rows,
    shrink_task,
    worker_modules,
)
from dlsched.verify.runner import run as run_sample
from dlsched.verify.theorem import Theorem

SEARCH_LOG = "search.jsonl"
#: Row fields kept in the log.
ROW_FIELDS = ("case", "details", "status", "value", "reference", "reference_kind", "ratio",
              "ratio_infinite", "bound", "holds", "applies", "note", "wall_time")  # fmt: skip
Solved = tuple[Point, list[dict[str, Any]]]  # a candidate and its rows
Logged = dict[tuple[int, int, int], dict[str, Any]]  # (lane, batch, slot) -> its log line


@dataclass(frozen=True)
class SearchOptions:
    """A search's budget and seed. ``budget``: the seconds of the whole command (every pair's
    search, shrinking and sample; :func:`search`); ``clock`` measures them (an injected clock
    in tests). It is wall time: a worker's task is stamped with it when handed out and reads
    it again where it starts (:class:`~dlsched.verify.runner.Allowance`), so the workers of a
    cluster of several hosts read it alike."""

    budget: float
    seed: int = 0
    batch: int = BATCH
    clock: Callable[[], float] = time.time

    def __post_init__(self) -> None:
        if not (isinstance(self.budget, int | float) and math.isfinite(self.budget)):
            raise OptionError("--budget", self.budget, "expected a positive number of seconds")
        if self.budget <= 0:
            raise OptionError("--budget", self.budget, "expected a positive number of seconds")


# --- one candidate (a worker's task) ---------------------------------------------------------


def evaluate(theorem: Theorem, method: str, point: Point, settings: SolverSettings,
             time_limit: float | None) -> list[dict[str, Any]]:  # fmt: skip
    """The rows of ``method`` on ``point``: the theorem's measure on the instance (with only
    ``method`` run, where the measure runs the theorem's methods), or its recorded sub-case
    replayed, each method it runs given ``time_limit`` and ``settings``. A failure is one row
    of status "error"."""
    solve = settings.limited(time_limit)
    t = dataclasses.replace(theorem, methods=(method,)) if method in theorem.methods else theorem
    try:
        inst = point.parsed
    except DlschedError as e:
        return [{"status": "error", "note": str(e)}]
    if point.details is not None and theorem.replay is not None:
        rows = replay_rows(t, inst, (point.case, point.details), solve)
    else:
        rows = measure_instance(t.id, inst, solve, t)
    return [
        {k: r.get(k) for k in ROW_FIELDS}
        for r in rows
        if r["method"] == method or r["status"] == "error"
    ]


# --- the log ------------------------------------------------------------------------------------


def run_key(theorem: Theorem, method: str, options: VerifyOptions, search: SearchOptions,
            ) -> str:  # fmt: skip
    """What makes two searches of a pair the same (the budget is not: a larger one extends)."""
    text = json.dumps([theorem.id, method, search.seed, search.batch, LANES, options.jobs,
                       options.gpus, options.solve.time_limit, options.solve.seed])  # fmt: skip
    return hashlib.sha256(text.encode()).hexdigest()[:12]


def read_search_log(path: Path, run: str | None = None) -> list[dict[str, Any]]:
    """The complete lines of a search log (of run ``run`` only, when given)."""
    tag = f'"run": "{run}"'.encode() if run else b""
    return [r for r in read_log(path, only=tag) if run is None or r.get("run") == run]


#: Independent searches of each pair, run side by side (each its own chains, elite, tabu set
#: and stream of draws, advanced only by its own results); fixed, so that a search resumed on
#: another number of processes proposes the same candidates. Two lanes may, rarely, solve the
#: same point.
LANES = 4


#: Shares of the budget (the whole command's, :func:`search`; a theorem's part of it is its
#: pairs' share). A theorem's pairs' searches get SEARCH_SHARE of its part (each pair's, of
#: which the family's exact worst cases may take EXACT_SHARE first); the shrinking of its worst
#: violations at most SHRINK_SHARE; its seeded sample what is left of the part (at least the
#: rest, and whatever the stages before it did not use).
SEARCH_SHARE, EXACT_SHARE, SHRINK_SHARE = 0.6, 0.25, 0.1


@dataclass
class PairResult:
    theorem: Theorem
    method: str
    record: Record
    seconds: float  # the search's, over every run of it
    budget: float  # the search's seconds
    stopped: str  # why the search ended: "budget", "infinite ratio", "no new candidates"
    exact: list[dict[str, Any]] = field(default_factory=list)
    counterexample: str = ""
    minimal: str = ""


def _stem(theorem: Theorem, method: str, point: Point) -> str:
    case = f"-{point.case}" if point.case else ""
    return f"{theorem.id}-{point.key()}-{file_safe(method)}{case}-search"


@dataclass
class Leg:
    """What a lane's task did: the lane moved on, one log line per candidate it solved
    (without the pair's ``spent``, which the caller adds as it logs them), and the results of
    its pending batch when it stopped in the middle of one (by slot)."""

    lane: Hunt
    lines: list[dict[str, Any]]
    known: dict[int, Solved] = field(default_factory=dict)


def advance(lane: Hunt, known: dict[int, Solved], settings: SolverSettings,
            time_limit: float | None, seconds: float, allowance: Allowance) -> Leg:  # fmt: skip
    """A worker's task: ``lane``'s batches, proposed and solved here one after another, for
    about ``seconds`` (at least one batch) until the pair's search deadline (``allowance``,
    handed out with the task); each candidate gets ``settings`` and at most what is left of
    the deadline when it starts (and ``time_limit``), and none starts once it has passed (its
    batch left pending). ``known``: results of the lane's pending batch already solved (by
    slot), not solved again."""
    pair = allowance.deadline()
    leg = pair.share_of_limit(1.0, cap=seconds)  # about ``seconds``, never past the pair's deadline
    lines, known, batches = list[dict[str, Any]](), dict(known), 0
    while not (lane.done or pair.passed() or (batches and leg.passed())):
        props = lane.pending if lane.pending else lane.proposals()
        for i, p in enumerate(props):
            if p is None or i in known:
                continue
            left = pair.left()
            if left is not None and left < MIN_SOLVER_SECONDS:  # over: the batch left pending
                return Leg(lane, lines, known)
            limit = pair.seconds(cap=time_limit)
            rows = json.loads(
                json.dumps(evaluate(lane.theorem, lane.method, p.point, settings, limit),
                           default=str)
            )  # as a resumed run reads them  # fmt: skip
            lines.append(_line(lane, i, p, rows, limit, left))
            known[i] = (p.point, rows)
        lane.absorb([known.get(i) for i in range(len(props))])
        known, batches = {}, batches + 1
    return Leg(lane, lines, known)


def _line(lane: Hunt, slot: int, p: Proposal, rows: list[dict[str, Any]], limit: float | None,
          left: float | None) -> dict[str, Any]:  # fmt: skip
    return {
        "theorem": lane.theorem.id, "method": lane.method, "lane": lane.lane,
        "batch": lane.index, "slot": slot, "move": p.move,
        "instance_hash": instance_hash(p.point.parsed),
        "left": left, "time_limit": limit, "point": p.point.to_json(), "rows": rows,
    }  # fmt: skip


def replay(lane: Hunt, logged: Logged) -> dict[int, Solved]:
    """``lane`` moved through the batches its log holds whole (nothing solved); what is
    logged of the first batch it does not hold whole (that batch left pending)."""
    while not lane.done:
        props = lane.proposals()
        got = _from_log(props, logged, lane.lane, lane.index)
        if any(p is not None and r is None for p, r in zip(props, got, strict=True)):
            return {i: r for i, r in enumerate(got) if r is not None}
        lane.absorb(got)
    return {}


def search_modules(theorems: Sequence[Theorem]) -> list[str]:
    """What a search's workers import before their first task: ``verify``'s, this module,
    and the ``cma`` package (whole, before a lane in a CMA-ES episode is unpickled there)."""
    return [*worker_modules(theorems), __name__, "cma"]


def hunt_pair(theorem: Theorem, method: str, directory: Path, options: VerifyOptions,
              search: SearchOptions, pool: Pool, fd: int, deadline: Deadline,
              ) -> PairResult:  # fmt: skip
    """Search one pair until ``deadline`` (its search's, less the seconds its log says a
    killed run of it spent): the family's exact worst cases first, then :data:`LANES` lanes
    side by side on the pool, each task a lane's batches for about ``options.task_seconds``
    (what the log holds replayed, not solved again)."""
    # cma imported here, before a lane that carries its classes comes back: two threads
    # importing the package at once (the client's, unpickling a lane, and another) can meet
    # it half imported (its modules import each other)
    import cma  # noqa: F401

    lay = family_layout(theorem.family)
    assert lay is not None
    run = run_key(theorem, method, options, search)
    lines = read_search_log(directory / SEARCH_LOG, run)
    logged = {(r["lane"], r["batch"], r["slot"]): r for r in lines if "batch" in r}
    spent = max((float(r["spent"]) for r in lines if "spent" in r), default=0.0)
    left = deadline.sooner(spent)  # the seconds a killed run spent count
    jobs = options.jobs or theorem.sizes.get("jobs")
    gpus = options.gpus or theorem.sizes.get("gpus")
    limits = _limits(lay, jobs, gpus)
    exact = exact_worst_cases(theorem, method, lines, left, fd, run, spent)
    record = Record()
    for r in lines:
        if "batch" in r:
            record.add(Point.from_json(r["point"]), r["rows"])
    lanes, known = [], []
    for k in range(LANES):
        lane = Hunt(theorem, method, lay, limits, (jobs, gpus), search.seed, search.batch, lane=k)
        if k == 0:
            lane.seeds = [Point(e["instance"]) for e in exact if e.get("instance")]
        known.append(replay(lane, logged))
        lanes.append(lane)
    cx = directory / COUNTEREXAMPLES
    total = round(deadline.limit or 0)
    with progress_bar(total, f"search {theorem.id} {method}", options, unit="s") as bar:
        walk = _Walk(record, run, spent, left, options, fd, cx, bar)
        calls = [walk.call(lane, known[k]) for k, lane in enumerate(lanes)]
        pool.follow(
            [c for c in calls if c is not None], lambda _, leg: walk.then(leg), until=left
        )  # the legs still out at the pair's end are dropped
    result = PairResult(theorem, method, record, walk.spent_now(), deadline.limit or 0.0,
                        walk.stopped(), exact)  # fmt: skip
    if record.violations:
        worst = max(record.violations, key=lambda s: s.score)
        result.counterexample = f"{COUNTEREXAMPLES}/{_stem(theorem, method, worst.point)}.json"
    return result


def exact_worst_cases(theorem: Theorem, method: str, lines: list[dict[str, Any]],
                      search: Deadline, fd: int, run: str, spent: float,
                      ) -> list[dict[str, Any]]:  # fmt: skip
    """The pair's exact worst cases by size: those the search log holds, then those the
    family's ``metaopt`` part solves (:class:`dlsched.families.WorstCases`; a family without
    it has none) in :data:`EXACT_SHARE` of the pair's ``search`` deadline, each logged as it
    ends with the pair's seconds spent (``spent`` before ``search`` started)."""
    exact = sorted((r for r in lines if r.get("kind") == "exact-worst"), key=lambda r: r["jobs"])
    worst = families.get(theorem.family).metaopt()
    if worst is None:
        return exact
    for found in worst(theorem.id, method, exact, search.share_of_limit(EXACT_SHARE)):
        line = {**found, "spent": spent + search.elapsed(), "run": run}
        append_line(fd, json.dumps(line) + "\n")
        exact.append(line)
    return exact


@dataclass
class _Walk:
    """The caller's side of a pair's lanes: each leg's lines logged as it comes back (with
    the pair's seconds spent), the record kept in log order, each violation worse than any
    before it saved (before its line is logged: every violation is in the log, the worst
    also in ``counterexamples/``), the next leg handed out until the ``deadline`` of the
    pair's search (``logged`` seconds of it spent before it started)."""

    record: Record
    run: str
    logged: float
    deadline: Deadline
    options: VerifyOptions
    fd: int
    cx: Path
    bar: Any

    def __post_init__(self) -> None:
        self.spent = self.spent_now()
        self.worst = max((v.score for v in self.record.violations), default=-math.inf)
        self.total = self.bar.total or 0
        self.bar.update(min(round(self.spent), self.total))

    def spent_now(self) -> float:
        """The pair's search seconds, over every run of it."""
        return self.logged + self.deadline.elapsed()

    def infinite(self) -> bool:
        """An infinite ratio found, in any lane (nothing is worse: the pair ends)."""
        best = self.record.best
        return best is not None and math.isinf(best.score)

    def stopped(self) -> str:
        if self.infinite():
            return "infinite ratio"
        return "budget" if self.deadline.passed() else "no new candidates"

    def call(self, lane: Hunt, known: dict[int, Any]) -> Call | None:
        if lane.done or self.infinite() or self.deadline.passed():
            return None
        solve = self.options.solve
        args = (lane, known, solve.settings, solve.time_limit, self.options.task_seconds,
                Allowance.of(self.deadline))  # fmt: skip
        return advance, args

    def then(self, leg: Leg) -> Call | None:
        before = self.spent
        self.spent = self.spent_now()
        text = []
        for line in leg.lines:
            point = Point.from_json(line["point"])
            for s in self.record.add(point, line["rows"]):
                if s.row.get("holds") is False and s.score > self.worst:
                    _save_violation(leg.lane.theorem, leg.lane.method, s, self.cx)
                    self.worst = s.score
            text.append(json.dumps({**line, "run": self.run, "spent": self.spent}) + "\n")
        append_line(self.fd, "".join(text))
        self.bar.update(min(round(self.spent), self.total) - min(round(before), self.total))
        return self.call(leg.lane, leg.known)


def _limits(lay: moves.Layout, jobs: int | None, gpus: int | None) -> Limits:
    j = 3 * (jobs or 3)
    return Limits(j, 2 * (gpus or 2), math.ceil(lay.work_per_job * j))


def _from_log(props: Sequence[Proposal | None], logged: Logged, lane: int, index: int,
              ) -> list[Solved | None]:  # fmt: skip
    out: list[Solved | None] = []
    for i, _ in enumerate(props):
        line = logged.get((lane, index, i))
        out.append((Point.from_json(line["point"]), line["rows"]) if line else None)
    return out


def _save_violation(theorem: Theorem, method: str, s: Scored, cx: Path) -> None:
    stem = _stem(theorem, method, s.point)
    if not (cx / f"{stem}.json").exists():
        record = {**s.row, "theorem": theorem.id, "method": method}
        save_counterexample(from_dict(s.point.instance), record, cx, stem=stem)


# --- shrinking, sampling, rows -------------------------------------------------------------------


def worst_violations(res: PairResult, count: int) -> list[Scored]:
    """The ``count`` worst violations of a pair, each point once, worst first."""
    out: list[Scored] = []
    for v in sorted(res.record.violations, key=lambda s: -s.score):
        if len(out) < count and all(v.point.key() != o.point.key() for o in out):
            out.append(v)
    return out


def shrink_worst(results: Sequence[PairResult], directory: Path, options: VerifyOptions,
                 pool: Pool, deadline: Deadline) -> None:  # fmt: skip
    """The ``options.shrink`` worst violations of each pair shrunk as ``verify --shrink``
    does, until ``deadline``, each saved beside its violation as ``<stem>-min.json`` (once);
    the pair's ``minimal`` is its worst violation's."""
    cx = directory / COUNTEREXAMPLES
    allowance = Allowance.of(deadline)
    calls: list[Call] = []
    todo: list[tuple[PairResult, str]] = []
    for res in results:
        t = res.theorem
        if not t.shrinkable:
            continue
        for v in worst_violations(res, options.shrink):
            stem = _stem(t, res.method, v.point)
            if not (cx / f"{stem}-min.json").exists():
                case = (v.point.case, v.point.details or {}) if t.replay else None
                args = (t, v.point.instance, res.method, options.solve, options.shrink_budget,
                        case, allowance)  # fmt: skip
                calls.append((shrink_task, args))
                todo.append((res, stem))
    for finished in pool.map(calls, [r.method for r, _ in todo], until=deadline):
        for n, (data, row, tries) in finished:
            res, stem = todo[n]
            if row is not None:
                record = {**row, "shrink_tries": tries}
                save_counterexample(from_dict(data), record, cx, stem=f"{stem}-min")
        if deadline.passed():  # the tasks still out are dropped
            break
    for res in results:
        for v in worst_violations(res, options.shrink):
            stem = _stem(res.theorem, res.method, v.point)
            if (cx / f"{stem}-min.json").exists():
                res.minimal = f"{COUNTEREXAMPLES}/{stem}-min.json"
                break


def sample(theorem: Theorem, needed: dict[str, int], directory: Path, options: VerifyOptions,
           pool: Pool, deadline: Deadline) -> dict[str, list[dict[str, Any]]]:  # fmt: skip
    """A plain seeded sample (``verify``'s run into ``verify.jsonl``, instance k drawn with seed
    ``first_seed + k``) grown until each method has at least ``needed`` rows (certified
    solves), or 8 times the instances that would take, or ``deadline`` passed (no instance
    taken up after it); each method's first rows in seed order."""
    most = max(needed.values(), default=0)
    count = max(1, most)
    rows: dict[str, list[dict[str, Any]]] = {m: [] for m in needed}
    while most > 0:
        if not deadline.passed():
            run_sample([theorem], directory, dataclasses.replace(options, count=count), pool,
                       deadline)  # fmt: skip
        rows = _sample_rows(theorem, needed, directory, options, count)
        short = [m for m, n in needed.items() if len(rows[m]) < n]
        if not short or count >= 8 * most or deadline.passed():
            break
        count = min(8 * most, 2 * count)
    return {m: rows[m][: needed[m]] for m in needed}


def _sample_rows(
    theorem: Theorem, needed: dict[str, int], directory: Path, options: VerifyOptions, count: int
) -> dict[str, list[dict[str, Any]]]:
    seeds = {f"{theorem.id}-s{options.first_seed + k}": k for k in range(count)}
    out: dict[str, list[tuple[int, int, dict[str, Any]]]] = {m: [] for m in needed}
    tag = f'"theorem": "{theorem.id}"'.encode()
    for n, r in enumerate(read_log(directory / LOG, only=tag)):
        ok = (
            r["instance"] in seeds
            and r["method"] in out
            and r["status"] != "error"
            and r["time_limit"] == options.solve.time_limit
            and r["seed"] == options.solve.seed
        )
        if ok:
            out[r["method"]].append((seeds[r["instance"]], n, r))
    return {m: [r for _, _, r in sorted(v, key=lambda x: x[:2])] for m, v in out.items()}


def _curve(scores: Sequence[float | None]) -> list[tuple[int, float]]:
    """(solves, best so far) at each improvement."""
    best, out = -math.inf, []
    for n, s in enumerate(scores, 1):
        if s is not None and s > best:
            best = s
            out.append((n, s))
    return out


def _num(x: float | None) -> float | None:
    return None if x is None or not math.isfinite(x) else x


def pair_row(res: PairResult, sampled: list[dict[str, Any]], sample_stopped: bool = False,
             ) -> dict[str, Any]:  # fmt: skip
    """The row of ``search.json`` of one pair (``sample_stopped``: its sample ended at its
    deadline with fewer solves than the search's)."""
    hunt, best = res.record, res.record.best
    sample_scores = [score(r) for r in sampled]
    ranked = [(s, i) for i, s in enumerate(sample_scores) if s is not None]
    sample_row = sampled[max(ranked)[1]] if ranked else None
    ratio = None if best is None else best.row.get("ratio")
    return {
        "theorem": res.theorem.id,
        "method": res.method,
        "worst_ratio": _num(ratio),
        "worst_infinite": bool(best and best.row.get("ratio_infinite")),
        "worst_over_bound": _num(best.score) if best else None,
        "bound": best.row.get("bound") if best else None,
        "sample_worst_ratio": _num(sample_row.get("ratio")) if sample_row else None,
        "sample_worst_infinite": bool(sample_row and sample_row.get("ratio_infinite")),
        "sample_worst_over_bound": _num(score(sample_row)) if sample_row else None,
        "sample_solves": len(sampled),
        "sample_violated": any(r.get("holds") is False for r in sampled),
        "sample_stopped": sample_stopped,
        "solves": hunt.solves,
        "seconds": round(res.seconds, 3),
        "budget": round(res.budget, 3),
        "stopped": res.stopped,
        "violated": bool(hunt.violations),
        "violations": len(hunt.violations),
        "instance": best.point.instance if best else None,
        "case": (
            {"case": best.point.case, "details": best.point.details}
            if best and best.point.details is not None
            else None
        ),  # fmt: skip
        "counterexample": res.counterexample,
        "minimal": res.minimal,
        "by_jobs": {str(k): _num(v.row.get("ratio")) for k, v in sorted(hunt.by_jobs.items())},
        "history": [[n, _num(s)] for n, s in hunt.history],
        "sample_history": [[n, _num(s)] for n, s in _curve(sample_scores)],
        "exact_worst": [{k: v for k, v in e.items() if k != "kind"} for e in res.exact],
    }


def write_rows(directory: Path, rows: Sequence[dict[str, Any]]) -> Path:
    """``search.json``: these rows, and those of other pairs already there."""
    path = directory / SEARCH_JSON
    keep: list[dict[str, Any]] = []
    if path.exists():
        mine = {(r["theorem"], r["method"]) for r in rows}
        keep = [r for r in json.loads(path.read_text()) if (r["theorem"], r["method"]) not in mine]
    return write_text_atomic(path, json.dumps([*keep, *rows], indent=1) + "\n")


# --- the run ---------------------------------------------------------------------------------


def unattackable(theorem: Theorem) -> str | None:
    """Why the search cannot attack ``theorem`` (None: it can)."""
    if not theorem.methods:
        return "has no method to attack"
    if family_layout(theorem.family) is None:
        return f"has no moves for its family {theorem.family!r} to attack it with"
    return None


def check_attackable(theorems: Sequence[Theorem]) -> None:
    for t in theorems:
        why = unattackable(t)
        if why is not None:
            raise OptionError("THEOREM", t.id, f"{why} (--search)")


@dataclass
class SearchSummary:
    directory: Path
    rows: list[dict[str, Any]] = field(default_factory=list)
    seconds: float = 0.0  # the whole search's (every stage of every pair)


def search(theorems: Sequence[Theorem], directory: str | Path, options: VerifyOptions,
           budget: SearchOptions, pool: Pool | None = None) -> SearchSummary:  # fmt: skip
    """Search every (theorem, method) pair of ``theorems`` for its worst case (resumed from
    ``DIR/search.jsonl``), shrink each pair's worst violations, take the seeded sample beside
    it, and write ``DIR/search.json``, all within ``budget.budget`` seconds: a pool's start
    counts first, then each theorem gets its pairs' part of what is left
    (:func:`search_theorem`)."""
    check_attackable(theorems)
    if pool is None:
        check_scheduler(options)
    whole = Deadline.after(budget.budget, budget.clock)
    d = Path(directory)
    d.mkdir(parents=True, exist_ok=True)
    summary = SearchSummary(d)
    pairs = sum(len(t.methods) for t in theorems)
    with ExitStack() as stack:
        if pool is None:
            pool = stack.enter_context(Pool(options, search_modules(theorems)))
        pool.size()  # a cluster starts here, on the budget, before it is shared out
        import cma  # noqa: F401 - the parent's, as :func:`hunt_pair` does, before that too

        for t in theorems:
            part = whole.share_of_rest(
                len(t.methods) / pairs
            )  # what the stages before left, shared
            pairs -= len(t.methods)
            summary.rows += search_theorem(t, d, options, budget, pool, part)
    summary.seconds = whole.elapsed()
    return summary


def search_theorem(theorem: Theorem, directory: Path, options: VerifyOptions,
                   search: SearchOptions, pool: Pool, part: Deadline,
                   ) -> list[dict[str, Any]]:  # fmt: skip
    """The rows of ``theorem``'s pairs, each stage within ``part`` (the theorem's part of the
    budget): the sample's first instances (one per worker); then the pairs' searches, one
    after another, :data:`SEARCH_SHARE` of ``part`` in all (each an equal share of what is
    left of it when it starts, so that one running over takes from all the later ones); the
    shrinking at most :data:`SHRINK_SHARE` of ``part``; the rest of the sample what is left of
    it."""
    k = len(theorem.methods)
    # the sample's first instances first, as many as there are workers: each worker imports
    # what the theorem's methods need (a first call's imports are no solver's time, and would
    # run past a candidate's limit) before the searches' shares are given out
    first = dataclasses.replace(options, count=pool.size(), shrink=0)
    run_sample([theorem], directory, first, pool, part)
    searches = part.share_of_limit(SEARCH_SHARE)  # the pairs' searches, one after another
    results = []
    with locked_log(directory / SEARCH_LOG) as fd:
        repair_tail(directory / SEARCH_LOG, fd)
        for n, m in enumerate(theorem.methods):  # each an equal share of what is left of them
            pair = searches.share_of_rest(1 / (k - n))
            results.append(hunt_pair(theorem, m, directory, options, search, pool, fd, pair))
    shrink_worst(results, directory, options, pool, part.share_of_limit(SHRINK_SHARE))
    needed = {r.method: r.record.solves for r in results}
    sampled = sample(theorem, needed, directory, options, pool, part)
    stopped = part.passed()
    rows = [pair_row(r, sampled[r.method], stopped and len(sampled[r.method]) < needed[r.method])
            for r in results]  # fmt: skip
    write_rows(directory, rows)
    return rows


#: Seconds of the whole search when ``--search`` is given without ``--budget``.
DEFAULT_BUDGET = 60.0


def command(theorems: Sequence[Theorem], directory: Path, options: VerifyOptions,
            searching: bool, budget: float | None) -> str:  # fmt: skip
    """``dlsched verify --search``: the search, the report, and what to print."""
    from dlsched.verify.report import write_report

    if not searching:
        raise OptionError("--budget", budget, "is the budget of --search; add --search")
    check_attackable(theorems)
    seconds = budget or DEFAULT_BUDGET
    s = search(theorems, directory, options, SearchOptions(seconds))
    md, _ = write_report(directory)
    lines = [f"{len(s.rows)} (theorem, method) pairs searched into {directory / SEARCH_JSON} "
             f"in {s.seconds:.0f} s of the {seconds:g}-s budget; report: {md}"]  # fmt: skip
    for r in s.rows:
        lines.append(
            f"  {r['theorem']} {r['method']}: worst {_text(r, 'worst')} "
            f"(sample {_text(r, 'sample_worst')}) in {r['solves']} solves, {r['seconds']:.0f} s"
            + (f"; violated, {r['minimal'] or r['counterexample']}" if r["violated"] else "")
        )
    return "\n".join(lines)


def _text(row: dict[str, Any], prefix: str) -> str:
    if row.get(f"{prefix}_infinite"):
        return "inf"
    x = row.get(f"{prefix}_ratio")
    return "-" if x is None else f"{x:.4g}"


__all__ = [
    "BATCH",
    "DEFAULT_BUDGET",
    "command",
    "SEARCH_JSON",
    "SEARCH_LOG",
    "Hunt",
    "Point",
    "SearchOptions",
    "SearchSummary",
    "check_attackable",
    "evaluate",
    "read_rows",
    "read_search_log",
    "score",
    "search",
    "search_modules",
    "unattackable",
]
