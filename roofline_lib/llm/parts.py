"""What each part of a transformer step is: a typed kind that says where its bytes come from, how it
shards across chips and whether a fusing compiler keeps it as a kernel of its own.

Every Workload part that ``llm.blocks`` builds carries its ``PartKind`` (``part.kind``); the modules that
split a step over chips (``multichip.parallel``) or count its kernels (``measure.launch``) decide from
these fields, never from a part's name, so renaming a part cannot change a result.
"""

from __future__ import annotations

import dataclasses
import enum

ATTENTION_WEIGHTS = "attention weights"
MLP_WEIGHTS = "MLP / expert weights"
KV_CACHE = "KV cache"
LM_HEAD = "LM head + embedding"
SMALL_OPS = "norms, RoPE, residuals"
# Where a step's bytes come from, in the order the LLM explorer draws them.
CATEGORIES = (ATTENTION_WEIGHTS, MLP_WEIGHTS, KV_CACHE, LM_HEAD, SMALL_OPS)


class Sharding(enum.Enum):
    """How a part's work divides under tensor parallelism over n chips."""

    SPLIT = "split"  # matmul columns/rows or attention heads: 1/n of its FLOPs and bytes on each chip
    BY_KV_HEAD = "by KV head"  # attention and the cache write: FLOPs by query head (1/n), bytes by KV head
    REPLICATED = "replicated"  # acts on the whole hidden vector (norms, residual adds, the router): in full
    EXPERTS = "experts"  # routed experts: split like matmuls under TP, spread by expert under EP


@dataclasses.dataclass(frozen=True)
class PartKind:
    """One kind of part: its name in a step, the category of its bytes, how it shards, whether a fusing
    compiler keeps it as a kernel (``False``: folded into the next kernel), and whether it runs once
    per layer or once per step."""

    name: str
    category: str
    sharding: Sharding
    kernel: bool = False
    per_layer: bool = True

    def __str__(self):
        return self.name


def _kind(name, category, sharding, kernel=False, per_layer=True):
    return PartKind(name, category, sharding, kernel, per_layer)


S, KV, R, X = Sharding.SPLIT, Sharding.BY_KV_HEAD, Sharding.REPLICATED, Sharding.EXPERTS
EMBEDDING = _kind("embedding lookup", LM_HEAD, R, kernel=True, per_layer=False)
RMSNORM = _kind("RMSNorm", SMALL_OPS, R)
QKV_PROJECTION = _kind("QKV projection", ATTENTION_WEIGHTS, S, kernel=True)
ROPE = _kind("RoPE", SMALL_OPS, S)
KV_WRITE = _kind("KV cache write", KV_CACHE, KV)
ATTENTION = _kind("attention (reads KV cache)", KV_CACHE, KV, kernel=True)
OUTPUT_PROJECTION = _kind("output projection", ATTENTION_WEIGHTS, S, kernel=True)
RESIDUAL = _kind("residual add", SMALL_OPS, R)
MLP_GATE_UP = _kind("MLP gate+up projection", MLP_WEIGHTS, S, kernel=True)
MLP_SILU_MUL = _kind("MLP SiLU x up", MLP_WEIGHTS, S)
MLP_DOWN = _kind("MLP down projection", MLP_WEIGHTS, S, kernel=True)
FINAL_NORM = _kind("final RMSNorm", SMALL_OPS, R, per_layer=False)
LM_HEAD_MATMUL = _kind("LM head", LM_HEAD, S, kernel=True, per_layer=False)
# MLA (DeepSeek-V2/V3)
Q_DOWN = _kind("Q down-projection", ATTENTION_WEIGHTS, S, kernel=True)
Q_PROJECTION = _kind("Q projection", ATTENTION_WEIGHTS, S, kernel=True)
KV_DOWN = _kind("KV down-projection (latent)", ATTENTION_WEIGHTS, S, kernel=True)
K_UP_ABSORBED = _kind("K up-projection (absorbed)", ATTENTION_WEIGHTS, S, kernel=True)
V_UP_ABSORBED = _kind("V up-projection (absorbed)", ATTENTION_WEIGHTS, S, kernel=True)
KV_UP = _kind("KV up-projection", ATTENTION_WEIGHTS, S, kernel=True)
# mixture of experts
MOE_ROUTER = _kind("MoE router", MLP_WEIGHTS, R, kernel=True)
MOE_GATE_UP = _kind("MoE experts gate+up", MLP_WEIGHTS, X, kernel=True)
MOE_SILU_MUL = _kind("MoE experts SiLU x up", MLP_WEIGHTS, X)
MOE_DOWN = _kind("MoE experts down", MLP_WEIGHTS, X, kernel=True)
MOE_COMBINE = _kind("MoE combine", MLP_WEIGHTS, X)
SHARED_GATE_UP = _kind("shared experts gate+up projection", MLP_WEIGHTS, S, kernel=True)
SHARED_SILU_MUL = _kind("shared experts SiLU x up", MLP_WEIGHTS, S)
SHARED_DOWN = _kind("shared experts down projection", MLP_WEIGHTS, S, kernel=True)

KINDS = tuple(v for v in dict(globals()).values() if isinstance(v, PartKind))
del S, KV, R, X

__all__ = [
    "ATTENTION", "ATTENTION_WEIGHTS", "CATEGORIES", "EMBEDDING", "FINAL_NORM", "KINDS", "KV_CACHE", "KV_DOWN",
    "KV_UP", "KV_WRITE", "K_UP_ABSORBED", "LM_HEAD", "LM_HEAD_MATMUL", "MLP_DOWN", "MLP_GATE_UP", "MLP_SILU_MUL",
    "MLP_WEIGHTS", "MOE_COMBINE", "MOE_DOWN", "MOE_GATE_UP", "MOE_ROUTER", "MOE_SILU_MUL", "OUTPUT_PROJECTION",
    "PartKind", "QKV_PROJECTION", "Q_DOWN", "Q_PROJECTION", "RESIDUAL", "RMSNORM", "ROPE", "SHARED_DOWN",
    "SHARED_GATE_UP", "SHARED_SILU_MUL", "SMALL_OPS", "Sharding", "V_UP_ABSORBED"
]
