"""Theorem 4 of Hare (Chen et al., HPDC 2022, Section 5.3): its guarantee as a function of the
instance.

Theorem 4 states that Algorithm 1 is an alpha(2 + alpha)-approximation for Hare_Sched, with
alpha = max_i max(T^c_max / T^c_min, T^s_max / T^s_min) (Lemma 3). The theorem itself (its
guarantee in ``dlsched compare``, its rows in ``dlsched verify``: the certified optimum,
Algorithm 1 and the relaxation over it) is defined once, in :mod:`.theorems`, and checked by the
core's verify runner (:mod:`dlsched.verify`), which saves every instance on which it fails as a
JSON counterexample; nothing is dropped.
"""

from __future__ import annotations

from dlsched.models.hare.instance import HareInstance


def theorem4_guarantee(instance: HareInstance) -> float:
    """Theorem 4: Algorithm 1 is an alpha(2 + alpha)-approximation."""
    a = instance.alpha()
    return a * (2 + a)


__all__ = ["theorem4_guarantee"]
