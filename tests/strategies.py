"""Hypothesis strategies that build valid instances directly."""

from __future__ import annotations

from hypothesis import strategies as st

from dlsched.models.placement.instance import PlacementInstance, PlacementJob, Worker


@st.composite
def placement_instances(draw, max_jobs: int = 3, max_workers: int = 6) -> PlacementInstance:
    s = draw(st.integers(1, max_jobs))
    k = draw(st.integers(s, max_workers))
    num_nodes = draw(st.integers(1, 3))
    kinds = draw(st.integers(1, 3))
    gpu = [draw(st.integers(0, kinds - 1)) for _ in range(k)]
    node = [draw(st.integers(0, num_nodes - 1)) for _ in range(k)]
    jobs = []
    rows = []
    for i in range(s):
        per_kind = [draw(st.integers(50, 2000)) for _ in range(kinds)]
        rows.append(tuple(float(per_kind[g]) for g in gpu))
        jobs.append(
            PlacementJob(
                name=f"j{i}",
                dataset_size=float(draw(st.integers(1_000, 100_000))),
                epochs=draw(st.integers(1, 200)),
                model_size_mb=float(draw(st.sampled_from([0, 5, 50, 500]))),
            )
        )
    intra = float(draw(st.sampled_from([10, 100, 300])))
    inter = float(draw(st.sampled_from([1, 10]))) if intra > 10 else 10.0
    return PlacementInstance(
        name="hyp",
        jobs=tuple(jobs),
        workers=tuple(Worker(f"w{k_}", f"g{gpu[k_]}", f"n{node[k_]}") for k_ in range(k)),
        throughput=tuple(rows),
        intra_node_gbps=intra,
        inter_node_gbps=inter,
    )
