"""``dlsched verify THEOREM... --search --budget SECONDS``: for each (claim, method) pair, a
search for the instance that maximizes the claim's ratio, instead of a seeded sample of it.

**What is maximized.** The method's row of the theorem's own measure (the same exact routes as
``verify``, every schedule checked by the family's checker): its ratio over the claim's bound
where the bound is a number (the amount by which the claim's inequality fails, > 1 for a
violation; against a constant bound the ordering of the ratio itself), the ratio for an
empirical claim. Only rows whose reference is certified (an optimum, or a quantity computed
exactly) are scored: a ratio to a mere lower bound overstates, and is counted as a solve only.

**How.** ``batch`` / :data:`OFFSPRING` chains of simulated annealing (Metropolis on the
logarithm of the score, a temperature that cools per step), each proposing
:data:`OFFSPRING` moves per batch on the raw instance, the best of which is its step
(:mod:`.moves`: change one number, scale a job, add or remove a job, task, round, GPU or server,
merge two); a chain that has not improved for :data:`PATIENCE` steps restarts from a fresh
seeded draw or from an elite point; a tabu set keeps any point from being solved twice. Every
:data:`CMA_EVERY`-th batch is CMA-ES (the ``cma`` package) over the logarithms of the incumbent's
real numbers, its structure kept (the theorems' generators take a seed and a size only, so the
continuous parameters searched are the instance's own numbers). Candidates stay within 3 times
the theorem's jobs and twice its GPUs (the exact routes must certify them) and within a
:data:`SPREAD` of 10^4 between the values of any one field. Where :mod:`.metaopt` has an
exact worst case for the pair, its instances join the first batch. The pair ends when its
budget of seconds is spent, or at an infinite ratio (nothing is worse).

**Log and resume.** Each certified candidate is one line of ``DIR/search.jsonl`` (the
point, the method's rows, the seconds spent) appended as its task finishes, under the lock of
:mod:`dlsched.bounds`' log. Proposals depend only on the seed and on logged results, so a
killed search replays its log (no candidate solved again) and goes on where it stopped; the
seconds already spent count against the budget.

**Then** the worst violation of each pair is shrunk (``verify``'s :func:`.runner.shrink`) and
saved, and a plain seeded sample (``verify``'s own run, into ``verify.jsonl``) is taken with at
least as many certified solves; ``DIR/search.json`` holds one row per pair.
"""

from __future__ import annotations

import copy
import dataclasses
import hashlib
import json
import math
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from dlsched.bounds import append_line, locked_log, repair_tail, save_counterexample
from dlsched.errors import DlschedError, OptionError
from dlsched.instances import from_dict, instance_hash, to_dict, write_text_atomic
from dlsched.runner import Call, Pool, check_scheduler, progress_bar
from dlsched.solvers.base import SolveOptions
from dlsched.verify import moves
from dlsched.verify.runner import (
    COUNTEREXAMPLES,
    LOG,
    VerifyOptions,
    _replay_rows,
    measure_instance,
    read_log,
    shrink_task,
    worker_modules,
)
from dlsched.verify.runner import run as run_sample
from dlsched.verify.theorem import Theorem

SEARCH_LOG = "search.jsonl"
SEARCH_JSON = "search.json"
#: Candidates per batch (the chains of simulated annealing); fixed, so that a search resumed
#: with another number of processes proposes the same candidates.
BATCH = 8
#: Candidates each chain proposes per batch from its point (the best of them is its step):
#: a batch holds BATCH // OFFSPRING chains.
OFFSPRING = 4
#: Steps without improvement after which a chain restarts: from an elite point with
#: probability ELITE, else from a fresh seeded draw.
PATIENCE, ELITE = 8, 0.75
#: While the landscape is flat (half the scored candidates tie with the best: every instance
#: met the claim exactly, say), a slot proposes a fresh draw with this probability: local moves
#: have no slope to follow, and independent draws find a needle as a sample does.
FLAT_DRAWS = 0.75
#: Every CMA_EVERY-th batch is CMA-ES's.
CMA_EVERY = 8
#: Generations of one CMA-ES episode (then a new one around the incumbent).
CMA_GENERATIONS = 8
#: Temperature of a (re)started chain, and its cooling per step (on log(score)).
HOT, COOLING, COLD = 0.15, 0.97, 0.01
#: The most any field's positive values may differ within one candidate (the largest over the
#: smallest of, say, every job's weight): a worst case should not rest on numbers at the ends of
#: the family's accepted ranges (the generators' own spread is at most 67).
SPREAD = 1e4
#: Proposals tried per slot before a fresh draw takes its place.
TRIES = 25
#: Reference kinds that are certified (a ratio to anything else is not scored).
CERTIFIED = ("optimum", "exact")
#: Row fields kept in the log.
ROW_FIELDS = ("case", "details", "status", "value", "reference", "reference_kind", "ratio",
              "ratio_infinite", "bound", "holds", "applies", "note", "wall_time")  # fmt: skip


@dataclass(frozen=True)
class SearchOptions:
    """A search's budget and seed. ``budget``: seconds per (claim, method) pair; ``clock``
    measures them (an injected clock in tests)."""

    budget: float
    seed: int = 0
    batch: int = BATCH
    clock: Callable[[], float] = time.monotonic

    def __post_init__(self) -> None:
        if not (isinstance(self.budget, int | float) and math.isfinite(self.budget)):
            raise OptionError("--budget", self.budget, "expected a positive number of seconds")
        if self.budget <= 0:
            raise OptionError("--budget", self.budget, "expected a positive number of seconds")


# --- points and scores --------------------------------------------------------------------------


@dataclass(frozen=True)
class Point:
    """A candidate: the raw instance and, for a theorem measured on recorded sub-cases, the
    sub-case (``case``, ``details``; None: measured afresh, its own sub-cases drawn)."""

    instance: dict[str, Any]
    case: str = ""
    details: dict[str, Any] | None = None

    def key(self) -> str:
        """Content hash (names left out): the tabu list's entry."""
        raw = {k: v for k, v in self.instance.items() if k not in ("name", "description")}
        text = json.dumps([raw, self.case, self.details], sort_keys=True, default=str)
        return hashlib.sha256(text.encode()).hexdigest()[:16]

    def pair(self) -> moves.Pair:
        return self.instance, self.details

    def to_json(self) -> dict[str, Any]:
        return {"instance": self.instance, "case": self.case, "details": self.details}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Point:
        return cls(data["instance"], data.get("case") or "", data.get("details"))


def spread(point: Point, layout: moves.Layout) -> float:
    """The largest ratio of two positive values of one field of ``point``."""
    values: dict[tuple[Any, ...], list[float]] = {}
    tree = {"instance": point.instance, "details": point.details}
    for path, v in moves.leaves(tree, layout.labels):
        if not isinstance(v, bool) and v > 0:
            values.setdefault(moves.kind(path), []).append(float(v))
    return max((max(vs) / min(vs) for vs in values.values()), default=1.0)


def score(row: dict[str, Any]) -> float | None:
    """What the search maximizes on a row: the ratio over the bound when the bound is a finite
    positive number, the ratio for an empirical claim; inf for an infinite ratio; None when
    the row proves nothing (an error, outside the assumptions, no certified reference)."""
    if row.get("status") == "error" or row.get("applies") is False:
        return None
    if row.get("reference_kind") not in CERTIFIED:
        return None
    if row.get("ratio_infinite"):
        return math.inf
    ratio, bound = row.get("ratio"), row.get("bound")
    if ratio is None:
        return None
    if bound is not None and math.isfinite(bound) and bound > 0:
        return float(ratio) / float(bound)
    return float(ratio)


def _log_score(s: float | None) -> float:
    return -math.inf if s is None else math.log(max(s, 1e-12))


@dataclass(frozen=True)
class Scored:
    score: float
    point: Point
    row: dict[str, Any]


def scored_points(point: Point, rows: Sequence[dict[str, Any]]) -> list[Scored]:
    """The scored points of a candidate's rows: each row's sub-case on the instance."""
    out = []
    for r in rows:
        s = score(r)
        if s is not None:
            details = r.get("details") if point.details is not None or r.get("case") else None
            here = Point(point.instance, r.get("case") or "", details) if details else point
            out.append(Scored(s, here, r))
    return out


# --- one candidate (a worker's task) ---------------------------------------------------------


def evaluate(theorem: Theorem, method: str, point: Point, solve: SolveOptions,
             ) -> list[dict[str, Any]]:  # fmt: skip
    """The rows of ``method`` on ``point``: the theorem's measure on the instance (with only
    ``method`` run, where the measure runs the theorem's methods), or its recorded sub-case
    replayed. A failure is one row of status "error"."""
    t = dataclasses.replace(theorem, methods=(method,)) if method in theorem.methods else theorem
    try:
        inst = from_dict(point.instance, "search")
    except DlschedError as e:
        return [{"status": "error", "note": str(e)}]
    if point.details is not None and theorem.replay is not None:
        rows = _replay_rows(t, inst, (point.case, point.details), solve)
    else:
        rows = measure_instance(t.id, inst, solve, t)
    return [
        {k: r.get(k) for k in ROW_FIELDS}
        for r in rows
        if r["method"] == method or r["status"] == "error"
    ]


# --- CMA-ES over the incumbent's numbers ------------------------------------------------------


@contextmanager
def _own_numpy_state(holder: Cma) -> Iterator[None]:
    """numpy's global generator (which the cma package draws from) set to the episode's own
    state for the call and restored afterwards, so that nothing else moves the episode's
    draws and the episode moves nothing else's."""
    saved = np.random.get_state()
    if holder.state is not None:
        np.random.set_state(holder.state)
    try:
        yield
    finally:
        holder.state = np.random.get_state()
        np.random.set_state(saved)


class Cma:
    """One CMA-ES episode over the logarithms of the positive real numbers of ``template``
    (its structure, integers and labels kept; each number on two significant digits)."""

    def __init__(self, template: Point, layout: moves.Layout, seed: int, popsize: int) -> None:
        import cma

        self.template, self.layout = template, layout
        tree = {"instance": template.instance, "details": template.details}
        self.paths = [
            p for p, v in moves.leaves(tree, layout.labels) if isinstance(v, float) and v > 0
        ]
        self.state: Any = None
        self.generations = 0
        x0 = [math.log(moves.get(tree, p)) for p in self.paths]
        opts = {"seed": seed + 1, "popsize": popsize, "verbose": -9}
        with _own_numpy_state(self):
            self.es = cma.CMAEvolutionStrategy(x0, 0.5, opts)
        self.asked: list[Any] = []

    @property
    def usable(self) -> bool:
        return bool(self.paths)

    def done(self) -> bool:
        return self.generations >= CMA_GENERATIONS or bool(self.es.stop())

    def ask(self) -> list[Point]:
        with _own_numpy_state(self):
            self.asked = self.es.ask()
        out = []
        for x in self.asked:
            raw = copy.deepcopy(self.template.instance)
            details = copy.deepcopy(self.template.details)
            tree = {"instance": raw, "details": details}
            for p, v in zip(self.paths, x, strict=True):
                lo, hi = self.layout.limits.get(str(p[-1]), (0.0, math.inf))
                moves.put(tree, p, min(max(moves.nice(math.exp(float(v))), lo), hi))
            out.append(Point(raw, self.template.case, details))
        return out

    def tell(self, scores: Sequence[float | None]) -> None:
        fitness = [-_log_score(s) if s is not None else 50.0 for s in scores]
        with _own_numpy_state(self):
            self.es.tell(self.asked, [min(f, 50.0) for f in fitness])
        self.generations += 1


# --- the state of one pair's search ------------------------------------------------------------


@dataclass
class Chain:
    current: Scored | None = None
    best: float = -math.inf
    stale: int = 0
    temperature: float = HOT


@dataclass(frozen=True)
class Limits:
    """The largest instance the search visits (the exact routes must certify it)."""

    jobs: int
    gpus: int
    work: int


@dataclass
class Proposal:
    move: str
    point: Point
    chain: int | None  # the chain it continues (None: a restart or CMA-ES)


@dataclass
class Hunt:
    """The search of one (theorem, method) pair: its chains, incumbent, elite, tabu set and
    the record of what it found; :meth:`proposals` and :meth:`absorb` advance it by one batch,
    deterministically from its seed and the results it is given."""

    theorem: Theorem
    method: str
    layout: moves.Layout
    limits: Limits
    sizes: tuple[int | None, int | None]  # the seeded draws' jobs and gpus
    seed: int
    batch: int = BATCH
    index: int = 0  # the next batch
    chains: list[Chain] = field(default_factory=list)
    best: Scored | None = None
    elite: list[Scored] = field(default_factory=list)
    seen: dict[str, float | None] = field(default_factory=dict)  # tabu: point key -> score
    solves: int = 0
    history: list[tuple[int, float]] = field(default_factory=list)  # (solves, best score)
    by_jobs: dict[int, Scored] = field(default_factory=dict)
    violations: list[Scored] = field(default_factory=list)
    cma: Cma | None = None
    seeds: list[Point] = field(default_factory=list)  # points the first batch starts from
    pending: list[Proposal | None] = field(default_factory=list)
    cma_keys: list[str] = field(default_factory=list)  # what CMA-ES asked, in order
    credit: dict[str, list[int]] = field(default_factory=dict)  # move -> [tries, wins]
    scored: int = 0  # scored rows so far
    at_best: int = 0  # of which tie with the best

    def __post_init__(self) -> None:
        self.chains = [Chain() for _ in range(max(1, self.batch // OFFSPRING))]
        digest = hashlib.sha256(f"{self.theorem.id}|{self.method}".encode()).digest()
        self.base = [self.seed, int.from_bytes(digest[:4], "big")]

    @property
    def flat(self) -> bool:
        """Half the scored rows or more tie with the best."""
        return self.best is not None and 2 * self.at_best >= self.scored

    @property
    def finished(self) -> bool:
        return self.best is not None and math.isinf(self.best.score)

    def rng(self, *more: int) -> np.random.Generator:
        return np.random.default_rng([*self.base, self.index, *more])

    # --- proposals ---------------------------------------------------------------------------

    def draw(self, rng: np.random.Generator) -> Point | None:
        """A fresh seeded instance of the theorem (at most its draw size)."""
        jobs, gpus = self.sizes
        for _ in range(TRIES):
            seed = int(rng.integers(2**31))
            j = int(rng.integers(1, jobs + 1)) if jobs and rng.random() < 0.5 else jobs
            try:
                inst = self.theorem.instance(seed, j, gpus)
            except (DlschedError, ValueError):
                continue
            raw = {**to_dict(inst), "name": f"{self.theorem.id}-search"}
            point = Point(raw)
            if self.admissible(point):
                return point
        return None

    def admissible(self, point: Point) -> bool:
        """Valid for the family, within the limits and the :data:`SPREAD`, the sub-case
        fitting, the theorem's assumptions met, and never tried. A candidate the family's
        code cannot take is not admissible."""
        if point.key() in self.seen:
            return False
        raw = point.instance
        try:
            within = (
                moves.jobs(raw) <= self.limits.jobs
                and self.layout.gpus(raw) <= self.limits.gpus
                and self.layout.work(raw) <= self.limits.work
                and spread(point, self.layout) <= SPREAD
            )
            if not within:
                return False
            inst = from_dict(raw, "search")
            fits = self.layout.case_ok
            if point.details is not None and fits is not None and not fits(raw, point.details):
                return False
            return self.theorem.applies(inst)
        except Exception:  # noqa: BLE001 - e.g. an assumption that divides by log 1 = 0
            return False

    def weights(self) -> dict[str, float]:
        """Each move's weight times 0.1 + its success rate so far, (wins + 1) / (tries + 2):
        the moves that improve a chain on this pair are drawn more often, and none is
        forgotten (a job added may pay only after a few more moves)."""
        out = {}
        for name, (_, base) in moves.MOVES.items():
            tries, wins = self.credit.get(name, [0, 0])
            out[name] = base * (0.1 + (wins + 1) / (tries + 2))
        return out

    def moved(self, start: Point, rng: np.random.Generator) -> Proposal | None:
        weights = self.weights()
        for _ in range(TRIES):
            name, pair = moves.propose(start.pair(), self.layout, rng, weights)
            if pair is not None:
                cand = Point(pair[0], start.case, pair[1])
                if self.admissible(cand):
                    return Proposal(name, cand, None)
        return None

    def _restart(self, rng: np.random.Generator) -> Proposal | None:
        if self.elite and rng.random() < ELITE:  # an elite point kicked by 1 to 3 moves
            got: Proposal | None = None
            start, kicks = self.elite[int(rng.integers(len(self.elite)))].point, []
            for _ in range(1 + int(rng.integers(3))):
                step = self.moved(start, rng)
                if step is None:
                    break
                got, start = step, step.point
                kicks.append(step.move)
            if got is not None:
                return Proposal("restart-elite:" + "+".join(kicks), got.point, None)
        point = self.draw(rng)
        return Proposal("draw", point, None) if point is not None else None

    def proposals(self) -> list[Proposal | None]:
        """The candidates of the next batch (None: a slot left empty)."""
        rng = self.rng()
        out: list[Proposal | None] = []
        if self.index == 0:
            for p in self.seeds[: self.batch]:
                if self.admissible(p):
                    out.append(Proposal("exact-worst-case", p, None))
                    self.seen[p.key()] = None
            while len(out) < self.batch:
                out.append(self._slot(self._restart(rng)))
        elif self.index % CMA_EVERY == CMA_EVERY - 1 and self._cma_ready():
            out = self._cma_proposals()
        else:
            flat = self.flat
            for i in range(self.batch):
                chain = self.chains[self._chain_of(i)]
                restart = chain.current is None or chain.stale >= PATIENCE
                if restart or (flat and rng.random() < FLAT_DRAWS):
                    out.append(self._slot(self._restart(rng)))
                    continue
                assert chain.current is not None
                got = self.moved(chain.current.point, rng)
                out.append(self._slot(Proposal(got.move, got.point, i) if got else None))
        self.pending = out
        return out

    def _chain_of(self, slot: int) -> int:
        return min(slot // OFFSPRING, len(self.chains) - 1)

    def _slot(self, p: Proposal | None) -> Proposal | None:
        if p is not None:
            self.seen[p.point.key()] = None
        return p

    def _cma_ready(self) -> bool:
        if self.best is None:
            return False
        if self.cma is None or self.cma.done():
            cma = Cma(self.best.point, self.layout, self.seed + self.index, self.batch)
            self.cma = cma if cma.usable else None
        return self.cma is not None

    def _cma_proposals(self) -> list[Proposal | None]:
        assert self.cma is not None
        out: list[Proposal | None] = []
        asked = self.cma.ask()
        self.cma_keys = [p.key() for p in asked]
        for p in asked:
            if self.admissible(p):
                out.append(self._slot(Proposal("cma", p, None)))
            else:
                out.append(None)
        return out

    # --- results -----------------------------------------------------------------------------

    def absorb(self, results: Sequence[tuple[Point, list[dict[str, Any]]] | None]) -> None:
        """The batch's results in slot order (None: not solved): counted, scored, and the
        chains moved by the acceptance rule (CMA-ES told the scores of what it asked)."""
        accept = self.rng(1)
        offspring: dict[int, list[tuple[Proposal, Scored | None]]] = {}
        for i, proposal in enumerate(self.pending):
            got = results[i] if i < len(results) else None
            best_here = self._record(got) if got is not None else None
            if proposal is None:
                continue
            self.seen[proposal.point.key()] = best_here.score if best_here else None
            if proposal.move != "cma":
                offspring.setdefault(self._chain_of(i), []).append((proposal, best_here))
        for c, children in sorted(offspring.items()):
            self._step(c, children, accept)
        if self.cma_keys:
            assert self.cma is not None
            self.cma.tell([self.seen.get(k) for k in self.cma_keys])
            self.cma_keys = []
        self.index += 1
        self.pending = []

    def _record(self, got: tuple[Point, list[dict[str, Any]]]) -> Scored | None:
        point, rows = got
        found = scored_points(point, rows)
        for r in rows:
            if r.get("status") != "error":
                self.solves += 1
        for s in found:
            self.scored += 1
            if self.best is None or s.score > self.best.score * (1 + 1e-9):
                self.at_best = 0
            if self.best is None or s.score >= self.best.score * (1 - 1e-9):
                self.at_best += 1
            if s.row.get("holds") is False:
                self.violations.append(s)
            size = moves.jobs(s.point.instance)
            if size not in self.by_jobs or s.score > self.by_jobs[size].score:
                self.by_jobs[size] = s
            if self.best is None or s.score > self.best.score:
                self.best = s
                self.history.append((self.solves, s.score))
            self._keep_elite(s)
        return max(found, key=lambda s: s.score) if found else None

    def _keep_elite(self, s: Scored) -> None:
        if any(e.point.key() == s.point.key() for e in self.elite):
            return
        self.elite = sorted([*self.elite, s], key=lambda e: -e.score)[: self.batch]

    def _step(self, c: int, children: list[tuple[Proposal, Scored | None]],
              accept: np.random.Generator) -> None:  # fmt: skip
        """Chain c after its batch: each move credited when it improves the chain's point;
        the best child taken when it is no worse, or with probability exp(delta log(score) /
        temperature); a chain whose children are all restarts starts again from the best."""
        chain = self.chains[c]
        u = float(accept.random())
        scored = [(g, p) for p, g in children if g is not None]
        best = max(scored, key=lambda x: x[0].score)[0] if scored else None
        if all(p.chain is None for p, _ in children) or chain.current is None:
            self.chains[c] = Chain(best, best.score if best else -math.inf)
            return
        chain.temperature = max(COLD, chain.temperature * COOLING)
        chain.stale += 1
        for p, g in children:
            if p.chain is not None:
                credit = self.credit.setdefault(p.move, [0, 0])
                credit[0] += 1
                credit[1] += g is not None and g.score > chain.current.score
        if best is None:
            return
        delta = _log_score(best.score) - _log_score(chain.current.score)
        if delta >= 0 or u < math.exp(delta / chain.temperature):
            chain.current = best
        if best.score > chain.best:
            chain.best, chain.stale = best.score, 0


# --- the log ------------------------------------------------------------------------------------


def run_key(theorem: Theorem, method: str, options: VerifyOptions, search: SearchOptions,
            ) -> str:  # fmt: skip
    """What makes two searches of a pair the same (the budget is not: a larger one extends)."""
    text = json.dumps([theorem.id, method, search.seed, search.batch, options.jobs, options.gpus,
                       options.solve.time_limit, options.solve.seed])  # fmt: skip
    return hashlib.sha256(text.encode()).hexdigest()[:12]


def read_search_log(path: Path, run: str | None = None) -> list[dict[str, Any]]:
    """The complete lines of a search log (of run ``run`` only, when given)."""
    tag = f'"run": "{run}"'.encode() if run else b""
    return [r for r in read_log(path, only=tag) if run is None or r.get("run") == run]


@dataclass
class PairResult:
    theorem: Theorem
    method: str
    hunt: Hunt
    seconds: float
    budget: float
    exact: list[dict[str, Any]] = field(default_factory=list)
    counterexample: str = ""
    minimal: str = ""


def _stem(theorem: Theorem, method: str, point: Point) -> str:
    case = f"-{point.case}" if point.case else ""
    return f"{theorem.id}-{point.key()}-{method}{case}-search"


def hunt_pair(theorem: Theorem, method: str, directory: Path, options: VerifyOptions,
              search: SearchOptions, pool: Pool, fd: int) -> PairResult:  # fmt: skip
    """Search one pair within its budget (what the log holds replayed, not solved again)."""
    from dlsched.verify import metaopt

    lay = moves.layout(theorem.family)
    assert lay is not None
    run = run_key(theorem, method, options, search)
    lines = read_search_log(directory / SEARCH_LOG, run)
    logged = {(r["batch"], r["slot"]): r for r in lines if "batch" in r}
    spent = max((float(r["spent"]) for r in lines if "spent" in r), default=0.0)
    jobs = options.jobs or theorem.sizes.get("jobs")
    gpus = options.gpus or theorem.sizes.get("gpus")
    limits = _limits(lay, jobs, gpus)
    hunt = Hunt(theorem, method, lay, limits, (jobs, gpus), search.seed, search.batch)
    exact = metaopt.worst_cases(
        theorem.id, method, lines, search.budget, fd, run, spent, search.clock
    )
    spent = max([spent, *(float(e["spent"]) for e in exact)])
    hunt.seeds = [Point(e["instance"]) for e in exact if e.get("instance")]
    cx = directory / COUNTEREXAMPLES
    with progress_bar(round(search.budget), f"search {theorem.id} {method}", options,
                      unit="s") as bar:  # fmt: skip
        bar.update(min(round(spent), round(search.budget)))
        empty = 0
        while not hunt.finished and empty < 3:  # three batches with nothing new: all tried
            props = hunt.proposals()
            empty = 0 if any(props) else empty + 1
            missing = [i for i, p in enumerate(props) if p and (hunt.index, i) not in logged]
            if missing and spent >= search.budget:
                hunt.absorb(_from_log(props, logged, hunt.index))
                break
            results = _from_log(props, logged, hunt.index)
            if missing:
                before = spent
                spent = _solve_batch(hunt, props, missing, results, run, spent, search, options,
                                     pool, fd, cx)  # fmt: skip
                bar.update(
                    min(round(spent), round(search.budget))
                    - min(round(before), round(search.budget))
                )
            hunt.absorb(results)
    result = PairResult(theorem, method, hunt, spent, search.budget, exact)
    if hunt.violations:
        worst = max(hunt.violations, key=lambda s: s.score)
        result.counterexample = f"{COUNTEREXAMPLES}/{_stem(theorem, method, worst.point)}.json"
    return result


def _limits(lay: moves.Layout, jobs: int | None, gpus: int | None) -> Limits:
    j = 3 * (jobs or 3)
    return Limits(j, 2 * (gpus or 2), math.ceil(lay.work_per_job * j))


def _from_log(props: Sequence[Proposal | None], logged: dict[tuple[int, int], dict[str, Any]],
              index: int) -> list[tuple[Point, list[dict[str, Any]]] | None]:  # fmt: skip
    out: list[tuple[Point, list[dict[str, Any]]] | None] = []
    for i, _ in enumerate(props):
        line = logged.get((index, i))
        out.append((Point.from_json(line["point"]), line["rows"]) if line else None)
    return out


def _solve_batch(hunt: Hunt, props: Sequence[Proposal | None], missing: list[int],
                 results: list[Any], run: str, spent: float, search: SearchOptions,
                 options: VerifyOptions, pool: Pool, fd: int, cx: Path) -> float:  # fmt: skip
    """Solve the batch's missing slots on the pool, each logged as it finishes (a violation
    saved first); the seconds spent afterwards. Every solve gets at most what is left of the
    budget."""
    left = max(search.budget - spent, 1e-3)
    limit = options.solve.time_limit
    solve = options.solve.with_(time_limit=left if limit is None else min(limit, left))
    calls: list[Call] = []
    for i in missing:
        p = props[i]
        assert p is not None
        calls.append((evaluate, (hunt.theorem, hunt.method, p.point, solve)))
    start = search.clock()
    for finished in pool.map(calls, [hunt.method] * len(calls)):
        text = []
        for n, rows in finished:
            i = missing[n]
            p = props[i]
            assert p is not None
            rows = json.loads(json.dumps(rows, default=str))  # as a resumed run reads them
            for s in scored_points(p.point, rows):
                if s.row.get("holds") is False:
                    _save_violation(hunt, s, cx)
            line = {
                "theorem": hunt.theorem.id, "method": hunt.method, "run": run,
                "batch": hunt.index, "slot": i, "move": p.move,
                "instance_hash": instance_hash(from_dict(p.point.instance)),
                "spent": spent + search.clock() - start, "time_limit": solve.time_limit,
                "point": p.point.to_json(), "rows": rows,
            }  # fmt: skip
            text.append(json.dumps(line) + "\n")
            results[i] = (p.point, rows)
        if text:
            append_line(fd, "".join(text))
    return spent + search.clock() - start


def _save_violation(hunt: Hunt, s: Scored, cx: Path) -> None:
    stem = _stem(hunt.theorem, hunt.method, s.point)
    if not (cx / f"{stem}.json").exists():
        record = {**s.row, "theorem": hunt.theorem.id, "method": hunt.method}
        save_counterexample(from_dict(s.point.instance), record, cx, stem=stem)


# --- shrinking, sampling, rows -------------------------------------------------------------------


def worst_violations(res: PairResult, count: int) -> list[Scored]:
    """The ``count`` worst violations of a pair, each point once, worst first."""
    out: list[Scored] = []
    for v in sorted(res.hunt.violations, key=lambda s: -s.score):
        if len(out) < count and all(v.point.key() != o.point.key() for o in out):
            out.append(v)
    return out


def shrink_worst(results: Sequence[PairResult], directory: Path, options: VerifyOptions,
                 pool: Pool) -> None:  # fmt: skip
    """The ``options.shrink`` worst violations of each pair shrunk as ``verify --shrink``
    does, each saved beside its violation as ``<stem>-min.json`` (once); the pair's
    ``minimal`` is its worst violation's."""
    cx = directory / COUNTEREXAMPLES
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
                        case)  # fmt: skip
                calls.append((shrink_task, args))
                todo.append((res, stem))
    for finished in pool.map(calls, [r.method for r, _ in todo]):
        for n, (data, row, tries) in finished:
            res, stem = todo[n]
            if row is not None:
                record = {**row, "shrink_tries": tries}
                save_counterexample(from_dict(data), record, cx, stem=f"{stem}-min")
    for res in results:
        for v in worst_violations(res, options.shrink):
            stem = _stem(res.theorem, res.method, v.point)
            if (cx / f"{stem}-min.json").exists():
                res.minimal = f"{COUNTEREXAMPLES}/{stem}-min.json"
                break


def sample(theorem: Theorem, needed: dict[str, int], directory: Path, options: VerifyOptions,
           pool: Pool) -> dict[str, list[dict[str, Any]]]:  # fmt: skip
    """A plain seeded sample (``verify``'s run into ``verify.jsonl``, instance k drawn with seed
    ``first_seed + k``) grown until each method has at least ``needed`` rows (certified
    solves), or 8 times the instances that would take; each method's first rows in seed
    order."""
    most = max(needed.values(), default=0)
    count = max(1, most)
    rows: dict[str, list[dict[str, Any]]] = {m: [] for m in needed}
    while most > 0:
        run_sample([theorem], directory, dataclasses.replace(options, count=count), pool)
        rows = _sample_rows(theorem, needed, directory, options, count)
        short = [m for m, n in needed.items() if len(rows[m]) < n]
        if not short or count >= 8 * most:
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


def pair_row(res: PairResult, sampled: list[dict[str, Any]]) -> dict[str, Any]:
    """The row of ``search.json`` of one pair."""
    hunt, best = res.hunt, res.hunt.best
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
        "solves": hunt.solves,
        "seconds": round(res.seconds, 3),
        "budget": res.budget,
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


def read_rows(directory: Path) -> list[dict[str, Any]]:
    path = Path(directory) / SEARCH_JSON
    return json.loads(path.read_text()) if path.exists() else []


# --- the run ---------------------------------------------------------------------------------


def unattackable(theorem: Theorem) -> str | None:
    """Why the search cannot attack ``theorem`` (None: it can)."""
    if not theorem.methods:
        return "has no method to attack"
    if moves.layout(theorem.family) is None:
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


def search(theorems: Sequence[Theorem], directory: str | Path, options: VerifyOptions,
           budget: SearchOptions, pool: Pool | None = None) -> SearchSummary:  # fmt: skip
    """Search every (theorem, method) pair of ``theorems`` for its worst case within
    ``budget`` (resumed from ``DIR/search.jsonl``), shrink each pair's worst violation, take
    the seeded sample beside it, and write ``DIR/search.json``."""
    check_attackable(theorems)
    if pool is None:
        check_scheduler(options)
    d = Path(directory)
    d.mkdir(parents=True, exist_ok=True)
    summary = SearchSummary(d)
    with ExitStack() as stack:
        if pool is None:
            modules = [*worker_modules(theorems), __name__]
            pool = stack.enter_context(Pool(options, modules))
        for t in theorems:
            with locked_log(d / SEARCH_LOG) as fd:
                repair_tail(d / SEARCH_LOG, fd)
                results = [hunt_pair(t, m, d, options, budget, pool, fd) for m in t.methods]
            shrink_worst(results, d, options, pool)
            sampled = sample(t, {r.method: r.hunt.solves for r in results}, d, options, pool)
            rows = [pair_row(r, sampled[r.method]) for r in results]
            write_rows(d, rows)
            summary.rows += rows
    return summary


#: Seconds per pair when ``--search`` is given without ``--budget``.
DEFAULT_BUDGET = 60.0


def command(theorems: Sequence[Theorem], directory: Path, options: VerifyOptions,
            searching: bool, budget: float | None) -> str:  # fmt: skip
    """``dlsched verify --search``: the search, the report, and what to print."""
    from dlsched.verify.report import write_report

    if not searching:
        raise OptionError("--budget", budget, "is the budget of --search; add --search")
    check_attackable(theorems)
    s = search(theorems, directory, options, SearchOptions(budget or DEFAULT_BUDGET))
    md, _ = write_report(directory)
    lines = [f"{len(s.rows)} (theorem, method) pairs searched into {directory / SEARCH_JSON}; "
             f"report: {md}"]  # fmt: skip
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
    "unattackable",
]
