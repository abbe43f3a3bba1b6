"""Pluggable job-size predictors of HLAS-P (Chen et al., IEEE TCC 2024, Section V-A).

A predictor answers R^p: how many more rounds a job will run, asked when the job arrives and
whenever its previous prediction has been used up. ``observed`` tells it every job's progress
(rounds run) as rounds end, ``finished`` a job's true round count once the job is done (the
historical records of Section V-A). The paper's loss-curve fit cannot be run on an instance
that has no loss curves; :class:`Conservative` stands for an accurate conservative fit ("will
the job run alpha more rounds?"), and :class:`History` adjusts it as Section V-A does, by the
rounds of finished similar jobs (same name stem or same user) and by NAS groups (docs/errata.md).

- ``none``: R^p = 0 always (HLAS-P is then HLAS).
- ``oracle``: the true remaining rounds (full knowledge; a clairvoyant reference).
- ``conservative``: min(alpha, remaining rounds): "at least alpha more rounds", never wrong.
- ``history``: conservative, averaged with the mean rounds left of finished jobs of the same
  stem or user when there are any, then scaled down by ``nas_factor`` when the job's NAS group
  has a member at least 1/``nas_behind`` times as far on (the job "falls far behind").
- ``hint``: fixed "job X runs at least r rounds" hints by job name (Fig. 12(c): J3 >= 3).

Users and NAS groups are not part of a hare instance: they are method parameters (``users``:
{job name: user}, ``nas_groups``: {group: [job names]}). Any object with the methods of
:class:`Predictor` (e.g. a subclass of :class:`BasePredictor`) may be passed as ``predictor``.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping
from typing import Any, Protocol, runtime_checkable

from dlsched.errors import OptionError
from dlsched.models.hare.instance import HareInstance

#: Default alpha of the conservative predictors (the paper gives no value).
ALPHA = 3
#: Default NAS adjustment: a member of a NAS group "falls far behind" when it has run at most
#: NAS_BEHIND times the rounds of its group's leader; its prediction is then scaled by NAS_FACTOR.
NAS_BEHIND = 0.5
NAS_FACTOR = 0.5


@runtime_checkable
class Predictor(Protocol):
    name: str

    def reset(self, instance: HareInstance) -> None: ...

    def predict(self, n: int, rounds_done: int) -> int: ...

    def observed(self, n: int, rounds_done: int) -> None: ...

    def finished(self, n: int, rounds: int) -> None: ...


class BasePredictor:
    """Defaults: remembers the instance, ignores progress and records."""

    name = "?"

    def reset(self, instance: HareInstance) -> None:
        self.instance = instance

    def observed(self, n: int, rounds_done: int) -> None:
        pass

    def finished(self, n: int, rounds: int) -> None:
        pass


class NoInformation(BasePredictor):
    name = "none"

    def predict(self, n: int, rounds_done: int) -> int:
        return 0


class Oracle(BasePredictor):
    name = "oracle"

    def predict(self, n: int, rounds_done: int) -> int:
        return self.instance.jobs[n].rounds - rounds_done


class Conservative(BasePredictor):
    name = "conservative"

    def __init__(self, alpha: int = ALPHA) -> None:
        self.alpha = alpha

    def predict(self, n: int, rounds_done: int) -> int:
        return min(self.alpha, self.instance.jobs[n].rounds - rounds_done)


def stem(name: str) -> str:
    """A job's name without its trailing number ("resnet50-3" -> "resnet50", "j12" -> "j")."""
    return re.sub(r"[-_.]?\d+$", "", name) or name


def _index(instance: HareInstance, names: Any, option: str) -> list[int]:
    """Job indices of ``names``; OptionError naming the first unknown one."""
    by_name = {j.name: n for n, j in enumerate(instance.jobs)}
    for k in names:
        if k not in by_name:
            raise OptionError(option, k, f"no job of that name in {instance.name}")
    return [by_name[k] for k in names]


class History(Conservative):
    """Section V-A: the conservative fit, averaged with the rounds of finished similar jobs
    (same name stem, or same user), then made more conservative for a job of a NAS group that
    falls far behind the group's leader."""

    name = "history"

    def __init__(
        self,
        alpha: int = ALPHA,
        users: Mapping[str, str] | None = None,
        nas_groups: Mapping[str, list[str]] | None = None,
        nas_behind: float = NAS_BEHIND,
        nas_factor: float = NAS_FACTOR,
    ) -> None:
        super().__init__(alpha)
        self.users = dict(users or {})
        self.nas_groups = {k: list(v) for k, v in (nas_groups or {}).items()}
        self.nas_behind = nas_behind
        self.nas_factor = nas_factor

    def reset(self, instance: HareInstance) -> None:
        super().reset(instance)
        self.records: dict[tuple[str, str], list[int]] = {}
        self.progress: dict[int, int] = {}
        user_jobs = _index(instance, list(self.users), "users")
        self.user_of = {n: self.users[instance.jobs[n].name] for n in user_jobs}
        self.peers: dict[int, list[int]] = {}
        for members in self.nas_groups.values():
            idx = _index(instance, members, "nas_groups")
            for n in idx:
                self.peers.setdefault(n, []).extend(m for m in idx if m != n)

    def _keys(self, n: int) -> list[tuple[str, str]]:
        keys = [("name", stem(self.instance.jobs[n].name))]
        if n in self.user_of:
            keys.append(("user", self.user_of[n]))
        return keys

    def observed(self, n: int, rounds_done: int) -> None:
        self.progress[n] = rounds_done

    def finished(self, n: int, rounds: int) -> None:
        self.progress[n] = rounds
        for key in self._keys(n):
            self.records.setdefault(key, []).append(rounds)

    def history_rounds(self, n: int) -> float | None:
        """Mean total rounds of the finished jobs similar to n (same stem or user), or None."""
        past = [r for key in self._keys(n) for r in self.records.get(key, [])]
        return sum(past) / len(past) if past else None

    def falls_behind(self, n: int, rounds_done: int) -> bool:
        """n's NAS group has a member (arrived) that ran 1/nas_behind times n's rounds or more,
        and at least one round."""
        lead = max((self.progress.get(m, 0) for m in self.peers.get(n, [])), default=0)
        return lead >= 1 and rounds_done <= self.nas_behind * lead

    def predict(self, n: int, rounds_done: int) -> int:
        self.progress[n] = rounds_done
        pred = float(super().predict(n, rounds_done))
        past = self.history_rounds(n)
        if past is not None:
            pred = max(0.0, (pred + past - rounds_done) / 2)
        if self.falls_behind(n, rounds_done):
            pred *= self.nas_factor
        return int(math.floor(pred))


class Hint(BasePredictor):
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


def _fraction(params: Mapping[str, Any], key: str, default: float, low_open: bool) -> float:
    v = params.get(key, default)
    ok = isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v)
    if not ok or v < 0 or v > 1 or (low_open and v == 0):
        raise OptionError(key, v, f"expected a number in {'(0' if low_open else '[0'}, 1]")
    return float(v)


def _users(params: Mapping[str, Any]) -> Mapping[str, str]:
    u = params.get("users", {})
    if not (
        isinstance(u, dict) and all(isinstance(k, str) and isinstance(v, str) for k, v in u.items())
    ):
        raise OptionError("users", u, 'expected {"job name": "user", ...}')
    return dict(u)


def _nas_groups(params: Mapping[str, Any]) -> Mapping[str, list[str]]:
    g = params.get("nas_groups", {})
    ok = isinstance(g, dict) and all(
        isinstance(k, str) and isinstance(v, list) and all(isinstance(x, str) for x in v)
        for k, v in g.items()
    )
    if not ok:
        raise OptionError("nas_groups", g, 'expected {"group": ["job name", ...], ...}')
    return {k: list(v) for k, v in g.items()}


def _history(params: Mapping[str, Any]) -> Predictor:
    return History(
        _alpha(params),
        _users(params),
        _nas_groups(params),
        _fraction(params, "nas_behind", NAS_BEHIND, low_open=True),
        _fraction(params, "nas_factor", NAS_FACTOR, low_open=False),
    )


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
    "history": _history,
    "hint": lambda p: Hint(_hints(p)),
}


#: Method parameters read by the predictors.
PREDICTOR_PARAMS = ("alpha", "hints", "users", "nas_groups", "nas_behind", "nas_factor")


def make_predictor(name: Any, params: Mapping[str, Any]) -> Predictor:
    """The named predictor, or ``name`` itself when it is a :class:`Predictor` object."""
    if isinstance(name, Predictor):
        return name
    if not isinstance(name, str) or name not in PREDICTORS:
        raise OptionError("predictor", name, f"expected one of {', '.join(PREDICTORS)}")
    return PREDICTORS[name](params)


__all__ = [
    "ALPHA",
    "NAS_BEHIND",
    "NAS_FACTOR",
    "PREDICTORS",
    "PREDICTOR_PARAMS",
    "BasePredictor",
    "Conservative",
    "Hint",
    "History",
    "NoInformation",
    "Oracle",
    "Predictor",
    "make_predictor",
    "stem",
]
