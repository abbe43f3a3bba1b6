"""Iteration predictors of Section IV-C 3) (Luo et al., seed 001).

A predictor is an object with ``fit(jobs)`` (on the training jobs, returning itself) and
``predict(jobs)`` (predicted iterations n~_i of any jobs, an array of floats >= 0); the online
policies (:func:`dlsched.models.ddlwmp.online.run_policy`) take one. :func:`predict` trains on
the first share (80% by default) of a trace's jobs in release order and applies it to the rest.

- ``group-mean`` / ``group-median``: the mean / median iterations of the job's group in the
  training jobs (the paper's "mean- and median-based" baselines);
- ``random-forest``: 100 regression trees (squared-error splits, bootstrap, all features at
  every split: scikit-learn's ``RandomForestRegressor`` defaults) on (group id, user id), the
  paper's choice;
- ``given``: the instance's own ``predicted_iterations`` (n_i when absent); ``perfect``: n_i.

As the paper does, a job of a group never seen in training is predicted 0 iterations (it
completes at once on the virtual machine of A-SRPT).

The forest is fitted on the distinct (group, user) keys, not on every job: each tree draws
the same bootstrap sample of jobs as scikit-learn would (a job drawn c times weighs c) and
gets, per key, the total weight and the weighted mean of the drawn jobs' iterations. Jobs of
one key have the same features, so no split can separate them: squared-error splits and leaf
means of the weighted keys are those of the jobs (docs/errata.md). A trace of 150,000
jobs then fits in seconds rather than minutes; the test compares with scikit-learn's forest.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

import numpy as np

from dlsched.errors import OptionError
from dlsched.models.ddlwmp.instance import DdlwmpInstance, Job

PREDICTORS = ("group-mean", "group-median", "random-forest")
#: predictors that need no training
FIXED = ("given", "perfect")


class Predictor(Protocol):
    @property
    def name(self) -> str: ...

    def fit(self, jobs: Sequence[Job]) -> Predictor: ...

    def predict(self, jobs: Sequence[Job]) -> np.ndarray: ...


@dataclass(frozen=True)
class Known:
    """Iterations each job carries, its ``attribute`` (:data:`GIVEN`, :data:`PERFECT`): no
    training."""

    name: str
    attribute: str

    def fit(self, jobs: Sequence[Job]) -> Known:
        return self

    def predict(self, jobs: Sequence[Job]) -> np.ndarray:
        return np.array([getattr(j, self.attribute) for j in jobs], dtype=float)


#: The instance's ``predicted_iterations`` (the true iterations when absent).
GIVEN = Known("given", "predicted")
#: The true iterations n_i (A-SRPT-Perfect).
PERFECT = Known("perfect", "iterations")


@dataclass
class GroupHistory:
    """Mean (``how="mean"``) or median of the group's training iterations; 0 when unseen."""

    how: str = "mean"
    table: dict[str, float] = field(default_factory=dict)

    @property
    def name(self) -> str:
        return f"group-{self.how}"

    def fit(self, jobs: Sequence[Job]) -> GroupHistory:
        hist: dict[str, list[int]] = {}
        for j in jobs:
            hist.setdefault(j.group, []).append(j.iterations)
        agg = np.mean if self.how == "mean" else np.median
        self.table = {g: float(agg(v)) for g, v in hist.items()}
        return self

    def predict(self, jobs: Sequence[Job]) -> np.ndarray:
        return np.array([self.table.get(j.group, 0.0) for j in jobs], dtype=float)


@dataclass
class RandomForest:
    """A random forest on (group id, user id) codes; 0 for a group unseen in training."""

    trees: int = 100
    seed: int = 0
    name: str = "random-forest"
    codes: dict[tuple[int, str], int] = field(default_factory=dict)
    forest: list[Any] = field(default_factory=list)
    seen: set[str] = field(default_factory=set)

    def _rows(self, jobs: Sequence[Job], grow: bool) -> np.ndarray:
        out = np.empty((len(jobs), 2))
        for r, j in enumerate(jobs):
            for c, key in enumerate(((0, j.group), (1, j.user))):
                code = self.codes.get(key)
                if code is None:
                    code = len(self.codes) if grow else -1
                    if grow:
                        self.codes[key] = code
                out[r, c] = code
        return out

    def fit(self, jobs: Sequence[Job]) -> RandomForest:
        from sklearn.tree import DecisionTreeRegressor

        if not jobs:
            raise OptionError("train", 0, "a predictor needs at least one training job")
        x = self._rows(jobs, grow=True)
        y = np.array([j.iterations for j in jobs], dtype=float)
        keys, key_of = np.unique(x, axis=0, return_inverse=True)
        key_of = key_of.ravel()
        n, top = len(jobs), np.iinfo(np.int32).max
        seeds = np.random.RandomState(self.seed).randint(top, size=self.trees)  # as sklearn
        self.forest = []
        for s in seeds:
            draw = np.random.RandomState(s).randint(0, n, n, dtype=np.int32)  # as sklearn
            drawn = np.bincount(draw, minlength=n)
            w = np.bincount(key_of, weights=drawn, minlength=len(keys))
            total = np.bincount(key_of, weights=drawn * y, minlength=len(keys))
            mean = np.divide(total, w, out=np.zeros_like(total), where=w > 0)
            tree = DecisionTreeRegressor(max_features=1.0, random_state=s)
            self.forest.append(tree.fit(keys, mean, sample_weight=w))
        self.seen = {j.group for j in jobs}
        return self

    def predict(self, jobs: Sequence[Job]) -> np.ndarray:
        if not self.forest:
            raise OptionError("predictor", self.name, "predict() before fit()")
        x = self._rows(jobs, grow=False)
        keys, key_of = np.unique(x, axis=0, return_inverse=True)
        values = np.mean([t.predict(keys) for t in self.forest], axis=0)[key_of.ravel()]
        known = np.array([j.group in self.seen for j in jobs], dtype=bool)
        return np.where(known, values, 0.0)


def make_predictor(name: str, seed: int = 0) -> Predictor:
    """A fresh predictor by name (``given`` and ``perfect``, which need no ``fit``, are
    :data:`GIVEN` and :data:`PERFECT`)."""
    makers: dict[str, Any] = {
        "group-mean": lambda: GroupHistory("mean"),
        "group-median": lambda: GroupHistory("median"),
        "random-forest": lambda: RandomForest(seed=seed),
        "given": lambda: GIVEN,
        "perfect": lambda: PERFECT,
    }
    if name not in makers:
        known = ", ".join((*PREDICTORS, *FIXED))
        raise OptionError("predictor", name, f"expected one of {known}")
    return makers[name]()  # type: ignore[no-any-return]


def split(instance: DdlwmpInstance, share: float = 0.8) -> tuple[list[Job], list[Job]]:
    """(the first ``share`` of the jobs in release order, rounded to a whole number of jobs;
    the rest). OptionError naming ``train_share`` when either part would be empty."""
    ok = isinstance(share, int | float) and not isinstance(share, bool) and 0 < share < 1
    if not ok:
        raise OptionError("train_share", share, "expected a number strictly between 0 and 1")
    n = instance.num_jobs
    if n < 2:
        raise OptionError("train_share", share, "the instance needs at least two jobs to split")
    cut = round(share * n)
    if not 1 <= cut <= n - 1:
        empty = "no training job" if cut < 1 else "no job to predict"
        raise OptionError(
            "train_share", share, f"leaves {empty} ({share:g} of {n} jobs rounds to {cut})"
        )
    jobs = sorted(instance.jobs, key=lambda j: j.release)
    return jobs[:cut], jobs[cut:]


def mean_abs_error(jobs: Sequence[Job], predicted: Sequence[float] | np.ndarray) -> float:
    """eps_bar of eq. (9): the mean of |n_i - n~_i|."""
    got = np.asarray(predicted, dtype=float)
    return float(np.mean(np.abs(np.array([j.iterations for j in jobs]) - got)))


def _with_predictions(jobs: Sequence[Job], values: np.ndarray) -> tuple[Job, ...]:
    """The jobs with ``predicted_iterations`` set to the rounded, non-negative ``values``."""
    return tuple(
        replace(j, predicted_iterations=max(0, round(float(v))))
        for j, v in zip(jobs, values, strict=True)
    )


def predict(
    instance: DdlwmpInstance, predictor: str | Predictor, share: float = 0.8, seed: int = 0
) -> tuple[DdlwmpInstance, float]:
    """Train on the first ``share`` of the jobs, predict the rest: (the test jobs with
    ``predicted_iterations`` set, releases shifted to start at 0; their mean absolute error
    eps_bar with the rounded predictions)."""
    model = make_predictor(predictor, seed) if isinstance(predictor, str) else predictor
    train, test = split(instance, share)
    jobs = _with_predictions(test, model.fit(train).predict(test))
    t0 = min(j.release for j in jobs)
    jobs = tuple(replace(j, release=j.release - t0) for j in jobs)
    error = mean_abs_error(jobs, [j.predicted for j in jobs])
    out = DdlwmpInstance(
        f"{instance.name}-{model.name}", instance.cluster, jobs, instance.description
    )
    return out, error


def predict_all(
    instance: DdlwmpInstance, predictor: str, share: float = 0.8, seed: int = 0
) -> tuple[DdlwmpInstance, float]:
    """Train on the first ``share`` of the jobs and set every job's ``predicted_iterations``
    (in-sample on the training jobs): (that instance, eps_bar on the held-out jobs)."""
    model = make_predictor(predictor, seed)
    train, test = split(instance, share)
    jobs = _with_predictions(instance.jobs, model.fit(train).predict(instance.jobs))
    held_out = {j.name for j in test}
    error = mean_abs_error(
        [j for j in jobs if j.name in held_out], [j.predicted for j in jobs if j.name in held_out]
    )
    out = DdlwmpInstance(instance.name, instance.cluster, jobs, instance.description)
    return out, error


__all__ = [
    "FIXED",
    "PREDICTORS",
    "GIVEN",
    "GroupHistory",
    "Known",
    "PERFECT",
    "Predictor",
    "RandomForest",
    "make_predictor",
    "mean_abs_error",
    "predict",
    "predict_all",
    "split",
]
