"""The DNN models of Table I of Luo et al. (seed 001) as ddlwmp stage profiles.

From the paper (Table I): the model names, parameter counts and mini-batch sizes. Everything
else here is an ESTIMATE, not a figure of the paper (whose per-stage profiles are not
published), with its provenance in :data:`PROVENANCE`:

- ``forward_ms``: forward time of one mini-batch of the whole model on one V100, from the
  model's forward FLOPs per sample times the batch at an assumed 15 TFLOP/s effective;
- ``activation_mb``: the activation tensor crossing a stage boundary for one mini-batch, from
  the layer width at a typical cut (fp32; token length 512 for the NLP models);
- ``configs``: data-parallel replicas per stage of a few training configurations, in the
  spirit of the pipeline planner [20] (single-GPU, data-parallel, pipeline with replicas).

A stage of a config with S stages holds 1/S of the parameters (fp32, 4 bytes each), and each of
its k_s replicas processes 1/k_s of the mini-batch: p^f = forward_ms / (S k_s), p^b = 2 p^f,
d^in = d^out = activation_mb / k_s (none before the first stage or after the last).
"""

from __future__ import annotations

from dataclasses import dataclass

from dlsched.models.ddlwmp.instance import Stage


@dataclass(frozen=True)
class Profile:
    name: str
    params_m: float  # millions of parameters (Table I)
    batch: int  # mini-batch size (Table I)
    forward_ms: float  # ESTIMATE, see module docstring
    activation_mb: float  # ESTIMATE
    configs: tuple[tuple[int, ...], ...]  # ESTIMATE: replicas per stage


PROFILES: dict[str, Profile] = {
    p.name: p
    for p in (
        Profile("VGG19", 144, 32, 40.0, 12.0, ((1,), (4,), (2, 2), (2, 1, 1), (4, 2, 1, 1))),
        Profile("ResNet152", 60, 4, 12.0, 3.0, ((1,), (2,), (1, 1), (2, 2))),
        Profile("Inception-V3", 24, 32, 30.0, 8.0, ((1,), (4,), (2, 2))),
        Profile("BERT-large", 340, 4, 25.0, 8.4, ((1,), (2, 2), (1, 1, 1, 1))),
        Profile("XLNet-large", 550, 4, 35.0, 8.4, ((1,), (2, 2), (1, 1, 1, 1))),
        Profile("T5", 11_000, 8, 400.0, 16.8, ((1,) * 8, (2,) * 8)),
        Profile("GPT-6.7B", 6_700, 32, 900.0, 268.0, ((1,) * 8, (2,) * 8)),
        Profile("GPT-13B", 13_000, 32, 1_700.0, 335.0, ((1,) * 16,)),
        Profile("GPT-175B", 175_000, 16, 11_000.0, 403.0, ((1,) * 16, (1,) * 32)),
    )
}

PROVENANCE = {
    "params_m": "Table I of the paper",
    "batch": "Table I of the paper",
    "forward_ms": "estimate: forward FLOPs/sample x batch at 15 TFLOP/s on a V100",
    "activation_mb": "estimate: boundary activation (fp32) at a typical cut, seq. len. 512",
    "configs": "estimate: configurations in the spirit of the planner [20]",
    "stage split": "estimate: parameters and time split evenly over stages and replicas",
}


def stages(model: str, config: tuple[int, ...]) -> tuple[Stage, ...]:
    """The stages of ``model`` under ``config`` (replicas per stage), as the docstring says."""
    p = PROFILES[model]
    s_count = len(config)
    out = []
    for s, k in enumerate(config):
        fwd = p.forward_ms / (s_count * k)
        out.append(
            Stage(
                replicas=k,
                forward_ms=fwd,
                backward_ms=2 * fwd,
                activation_in_mb=p.activation_mb / k if s > 0 else 0.0,
                activation_out_mb=p.activation_mb / k if s < s_count - 1 else 0.0,
                params_mb=4 * p.params_m / s_count,
            )
        )
    return tuple(out)


__all__ = ["PROFILES", "PROVENANCE", "Profile", "stages"]
