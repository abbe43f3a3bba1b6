"""The placement methods: every entry names its route in :mod:`.routes` (imported, with its
solvers, only when it runs), so listing the methods or running a heuristic stays light."""

from __future__ import annotations

from dlsched.models import Method, method_table

#: What ``lp-round`` and ``lp-random`` round (:mod:`.rounding`, imported when they run).
_P1_RELAXATION = (
    "continuous relaxation of P1 (8)/(14): n_ig, K_i, spans in [0, 1], t_i >= T_i|Pi_i|/V_i "
    "by tangents (TPDS 2024)"
)


METHODS: dict[str, Method] = method_table(
    Method(
        "exact",
        "dlsched.models.placement.routes:run_exact",
        "certified optimum of P1 (P2 with --category)",
        True,
        ("route", "backend", "category"),
    ),
    Method(
        "p3",
        "dlsched.models.placement.routes:run_p3",
        "P3 LP: max throughput for a category",
        False,
        ("category",),
    ),
    Method(
        "has",
        "dlsched.models.placement.routes:run_has",
        "HAS, Algorithm 2 over every category",
        False,
        ("category",),
    ),
    Method(
        "has-paper",
        "dlsched.models.placement.routes:run_has_paper",
        "HAS with price rule (22) as printed: one worker of K_c rises",
        False,
        ("category",),
    ),
    Method(
        "has-literal",
        "dlsched.models.placement.routes:run_has_literal",
        "HAS with the printed tie rule (may not terminate: Theorem 1 check)",
        False,
        ("category",),
    ),
    Method(
        "jps",
        "dlsched.models.placement.routes:run_jps",
        "JPS, Algorithm 3 (alpha, beta, samples, seed)",
        False,
        ("alpha", "beta", "samples"),
    ),
    Method(
        "optimus",
        "dlsched.models.placement.routes:run_optimus",
        "Optimus greedy, equal data split",
        False,
    ),
    Method(
        "optimus-lb",
        "dlsched.models.placement.routes:run_optimus_lb",
        "Optimus greedy, proportional split",
        False,
    ),
    Method(
        "las",
        "dlsched.models.placement.routes:run_las",
        "LAS max-min fair placement (Tiresias)",
        False,
    ),
    Method(
        "exhaustive",
        "dlsched.models.placement.routes:run_exhaustive",
        "all S^K worker selections",
        True,
    ),
    Method(
        "lp-round",
        "dlsched.models.placement.rounding:run_lp_round",
        "P1's continuous relaxation (tangent cuts) rounded: largest remainders per worker "
        "group, jobs without a worker repaired (lp_value: the relaxation's, a bound)",
        rounds=_P1_RELAXATION,
        guarantee="none",
    ),
    Method(
        "lp-random",
        "dlsched.models.placement.rounding:run_lp_random",
        "P1's continuous relaxation rounded at random (seeded systematic sampling per worker "
        "group): the least average JCT of 20 draws, repaired",
        rounds=_P1_RELAXATION,
        guarantee="none",
    ),
)


__all__ = ["METHODS"]
