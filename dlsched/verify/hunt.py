"""The state of one lane of a (claim, method) pair's worst-case search (:mod:`.search` runs
the pair's lanes side by side): its points, their scores, the chains and the proposals of each
batch, advanced only by its seed and the results it is given, so that a lane replayed from its
log proposes the same candidates.

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
"""

from __future__ import annotations

import hashlib
import json
import math
import pickle
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import numpy as np

from dlsched import families
from dlsched.errors import DlschedError
from dlsched.instances import from_dict, to_dict
from dlsched.verify import moves
from dlsched.verify.theorem import Theorem

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


def family_layout(family: str) -> moves.Layout | None:
    """Where ``family``'s raw instance keeps what the moves change: its ``layout`` part
    (None: the search cannot attack its theorems)."""
    return families.get(family).layout()


# --- points and scores --------------------------------------------------------------------------


@dataclass(frozen=True)
class Point:
    """A candidate: the raw instance and, for a theorem measured on recorded sub-cases, the
    sub-case (``case``, ``details``; None: measured afresh, its own sub-cases drawn)."""

    instance: dict[str, Any]
    case: str = ""
    details: dict[str, Any] | None = None

    @cached_property
    def _key(self) -> str:
        raw = {k: v for k, v in self.instance.items() if k not in ("name", "description")}
        text = json.dumps([raw, self.case, self.details], sort_keys=True, default=str)
        return hashlib.sha256(text.encode()).hexdigest()[:16]

    def key(self) -> str:
        """Content hash (names left out): the tabu list's entry (computed once)."""
        return self._key

    @cached_property
    def parsed(self) -> Any:
        """The family's instance of ``instance`` (its ``from_dict``, which validates it; read
        once, and not pickled with the point)."""
        return from_dict(self.instance, "search")

    def __getstate__(self) -> dict[str, Any]:
        return {k: v for k, v in self.__dict__.items() if k != "parsed"}

    def pair(self) -> moves.Pair:
        return self.instance, self.details

    def to_json(self) -> dict[str, Any]:
        return {"instance": self.instance, "case": self.case, "details": self.details}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Point:
        return cls(data["instance"], data.get("case") or "", data.get("details"))


def spread(point: Point, layout: moves.Layout) -> float:
    """The largest ratio of two positive values of one field of ``point``."""
    low: dict[tuple[Any, ...], float] = {}
    high: dict[tuple[Any, ...], float] = {}
    for field_, v in moves.fields({"instance": point.instance, "details": point.details},
                                  layout.labels):  # fmt: skip
        if v > 0:
            if field_ not in low:
                low[field_] = high[field_] = v
            elif v < low[field_]:
                low[field_] = v
            elif v > high[field_]:
                high[field_] = v
    return max((high[f] / low[f] for f in low), default=1.0)


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


@dataclass
class Record:
    """What a search has found, in the order its candidates were solved: the solves (rows
    that are not errors), the best scored point and each improvement (``history``: (solves,
    best score)), the best at each number of jobs, and every violation."""

    solves: int = 0
    best: Scored | None = None
    history: list[tuple[int, float]] = field(default_factory=list)
    by_jobs: dict[int, Scored] = field(default_factory=dict)
    violations: list[Scored] = field(default_factory=list)
    #: False: the solves, the best and its history only (a lane's own, carried to and from
    #: the workers with every leg: its violations would grow it without bound)
    full: bool = True

    def add(self, point: Point, rows: Sequence[dict[str, Any]]) -> list[Scored]:
        """One candidate's rows counted; its scored points (the record updated by each)."""
        self.solves += sum(r.get("status") != "error" for r in rows)
        found = scored_points(point, rows)
        for s in found:
            if self.full:
                if s.row.get("holds") is False:
                    self.violations.append(s)
                size = moves.jobs(s.point.instance)
                if size not in self.by_jobs or s.score > self.by_jobs[size].score:
                    self.by_jobs[size] = s
            if self.best is None or s.score > self.best.score:
                self.best = s
                self.history.append((self.solves, s.score))
        return found


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

    def __getstate__(self) -> dict[str, Any]:
        """Pickled without the layout (found again from the family where it lands), the
        strategy as bytes loaded after ``import cma``: the package's modules import each
        other, and a process should import the package whole before any of its classes."""
        state = {k: v for k, v in self.__dict__.items() if k != "layout"}
        return {**state, "es": pickle.dumps(self.es), "family": self.layout.family}

    def __setstate__(self, state: dict[str, Any]) -> None:
        import cma  # noqa: F401 - the package first, then its classes

        family = state.pop("family")
        self.__dict__.update({**state, "es": pickle.loads(state["es"])})
        layout = family_layout(family)
        assert layout is not None
        self.layout = layout

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
            raw = moves.clone(self.template.instance)
            details = moves.clone(self.template.details)
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
    elite: list[Scored] = field(default_factory=list)
    seen: dict[str, float | None] = field(default_factory=dict)  # tabu: point key -> score
    lane: int = 0  # which of the pair's independent searches (its own stream of draws)
    record: Record = field(default_factory=lambda: Record(full=False))  # the pair's is kept
    # by the caller, in log order
    cma: Cma | None = None
    seeds: list[Point] = field(default_factory=list)  # points the first batch starts from
    pending: list[Proposal | None] = field(default_factory=list)
    cma_keys: list[str] = field(default_factory=list)  # what CMA-ES asked, in order
    credit: dict[str, list[int]] = field(default_factory=dict)  # move -> [tries, wins]
    scored: int = 0  # scored rows so far
    at_best: int = 0  # of which tie with the best
    empty: int = 0  # batches in a row with no candidate (every one tried already)

    def __post_init__(self) -> None:
        self.chains = [Chain() for _ in range(max(1, self.batch // OFFSPRING))]
        digest = hashlib.sha256(f"{self.theorem.id}|{self.method}".encode()).digest()
        self.base = [self.seed, int.from_bytes(digest[:4], "big"), self.lane]

    def __getstate__(self) -> dict[str, Any]:
        """Pickled without its layout (looked up again from the family where it lands)."""
        return {k: v for k, v in self.__dict__.items() if k != "layout"}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        layout = family_layout(self.theorem.family)
        assert layout is not None
        self.layout = layout

    @property
    def best(self) -> Scored | None:
        return self.record.best

    @property
    def solves(self) -> int:
        return self.record.solves

    @property
    def flat(self) -> bool:
        """Half the scored rows or more tie with the best."""
        return self.best is not None and 2 * self.at_best >= self.scored

    @property
    def finished(self) -> bool:
        """An infinite ratio found (nothing is worse)."""
        return self.best is not None and math.isinf(self.best.score)

    @property
    def done(self) -> bool:
        """Finished, or three batches in a row had nothing new to propose."""
        return self.finished or self.empty >= 3

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
            inst = point.parsed
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
        self.empty = 0 if any(out) else self.empty + 1
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
        before = self.best
        found = self.record.add(point, rows)
        for s in found:
            self.scored += 1
            if before is None or s.score > before.score * (1 + 1e-9):
                self.at_best = 0
                before = s
            if s.score >= before.score * (1 - 1e-9):
                self.at_best += 1
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


__all__ = [
    "BATCH",
    "Cma",
    "Hunt",
    "Limits",
    "Point",
    "Proposal",
    "Record",
    "Scored",
    "family_layout",
    "score",
    "scored_points",
    "spread",
]
