"""What ``dlsched demo`` shows of the online hare policies (Chen et al., IEEE TCC 2024): every
policy beside the offline optimum on the bundled Fig. 12 (and, without ``--quick``, Figs. 9-10)
instance, and Fig. 12's three average JCTs replayed."""

from __future__ import annotations

from typing import Any

#: The online policies (seed 004) the demo runs beside the offline optimum.
ONLINE_DEMO = (
    "hlas",
    "hlas-any",
    "hlas-p",
    "hlas-lp",
    "hlas-lp-random",
    "online-fifo",
    "2d-las",
    "sched-homo-unit",
    "sched-allox-unit",
)


def fig12_note() -> str:
    """Fig. 12's three average JCTs (TCC 2024) replayed by HLAS and HLAS-P."""
    from dlsched.instances import load
    from dlsched.models import MethodOptions, run_method

    fig12 = load("hare/tcc2024-fig12")
    runs: dict[str, tuple[str, dict[str, Any]]] = {
        "HLAS": ("hlas", {}),
        "full knowledge (oracle)": ("hlas-p", {"predictor": "oracle"}),
        "partial (J3 >= 3 rounds)": ("hlas-p", {"predictor": "hint", "hints": {"J3": 3}}),
    }
    got = [
        f"{label} {run_method(fig12, m, MethodOptions(params=p)).details['average_jct']:.1f}"
        for label, (m, p) in runs.items()
    ]
    return f"Fig. 12 average JCTs (paper: 6.7, 5.3, 5.7): {', '.join(got)}"


__all__ = ["ONLINE_DEMO", "fig12_note"]
