"""Instances in the evaluation setting of Liu et al. (TPDS 2024), Section VI-A.

Jobs are the rows of Table III (dataset size, epochs); GPUs are V100, P100 and T4 at 1:1:1,
5 GPUs per node, 300 Gbps inside a node and 10 Gbps between nodes.

Where each throughput figure comes from (samples/s; ``PROVENANCE`` keeps this per cell):

- ResNet-18 and VGG-19 on T4 and V100: measured, the paper's eq. (9) as reconstructed from
  Table II (see docs/errata.md).
- Every P100 figure: the job's V100 figure x ``P100_PER_V100`` = 0.81, the median P100/V100
  throughput ratio over the 26 single-GPU job types measured by Gavel (stanford-futuredata/
  gavel, MIT, ``isolated_throughputs.json``). A test recomputes the median from that file
  when it is present.
- ResNet-101, AlexNet and Transformer on V100: *estimates* (the paper's Fig. 2 with its
  measurements is not in the text): ResNet-101 ~ 0.43 x ResNet-18's rate (Gavel's ResNet-50 /
  ResNet-18 ratio, a further x 0.58 for depth, x 4 for CIFAR's 32x32 against Tiny ImageNet's
  64x64 inputs); AlexNet input-pipeline bound at 4,800/s; Transformer at 400 WikiText-2 lines/s.
- T4 for those three: V100 x 0.466, the mean T4/V100 ratio of the two measured jobs.
- Model sizes D_i: parameter counts of the torchvision / PyTorch-example models x 4 bytes.

With these figures the average communication time at K = 300 is close to the paper's 68.86 s
(Section VI-B), which supports the unit reading (MB and Gbit/s).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from dlsched.errors import OptionError
from dlsched.models.placement.instance import PlacementInstance, PlacementJob, Worker

GPU_TYPES = ("V100", "P100", "T4")
P100_PER_V100 = 0.81
T4_PER_V100 = (275 / 644 + 884 / 1754) / 2

# name, dataset, dataset size, epochs, model size (MB), V100 samples/s, T4 samples/s or None
TABLE_III = (
    ("ResNet101", "CIFAR-10", 50_000, 200, 178.2, 275.0, None),
    ("ResNet18", "Tiny ImageNet", 100_000, 200, 46.8, 644.0, 275.0),
    ("VGG19", "CIFAR-10", 50_000, 200, 574.7, 1754.0, 884.0),
    ("AlexNet", "CIFAR-10", 50_000, 100, 244.4, 4800.0, None),
    ("Transformer", "WikiText-2", 36_718, 3, 54.0, 400.0, None),
)


def throughput_table() -> dict[str, dict[str, float]]:
    out = {}
    for name, _ds, _n, _e, _mb, v100, t4 in TABLE_III:
        out[name] = {
            "V100": v100,
            "P100": round(v100 * P100_PER_V100, 1),
            "T4": t4 if t4 is not None else round(v100 * T4_PER_V100, 1),
        }
    return out


PROVENANCE = {
    name: {
        "V100": "measured (paper eq. 9)" if t4 is not None else "estimate (see module docstring)",
        "T4": "measured (paper eq. 9)" if t4 is not None else "V100 x mean measured T4/V100",
        "P100": "V100 x Gavel median P100/V100",
    }
    for name, _ds, _n, _e, _mb, _v, t4 in TABLE_III
}


#: Largest jobs x workers (the throughput matrix has one cell per pair).
MAX_CELLS = 10**6
#: Largest throughput noise: (1 - 0.99) x the slowest Table III figure still rounds above 0.
MAX_NOISE = 0.99
#: Link rates accepted, Gbit/s (the instance format's range).
GBPS = (1e-6, 1e5)
PARAMS = ("layout", "gpus_per_node", "noise", "intra_node_gbps", "inter_node_gbps", "name")


def _integer(name: str, value: Any, low: int, high: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise OptionError(name, value, f"expected an integer in [{low}, {high}]")
    return value


def _number(name: str, value: Any, low: float, high: float) -> float:
    ok = isinstance(value, int | float) and not isinstance(value, bool)
    if not (ok and math.isfinite(value) and low <= value <= high):
        raise OptionError(name, value, f"expected a number in [{low:g}, {high:g}]")
    return float(value)


def _check(jobs: Any, workers: Any, seed: Any, params: dict[str, Any]) -> None:
    """OptionError naming the first parameter of :func:`generate` that is out of range."""
    _integer("--jobs", jobs, 1, MAX_CELLS)
    _integer("--gpus", workers, 1, MAX_CELLS)
    if workers < jobs:
        raise OptionError("--gpus", workers, f"must be at least --jobs ({jobs})")
    _integer("--seed", seed, 0, 2**32 - 1)
    if jobs * workers > MAX_CELLS:
        raise OptionError("--jobs/--gpus", (jobs, workers), f"jobs x workers > {MAX_CELLS}")
    if params["layout"] not in ("homogeneous", "mixed"):
        raise OptionError("layout", params["layout"], "must be 'homogeneous' or 'mixed'")
    _integer("gpus_per_node", params["gpus_per_node"], 1, MAX_CELLS)
    _number("noise", params["noise"], 0.0, MAX_NOISE)
    for key in ("intra_node_gbps", "inter_node_gbps"):
        _number(key, params[key], *GBPS)
    name = params["name"]
    if name is not None and not (isinstance(name, str) and name.strip()):
        raise OptionError("name", name, "expected a non-empty string")


def generate(
    jobs: int,
    workers: int,
    seed: int = 0,
    *,
    layout: str = "homogeneous",
    gpus_per_node: int = 5,
    noise: float = 0.0,
    intra_node_gbps: float = 300.0,
    inter_node_gbps: float = 10.0,
    name: str | None = None,
    **unknown: Any,
) -> PlacementInstance:
    """S = ``jobs`` Table III jobs (a seeded sample; with replacement beyond five) on K =
    ``workers`` GPUs.

    ``layout="homogeneous"``: node n holds GPUs of type V100, P100, T4 for n = 0, 1, 2 mod 3
    (ratio 1:1:1 when K is a multiple of 15). ``layout="mixed"``: worker k has type k mod 3 and
    sits on node k // gpus_per_node. ``noise`` = epsilon perturbs every throughput uniformly in
    [(1 - eps) rho, (1 + eps) rho] (the paper's prediction-error study).

    The instance is named ``generated-s<S>k<K>-seed<seed>`` unless ``name`` is given: never a
    bundled instance's name (the bundled ``liu2024-s5k100-seed0`` came from this generator but
    is the published figure's instance, kept as it is).

    Every parameter is checked first (OptionError naming it): 1 <= jobs <= workers, jobs x
    workers <= :data:`MAX_CELLS`, seed in [0, 2^32), gpus_per_node >= 1, noise in [0,
    :data:`MAX_NOISE`], link rates in :data:`GBPS`, name a non-empty string.
    """
    if unknown:
        key = sorted(unknown)[0]
        raise OptionError(key, unknown[key], f"unknown parameter (known: {', '.join(PARAMS)})")
    params = {
        "layout": layout,
        "gpus_per_node": gpus_per_node,
        "noise": noise,
        "intra_node_gbps": intra_node_gbps,
        "inter_node_gbps": inter_node_gbps,
        "name": name,
    }
    _check(jobs, workers, seed, params)
    rng = np.random.default_rng(seed)
    rows = rng.choice(len(TABLE_III), size=jobs, replace=jobs > len(TABLE_III))
    ws = _workers(workers, layout, gpus_per_node)
    job_list, matrix = _jobs(rows, ws, noise, rng)
    return PlacementInstance(
        name=name or f"generated-s{jobs}k{workers}-seed{seed}",
        jobs=tuple(job_list),
        workers=tuple(ws),
        throughput=tuple(matrix),
        intra_node_gbps=float(intra_node_gbps),
        inter_node_gbps=float(inter_node_gbps),
        description=(
            f"Generated: Table III jobs, V100/P100/T4 1:1:1 ({layout} nodes of {gpus_per_node}),"
            f" {intra_node_gbps:g}/{inter_node_gbps:g} Gbps, seed {seed}, noise {noise:g}"
        ),
    )


def _workers(workers: int, layout: str, gpus_per_node: int) -> list[Worker]:
    ws = []
    for k in range(workers):
        node = k // gpus_per_node
        gpu = GPU_TYPES[node % 3] if layout == "homogeneous" else GPU_TYPES[k % 3]
        ws.append(Worker(name=f"{gpu.lower()}-{k}", gpu=gpu, node=f"node{node}"))
    return ws


def _jobs(
    rows: np.ndarray, ws: list[Worker], noise: float, rng: np.random.Generator
) -> tuple[list[PlacementJob], list[tuple[float, ...]]]:
    """The sampled Table III rows as jobs, and their (perturbed) throughput rows."""
    table = throughput_table()
    job_list, matrix = [], []
    seen: dict[str, int] = {}
    for r in rows:
        jname, _dataset, size, epochs, mb, _v, _t = TABLE_III[int(r)]
        seen[jname] = seen.get(jname, 0) + 1
        label = jname if seen[jname] == 1 else f"{jname}-{seen[jname]}"
        job_list.append(PlacementJob(label, float(size), int(epochs), float(mb)))
        base = np.array([table[jname][w.gpu] for w in ws])
        if noise > 0:
            base = base * rng.uniform(1 - noise, 1 + noise, size=len(ws))
        matrix.append(tuple(float(round(x, 3)) for x in base))
    return job_list, matrix


def gavel_p100_per_v100(path: str) -> float:
    """Median P100/V100 throughput ratio over the single-GPU job types of Gavel's
    ``isolated_throughputs.json`` (read at run time; the data is not shipped)."""
    import json
    import statistics

    with open(path, encoding="utf-8") as fh:
        data = json.load(fh)
    ratios = [
        data["p100"][k] / data["v100"][k]
        for k in data["v100"]
        if k.endswith(", 1)") and k in data["p100"] and data["v100"][k] > 0
    ]
    return float(statistics.median(ratios))
