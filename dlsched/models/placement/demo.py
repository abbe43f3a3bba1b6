"""What ``dlsched demo`` shows of the placement family: HAS, JPS and the baselines beside the
optimum on the motivating example and the generated Table III instances."""

from __future__ import annotations

from collections.abc import Sequence

HEURISTICS = ("has", "jps", "optimus", "optimus-lb", "las", "lp-round", "lp-random")


def pairs(quick: bool) -> list[tuple[str, Sequence[str]]]:
    """(bundled instance, methods) compared with ``exact``; K = 30 and 100 only without
    ``--quick`` (HAS is left out at K = 100)."""
    rows: list[tuple[str, Sequence[str]]] = [
        ("placement/liu2024-motivating", [*HEURISTICS, "exhaustive"]),
        ("placement/liu2024-s4k15-seed0", list(HEURISTICS)),
        ("placement/liu2024-s4k30-seed0", list(HEURISTICS)),
        ("placement/liu2024-s5k100-seed0", list(HEURISTICS[1:])),
    ]
    return rows[:2] if quick else rows


def notes(quick: bool) -> list[str]:
    """None: the placement theorems are checked by ``dlsched verify``."""
    return []


__all__ = ["notes", "pairs"]
