"""Pluggable job-size predictors of HLAS-P (Chen et al., IEEE TCC 2024, Section V-A).

A predictor answers R^p: how many more rounds a job will run, asked when the job arrives and
whenever its previous prediction has been used up. ``finished`` tells it a job's true round
count once the job is done (the historical records of Section V-A). The paper's loss-curve
fit cannot be run on an instance that has no loss curves; :class:`Conservative` stands for an
accurate conservative fit ("will the job run alpha more rounds?"), and :class:`History`
adjusts it by the rounds of finished jobs with the same name stem (docs/errata.md).

- ``none``: R^p = 0 always (HLAS-P is then HLAS).
- ``oracle``: the true remaining rounds (full knowledge; a clairvoyant reference).
- ``conservative``: min(alpha, remaining rounds): "at least alpha more rounds", never wrong.
- ``history``: conservative, averaged with the mean rounds left of finished jobs of the same
  stem when there are any.
- ``hint``: fixed "job X runs at least r rounds" hints by job name (Fig. 12(c): J3 >= 3).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any, Protocol

from dlsched.errors import OptionError
from dlsched.models.hare.instance import HareInstance

#: Default alpha of the conservative predictors (the paper gives no value).
ALPHA = 3


class Predictor(Protocol):
    name: str

    def reset(self, instance: HareInstance) -> None: ...

    def predict(self, n: int, rounds_done: int) -> int: ...

    def finished(self, n: int, rounds: int) -> None: ...


class _Base:
    name = "?"

    def reset(self, instance: HareInstance) -> None:
        self.instance = instance

    def finished(self, n: int, rounds: int) -> None:
        pass


class NoInformation(_Base):
    name = "none"

    def predict(self, n: int, rounds_done: int) -> int:
        return 0


class Oracle(_Base):
    name = "oracle"

    def predict(self, n: int, rounds_done: int) -> int:
        return self.instance.jobs[n].rounds - rounds_done


class Conservative(_Base):
    name = "conservative"

    def __init__(self, alpha: int = ALPHA) -> None:
        self.alpha = alpha

    def predict(self, n: int, rounds_done: int) -> int:
        return min(self.alpha, self.instance.jobs[n].rounds - rounds_done)


def stem(name: str) -> str:
    """A job's name without its trailing number ("resnet50-3" -> "resnet50", "j12" -> "j")."""
    return re.sub(r"[-_.]?\d+$", "", name) or name


class History(Conservative):
    name = "history"

    def reset(self, instance: HareInstance) -> None:
        super().reset(instance)
        self.records: dict[str, list[int]] = {}

    def finished(self, n: int, rounds: int) -> None:
        self.records.setdefault(stem(self.instance.jobs[n].name), []).append(rounds)

    def predict(self, n: int, rounds_done: int) -> int:
        initial = super().predict(n, rounds_done)
        past = self.records.get(stem(self.instance.jobs[n].name))
        if not past:
            return initial
        left = sum(past) / len(past) - rounds_done
        return max(0, int((initial + left) / 2))


class Hint(_Base):
    name = "hint"

    def __init__(self, hints: Mapping[str, int]) -> None:
        self.hints = dict(hints)

    def reset(self, instance: HareInstance) -> None:
        super().reset(instance)
        names = {j.name: n for n, j in enumerate(instance.jobs)}
        unknown = sorted(set(self.hints) - set(names))
        if unknown:
            raise OptionError("hints", unknown[0], f"no job of that name in {instance.name}")
        self.by_index = {names[k]: v for k, v in self.hints.items()}

    def predict(self, n: int, rounds_done: int) -> int:
        return max(0, self.by_index.get(n, 0) - rounds_done)


def _alpha(params: Mapping[str, Any]) -> int:
    a = params.get("alpha", ALPHA)
    if isinstance(a, bool) or not isinstance(a, int) or not 1 <= a <= 10**6:
        raise OptionError("alpha", a, "expected an integer from 1 to 1000000")
    return a


def _hints(params: Mapping[str, Any]) -> Mapping[str, int]:
    h = params.get("hints")
    ok = isinstance(h, dict) and all(
        isinstance(k, str) and isinstance(v, int) and not isinstance(v, bool) and v >= 0
        for k, v in h.items()
    )
    if not ok:
        raise OptionError("hints", h, 'expected {"job name": rounds at least, ...}')
    return dict(h)  # type: ignore[arg-type]


PREDICTORS: dict[str, Callable[[Mapping[str, Any]], Predictor]] = {
    "none": lambda p: NoInformation(),
    "oracle": lambda p: Oracle(),
    "conservative": lambda p: Conservative(_alpha(p)),
    "history": lambda p: History(_alpha(p)),
    "hint": lambda p: Hint(_hints(p)),
}


def make_predictor(name: Any, params: Mapping[str, Any]) -> Predictor:
    if name not in PREDICTORS:
        raise OptionError("predictor", name, f"expected one of {', '.join(PREDICTORS)}")
    return PREDICTORS[name](params)


__all__ = [
    "ALPHA",
    "PREDICTORS",
    "Conservative",
    "Hint",
    "History",
    "NoInformation",
    "Oracle",
    "Predictor",
    "make_predictor",
    "stem",
]
