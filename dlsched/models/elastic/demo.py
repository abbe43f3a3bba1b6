"""What ``dlsched demo`` shows of the elastic family: the LP bound and its two roundings, the
online algorithms and the baselines beside the optimum, then Theorem 1 on its two bundled
counterexamples."""

from __future__ import annotations

from collections.abc import Sequence

DEMO_INSTANCES = ("intro-cifar10", "ring-2jobs")
DEMO_METHODS = (
    "lp-bound",
    "lp-round",
    "lp-random-round",
    "a-online",
    "a-dual",
    "fifo",
    "drf",
    "tiresias",
    "antman",
)

#: Theorem 1's counterexamples: (stem, n workers, prices over the window [h][r], free capacity
#: [h][r]) as their descriptions give them.
THEOREM1_CASES = (
    ("theorem1-counterexample", 3, [[0.0, 0.0], [0.01, 10.0]], [[3, 8], [3, 8]]),
    (
        "theorem1-counterexample-both",
        5,
        [[0.5, 0.5, 0.0], [0.6, 0.5, 2.375]],
        [[5, 5, 0], [5, 8, 16]],
    ),
)


def pairs(quick: bool) -> list[tuple[str, Sequence[str]]]:
    """(bundled instance, methods) compared with ``exact``: the demo methods the family has."""
    from dlsched.models.elastic.methods import METHODS

    methods = [m for m in DEMO_METHODS if m in METHODS]
    return [(f"elastic/{stem}", methods) for stem in DEMO_INSTANCES]


def notes(quick: bool) -> list[str]:
    """A_mincost1 against the exact MILP of (13) on each counterexample, both readings."""
    import numpy as np

    from dlsched.instances import load
    from dlsched.models.elastic.guarantees import problem13_costs
    from dlsched.verify.check import check

    out = []
    for stem, n, win, room in THEOREM1_CASES:
        inst = load(f"elastic/{stem}")
        case = {"m": 0, "p": 0, "n": n, "q": False, "prices": win, "free": room}
        row = check("003-thm1", inst, details=case)[0]
        verdict = "VIOLATED" if row["holds"] is False else "holds"
        other = row["details"].get("other_reading")
        if other is None:  # recorded with violations only
            other = problem13_costs(inst, 0, 0, n, False, np.array(win), np.array(room, float))[2]
        out.append(
            f"\nTheorem 1 on elastic/{stem}: A_mincost1 cost {row['value']:g} (other reading of "
            f"lines 15-19: {other:g}), exact MILP of (13) {row['reference']:g}: {verdict}"
        )
    return out


__all__ = ["DEMO_INSTANCES", "DEMO_METHODS", "notes", "pairs"]
