"""Iteration predictors of Section IV-C 3) (Luo et al., seed 001), trained on the first share
(80% by default) of a trace's jobs in release order and applied to the rest.

- ``group-mean`` / ``group-median``: the mean / median iterations of the job's group in the
  training jobs (the paper's "mean- and median-based" baselines);
- ``random-forest``: 100 trees on (group id, user id) with squared-error splits, the paper's
  choice; it needs scikit-learn, which is optional (an OptionError says so when absent).

As the paper does for its forest, a job of a group never seen in training is predicted 0
iterations (it completes at once on the virtual machine of A-SRPT).
"""

from __future__ import annotations

import statistics
from dataclasses import replace

from dlsched.errors import OptionError
from dlsched.models.ddlwmp.instance import DdlwmpInstance, Job

PREDICTORS = ("group-mean", "group-median", "random-forest")


def _split(instance: DdlwmpInstance, share: float) -> tuple[list[Job], list[Job]]:
    if not 0 < share < 1:
        raise OptionError("train_share", share, "expected a number strictly between 0 and 1")
    jobs = sorted(instance.jobs, key=lambda j: j.release)
    cut = max(1, min(len(jobs) - 1, round(share * len(jobs))))
    return jobs[:cut], jobs[cut:]


def _history(train: list[Job], how: str, test: list[Job]) -> list[float]:
    hist: dict[str, list[int]] = {}
    for j in train:
        hist.setdefault(j.group, []).append(j.iterations)
    agg = statistics.fmean if how == "group-mean" else statistics.median
    return [float(agg(hist[j.group])) if j.group in hist else 0.0 for j in test]


def _forest(train: list[Job], test: list[Job], seed: int) -> list[float]:
    try:
        from sklearn.ensemble import RandomForestRegressor  # type: ignore[import-not-found]
    except ImportError:
        raise OptionError(
            "predictor", "random-forest", "needs scikit-learn (not installed)"
        ) from None
    codes: dict[tuple[int, str], int] = {}

    def row(j: Job) -> list[int]:
        return [
            codes.setdefault((0, j.group), len(codes)),
            codes.setdefault((1, j.user), len(codes)),
        ]

    x = [row(j) for j in train]
    seen = {j.group for j in train}
    model = RandomForestRegressor(n_estimators=100, criterion="squared_error", random_state=seed)
    model.fit(x, [j.iterations for j in train])
    pred = model.predict([row(j) for j in test])
    return [float(p) if j.group in seen else 0.0 for j, p in zip(test, pred, strict=True)]


def predict(
    instance: DdlwmpInstance, predictor: str, share: float = 0.8, seed: int = 0
) -> tuple[DdlwmpInstance, float]:
    """(the test jobs with ``predicted_iterations`` set, their mean absolute error eps_bar)."""
    if predictor not in PREDICTORS:
        raise OptionError("predictor", predictor, f"expected one of {', '.join(PREDICTORS)}")
    train, test = _split(instance, share)
    if predictor == "random-forest":
        values = _forest(train, test, seed)
    else:
        values = _history(train, predictor, test)
    jobs = tuple(
        replace(j, predicted_iterations=max(0, round(v))) for j, v in zip(test, values, strict=True)
    )
    t0 = min(j.release for j in jobs)
    jobs = tuple(replace(j, release=j.release - t0) for j in jobs)
    error = sum(abs(j.iterations - j.predicted) for j in jobs) / len(jobs)
    out = DdlwmpInstance(
        f"{instance.name}-{predictor}", instance.cluster, jobs, instance.description
    )
    return out, error


__all__ = ["PREDICTORS", "predict"]
