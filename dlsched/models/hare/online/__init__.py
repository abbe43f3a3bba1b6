"""The online, non-clairvoyant side of Hare (seed 004): Chen et al., *Non-Clairvoyant
Scheduling of Distributed Machine Learning With Inter-Job and Intra-Job Parallelism on
Heterogeneous GPUs*, IEEE TCC 2024.

It reuses the hare instances and checker: arrival times and round counts become unknown to the
policies, which learn a job's size only as its rounds run.

- :mod:`.grouping`: GPU_Grouping (4)-(6), exact MILPs on HiGHS and a greedy heuristic;
- :mod:`.hlas`: HLAS (Algorithms 1-3) and HLAS-P (Section V-B);
- :mod:`.predictors`: the pluggable job-size predictors of HLAS-P;
- :mod:`.baselines`: online FIFO, 2D-LAS, Sched_Homo and Sched_Allox with unit sizes;
- :mod:`.methods`: :data:`ONLINE_METHODS`, merged into the hare family's methods;
- :mod:`.common`: round bookkeeping on the shared engine :mod:`dlsched.simulate`.

>>> from dlsched.instances import load
>>> from dlsched.models import run_method
>>> out = run_method(load("hare/tcc2024-fig12"), "hlas")
>>> round(out.details["average_jct"], 1)
6.7
"""
