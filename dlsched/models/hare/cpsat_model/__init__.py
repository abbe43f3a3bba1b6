"""Hare_Sched (4)-(8) as a native CP-SAT model, in the parts of a model: its variables
(:mod:`.variables`), its constraints named after the paper's equations (:mod:`.constraints`),
its objective with the bounds proved so far (:mod:`.objective`), and a known schedule as its
hint or read back from a solution (:mod:`.hints`); :mod:`.build` puts them together under a
:class:`CpsatConfig`."""

from .build import DEFAULT_CONFIG, CpsatConfig, CpsatHare, build_cpsat
from .variables import BuildTimeUp, gpu_classes

__all__ = [
    "DEFAULT_CONFIG",
    "BuildTimeUp",
    "CpsatConfig",
    "CpsatHare",
    "build_cpsat",
    "gpu_classes",
]
