"""What the placement family's theorems (Liu et al., TPDS 2024) measure, per category.

- Theorem 1: the pricing loop of Algorithm 2 ends within P_max rounds (28).
- Theorem 2: in every category Algorithm 2 attains the P3 optimum (18); the reference is the
  P3 LP (transportation polytope, integral) solved by HiGHS
  (:func:`~dlsched.models.placement.exact.solve_p3`).

:func:`market` runs Algorithm 2 on one category under one reading of the pricing rule; the
theorems (and the paper's empirical claims on HAS and JPS, measured against the certified
optimum) are defined once, in :mod:`.theorems`, and checked by ``dlsched verify``. P1 has no
proven approximation ratio for HAS or JPS, so ``dlsched compare`` reports their ratios without
a guarantee.
"""

from __future__ import annotations

import numpy as np

from dlsched.models.placement import heuristics as H
from dlsched.models.placement.instance import PlacementInstance


def market(
    instance: PlacementInstance, category: tuple[int, ...], variant: str
) -> tuple[float | None, int | None, float]:
    """Algorithm 2 on ``category`` under the reading ``variant`` (``clearing``, ``paper``,
    ``literal``): the market's throughput and its pricing rounds (both None when the loop did
    not end), and Theorem 1's P_max (28)."""
    rho = np.asarray(instance.rho)
    ties, pricing, mult = H.VARIANTS[variant]
    most = H.p_max(rho, category)
    cap = None if mult is None else mult * most
    try:
        res = H.matching_market(rho, category, ties, pricing, cap)
    except H.PricingDidNotTerminate:
        return None, None, most
    tput = float(sum(rho[res.assignment[k], k] for k in range(instance.num_workers)))
    return tput, res.rounds, most


__all__ = ["market"]
