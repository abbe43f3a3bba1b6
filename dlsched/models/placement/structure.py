"""The symmetry of P1 (seed 000) made explicit: worker types, node classes, job classes.

P1's cost of a job depends only on how many workers of each *type* it holds (a type is a
throughput column rho[:, k]: V_i (13) and K_i are sums over types) and on whether those
workers span two or more nodes (the ring bottleneck, eq. 5). So a placement is, exactly:

- for every job a *column*: a vector x of worker counts per type, and a *mode*: ``spread``
  (any nodes; charged the inter-node rate, which is exact when the job spans nodes and an
  over-estimate otherwise) or ``local`` (all workers on one node; charged the intra-node rate);
- local jobs packed into nodes: identical nodes (same count of every type) form a *class*, and
  a local job only needs a node *slot* of its class; the spread jobs take what is left of each
  type wherever it is.

Identical jobs (same work, throughput row and model size) form a *job class*: they can swap
columns, so an optimum only needs how many of them take each column.

This module only describes that structure and prices columns; the exact route built on it is
:mod:`dlsched.models.placement.columns`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from dlsched.models.placement.evaluate import Evaluator
from dlsched.models.placement.instance import PlacementInstance


@dataclass(frozen=True)
class Structure:
    """Types, node classes and job classes of one instance.

    - ``type_of[k]``: worker k's type; ``supply[t]``: workers of type t; ``rho[i, t]``.
    - ``node_cap[c]``: workers of each type on a node of class c; ``class_nodes[c]``: the node
      indices of class c (in order).
    - ``job_class[i]``: job i's class; ``class_jobs[j]``: the jobs of class j.
    - ``comm_local[i]`` / ``comm_spread[i]``: seconds of Ring-AllReduce per unit of
      (K_i - 1)/K_i on one node / across nodes (eq. 6 x T_i x 2).
    - ``size[i]``: K_i fixed by a category (P2, eq. 17), or 0 when free (P1).
    """

    type_of: np.ndarray
    supply: np.ndarray
    rho: np.ndarray
    node_cap: np.ndarray
    class_nodes: tuple[tuple[int, ...], ...]
    job_class: np.ndarray
    class_jobs: tuple[tuple[int, ...], ...]
    work: np.ndarray
    comm_local: np.ndarray
    comm_spread: np.ndarray
    node_of: np.ndarray
    size: np.ndarray

    @property
    def num_types(self) -> int:
        return int(self.supply.size)

    @property
    def grid_size(self) -> int:
        """Number of count vectors 0 <= x <= supply (the spread columns of one job)."""
        return math.prod(int(n) + 1 for n in self.supply)

    @cached_property
    def spread_grid(self) -> np.ndarray:
        """Every count vector 0 < x <= supply, shape (G, T), int."""
        axes = [np.arange(int(n) + 1) for n in self.supply]
        mesh = np.stack(np.meshgrid(*axes, indexing="ij"), axis=-1).reshape(-1, self.num_types)
        return mesh[mesh.sum(axis=1) > 0]

    def local_grid(self, c: int) -> np.ndarray:
        """Every count vector of at least two workers that fits one node of class c."""
        axes = [np.arange(int(n) + 1) for n in self.node_cap[c]]
        mesh = np.stack(np.meshgrid(*axes, indexing="ij"), axis=-1).reshape(-1, self.num_types)
        return mesh[mesh.sum(axis=1) >= 2]

    def cost(self, i: int, x: np.ndarray, local: bool) -> np.ndarray:
        """JCT (7) of job i holding count vectors ``x`` (rows), spread or on one node."""
        x = np.atleast_2d(x)
        v = x @ self.rho[i]
        k = x.sum(axis=1)
        rate = self.comm_local[i] if local else self.comm_spread[i]
        return self.work[i] / v + (k - 1) / k * rate


def structure(instance: PlacementInstance, category: tuple[int, ...] | None = None) -> Structure:
    """The structure of P1 (or of P2 when ``category`` fixes every K_i)."""
    rho = np.asarray(instance.rho)
    types: dict[tuple[float, ...], int] = {}
    type_of = np.array(
        [types.setdefault(tuple(rho[:, k]), len(types)) for k in range(rho.shape[1])]
    )
    num_types = len(types)
    supply = np.bincount(type_of, minlength=num_types)
    rho_t = np.array([list(col) for col in types]).T  # (S, T)
    node = np.asarray(instance.node_index)
    num_nodes = int(node.max()) + 1
    cap = np.zeros((num_nodes, num_types), dtype=int)
    np.add.at(cap, (node, type_of), 1)
    classes: dict[tuple[int, ...], list[int]] = {}
    for h in range(num_nodes):
        classes.setdefault(tuple(cap[h]), []).append(h)
    ev = Evaluator(instance)
    size = np.array(category if category is not None else [0] * instance.num_jobs, dtype=int)
    keys: dict[tuple[float, ...], list[int]] = {}
    for i in range(instance.num_jobs):
        key = (float(ev.work[i]), ev.comm_intra[i], ev.comm_inter[i], size[i], *rho[i])
        keys.setdefault(key, []).append(i)
    job_class = np.empty(instance.num_jobs, dtype=int)
    for j, members in enumerate(keys.values()):
        job_class[members] = j
    spread = ev.comm_inter if num_nodes > 1 else ev.comm_intra
    return Structure(
        type_of=type_of,
        supply=supply,
        rho=rho_t,
        node_cap=np.array([list(c) for c in classes]),
        class_nodes=tuple(tuple(hs) for hs in classes.values()),
        job_class=job_class,
        class_jobs=tuple(tuple(m) for m in keys.values()),
        work=np.asarray(ev.work, dtype=float),
        comm_local=np.asarray(ev.comm_intra, dtype=float),
        comm_spread=np.asarray(spread, dtype=float),
        node_of=node,
        size=size,
    )
