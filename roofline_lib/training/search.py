"""The search over training configurations: every (tp, pp, cp, ZeRO stage, recomputation, micro-batch,
interleaving) layout of a number of chips for one step, evaluated at once with numpy: ``train_step``'s optimistic
terms and its best estimate (``TrainStep.estimate``), as arrays, with the peak memory each needs
(``TrainStep.memory.peak``); ``SearchResult.best(k)`` the fastest that fit by the estimate, with their margins.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from ..core.checks import positive
from ..specs.hardware import get_accelerator
from ..specs.models import get_model
from .flops import RECOMPUTE
from .step import _topology_for, train_step_unchecked


@dataclasses.dataclass(frozen=True)
class SearchResult:
    """Every configuration tried (arrays, one entry each) and the fastest that fit."""

    configs: dict  # name -> array
    step_time_s: np.ndarray
    tokens_per_s_per_chip: np.ndarray
    mfu: np.ndarray
    memory_bytes: np.ndarray
    fits: np.ndarray
    estimate_step_time_s: np.ndarray = None
    estimate_mfu: np.ndarray = None

    def __len__(self):
        return len(self.step_time_s)

    def __repr__(self):
        return f"SearchResult({len(self)} configurations, {int(np.sum(self.fits))} fit; .best(k) for the fastest)"

    def best(self, k=5, by="estimate"):
        """The ``k`` fastest configurations that fit, ranked ``by`` the best estimate (or ``"optimistic"``:
        ``train_step``'s terms), as dicts: config, estimated step time and MFU, the optimistic step time, tokens/s
        per chip and MFU, peak GB, and ``margin``: how much slower than the first (0 for it)."""
        if by not in ("estimate", "optimistic"):
            raise ValueError(f"by must be 'estimate' or 'optimistic', got {by!r}")
        key = self.estimate_step_time_s if by == "estimate" else self.step_time_s
        order = [i for i in np.argsort(key, kind="stable") if self.fits[i]][:k]
        return [dict({n: (v[i].item() if hasattr(v[i], "item") else v[i]) for n, v in self.configs.items()},
                     estimate_step_time_s=float(self.estimate_step_time_s[i]), estimate_mfu=float(
                         self.estimate_mfu[i]), step_time_s=float(self.step_time_s[i]), tokens_per_s_per_chip=float(
                         self.tokens_per_s_per_chip[i]), mfu=float(self.mfu[i]),
                     memory_GB=float(self.memory_bytes[i] / 1e9), margin=float(key[i] / key[order[0]] - 1))
                for i in order]


def search(model, hw, *, n_chips, seq_len, global_batch, tps=(1, 2, 4, 8), pps=None, cps=(1, 2, 4, 8),
           zero_stages=(0, 1, 2, 3), recomputes=RECOMPUTE, micro_batches=(1, 2, 4, 8), virtual_stages=(1, 2, 4),
           precision="bf16", optimizer="adamw", topology=None):
    """Every (tp, pp, cp, zero stage, recompute, micro-batch, interleaving) configuration of ``n_chips`` chips for
    a step of ``global_batch`` sequences, evaluated at once (numpy), with the peak memory each needs: a
    ``SearchResult`` (``.best(k)``: the fastest that fit by the best estimate, with their margins). ``pps``
    defaults to every stage count up to 64 (or the layer count): with
    uneven stages the one of ceil(L / pp) layers sets the pace; ``virtual_stages`` (chunks per GPU) apply where
    pp > 1, the micro-batches are a multiple of pp (Megatron-Core's default grouping) and each chunk keeps a layer.

    Taught in chapter 13 (notebooks/13_training_parallel.ipynb)."""
    m, hw = get_model(model), get_accelerator(hw)
    n = positive("n_chips", n_chips, integer=True)
    s = positive("seq_len", seq_len, integer=True)
    gb = positive("global_batch", global_batch, integer=True)
    topo = _topology_for(hw, topology)
    pps = range(1, min(m.num_layers, 64) + 1) if pps is None else pps
    rows = []
    for tp in tps:
        for pp in pps:
            for cp in cps:
                if n % (tp * pp * cp) or m.num_heads % tp:
                    continue
                dp = n // (tp * pp * cp)
                for b in micro_batches:
                    if gb % (dp * b):
                        continue
                    # interleaving needs the micro-batches to be a multiple of the stages (Megatron-LM)
                    interleaves = pp > 1 and (gb // (dp * b)) % pp == 0
                    for v in (virtual_stages if interleaves else (1,)):
                        if v == 1 or math.ceil(m.num_layers / pp) >= v:
                            rows.append((tp, pp, cp, b, v))
    if not rows:
        raise ValueError(f"no (tp, pp, cp, micro_batch) divides {n} chips and {gb} sequences; try other sizes")
    grid = np.array(rows)
    tp, pp, cp, b, v = (grid[:, i] for i in range(5))
    out = {name: [] for name in ("step", "tokens", "mfu", "mem", "fits", "zero", "recompute", "est", "est_mfu")}
    cols = {"tp": [], "pp": [], "cp": [], "micro_batch": [], "virtual_stages": []}
    for recompute in recomputes:
        for zero in zero_stages:
            st = train_step_unchecked(m, hw, topo, n_chips=n, seq_len=s, global_batch=gb, micro_batch=b, tp=tp,
                                      pp=pp, cp=cp, zero_stage=np.full(len(tp), zero), recompute=recompute,
                                      sp=True, virtual_stages=v,
                                      precision=precision, optimizer=optimizer)
            est = st.estimate
            out["step"].append(st.step_time_s)
            out["tokens"].append(st.tokens_per_s_per_chip)
            out["mfu"].append(st.mfu)
            out["mem"].append(st.memory.peak)
            out["fits"].append(st.fits)
            out["est"].append(est.step_time_s)
            out["est_mfu"].append(est.mfu)
            out["zero"].append(np.full(len(tp), zero))
            out["recompute"].append(np.full(len(tp), recompute))
            for name, col in (("tp", tp), ("pp", pp), ("cp", cp), ("micro_batch", b), ("virtual_stages", v)):
                cols[name].append(col)
    configs = {name: np.concatenate(v) for name, v in cols.items()}
    configs["dp"] = n // (configs["tp"] * configs["pp"] * configs["cp"])
    configs["zero_stage"] = np.concatenate(out["zero"])
    configs["recompute"] = np.concatenate(out["recompute"])
    return SearchResult(configs, np.concatenate(out["step"]), np.concatenate(out["tokens"]),
                        np.concatenate(out["mfu"]), np.concatenate(out["mem"]), np.concatenate(out["fits"]),
                        np.concatenate(out["est"]), np.concatenate(out["est_mfu"]))


__all__ = ["SearchResult", "search"]
