"""What ``dlsched demo`` shows of the hare family: Algorithm 1 and the baselines beside the
optimum on the toy and on Theorem 4's counterexample, the online policies (:mod:`.online.demo`),
then Theorem 4 on its counterexample and Fig. 12's average JCTs replayed."""

from __future__ import annotations

from collections.abc import Sequence

from dlsched.models.hare.online.demo import ONLINE_DEMO, fig12_note

THEOREM4 = "hare/theorem4-counterexample"


def pairs(quick: bool) -> list[tuple[str, Sequence[str]]]:
    """(bundled instance, methods) compared with ``exact``; Fig. 9 only without ``--quick``."""
    return [
        (
            "hare/toy-2gpu",
            ["relaxation", "hare", "hare-strong", "gavel-fifo", "srtf", "sched-homo"]
            + ["sched-allox"],
        ),
        (THEOREM4, ["relaxation", "hare", "hare-strong", "sched-homo"]),
        ("hare/tcc2024-fig12", list(ONLINE_DEMO)),
        *([] if quick else [("hare/tcc2024-fig9", list(ONLINE_DEMO))]),
    ]


def notes(quick: bool) -> list[str]:
    """Theorem 4 on its counterexample; Fig. 12's three average JCTs."""
    from dlsched.instances import load
    from dlsched.models.hare.guarantees import theorem4_guarantee
    from dlsched.verify.check import check

    inst = load(THEOREM4)
    rows = check("002-thm4", inst)
    ratio = next(r["ratio"] for r in rows if r["method"] == "hare")
    verdict = "VIOLATED" if any(r["holds"] is False for r in rows) else "holds"
    return [
        f"\nTheorem 4 on {THEOREM4}: alpha = {inst.alpha():g}, guarantee alpha(2+alpha) = "
        f"{theorem4_guarantee(inst):g}, Algorithm 1 / optimum = "
        f"{'n/a' if ratio is None else f'{ratio:.4f}'}: {verdict}",
        fig12_note(),
    ]


__all__ = ["notes", "pairs"]
