"""The training model on small Llama-shaped models with tied embeddings (Llama 3.2 1B and 3B, beside Llama 3 8B):
the FLOP count of a tied LM head, the parameters each pipeline stage holds, a Megatron-style step's peak memory
counted by hand from config.json, and a sweep of layouts (1, 2 and 8 nodes of 8 H100s, DP only, TP2, TP4 + PP2,
ZeRO 0 and 1, micro-batch 1, 2, 4) where nothing is NaN and the bound never exceeds the estimate."""

import numpy as np
import pytest

import roofline_lib as rl
from roofline_lib.training import peak as P
from roofline_lib.training.memory import stage_params

T = rl.training
GIB = 2**30
SETUP = dict(seq_len=4096, global_batch=256, recompute="none")  # bf16 AdamW, FlashAttention, 256 x 4,096 tokens
# Llama-3.2-1B's config.json: hidden, layers, heads, head_dim, KV heads, intermediate, vocabulary (tied)
H1, L1, A1, D1, G1, I1, V = 2048, 16, 32, 64, 8, 8192, 128256


def test_tied_lm_head_is_a_matmul_but_one_table():
    # 6 FLOPs per weight per token for the layers' projections and the LM head (its matmul runs, tied or not),
    # 12 L H d T for attention's two matmuls without a mask; the table is one tensor in the parameters
    layers = L1 * (2 * H1 * A1 * D1 + 2 * H1 * G1 * D1 + 3 * H1 * I1)
    assert T.flops_per_token("llama-3.2-1b", 4096) == 6 * (layers + V * H1) + 12 * L1 * A1 * D1 * 4096
    m = rl.get_model("llama-3.2-1b")
    assert m.n_params == layers + L1 * 2 * H1 + V * H1 + H1


def hand_peak(tp, pp, dp, b, zero, s=4096):
    """Bytes a Megatron-style trainer allocates on the GPU that holds the most, counted from Llama-3.2-1B's config:
    bf16 weights, fp32 main gradients, fp32 master weights with Adam's m and v (over dp from ZeRO-1); per layer,
    with sequence parallelism and FlashAttention, no recomputation: both norms' inputs, the q/k/v projection's and
    the MLP's inputs (whole sequence / tp), Q, K, V, the attention output, its log-sum-exp (fp32), gate, up and
    their SwiGLU product; the last stage's bf16 logits, their fp32 copy and its fp32 gradient."""
    layer = (2 * A1 * D1 * H1 + 2 * G1 * D1 * H1 + 3 * I1 * H1) / tp + 2 * H1  # norms replicated over tp
    table = V * H1 / tp  # vocab-parallel; with a pipeline the last stage holds a tied copy of it
    params = L1 // pp * layer + table + H1
    states = 2 * params + 4 * params + 12 * params / (dp if zero else 1)
    sl = s / tp
    per_layer = (4 * 2 * sl * b * H1 + 2 * s * b * (A1 * D1 + 2 * G1 * D1) / tp + 2 * s * b * A1 * D1 / tp
                 + 4 * s * b * A1 / tp + 3 * 2 * s * b * I1 / tp)
    loss = (2 + 4 + 4) * s * b * V / tp
    in_flight = min(pp, 256 // (dp * b))
    first = states + L1 // pp * per_layer * in_flight
    last = states + L1 // pp * per_layer + loss
    return first + loss if pp == 1 else max(first, last)


@pytest.mark.parametrize("tp, pp, b, zero", [(2, 1, 1, 1), (4, 2, 1, 1), (1, 1, 2, 0), (2, 2, 1, 1)])
def test_peak_memory_of_a_small_step_by_hand(tp, pp, b, zero):
    st = T.train_step("llama-3.2-1b", "h100", n_chips=8, micro_batch=b, tp=tp, pp=pp, zero_stage=zero, sp=tp > 1,
                      **SETUP)
    terms = st.memory.peak_terms
    allocated = sum(v for k, v in terms.items() if k not in ("fragmentation", "largest op's temporaries"))
    # within 0.5 %: the hand count also has the norm weights replicated over tp, not split
    assert float(allocated) == pytest.approx(hand_peak(tp, pp, 8 // (tp * pp), b, zero), rel=0.005)
    assert st.memory.peak == pytest.approx(P.FRAGMENTATION * (allocated + terms["largest op's temporaries"]))


def test_each_pipeline_stage_holds_a_whole_table():
    # the first stage the embedding, the last the LM head or (tied) a copy of the embedding: with pp = 2 each holds
    # half the layers and one 128256 x h table; without a pipeline the tied table is held once
    m = rl.get_model("llama-3.2-1b")
    layers = m.n_params - V * H1
    assert stage_params(m, 1, 1) == m.n_params
    assert stage_params(m, 2, 2) == pytest.approx((layers / 2 + V * H1) / 2)
    # an untied model on 4 stages: 8 of 32 layers and the embedding, more than an even quarter of everything
    m8 = rl.get_model("llama-3-8b")
    body = m8.n_params - 2 * V * 4096
    assert stage_params(m8, 1, 4) == pytest.approx(body / 4 + V * 4096)
    assert stage_params(m8, 1, 4) > 1.05 * m8.n_params / 4


LAYOUTS = [(1, 1), (2, 1), (4, 2)]  # (tp, pp): DP only, TP2, TP4 + PP2


@pytest.mark.parametrize("model", ["llama-3.2-1b", "llama-3.2-3b", "llama-3-8b"])
def test_sweep_of_layouts_is_finite_and_bounded(model):
    for nodes in (1, 2, 8):
        for tp, pp in LAYOUTS:
            for zero in (0, 1):
                for b in (1, 2, 4):
                    st = T.train_step(model, "h100", n_chips=8 * nodes, micro_batch=b, tp=tp, pp=pp,
                                      zero_stage=zero, sp=tp > 1, **SETUP)
                    est = st.estimate
                    values = [st.step_time_s, est.step_time_s, st.memory.peak, *st.terms.values(),
                              *est.terms.values(), *st.memory.peak_terms.values()]
                    assert all(np.isfinite(v) and v >= 0 for v in values), (model, nodes, tp, pp, zero, b)
                    assert st.step_time_s <= est.step_time_s, (model, nodes, tp, pp, zero, b)
                    assert 0 < est.mfu < st.mfu < 1
        r = T.search(model, "h100", n_chips=8 * nodes, seq_len=4096, global_batch=256, tps=(1, 2, 4), pps=(1, 2),
                     cps=(1,), zero_stages=(0, 1), recomputes=("none",), micro_batches=(1, 2, 4))
        best = r.best(3)
        assert best and all(np.isfinite(c["estimate_step_time_s"]) for c in best)
        assert all(c["step_time_s"] <= c["estimate_step_time_s"] for c in best)
