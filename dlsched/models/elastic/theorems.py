"""The claims of seed 003 (Zhou et al., IEEE TCC) as :class:`~dlsched.verify.Theorem` records,
checked by ``dlsched verify``.

- 003-thm1 / 003-thm6: A_mincost1/2 (parameter server) and A_RAmincost1/2 (Ring-AllReduce)
  solve problem (13) / (21) optimally. Each instance brings three cases drawn from its content
  hash (random prices over a window, random free capacity, a random m', p', n and q); the ratio
  is the algorithm's cost over the MILP's optimum of the same problem (HiGHS).
- 003-thm3: OPT / A_maxweight <= 2 log lambda for ILP (8)/(17), under Section 5.1's assumptions
  (1 <= w_j / consumption and demand / capacity <= 1 / log lambda).
- 003-thm5: A_online is 4 alpha-competitive against the certified offline optimum, under the
  same assumptions. Small generated instances break both assumptions, so these two theorems
  draw them with weights and capacities scaled until they hold (:func:`within_assumptions`).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterator, Mapping
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

from dlsched.bounds import SLACK, within
from dlsched.instances import instance_hash
from dlsched.models import MethodOptions
from dlsched.models.elastic.algorithms import Ledger, a_maxweight, lam
from dlsched.models.elastic.generate import generate
from dlsched.models.elastic.guarantees import (
    ALGORITHM_NAMES,
    assumptions,
    max_weight_optimum,
    oracle_costs,
    problem13_costs,
    reading,
    theorem3_guarantee,
    theorem5_guarantee,
)
from dlsched.models.elastic.instance import ElasticInstance
from dlsched.verify.theorem import (
    Measurement,
    Paper,
    Theorem,
    at_most_one,
    drop_each,
    replaced,
    timed,
)

PAPER = "seed 003: Zhou et al., Online Scheduling of Heterogeneous Distributed ML Jobs, IEEE TCC"
CASES = 3


def ps(seed: int, jobs: int | None = None, gpus: int | None = None) -> ElasticInstance:
    return generate(jobs or 2, gpus or 2, seed, architecture="ps")


def ring(seed: int, jobs: int | None = None, gpus: int | None = None) -> ElasticInstance:
    return generate(jobs or 2, gpus or 2, seed, architecture="ring")


def within_assumptions(
    seed: int, jobs: int | None = None, gpus: int | None = None
) -> ElasticInstance:
    """:func:`ps` with weights and capacities scaled until Section 5.1's assumptions hold:
    weights by ceil(1 / min w_j / consumption), capacities by ceil(max share x log lambda)
    (lambda does not depend on capacity; a few rounds, since the schedules enumerated grow
    with capacity)."""

    inst = ps(seed, jobs, gpus)
    for _ in range(4):
        f_value, lam_value = lam(inst)
        a = assumptions(inst, lam_value, f_value)
        c = max(1.0, math.ceil(1 / a["min_weight_per_consumption"]))
        k = max(1, math.ceil(a["max_share"] * math.log2(lam_value)))
        if c == 1 and k == 1:
            break
        inst = dataclasses.replace(
            inst,
            jobs=tuple(dataclasses.replace(j, weight=j.weight * c) for j in inst.jobs),
            servers=tuple(
                dataclasses.replace(s, capacity=tuple(x * k for x in s.capacity))
                for s in inst.servers
            ),
        )
    return inst


def _case(inst: ElasticInstance, rng: np.random.Generator) -> dict:
    """Prices over a window, free capacity (the capacity less a random load), m', p', n, q."""
    cap = np.array([s.capacity for s in inst.servers])
    shape = (inst.num_servers, len(inst.resources))
    win = rng.random(shape) * (rng.random(shape) < 0.7) * rng.integers(1, 6)
    room = np.maximum(cap - rng.integers(0, 3, shape) * (rng.random(shape) < 0.5), 0)
    return {
        "m": int(rng.integers(len(inst.worker_types))),
        "p": int(rng.integers(len(inst.ps_choices()))),
        "n": int(rng.integers(1, inst.jobs[0].chunks + 1)),
        "q": bool(rng.random() < 0.5),
        "win": win,
        "room": room,
    }


def _over(paper: float, exact: float | None) -> float | None:
    """The algorithm's cost over the optimum (1 or inf when the optimum is 0)."""
    if exact is None or not math.isfinite(exact):
        return None
    tol = SLACK * max(1.0, abs(exact))
    if exact > tol:
        return paper / exact
    return 1.0 if paper <= exact + tol else math.inf


def _row(inst: ElasticInstance, method: str, costs: tuple, case: str, details: dict) -> Measurement:
    """A case's measurement from (algorithm, optimum, Algorithm 4 without its g = N
    iteration); a violation names its kind (:func:`~dlsched.models.elastic.guarantees.reading`)."""
    paper, exact, other = costs
    ratio, note = _over(paper, exact), ""
    if exact is None and math.isfinite(paper):  # e.g. one server where q = 0 is demanded
        note = f"{method} returns cost {paper} with a placement (13a)/(21a) excludes"
    elif exact is not None and paper < exact - SLACK * max(1.0, abs(exact)):
        note = f"{method} cost {paper} below the optimum {exact}: placement outside (13)"
    elif ratio is not None and not within(ratio, 1.0):
        kind = reading(other, exact)
        details = {**details, "other_reading": other, "kind": kind}
        note = f"kind {kind}: Algorithm 4 without its g = N iteration costs {other}"
    known = exact is not None and math.isfinite(exact)
    return Measurement(
        method, paper, exact, "optimum" if known else "none", ratio, 1.0, case=case, note=note,
        details=details,
    )  # fmt: skip


def _mincost_case(inst: ElasticInstance, c: dict, case: str) -> Measurement:
    """One case: the algorithm's cost over the MILP's optimum."""
    costs = problem13_costs(inst, c["m"], c["p"], c["n"], c["q"], c["win"], c["room"])
    details = {
        **{key: c[key] for key in ("m", "p", "n", "q")},
        "prices": c["win"].tolist(),
        "free": c["room"].tolist(),
    }
    return _row(inst, ALGORITHM_NAMES[(inst.is_ps, c["q"])], costs, case, details)


def _oracle_case(inst: ElasticInstance, details: Mapping[str, Any], case: str) -> Measurement:
    """The whole oracle of one job (``A_mincost`` / ``A_RAmincost``: the cheaper of the two
    algorithms over every shape) over the exact minimum of (12)/(20)."""
    j, window = int(details["job"]), (int(details["window"][0]), int(details["window"][1]))
    prices = np.array(details["prices"], dtype=float)
    free = np.array(details["free"], dtype=float)
    costs = oracle_costs(inst, j, prices, free, window)
    mine = {key: details[key] for key in ("job", "window", "prices", "free")}
    return _row(inst, "A_mincost" if inst.is_ps else "A_RAmincost", costs, case, mine)


def mincost_measure(
    theorem: Theorem, inst: ElasticInstance, options: MethodOptions
) -> list[Measurement]:
    """A_mincost's (A_RAmincost's) cost over the exact MILP of (13) / (21), three cases."""
    rng = np.random.default_rng(int(instance_hash(inst), 16))
    cases = [_case(inst, rng) for _ in range(CASES)]
    return [timed(partial(_mincost_case, inst, c, f"case{k}")) for k, c in enumerate(cases)]


def _from_details(details: Mapping[str, Any]) -> dict:
    return {
        **{key: details[key] for key in ("m", "p", "n", "q")},
        "win": np.array(details["prices"], dtype=float),
        "room": np.array(details["free"], dtype=float),
    }


def mincost_replay(
    theorem: Theorem, inst: ElasticInstance, case: str, details: Mapping[str, Any],
    options: MethodOptions,
) -> list[Measurement]:  # fmt: skip
    """One recorded case (a row's details: m', p', n, q, prices, free capacity; or, for the
    whole oracle of one job, job, window, prices and free capacity per slot) measured again
    (the shrinking of Theorems 1 and 6 keeps the violating case fixed)."""
    if "job" in details:
        return [timed(partial(_oracle_case, inst, details, case))]
    return [timed(partial(_mincost_case, inst, _from_details(details), case))]


def mincost_shrink(
    inst: ElasticInstance, details: Mapping[str, Any]
) -> Iterator[tuple[ElasticInstance, dict[str, Any]]]:
    """The case kept on a smaller instance: a server removed (its prices and free capacity
    too; two servers kept when q = 0, which (13a)/(21a) excludes on one server), a job removed
    (n stays within the first job's chunks), or one worker fewer. A whole-oracle case is not
    shrunk."""
    if "job" in details:
        return
    for h in range(inst.num_servers) if inst.num_servers > (1 if details["q"] else 2) else ():
        cand = replaced(inst, servers=inst.servers[:h] + inst.servers[h + 1 :])
        if cand is not None:
            rows = {key: details[key][:h] + details[key][h + 1 :] for key in ("prices", "free")}
            yield cand, {**details, **rows}
    for cand in drop_each(inst, "jobs"):
        if details["n"] <= cand.jobs[0].chunks:
            yield cand, dict(details)
    if details["n"] > 1:
        yield inst, {**details, "n": details["n"] - 1}


def theorem5_bound(inst: ElasticInstance) -> float:
    """Theorem 5's 4 alpha (:func:`.guarantees.theorem5_guarantee`). The guarantees, and
    Pyomo with them, are imported by the measurements that use them, so listing the theorems
    (``dlsched verify --list``) stays light."""

    return theorem5_guarantee(inst)


def section51(inst: ElasticInstance) -> str | None:
    """Section 5.1's two assumptions over every enumerated schedule; the failing ones."""

    f_value, lam_value = lam(inst)
    a = assumptions(inst, lam_value, f_value)
    bad = []
    if not a["weight_at_least_consumption"]:
        bad.append(f"w_j / consumption = {a['min_weight_per_consumption']:.3g} < 1")
    if not a["small_demand"]:
        bad.append(f"demand / capacity = {a['max_share']:.3g} > 1 / log lambda")
    return "; ".join(bad) or None


def maxweight_measure(
    theorem: Theorem, inst: ElasticInstance, options: MethodOptions, tau: int | None = None
) -> list[Measurement]:
    """OPT / A_maxweight on ILP (8)/(17) by ``tau`` (default: the whole horizon)."""
    by = inst.horizon if tau is None else tau

    def one() -> Measurement:
        opt = max_weight_optimum(inst, by)
        _, lam_value = lam(inst)
        got = a_maxweight(inst, list(range(inst.num_jobs)), (0, by), Ledger(inst), lam_value)
        alg = sum(inst.jobs[j].weight for j, _, _ in got)
        ratio = opt / alg if alg > 0 else (math.inf if opt > 0 else 1.0)
        bound = theorem.bound(inst) if theorem.bound is not None else None
        return Measurement(
            "a-maxweight", alg, opt, "optimum", ratio, bound, "",
            details={"lambda": lam_value, "tau": by},
        )  # fmt: skip

    return [timed(one)]


def shrink(inst: ElasticInstance) -> Iterator[ElasticInstance]:
    """A job removed, or a server removed."""
    yield from drop_each(inst, "jobs")
    yield from drop_each(inst, "servers")


SEED_003 = Paper(PAPER, "elastic", within_assumptions, {"jobs": 2, "gpus": 2}, shrink)


def _mincost(number: int) -> Theorem:
    """Theorem 1 (parameter server, Algorithms 4 and 5) or Theorem 6 (Ring-AllReduce,
    Algorithms 6 and 7): the algorithms' cost against the MILP of (13) / (21), on cases kept
    fixed while the instance shrinks."""
    ps_ = number == 1
    which = "Algorithm 4 and Algorithm 5" if ps_ else "Algorithm 6 and Algorithm 7"
    problem = "problem (13)" if ps_ else "problem (16)"
    return SEED_003.theorem(
        f"003-thm{number}",
        f"Theorem {number}. {which} yield an optimal solution of {problem} in two scenarios, "
        "respectively.",
        ("A_mincost1", "A_mincost2") if ps_ else ("A_RAmincost1", "A_RAmincost2"),
        "MILP of (13)/(21) (HiGHS)",
        "algorithm's cost / MILP optimum",
        generate=ps if ps_ else ring,
        shrink=None,
        bound=at_most_one,
        measure=mincost_measure,
        replay=mincost_replay,
        shrink_case=mincost_shrink,
    )


THEOREMS: list[Theorem] = [
    _mincost(1),
    SEED_003.theorem(
        "003-thm3",
        "Theorem 3. The approximation ratio of A_maxweight in Algorithm 3 is 2 log lambda.",
        ["a-maxweight"],
        "ILP (8)/(17) (HiGHS)",
        "optimum / A_maxweight (weight)",
        bound=theorem3_guarantee,
        assumptions=section51,
        measure=maxweight_measure,
    ),
    SEED_003.theorem(
        "003-thm5",
        "Theorem 5. A_online in Algorithm 1 is 4 alpha-competitive, where alpha = "
        "floor((log w(J) - log w_min) / (1 + log log lambda - log(2 log lambda - 1))) + 1.",
        ["a-online"],
        "exact",
        "A_online / optimum",
        guarantee="Theorem 5: 4 alpha",
        bound=theorem5_bound,
        assumptions=section51,
    ),
    _mincost(6),
]

BY_ID = {t.id: t for t in THEOREMS}

#: The counterexamples to Theorems 1/6 the benchmark found, each a verify row with its instance
#: (rechecked by :func:`dlsched.verify.check.recheck`).
COUNTEREXAMPLES = Path(__file__).parent / "data" / "violations"


def maxweight_by(tau: int) -> Theorem:
    """Theorem 3 by ``tau`` in place of the horizon (the same ILP (8)/(17), A_maxweight's window
    (0, tau))."""
    return dataclasses.replace(BY_ID["003-thm3"], measure=partial(maxweight_measure, tau=tau))


# --- Theorems 1 and 6 over random cases, on the core's runner ---------------------------------


def mincost_cases(
    count: int, seed: int = 0, architecture: str = "ps", servers: int = 3
) -> list[tuple[ElasticInstance, dict]]:
    """``count`` random cases from one generator of ``seed``: a small generated instance (2
    jobs on ``servers`` servers), then its prices over a window, free capacity and (m', p', n,
    q) as :func:`mincost_measure` draws them."""
    rng = np.random.default_rng(seed)
    out = []
    for k in range(count):
        inst = generate(2, servers, int(rng.integers(2**31)), architecture=architecture)
        inst = dataclasses.replace(inst, name=f"theorem1-{architecture}-s{seed}-{k}")
        out.append((inst, _case(inst, rng)))
    return out


def mincost_sweep(
    count: int,
    seed: int = 0,
    *,
    architecture: str = "ps",
    servers: int = 3,
    directory: Path | None = None,
) -> tuple[list[dict[str, Any]], list[Path]]:
    """Theorem 1 (``architecture`` "ps") or 6 ("ring") on the cases of :func:`mincost_cases`,
    one case an instance, by the core's :func:`dlsched.verify.check.sample` (instance k is
    ``003-thm1-s<k>``, its case ``case<k>``): the rows, and every violation saved under
    ``directory/counterexamples`` when a directory is given (the log resumes there)."""
    from dlsched.verify.check import sample

    drawn = mincost_cases(count, seed, architecture, servers)
    by_hash: dict[str, tuple[int, dict]] = {}

    def measure(theorem: Theorem, inst: ElasticInstance, options: MethodOptions) -> list:
        k, c = by_hash[instance_hash(inst)]
        return [timed(partial(_mincost_case, inst, c, f"case{k}"))]

    base = BY_ID["003-thm1" if architecture == "ps" else "003-thm6"]
    theorem = dataclasses.replace(base, generate=lambda s, **_: drawn[s][0], measure=measure)
    by_hash.update((instance_hash(theorem.instance(k)), (k, c)) for k, (_, c) in enumerate(drawn))
    return sample(theorem, count, 0, directory=directory)


__all__ = [
    "COUNTEREXAMPLES",
    "THEOREMS",
    "maxweight_by",
    "maxweight_measure",
    "mincost_cases",
    "mincost_measure",
    "mincost_replay",
    "mincost_shrink",
    "mincost_sweep",
    "shrink",
]
