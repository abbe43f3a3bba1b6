"""What ``dlsched demo`` shows of the ddlwmp family: the bounds, the LP's roundings and the
online policies beside the optimum on the toy, then Theorem 1's guarantee against A-SRPT's
measured ratio."""

from __future__ import annotations

from collections.abc import Sequence

TOY = "ddlwmp/toy-2x4"


def pairs(quick: bool) -> list[tuple[str, Sequence[str]]]:
    """(bundled instance, methods) compared with ``exact``."""
    from dlsched.models.ddlwmp.methods import ROUNDINGS
    from dlsched.models.ddlwmp.online import POLICIES

    return [(TOY, ["lp-bound", *ROUNDINGS, "srpt-bound", *POLICIES])]


def notes(quick: bool) -> list[str]:
    """Theorem 1 on the toy: its factors, the guarantee and A-SRPT / optimum."""
    from dlsched.instances import load
    from dlsched.models import run_method
    from dlsched.models.ddlwmp.guarantees import theorem1

    inst = load(TOY)
    opt = run_method(inst, "exact").objective
    got = run_method(inst, "a-srpt").objective
    ratio = got / opt if got is not None and opt is not None else float("nan")
    rec = theorem1(inst)
    verdict = "holds" if ratio <= rec.bound else "VIOLATED"
    return [
        f"\nTheorem 1 on {TOY}: tau = {rec.tau:g}, rho = {rec.rho:.3f}, "
        f"g_max/G = {rec.g_max}/{rec.total_gpus}, guarantee {rec.bound:.4g}, "
        f"A-SRPT / optimum = {ratio:.4f}: {verdict}"
    ]


__all__ = ["notes", "pairs"]
