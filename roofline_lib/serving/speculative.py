"""Speculative decoding as roofline arithmetic: k drafted tokens checked by one forward pass of k + 1 positions;
the expected tokens per verify step for an acceptance rate, the intensity gain, and the speed-up (or loss) with
the draft's cost (a draft model bounded on the same chip, or a stated share of a target step).

Every time is a lower bound (max(t_math, t_mem) at the datasheet peaks) on one chip.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from ..core.checks import fraction, non_negative, positive
from ..llm.setup import setup
from ..llm.steps import decode_step_unchecked, extend_step_unchecked
from ..roofline.bounds import estimate
from ..roofline.workloads import Workload


def _lower(w, hw):
    return estimate(w, hw).lower


def expected_tokens_per_verify(acceptance, k):
    """Tokens one verify step yields when each of ``k`` drafted tokens is accepted with probability
    ``acceptance`` independently, until the first rejection, plus the one token the target model adds
    (the correction, or a bonus after k accepts): sum_{i=0..k} a^i = (1 - a^(k+1)) / (1 - a).
    (Leviathan, Kalman & Matias 2023, arXiv:2211.17192; Chen et al. 2023, arXiv:2302.01318.) Vectorised."""
    return _tokens_per_verify(fraction("acceptance (a probability)", acceptance),
                              non_negative("k (drafted tokens per step)", k, integer=True))


def _tokens_per_verify(a, k):
    a = np.asarray(a, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.where(a == 1, k + 1.0, (1 - a ** (np.asarray(k) + 1)) / np.where(a == 1, 0.5, 1 - a))
    return out.item() if out.ndim == 0 else out


@dataclasses.dataclass(frozen=True)
class Speculative:
    """Speculative decoding: an ordinary decode step, the target model's verify step over k + 1 positions, the draft's
    steps, and the tokens a verify step yields on average."""

    plain: Workload  # one ordinary decode step
    verify: Workload  # the target model over k + 1 positions
    t_plain: object
    t_verify: object
    t_draft: object  # the k draft steps together
    tokens_per_step: object  # expected tokens a verify step yields

    @property
    def time_per_token(self):
        """Seconds per generated token: (verify + draft) / expected tokens per verify step."""
        return (self.t_verify + self.t_draft) / self.tokens_per_step

    @property
    def speedup(self):
        """How many times faster than plain decoding."""
        return self.t_plain / self.time_per_token

    @property
    def intensity_ratio(self):
        """The verify step's intensity over a plain decode step's: the same weights read for k + 1 positions."""
        return self.verify.intensity / self.plain.intensity


def speculative(model, hw, batch, context, k, acceptance, *, draft_model=None, weight_dtype="bf16", kv_dtype="bf16",
                compute_dtype="bf16", draft_cost=0.0):
    """Speculative decoding of ``batch`` sequences at ``context``: a draft proposes ``k`` tokens (k decode
    steps of ``draft_model`` on the same chip; None: a draft that costs nothing, such as n-gram lookup), and
    the target checks them in one pass over k + 1 positions (logits at each). Or, instead of a draft model,
    ``draft_cost``: one draft step's time as a share of one plain target step (0.05 for a draft costing 5 % of
    the target; default 0, a free draft), so the k drafts take k x draft_cost target steps and the speed-up is
    E / (t_verify / t_plain + k x draft_cost). Vectorised.

    Taught in chapter 11 (notebooks/11_serving.ipynb)."""
    s = setup(model, hw, weight_dtype=weight_dtype, kv_dtype=kv_dtype, compute_dtype=compute_dtype)
    batch = positive("batch", batch, integer=True)
    context = positive("context", context, integer=True)
    k = non_negative("k (drafted tokens per step)", k, integer=True)
    acceptance = fraction("acceptance (a probability)", acceptance)
    draft_cost = non_negative("draft_cost (a draft step's time over a target step's)", draft_cost)
    if draft_model is not None and np.any(np.asarray(draft_cost) != 0):
        raise ValueError("give draft_model (its steps are bounded on the chip) or draft_cost (a share of a target "
                         "step), not both")
    plain = decode_step_unchecked(s.model, batch, context, s.dt)
    verify = extend_step_unchecked(s.model, batch, np.asarray(k) + 1, np.asarray(context) - 1, s.dt,
                                   logits_per_sequence=np.asarray(k) + 1)
    t_draft = 0.0
    if np.any(np.asarray(draft_cost) != 0):
        t_draft = np.asarray(k) * np.asarray(draft_cost) * _lower(plain, s.hw)
    if draft_model is not None:
        draft = setup(draft_model, s.hw, weight_dtype=weight_dtype, kv_dtype=kv_dtype, compute_dtype=compute_dtype)
        t_draft = np.asarray(k) * _lower(decode_step_unchecked(draft.model, batch, context, s.dt), s.hw)
    return Speculative(plain, verify, _lower(plain, s.hw), _lower(verify, s.hw), t_draft,
                       _tokens_per_verify(acceptance, k))


__all__ = ["expected_tokens_per_verify", "Speculative", "speculative"]
