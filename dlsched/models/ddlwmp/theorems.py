"""The claim of seed 001 (Luo, Liu, Lee, Shroff) as a :class:`~dlsched.verify.Theorem` record,
checked by ``dlsched verify``.

- 001-thm1: A-SRPT's total completion time is at most Theorem 1's factor (a function of the
  instance: tau, rho, G, g^max, alpha^max / alpha^min and the mean prediction error) times the
  certified optimum of problem (8). Measured for ``a-srpt`` on predicted iterations (each
  job's prediction drawn within +-50% of the truth) and ``a-srpt-perfect``
  (``001-thm1-perfect``), each under both numberings of the slots (sub-cases ``from-1``, the
  paper's [T] = {1, ..., T}, and ``from-0``; docs/errata.md V-11): the same schedules, whose
  completion times differ by one slot each, so the ratio differs where a slot is long beside
  the jobs.

:func:`sweep` runs both on the core's runner over instances whose predictions carry a chosen
lognormal noise (eps_bar grows with it).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator, Mapping
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

from dlsched.models import MethodOptions
from dlsched.models.ddlwmp.generate import generate
from dlsched.models.ddlwmp.guarantees import theorem1
from dlsched.models.ddlwmp.instance import SLOTS, DdlwmpInstance
from dlsched.solvers import SolveOptions
from dlsched.verify.theorem import Measurement, Paper, Theorem, drop_each, ratio_measure

PAPER = "seed 001: Luo, Liu, Lee, Shroff, Prediction-Assisted Online DDL Workload Scheduling"


def small(seed: int, jobs: int | None = None, gpus: int | None = None) -> DdlwmpInstance:
    """The family's small setting on servers of 2 GPUs (3 jobs on 6 GPUs by default: jobs use
    at most 4 GPUs, so g^max < G), each job's predicted iterations drawn
    uniformly within +-50% of its true count (at least 1)."""
    inst = generate(jobs or 3, gpus or 6, seed, gpus_per_server=2)
    rng = np.random.default_rng([seed, 1])
    jobs_ = tuple(
        dataclasses.replace(
            j, predicted_iterations=max(1, round(j.iterations * float(rng.uniform(0.5, 1.5))))
        )
        for j in inst.jobs
    )
    return dataclasses.replace(inst, jobs=jobs_)


def below_cluster(inst: DdlwmpInstance) -> str | None:
    """Theorem 1 divides by G - g^max: a job as wide as the cluster leaves no bound."""
    g_max = max(j.gpus for j in inst.jobs)
    if g_max >= inst.cluster.total_gpus:
        return f"g^max = {g_max} = G: the bound is infinite"
    return None


def shrink(inst: DdlwmpInstance) -> Iterator[DdlwmpInstance]:
    """A job removed."""
    return drop_each(inst, "jobs")


def numbered(inst: DdlwmpInstance, slots: str) -> DdlwmpInstance:
    """``inst`` with its slots numbered ``slots`` ("from-1": the paper's [T], or "from-0")."""
    return dataclasses.replace(inst, cluster=dataclasses.replace(inst.cluster, slots=slots))


def _under(
    theorem: Theorem, inst: DdlwmpInstance, slots: str, options: MethodOptions
) -> list[Measurement]:
    """The theorem's rows with the slots numbered ``slots``, a sub-case named after it."""
    rows = ratio_measure(theorem, numbered(inst, slots), options)
    return [dataclasses.replace(m, case=slots, details={"slots": slots}) for m in rows]


def slots_measure(
    theorem: Theorem, inst: DdlwmpInstance, options: MethodOptions
) -> list[Measurement]:
    """Methods / certified optimum under each numbering of the slots (:data:`SLOTS`), the
    paper's first; whatever numbering ``inst`` itself names."""
    return [m for slots in SLOTS for m in _under(theorem, inst, slots, options)]


def slots_replay(
    theorem: Theorem, inst: DdlwmpInstance, case: str, details: Mapping[str, Any],
    options: MethodOptions,
) -> list[Measurement]:  # fmt: skip
    """One numbering (a row's ``details["slots"]``) measured again."""
    slots = str(details.get("slots", case))
    if slots not in SLOTS:
        raise ValueError(f"slots {slots!r}: expected one of {', '.join(SLOTS)}")
    return _under(theorem, inst, slots, options)


def slots_shrink(
    inst: DdlwmpInstance, details: Mapping[str, Any]
) -> Iterator[tuple[DdlwmpInstance, dict[str, Any]]]:
    """A job removed, the numbering kept."""
    for cand in shrink(inst):
        yield cand, dict(details)


SEED_001 = Paper(PAPER, "ddlwmp", small, {"jobs": 3, "gpus": 6}, shrink)
STATEMENT = (
    "Theorem 1 (Total job completion time achieved by A-SRPT). Gamma_A is no larger than (2 + "
    "tau + rho G / (G - g^max)) rho + 2 rho g^max alpha^max / alpha^min (1 + tau + (1 + rho) G "
    "/ (G - g^max)) eps_bar times the optimal job completion time OPT_A."
)
STATEMENT_PERFECT = (
    "Theorem 1 with exact predictions (eps_bar = 0): Gamma_A <= (2 + tau + rho G / (G - g^max)) "
    "rho OPT_A."
)


def _theorem1(perfect: bool) -> Theorem:
    """Theorem 1 for A-SRPT on the predicted iterations, or (``perfect``) on the true ones
    (eps_bar = 0): its guarantee in ``compare`` and its record in ``verify``."""
    suffix, which, reading = ("-perfect", " (true iterations)", ", exact predictions")
    if not perfect:
        suffix, which, reading = "", "", ""
    return SEED_001.theorem(
        f"001-thm1{suffix}",
        STATEMENT_PERFECT if perfect else STATEMENT,
        [f"a-srpt{suffix}"],
        "exact",
        f"A-SRPT{which} / optimum",
        guarantee=f"Theorem 1 (tau=1{reading})",
        bound=partial(_bound, perfect=perfect),
        assumptions=below_cluster,
        measure=slots_measure,
        replay=slots_replay,
        shrink_case=slots_shrink,
    )


def _bound(inst: DdlwmpInstance, perfect: bool) -> float:
    return theorem1(inst, perfect=perfect).bound


THEOREMS: list[Theorem] = [_theorem1(perfect=False), _theorem1(perfect=True)]


# --- Theorem 1 over prediction noise, on the core's runner ------------------------------------


def noisy_predictions(
    instance: DdlwmpInstance, noise: float, rng: np.random.Generator
) -> DdlwmpInstance:
    """The instance with n~_i = round(n_i x lognormal(0, noise)) (eps_bar grows with noise)."""
    jobs = tuple(
        dataclasses.replace(
            j, predicted_iterations=max(0, round(j.iterations * rng.lognormal(0.0, noise)))
        )
        for j in instance.jobs
    )
    return dataclasses.replace(instance, jobs=jobs)


def sweep(
    count: int,
    seed: int = 0,
    *,
    directory: Path | None = None,
    jobs: int = 5,
    workers: int = 8,
    gpus_per_server: int = 4,
    noise: float = 0.5,
    solve_options: SolveOptions | None = None,
) -> tuple[list[dict[str, Any]], list[Path]]:
    """Theorem 1 for ``a-srpt`` (``001-thm1``) and ``a-srpt-perfect`` (``001-thm1-perfect``)
    on ``count`` generated instances (seeds ``seed``, ...; ``jobs`` jobs on ``workers`` GPUs,
    predictions with lognormal ``noise``) against their certified optima, by the core's
    :func:`dlsched.verify.check.sample`: the rows of both, and every violation saved under
    ``directory/counterexamples`` when a directory is given (the log resumes there)."""
    from dlsched.verify.check import sample

    size = (jobs, workers)

    def draw(s: int, jobs: int | None = None, gpus: int | None = None) -> DdlwmpInstance:
        base = generate(*size, s, gpus_per_server=gpus_per_server)
        return noisy_predictions(base, noise, np.random.default_rng([s, 2]))

    rows, saved = [], []
    for t in ("001-thm1", "001-thm1-perfect"):
        got, files = sample(t, count, seed, generate=draw, directory=directory,
                            solve=solve_options)  # fmt: skip
        rows += got
        saved += files
    return rows, sorted(set(saved))


__all__ = [
    "THEOREMS",
    "noisy_predictions",
    "numbered",
    "shrink",
    "slots_measure",
    "slots_replay",
    "slots_shrink",
    "small",
    "sweep",
]
