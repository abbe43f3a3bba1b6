"""``dlsched verify``: the theorems of every family checked on seeded small instances with
certified references, serially or on Dask, resumable, with violations shrunk and a report.

- :mod:`.theorem`: the :class:`Theorem` record, the default measure, the registry (each
  family's ``theorems()``).
- :mod:`.runner`: tasks, the log (:mod:`dlsched.bounds`' locked, fsynced log), counterexamples
  and shrinking.
- :mod:`.check`: one theorem in this process by the same rows and verdicts: on one instance
  (``check``), on a saved counterexample (``recheck``), on a caller's generator (``sample``,
  what the families' sweeps call).
- :mod:`.report`: ``report.md`` and ``report.html``.
"""

from __future__ import annotations

from dlsched.verify.theorem import Measurement, Theorem, ratio_measure, registry, select

__all__ = ["Measurement", "Theorem", "ratio_measure", "registry", "select"]
