"""The routed experts a batch touches: the weights an MoE layer reads in one step.

Under top-k routing each token picks ``k`` of ``E`` routed experts. If a token picks expert e with probability
p_e (uniform routing: p_e = k / E) and tokens route independently, expert e is untouched by ``T`` tokens with
probability (1 - p_e)^T, so by linearity of expectation the experts touched are sum_e 1 - (1 - p_e)^T, which for
uniform routing is E(1 - (1 - k/E)^T). A decode or prefill step reads exactly those experts' weights
(``llm.blocks`` charges the routed experts' weight bytes for them).
"""

from __future__ import annotations

import numpy as np

from ..core.checks import positive
from ..specs.models import expected_experts_touched, get_model


def moe_model(model, needed_by="experts_touched"):
    """The model's config, refused with the reason unless it routes tokens to experts (``needed_by`` names what
    needed one, for the message)."""
    m = get_model(model)
    if not m.moe:
        raise ValueError(f"{m.name} has no routed experts; {needed_by} needs a mixture-of-experts model "
                         "(e.g. DeepSeek-V3, Mixtral-8x7B, Qwen3-235B-A22B)")
    return m


def routing_probabilities(model, imbalance=None):
    """Each routed expert's chance of being picked by one token: k/E each (``imbalance=None``), or ``k`` shared
    in proportion to ``imbalance``, one positive relative load per routed expert (a hot expert's larger)."""
    m = moe_model(model)
    E, k = m.moe.num_experts, m.moe.experts_per_token
    if imbalance is None:
        return np.full(E, k / E)
    load = np.asarray(positive("imbalance", imbalance), float).ravel()
    if load.size != E:
        raise ValueError(f"imbalance needs one relative load per routed expert of {m.name} ({E}); got {load.size}")
    p = k * load / load.sum()
    if np.any(p > 1 + 1e-12):
        raise ValueError(f"imbalance puts more than one pick per token on an expert (largest share "
                         f"{p.max():.3g}); a token picks {k} distinct experts, so no load may exceed 1/{k} of the "
                         "total")
    return np.minimum(p, 1.0)


def experts_touched(model, tokens, *, imbalance=None):
    """Expected distinct routed experts per MoE layer that ``tokens`` routed tokens touch: E(1 - (1 - k/E)^T)
    under uniform top-k routing; with ``imbalance`` (one relative load per expert), sum_e 1 - (1 - p_e)^T.
    Vectorised over ``tokens``. DeepSeek-V3 (k = 8 of E = 256): 8 at one token, about 57 at 8, 222 at 64.

    >>> round(float(experts_touched("deepseek-v3", 64)), 1)
    222.4

    Taught in chapter 14 (notebooks/14_mixture_of_experts.ipynb)."""
    m = moe_model(model)
    tokens = positive("tokens", tokens)
    if imbalance is None:
        return expected_experts_touched(m.moe.num_experts, m.moe.experts_per_token, tokens)
    p = routing_probabilities(m, imbalance)
    t = np.asarray(tokens, float)[..., None]
    out = np.sum(1 - np.power(1 - p, t), axis=-1)
    return float(out) if np.ndim(tokens) == 0 else out


def tokens_per_expert(model, tokens):
    """Mean tokens each touched expert computes on: T k / experts touched (the M of its grouped GEMM)."""
    m = moe_model(model)
    tokens = positive("tokens", tokens)
    return np.asarray(tokens, float) * m.moe.experts_per_token / experts_touched(m, tokens)


__all__ = ["experts_touched", "routing_probabilities", "tokens_per_expert"]
