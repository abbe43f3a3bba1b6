"""Theorem 1 of Luo et al. (seed 001): A-SRPT's competitive ratio as a function of the instance.

    Gamma_A / OPT_A < (2 + tau + rho G / (G - g^max)) rho
                      + 2 rho g^max rho_bar (1 + tau + (1 + rho) G / (G - g^max)) eps_bar

with rho = max_i alpha_i^max / alpha_i^min, rho_bar = alpha^max / alpha^min (over all jobs),
g^max = max_i g_i and eps_bar the mean absolute prediction error |n_i - n~_i| (eq. 9). The
bound is infinite when g^max = G. alpha_i^min is the certified lower bound of the placement
MILP (the optimum when it closes), so rho here is never below the true rho and the recorded
guarantee is never tighter than the theorem's. The theorem itself (its guarantee in
``dlsched compare`` and its record in ``dlsched verify``) is defined once, in :mod:`.theorems`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from dlsched import bounds
from dlsched.bounds import SLACK
from dlsched.models.ddlwmp.alpha import alpha_max_ms
from dlsched.models.ddlwmp.bounds import alpha_min_lower
from dlsched.models.ddlwmp.instance import DdlwmpInstance
from dlsched.models.ddlwmp.predict import Predictor


@dataclass(frozen=True)
class Theorem1:
    tau: float
    rho: float
    rho_bar: float
    total_gpus: int
    g_max: int
    eps_bar: float
    bound: float

    def to_json(self) -> dict[str, Any]:
        return dict(self.__dict__)


def theorem1(
    instance: DdlwmpInstance,
    tau: float = 1.0,
    perfect: bool = False,
    predicted: Sequence[float] | None = None,
) -> Theorem1:
    """The guarantee on ``instance``; eps_bar from ``predicted`` (n~_i per job, e.g. a
    predictor's output) when given, else from the jobs' ``predicted_iterations``."""
    c = instance.cluster
    amax = [alpha_max_ms(j, c) for j in instance.jobs]
    amin = [alpha_min_lower(j, c) for j in instance.jobs]
    rho = max(a / b for a, b in zip(amax, amin, strict=True))
    rho_bar = max(amax) / min(amin)
    big_g, g_max = c.total_gpus, max(j.gpus for j in instance.jobs)
    guess = [j.predicted for j in instance.jobs] if predicted is None else list(predicted)
    errors = [
        0.0 if perfect else abs(j.iterations - p) for j, p in zip(instance.jobs, guess, strict=True)
    ]
    eps = sum(errors) / len(errors)
    if g_max >= big_g:
        return Theorem1(tau, rho, rho_bar, big_g, g_max, eps, float("inf"))
    share = big_g / (big_g - g_max)
    bound = (2 + tau + rho * share) * rho + 2 * rho * g_max * rho_bar * (
        1 + tau + (1 + rho) * share
    ) * eps
    return Theorem1(tau, rho, rho_bar, big_g, g_max, eps, bound)


@dataclass(frozen=True)
class Theorem1Record:
    """Theorem 1 beside the measured ratio on one instance. ``reference`` is the certified
    optimum (``reference_kind`` "optimum") or the best certified lower bound ("lower bound",
    so ``ratio`` over-states the true ratio). ``holds``: True when the ratio is within the
    guarantee, False when it exceeds it against the optimum (a counterexample), None when it
    exceeds it only against a lower bound (undecided)."""

    instance: str
    jobs: int
    method: str
    theorem: Theorem1
    objective: float
    reference: float
    reference_kind: str
    ratio: float
    holds: bool | None

    def to_json(self) -> dict[str, Any]:
        out = asdict(self)
        out["theorem"] = self.theorem.to_json()
        return out


def _reference(instance: DdlwmpInstance, exact: bool, time_limit: float) -> tuple[float, str]:
    """The certified optimum when ``exact`` proves it, else the best certified lower bound."""
    from dlsched.models import MethodOptions, run_method
    from dlsched.models.ddlwmp.bounds import srpt_bound

    best = srpt_bound(instance).bound
    if exact:
        out = run_method(instance, "exact", MethodOptions(time_limit=time_limit))
        if str(out.status) == "optimal" and out.objective is not None:
            return out.objective, "optimum"
        best = max(best, out.bound if out.bound is not None else best)
    return best, "lower bound"


def theorem1_record(
    instance: DdlwmpInstance,
    tau: float = 1.0,
    method: str = "a-srpt",
    exact: bool | None = None,
    time_limit: float = 60.0,
    predictor: Predictor | None = None,
) -> Theorem1Record:
    """Run ``method`` (``a-srpt`` or ``a-srpt-perfect``), check its schedule, and set its
    objective beside Theorem 1. ``exact`` (default: at most 8 jobs) asks for the certified
    optimum as the reference; ``predictor`` (fitted) gives n~_i to the policy and eps_bar to
    the guarantee, else the jobs' ``predicted_iterations`` do."""
    from dlsched.models.ddlwmp.check import check_schedule
    from dlsched.models.ddlwmp.online import run_policy

    schedule, _ = run_policy(instance, method, tau, predictor)
    objective = check_schedule(instance, schedule).objective
    guess = None if predictor is None else list(predictor.predict(instance.jobs))
    rec = theorem1(instance, tau, perfect=method == "a-srpt-perfect", predicted=guess)
    small = instance.num_jobs <= 8 if exact is None else exact
    reference, kind = _reference(instance, small, time_limit)
    ratio = objective / reference if reference > 0 else float("inf")
    within = ratio <= rec.bound * (1 + SLACK)
    holds = True if within else (False if kind == "optimum" else None)
    return Theorem1Record(
        instance.name, instance.num_jobs, method, rec, objective, reference, kind, ratio, holds
    )


def save_counterexample(instance: DdlwmpInstance, record: Theorem1Record, directory: Path) -> Path:
    """The core's counterexample file ``directory/counterexample-<instance>-<method>.json``
    (instance and record; the instance part loads with :func:`dlsched.instances.load`)."""
    return bounds.save_counterexample(
        instance,
        record.to_json(),
        directory,
        stem=f"counterexample-{instance.name}-{record.method}",
    )


def noisy_predictions(
    instance: DdlwmpInstance, noise: float, rng: np.random.Generator
) -> DdlwmpInstance:
    """The instance with n~_i = round(n_i x lognormal(0, noise)) (eps_bar grows with noise)."""
    jobs = tuple(
        replace(j, predicted_iterations=max(0, round(j.iterations * rng.lognormal(0.0, noise))))
        for j in instance.jobs
    )
    return replace(instance, jobs=jobs)


def sweep(
    count: int,
    seed: int = 0,
    *,
    directory: Path | None = None,
    jobs: int = 5,
    workers: int = 8,
    gpus_per_server: int = 4,
    noise: float = 0.5,
    tau: float = 1.0,
) -> tuple[list[Theorem1Record], list[Path]]:
    """Theorem 1 for ``a-srpt`` (noisy predictions) and ``a-srpt-perfect`` on ``count`` small
    generated instances against their certified optima; every violation is saved (when a
    directory is given) and always returned in the records."""
    from dlsched.models.ddlwmp.generate import generate

    rng = np.random.default_rng(seed)
    records, saved = [], []
    for k in range(count):
        base = generate(jobs, workers, seed * 1000 + k, gpus_per_server=gpus_per_server)
        inst = replace(noisy_predictions(base, noise, rng), name=f"sweep-s{seed}-{k}")
        for method in ("a-srpt", "a-srpt-perfect"):
            rec = theorem1_record(inst, tau, method, exact=True)
            records.append(rec)
            if rec.holds is False and directory is not None:
                saved.append(save_counterexample(inst, rec, directory))
    return records, saved


__all__ = [
    "Theorem1",
    "Theorem1Record",
    "noisy_predictions",
    "save_counterexample",
    "sweep",
    "theorem1",
    "theorem1_record",
]
