"""Random ddlwmp instances from the Table I profiles (:mod:`.profiles`).

``generate(jobs, workers, seed, **params)``: ``workers`` is the total GPU count (a multiple of
``gpus_per_server``, default 8). Settings:

- ``setting="small"`` (default): for the exact route; a job's run time on its best placement
  is drawn in [2, 8] slots of ``slot_s`` (default 10) seconds, releases in the first
  ``jobs`` slots, configurations that fit one server's worth of GPUs or the cluster;
- ``setting="paper"``: Section V-B: 10 Gbit/s NICs, 300 GB/s NVLink (2400 Gbit/s), slot 1 s;
  recurring groups (each group one model and configuration, a median duration drawn from a
  heavy-tailed (log-normal, sigma 1.5) law around 30 minutes), users owning groups, a share
  ``single_gpu`` (default 0.7, the trace's) of single-GPU groups, Poisson arrivals at offered
  load ``load`` (default 0.7) of the cluster, iterations = duration / alpha~^min.

Other parameters: ``inter_gbps``, ``intra_gbps``, ``gpus_per_server``, ``slot_s``,
``groups`` (paper: number of recurring groups, default jobs // 5 + 1).

With ``trace=PATH`` the jobs come from a trace instead (:func:`.traces.from_params`: Gavel's
``.trace`` files or the Alibaba PAI 2020 tables, ``format``, ``limit``, ``throughputs``,
``tasks``, ``group_tags``, ``predictor``, ``train_share``) on a cluster of ``workers`` GPUs
(slot 1 s by default); the trace sets the number of jobs (``limit`` caps it), so ``jobs`` is
not used, and ``seed`` draws each group's model. From the command line::

    dlsched generate ddlwmp --jobs 1 --gpus 64 --param trace=t.trace -o t.json
"""

from __future__ import annotations

import functools
import math
from typing import Any

import numpy as np

from dlsched.errors import OptionError
from dlsched.models.ddlwmp.instance import Cluster, DdlwmpInstance, Job
from dlsched.models.ddlwmp.mapping import alpha_tilde_min
from dlsched.models.ddlwmp.profiles import PROFILES, stages
from dlsched.models.ddlwmp.traces import TRACE_PARAMS, from_params

PARAMS = (
    "setting",
    "gpus_per_server",
    "inter_gbps",
    "intra_gbps",
    "slot_s",
    "single_gpu",
    "load",
    "groups",
    *TRACE_PARAMS,
)


def _number(name: str, value: Any, low: float, high: float) -> float:
    ok = isinstance(value, int | float) and not isinstance(value, bool)
    if not ok or not (math.isfinite(value) and low <= value <= high):
        raise OptionError(name, value, f"expected a number from {low:g} to {high:g}")
    return float(value)


def _integer(name: str, value: Any, low: int, high: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise OptionError(name, value, f"expected an integer from {low} to {high}")
    return value


def _configs(max_gpus: int) -> list[tuple[str, tuple[int, ...]]]:
    return [(m, c) for m, p in PROFILES.items() for c in p.configs if sum(c) <= max_gpus]


def generate(jobs: int, workers: int, seed: int, **params: Any) -> DdlwmpInstance:
    unknown = sorted(set(params) - set(PARAMS))
    if unknown:
        raise OptionError(unknown[0], params[unknown[0]], f"unknown (known: {', '.join(PARAMS)})")
    traced = params.get("trace") is not None
    if traced:
        clash = sorted(set(params) & {"setting", "single_gpu", "load", "groups"})
        if clash:
            raise OptionError(clash[0], params[clash[0]], "not used with trace=")
    else:
        stray = sorted(set(params) & (set(TRACE_PARAMS) - {"trace"}))
        if stray:
            raise OptionError(stray[0], params[stray[0]], "only with trace=PATH")
    setting = params.get("setting", "small")
    if setting not in ("small", "paper"):
        raise OptionError("setting", setting, "expected 'small' or 'paper'")
    _integer("jobs", jobs, 1, 10**6)
    _integer("seed", seed, 0, 2**32 - 1)
    g = _integer("gpus_per_server", params.get("gpus_per_server", 8), 1, 1024)
    _integer("workers", workers, g, 10**6)
    if workers % g:
        raise OptionError("workers", workers, f"must be a multiple of gpus_per_server={g}")
    paper = setting == "paper" or traced
    cluster = Cluster(
        servers=workers // g,
        gpus_per_server=g,
        inter_gbps=_number("inter_gbps", params.get("inter_gbps", 10.0), 1e-6, 1e9),
        intra_gbps=_number("intra_gbps", params.get("intra_gbps", 2400.0), 1e-6, 1e9),
        slot_s=_number("slot_s", params.get("slot_s", 1.0 if paper else 10.0), 1e-6, 1e9),
    )
    if traced:
        return from_params(cluster, seed, params)
    rng = np.random.default_rng(seed)
    if paper:
        return _paper(jobs, cluster, rng, params, seed)
    return _small(jobs, cluster, rng, seed)


@functools.lru_cache(maxsize=4096)
def _shape(model: str, config: tuple[int, ...], cluster: Cluster) -> tuple[Any, float]:
    """(stages of the model in that configuration, its minimum iteration time in ms)."""
    st = stages(model, config)
    return st, alpha_tilde_min(Job("probe", 0.0, 1, st, model=model), cluster)[0]


def _job(
    name: str,
    model: str,
    config: tuple[int, ...],
    release: float,
    seconds: float,
    cluster: Cluster,
    group: str = "",
    user: str = "",
) -> Job:
    st, a = _shape(model, config, cluster)
    n = max(1, round(seconds * 1000 / a))
    return Job(name, release, n, st, "ring", group, user, None, model)


def _small(jobs: int, cluster: Cluster, rng: np.random.Generator, seed: int) -> DdlwmpInstance:
    cand = _configs(min(cluster.total_gpus, cluster.gpus_per_server + 2))
    cand = [(m, c) for m, c in cand if len(c) <= 4]
    out = []
    for i in range(jobs):
        model, config = cand[int(rng.integers(len(cand)))]
        release = float(rng.integers(0, jobs)) * cluster.slot_s
        seconds = float(rng.uniform(2, 8)) * cluster.slot_s
        out.append(_job(f"j{i}", model, config, release, seconds, cluster))
    name = f"ddlwmp-small-{jobs}j-{cluster.total_gpus}g-s{seed}"
    return DdlwmpInstance(name, cluster, tuple(out), "generated, setting=small")


def _draw(rng: np.random.Generator, p: np.ndarray, n: int) -> list[int]:
    """``n`` draws of ``rng.choice(len(p), p=p)`` at once: the same numbers from the same
    stream (one uniform each, inverted through the cumulative distribution) without
    normalising p again for every draw."""
    cdf = p.cumsum()
    cdf /= cdf[-1]
    return [int(x) for x in cdf.searchsorted(rng.random(n), side="right")]


def _paper(
    jobs: int, cluster: Cluster, rng: np.random.Generator, params: dict[str, Any], seed: int
) -> DdlwmpInstance:
    share = _number("single_gpu", params.get("single_gpu", 0.7), 0.0, 1.0)
    load = _number("load", params.get("load", 0.7), 1e-3, 100.0)
    n_groups = _integer("groups", params.get("groups", jobs // 5 + 1), 1, 10**6)
    pools = (_configs(1), [(m, c) for m, c in _configs(cluster.total_gpus) if sum(c) > 1])
    groups: tuple[list[tuple[str, tuple[int, ...], float, str]], ...] = ([], [])
    for kind in (0, 1):
        for _ in range(n_groups):
            model, config = pools[kind][int(rng.integers(len(pools[kind])))]
            median = 1800.0 * float(rng.lognormal(0.0, 1.5))
            user = f"u{int(rng.integers(max(1, n_groups // 4)))}"
            groups[kind].append((model, config, median, user))
    weights = rng.zipf(1.5, n_groups).astype(float)  # a few groups recur very often
    kinds = (rng.random(jobs) >= share).astype(int) if pools[1] else np.zeros(jobs, int)
    picks = list(zip(kinds.tolist(), _draw(rng, weights / weights.sum(), len(kinds)), strict=True))
    durs = [groups[k][q][2] * float(rng.lognormal(0.0, 0.5)) for k, q in picks]
    work = sum(d * sum(groups[k][q][1]) for d, (k, q) in zip(durs, picks, strict=True))
    rate = load * cluster.total_gpus / (work / jobs)  # arrivals per second
    t, out = 0.0, []
    for i, ((k, q), d) in enumerate(zip(picks, durs, strict=True)):
        t += float(rng.exponential(1.0 / rate))
        release = math.ceil(t / cluster.slot_s) * cluster.slot_s
        model, config, _, user = groups[k][q]
        out.append(_job(f"j{i}", model, config, release, d, cluster, f"g{k}-{q}", user))
    name = f"ddlwmp-paper-{jobs}j-{cluster.total_gpus}g-s{seed}"
    return DdlwmpInstance(name, cluster, tuple(out), "generated, setting=paper (Section V-B)")


__all__ = ["PARAMS", "generate"]
