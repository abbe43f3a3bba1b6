"""Shared test configuration: hypothesis runs derandomized (reproducible in CI)."""

from __future__ import annotations

from hypothesis import HealthCheck, settings

settings.register_profile(
    "dlsched",
    derandomize=True,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
    print_blob=True,
)
settings.load_profile("dlsched")
