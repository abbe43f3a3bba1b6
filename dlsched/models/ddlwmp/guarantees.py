"""Theorem 1 of Luo et al. (seed 001): A-SRPT's competitive ratio as a function of the instance.

    Gamma_A / OPT_A < (2 + tau + rho G / (G - g^max)) rho
                      + 2 rho g^max rho_bar (1 + tau + (1 + rho) G / (G - g^max)) eps_bar

with rho = max_i alpha_i^max / alpha_i^min, rho_bar = alpha^max / alpha^min (over all jobs),
g^max = max_i g_i and eps_bar the mean absolute prediction error |n_i - n~_i| (eq. 9). The
bound is infinite when g^max = G. alpha_i^min is the certified lower bound of the placement
MILP (the optimum when it closes), so rho here is never below the true rho and the recorded
guarantee is never tighter than the theorem's. The theorem itself (its guarantee in
``dlsched compare`` and its rows in ``dlsched verify``, against the certified optimum) is
defined once, in :mod:`.theorems`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from dlsched.models.ddlwmp.alpha import alpha_max_ms
from dlsched.models.ddlwmp.bounds import alpha_min_lower
from dlsched.models.ddlwmp.instance import DdlwmpInstance


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


__all__ = ["Theorem1", "theorem1"]
