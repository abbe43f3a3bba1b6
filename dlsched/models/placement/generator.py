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
) -> PlacementInstance:
    """S = ``jobs`` Table III jobs (a seeded sample; with replacement beyond five) on K =
    ``workers`` GPUs.

    ``layout="homogeneous"``: node n holds GPUs of type V100, P100, T4 for n = 0, 1, 2 mod 3
    (ratio 1:1:1 when K is a multiple of 15). ``layout="mixed"``: worker k has type k mod 3 and
    sits on node k // gpus_per_node. ``noise`` = epsilon perturbs every throughput uniformly in
    [(1 - eps) rho, (1 + eps) rho] (the paper's prediction-error study).
    """
    if jobs < 1:
        raise OptionError("--jobs", jobs, "must be at least 1")
    if workers < jobs:
        raise OptionError("--workers", workers, f"must be at least --jobs ({jobs})")
    if gpus_per_node < 1:
        raise OptionError("gpus_per_node", gpus_per_node, "must be at least 1")
    if layout not in ("homogeneous", "mixed"):
        raise OptionError("layout", layout, "must be 'homogeneous' or 'mixed'")
    if not 0 <= noise < 1:
        raise OptionError("noise", noise, "must lie in [0, 1)")
    rng = np.random.default_rng(seed)
    rows = (
        rng.choice(len(TABLE_III), size=jobs, replace=False)
        if jobs <= len(TABLE_III)
        else rng.choice(len(TABLE_III), size=jobs, replace=True)
    )
    table = throughput_table()
    ws = []
    for k in range(workers):
        node = k // gpus_per_node
        gpu = GPU_TYPES[node % 3] if layout == "homogeneous" else GPU_TYPES[k % 3]
        ws.append(Worker(name=f"{gpu.lower()}-{k}", gpu=gpu, node=f"node{node}"))
    job_list, matrix = [], []
    seen: dict[str, int] = {}
    for r in rows:
        jname, dataset, size, epochs, mb, _v, _t = TABLE_III[int(r)]
        seen[jname] = seen.get(jname, 0) + 1
        label = jname if seen[jname] == 1 else f"{jname}-{seen[jname]}"
        job_list.append(PlacementJob(label, float(size), int(epochs), float(mb)))
        base = np.array([table[jname][w.gpu] for w in ws])
        if noise > 0:
            base = base * rng.uniform(1 - noise, 1 + noise, size=len(ws))
        matrix.append(tuple(float(round(x, 3)) for x in base))
    return PlacementInstance(
        name=name or f"liu2024-s{jobs}k{workers}-seed{seed}",
        jobs=tuple(job_list),
        workers=tuple(ws),
        throughput=tuple(matrix),
        intra_node_gbps=intra_node_gbps,
        inter_node_gbps=inter_node_gbps,
        description=(
            f"Generated: Table III jobs, V100/P100/T4 1:1:1 ({layout} nodes of {gpus_per_node}),"
            f" {intra_node_gbps:g}/{inter_node_gbps:g} Gbps, seed {seed}, noise {noise:g}"
        ),
    )


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
