"""Pyomo's modelling environment (``pyomo.environ``), imported without the SciPy statistics
Pyomo would load with it: every module of the package imports Pyomo through here.

Pyomo declares SciPy an optional dependency whose first use imports ``scipy.stats`` (with
``scipy.integrate``, ``scipy.sparse`` and ``scipy.spatial``), and it makes that use at once when
SciPy is already loaded, or when SciPy is first imported after it (its import hook). The
package loads SciPy for its own sparse matrices and optimizers, and never needs SciPy through
Pyomo; ``scipy.stats`` alone took about a second of CPU, which a 2 s ``--time-limit`` counting
the whole process cannot spare. So Pyomo's dependency table is built with SciPy out of sight
(its entries for SciPy stay deferred, resolved only if Pyomo itself asks for SciPy), and SciPy
is imported first, so that Pyomo's hook never sees its first import.
"""

from __future__ import annotations

import sys


def _without_scipy_statistics() -> None:
    """Import ``pyomo.common.dependencies`` while no SciPy module is in ``sys.modules`` (they
    are put back at once): its SciPy entry is then deferred, not resolved on the spot."""
    if "pyomo.common.dependencies" in sys.modules:  # imported before: nothing to change now
        return
    import scipy  # noqa: F401  (the bare package, before Pyomo's import hook is in place)

    names = [n for n in sys.modules if n == "scipy" or n.startswith("scipy.")]
    hidden = {n: sys.modules.pop(n) for n in names}
    try:
        import pyomo.common.dependencies  # noqa: F401
    finally:
        sys.modules.update(hidden)


_without_scipy_statistics()

import pyomo.environ as pyo  # noqa: E402  (after Pyomo's dependency table is in place)
from pyomo.gdp import Disjunction  # noqa: E402  (loaded by pyomo.environ already)

__all__ = ["Disjunction", "pyo"]
