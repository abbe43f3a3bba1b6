"""A ddlwmp instance file read in any of its forms: the full form (:mod:`.instance`: every job
with its stage table), the compact form (:mod:`.columnar`: each profile once, the jobs as
columns) or a ``trace`` object naming a trace and the generator's trace parameters
(:mod:`.traces`). Every form reads into the same jobs, checked alike (:func:`.instance.validate`).
"""

from __future__ import annotations

from typing import Any

from dlsched.models.ddlwmp.columnar import compact_jobs
from dlsched.models.ddlwmp.instance import DdlwmpInstance, build, full_jobs, read_head
from dlsched.models.ddlwmp.traces import from_manifest


def ddlwmp_from_dict(data: Any, source: str) -> DdlwmpInstance:
    """The instance of a JSON-like dict in any form, validated (one-line errors naming the
    file, the field and the value)."""
    r, cluster = read_head(data, source)
    if "trace" in r.data:
        for other in ("jobs", "profiles"):
            if other in r.data:
                raise r.fail(other, "...", "give the jobs or a trace, not both")
        jobs = from_manifest(r.raw("trace"), cluster, source).jobs
    elif isinstance(r.raw("jobs"), dict) or "profiles" in r.data:
        jobs = compact_jobs(r)
    else:
        jobs = full_jobs(r)
    return build(r, cluster, jobs, source)


__all__ = ["ddlwmp_from_dict"]
