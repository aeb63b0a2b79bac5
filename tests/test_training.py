"""rl.training against hand derivations and published figures: 6N, the attention term, MFU, model-state bytes,
Korthikanti's activations, pipeline bubbles, the conventions sources use, the step's terms and the search."""

import numpy as np
import pytest
import sympy as sp

import roofline_lib as rl

T = rl.training


def llama2_7b_matmul_weights():
    """By hand from config.json: 32 layers of q, k, v, o (4 x 4096^2) and gate, up, down (3 x 4096 x 11008),
    plus the LM head 32000 x 4096."""
    return 32 * (4 * 4096 ** 2 + 3 * 4096 * 11008) + 32000 * 4096


def test_six_n_derived_from_one_matmul():
    # Y = X W (M tokens, K in, N out): forward 2MNK; dX = dY W^T: 2MNK; dW = X^T dY: 2MNK
    M, N, K = sp.symbols("M N K", positive=True)
    forward, grad_input, grad_weight = 2 * M * N * K, 2 * M * N * K, 2 * M * N * K
    per_token_per_weight = sp.simplify((forward + grad_input + grad_weight) / (M * N * K))
    assert per_token_per_weight == 6


def test_six_n_at_short_length():
    per_token = T.flops_per_token("llama-2-7b", 1)
    attention_at_one = 12 * 32 * 32 * 128 * 1
    assert per_token == 6 * llama2_7b_matmul_weights() + attention_at_one
    assert T.flops_per_token("llama-2-7b", 1, convention="6N") == 6 * rl.get_model("llama-2-7b").n_params


def test_attention_term_and_its_causal_half():
    L, H, d = 32, 32, 128
    for s in (2048, 8192):
        full = T.flops_per_token("llama-2-7b", s) - 6 * llama2_7b_matmul_weights()
        causal = T.flops_per_token("llama-2-7b", s, causal=True) - 6 * llama2_7b_matmul_weights()
        assert full == 12 * L * H * d * s
        assert causal == 6 * L * H * d * s


def test_recompute_adds_a_forward():
    s, layers = 2048, llama2_7b_matmul_weights() - 32000 * 4096
    attention_forward = 4 * 32 * 32 * 128 * s
    base = T.flops_per_token("llama-2-7b", s)
    assert T.flops_per_token("llama-2-7b", s, recompute="full") == base + 2 * layers + attention_forward
    assert T.flops_per_token("llama-2-7b", s, recompute="selective") == base + attention_forward


def gpt(h, L, V=51200, heads=None):
    """A Megatron GPT of hidden size h and L layers: 4h GELU MLP, multi-head attention, tied embeddings."""
    heads = heads or h // 128
    return rl.specs.models.Model(name=f"gpt-{h}-{L}", hidden_size=h, intermediate_size=4 * h, num_layers=L,
                                 num_heads=heads, num_kv_heads=heads, head_dim=h // heads, vocab_size=V,
                                 tie_word_embeddings=True, norm="layernorm", mlp="plain", linear_bias=True)


@pytest.mark.parametrize("h,L", [(2304, 24), (12288, 96), (20480, 105)])
def test_megatron_conventions_are_the_papers_formulas(h, L):
    m, s, V = gpt(h, L), 2048, 51200
    eq3 = 96 * s * L * h ** 2 * (1 + s / (6 * h) + V / (16 * L * h)) / s  # Narayanan et al. 2021, Eq. 3, per token
    model = 72 * s * L * h ** 2 * (1 + s / (6 * h) + V / (12 * L * h)) / s  # Korthikanti et al. 2022, model FLOPs
    assert T.flops_per_token(m, s, convention="megatron2021") == pytest.approx(eq3, rel=1e-12)
    assert T.flops_per_token(m, s, convention="megatron_model") == pytest.approx(model, rel=1e-12)
    assert T.convert_flops(m, s, 100e12, "megatron2021", "megatron_model") == pytest.approx(100e12 * model / eq3)


def test_mt_nlg_mfu_from_its_step_time():
    # Smith et al. 2022: 2240 A100s, batch 1920 x 2048 tokens, 60.1 s per iteration; PaLM Table 3: MFU 30.2 %
    tokens_per_s_per_chip = 1920 * 2048 / 60.1 / 2240
    u = T.mfu("gpt-530b", "a100-80gb-sxm", tokens_per_s_per_chip, 2048, convention="palm")
    assert u == pytest.approx(0.302, abs=0.0015)


def test_time_to_train_hand_value():
    # 6N only: 1e12 tokens x 6 x N / (1024 x 989.4e12 x 0.4)
    n = rl.get_model("llama-2-7b").n_params
    t = T.time_to_train("llama-2-7b", "h100-sxm", 1e12, 1024, 4096, mfu=0.4, convention="6N")
    assert t.seconds == pytest.approx(1e12 * 6 * n / (1024 * 989.4e12 * 0.4))
    # the chip count cancels: 1e12 x 6 N / (989.4e12 x 0.4) chip-seconds, over 3600
    assert t.chip_hours == pytest.approx(1e12 * 6 * n / (989.4e12 * 0.4) / 3600)
    with pytest.raises(ValueError, match="percentage"):
        T.time_to_train("llama-2-7b", "h100-sxm", 1e12, 1024, 4096, mfu=40)


def test_the_old_order_of_mfu_hfu_and_time_to_train_warns_and_agrees():
    # the chip is now second, as everywhere in the library; the old order (chip after the numbers) warns
    rate = 3000.0
    with pytest.warns(DeprecationWarning, match=r"mfu\(model, hw, tokens_per_s_per_chip, seq_len\)"):
        assert T.mfu("llama-2-7b", rate, "H100", 4096) == T.mfu("llama-2-7b", "H100", rate, 4096)
    with pytest.warns(DeprecationWarning, match=r"hfu\(model, hw, "):
        assert T.hfu("llama-2-7b", rate, "H100", 4096) == T.hfu("llama-2-7b", "H100", rate, 4096)
    with pytest.warns(DeprecationWarning, match=r"time_to_train\(model, hw, tokens, n_chips, seq_len"):
        old = T.time_to_train("llama-2-7b", 2e12, 64, rl.get_accelerator("H100"), 4096, mfu=0.4)
    assert old == T.time_to_train("llama-2-7b", "H100", 2e12, 64, 4096, mfu=0.4)
    # the hand value, so the two orders cannot agree on a wrong number: 6N + 6 L H d T at T = 4096
    m = rl.get_model("llama-2-7b")
    assert T.mfu("llama-2-7b", "h100-sxm", rate, 4096, convention="6N") == pytest.approx(
        rate * 6 * m.n_params / 989.4e12)


def test_adamw_is_16_bytes_per_param_and_zero3_divides_by_dp():
    assert sum(T.OPTIMIZERS["adamw"].values()) == 16
    assert [sum(T.OPTIMIZERS[o].values()) for o in ("adamw_fp32_grads", "adamw_fp16", "adamw_fp32")] == [18, 20, 16]
    n = rl.get_model("llama-2-7b").n_params
    for dp in (1, 8, 64):
        mem = T.memory("llama-2-7b", 1, 4096, zero_stage=3, dp=dp)
        assert mem.model_states == pytest.approx(16 * n / dp)
    # Megatron's distributed optimizer (ZeRO-1), bf16 parameters and fp32 gradients: 6 + 12/d bytes per parameter
    mem = T.memory("llama-2-7b", 1, 4096, zero_stage=1, dp=8, optimizer="adamw_fp32_grads")
    assert mem.model_states == pytest.approx(n * (6 + 12 / 8))


def test_korthikanti_activations_gpt3_175b():
    s, b, h, a, t = 2048, 1, 12288, 96, 8
    m = rl.get_model("gpt-3-175b")
    kw = dict(flash_attention=False, dropout=True)
    assert T.activation_bytes_per_layer(m, b, s, **kw) == pytest.approx(s * b * h * (34 + 5 * a * s / h))
    assert T.activation_bytes_per_layer(m, b, s, tp=t, **kw) == pytest.approx(
        s * b * h * (10 + 24 / t + 5 * a * s / (h * t)))
    assert T.activation_bytes_per_layer(m, b, s, tp=t, sp=True, **kw) == pytest.approx(
        s * b * h * (34 / t + 5 * a * s / (h * t)))
    assert T.activation_bytes_per_layer(m, b, s, tp=t, sp=True, recompute="selective", **kw) == pytest.approx(
        s * b * h * 34 / t)
    assert T.activation_bytes_per_layer(m, b, s, tp=t, sp=True, recompute="full", **kw) == pytest.approx(
        2 * s * b * h / t)
    # about 2.87 GB per layer per sequence, 275 GB for the 96 layers: why 175B needs recomputation or sharding
    assert 96 * T.activation_bytes_per_layer(m, b, s, **kw) == pytest.approx(275.4e9, rel=1e-3)


@pytest.mark.parametrize("p,m,v", [(8, 32, 1), (8, 32, 2), (16, 16, 4), (1, 5, 1)])
def test_pipeline_bubble(p, m, v):
    assert T.pipeline_bubble(p, m, v) == pytest.approx((p - 1) / (v * m))


def test_interleaving_needs_micro_batches_a_multiple_of_the_stages():
    # by hand: one micro-batch through p stages of v chunks runs its v p chunks one after another, each t / v
    # long, so the step is p t whatever v: a bubble of (p - 1) t, the v = 1 figure; Megatron-LM refuses v > 1
    # unless m is a multiple of p
    with pytest.raises(ValueError, match="multiple of the pipeline stages"):
        T.pipeline_bubble(16, 8, 4)
    assert T.pipeline_bubble(16, 8, 1) == pytest.approx(15 / 8)
    kw = dict(n_chips=64, seq_len=4096, global_batch=32, tp=4, pp=2, zero_stage=1)  # dp 8: 4 micro-batches
    with pytest.raises(ValueError, match="multiple of the pipeline stages"):
        T.train_step("llama-3.1-8b", "h100-sxm", **{**kw, "pp": 8, "tp": 1, "global_batch": 32}, virtual_stages=2)
    one = T.train_step("llama-3.1-8b", "h100-sxm", **{**kw, "global_batch": 8})  # 1 micro-batch: bubble = compute
    assert one.terms["pipeline bubble"] == pytest.approx(one.terms["compute"])
    with pytest.raises(ValueError, match="multiple of the pipeline stages"):
        T.train_step("llama-3.1-8b", "h100-sxm", **{**kw, "global_batch": 8}, virtual_stages=4)
    four = T.train_step("llama-3.1-8b", "h100-sxm", **kw, virtual_stages=2)  # 4 micro-batches, 2 stages: allowed
    assert four.terms["pipeline bubble"] == pytest.approx(four.terms["compute"] / 4 / 2)


def test_pipeline_first_stage_holds_p_microbatches():
    one = T.memory("llama-2-7b", 1, 4096, pp=1).activations
    assert T.memory("llama-2-7b", 1, 4096, pp=4, microbatches=16).activations == pytest.approx(one)
    assert T.memory("llama-2-7b", 1, 4096, pp=4, microbatches=16, virtual_stages=2).activations == pytest.approx(
        one * (1 + 3 / 8))


def test_critical_tokens_per_chip():
    # H100 bf16 989.4 TFLOP/s against a 400 Gb/s NIC (50 GB/s): 6N FLOPs vs an all-reduce's 2 x 4N bytes of fp32
    # gradients per token (Megatron-LM, torchtitan); bf16 on the wire (fms-fsdp) halves it
    assert T.critical_tokens_per_chip("h100-sxm", 50e9) == pytest.approx(989.4e12 / 50e9 * 8 / 6)
    assert T.critical_tokens_per_chip("h100-sxm", 50e9, grad_bytes=2) == pytest.approx(989.4e12 / 50e9 * 4 / 6)
    # ZeRO-3: two bf16 gathers and an fp32 reduce-scatter, 2 + 2 + 4 = 8 bytes: DP's threshold, not 1.5x it
    assert T.critical_tokens_per_chip("h100-sxm", 50e9, zero_stage=3) == pytest.approx(989.4e12 / 50e9 * 8 / 6)
    assert T.critical_tokens_per_chip("h100-sxm", 50e9, zero_stage=3, grad_bytes=2) == pytest.approx(
        989.4e12 / 50e9)


def test_one_chip_step_is_its_workload_on_the_roofline():
    m, hw, s, gb = rl.get_model("llama-2-7b"), rl.get_accelerator("h100-sxm"), 2048, 4
    st = T.train_step(m, hw, n_chips=1, seq_len=s, global_batch=gb, micro_batch=1, zero_stage=0)
    w = T.step_workload(m, gb, s)
    lower = sum(float(p.lower) for p in rl.estimate(w, hw).parts)
    # plus the loss: 12 bytes per logit (bf16 logits read, fp32 log-probs written and read, bf16 gradient written)
    loss = gb * s * m.vocab_size * (2 + 4 + 4 + 2) / hw.mem_bandwidth
    assert st.terms["compute"] + st.terms["optimizer"] == pytest.approx(lower + loss, rel=1e-9)
    assert sum(T.step_time_split(w, hw).values()) == pytest.approx(lower)
    assert st.tokens_per_s_per_chip == pytest.approx(gb * s / (lower + loss), rel=1e-9)  # one chip, the whole batch


def test_h100_reaches_a_lower_mfu_bound_than_a100_on_7b():
    # the memory-bound kernels weigh more where the ridge point is higher (H100 295 vs A100 153 FLOP/byte)
    mfus = {}
    for chip in ("a100-80gb-sxm", "h100-sxm"):
        st = T.train_step("llama-2-7b", chip, n_chips=8, seq_len=4096, global_batch=64, micro_batch=2,
                          zero_stage=3)
        mfus[chip] = float(st.mfu)
    assert mfus["h100-sxm"] < mfus["a100-80gb-sxm"]


def test_zero3_sends_the_same_bytes_while_compute_shrinks():
    # Narayanan et al. 2021, Table 2: ZeRO-3 on 175B at batch 1536 falls from 144 to 44 TFLOP/s, 384 -> 1536 GPUs.
    # Per chip, each step gathers the weights twice and reduce-scatters the gradients: 3 x 2 bytes x N, at any
    # chip count (16-bit gradients, as that DeepSpeed run reduced them); the compute per chip falls as 1 / chips.
    n_params = rl.get_model("gpt-3-175b").n_params
    steps = {n: T.train_step("gpt-3-175b", "a100-80gb-sxm", n_chips=n, seq_len=2048, global_batch=1536,
                             micro_batch=1536 // n, zero_stage=3, recompute="full", grad_reduce="bf16")
             for n in (384, 1536)}
    for n, st in steps.items():
        assert st.bytes_sent["data parallel"] == pytest.approx(3 * (n - 1) / n * 2 * n_params)
    fp32 = T.train_step("gpt-3-175b", "a100-80gb-sxm", n_chips=384, seq_len=2048, global_batch=1536, micro_batch=4,
                        zero_stage=3, recompute="full")  # fp32 gradients: 2 + 2 + 4 bytes per parameter
    assert fp32.bytes_sent["data parallel"] == pytest.approx(383 / 384 * 8 * n_params)
    assert steps[384].terms["compute"] / steps[1536].terms["compute"] == pytest.approx(4)


def test_search_405b_on_16k_gpus():
    r = T.search("llama-3.1-405b", "h100-sxm", n_chips=16384, seq_len=8192, global_batch=2048)
    assert len(r) > 1000
    best = r.best(3)
    assert best and all(b["tp"] * b["pp"] * b["cp"] * b["dp"] == 16384 for b in best)
    assert all(b["memory_GB"] * 1e9 <= rl.get_accelerator("h100-sxm").mem_capacity for b in best)
    # ranked by the best estimate; the optimistic order is there too
    assert [b["estimate_step_time_s"] for b in best] == sorted(b["estimate_step_time_s"] for b in best)
    # interleaved only where the micro-batches per step (2,048 / (dp b)) are a multiple of the stages
    c = r.configs
    micro_batches = 2048 // (c["dp"] * c["micro_batch"])
    assert (c["virtual_stages"] > 1).any() and not ((c["virtual_stages"] > 1) & (micro_batches % c["pp"] > 0)).any()
    optimistic = r.best(3, by="optimistic")
    assert [b["step_time_s"] for b in optimistic] == sorted(b["step_time_s"] for b in optimistic)


@pytest.mark.parametrize("call,match", [
    (lambda: T.flops_per_token("llama-2-7b", 0), "seq_len"),
    (lambda: T.flops_per_token("llama-2-7b", 2048, convention="kaplan"), "unknown FLOP convention"),
    (lambda: T.flops_per_token("llama-2-7b", 2048, causal=True, convention="palm"), "fixes"),
    (lambda: T.memory("llama-2-7b", 1, 2048, zero_stage=4), "zero_stage"),
    (lambda: T.memory("llama-2-7b", 1, 2048, recompute="some"), "recompute"),
    (lambda: T.memory("llama-2-7b", 1, 2048, optimizer="lion"), "unknown optimizer"),
    (lambda: T.train_step("llama-2-7b", "h100-sxm", n_chips=12, seq_len=2048, global_batch=8, tp=8),
     "multiple of tp"),
    (lambda: T.train_step("llama-2-7b", "h100-sxm", n_chips=8, seq_len=2048, global_batch=12), "global_batch"),
    (lambda: T.train_step("llama-2-7b", "a100-80gb-sxm", n_chips=8, seq_len=2048, global_batch=8,
                          precision="fp8"), "no fp8 peak"),
    (lambda: T.train_step("llama-2-7b", "l4", n_chips=8, seq_len=2048, global_batch=8), "topology"),
])
def test_bad_input_is_named(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_vectorised_memory():
    mem = T.memory("llama-2-7b", np.array([1, 2, 4]), 4096, zero_stage=1, dp=8)
    assert np.all(np.diff(mem.activations) > 0) and mem.total.shape == (3,)


def test_optimizer_update_bytes_by_inventory():
    # read and write the fp32 states (master, momentum, variance: 24), read the gradient, write the weights
    assert T.update_bytes_per_param("adamw") == 24 + 2 + 2
    assert T.update_bytes_per_param("adamw_fp32_grads") == 24 + 4 + 2
    assert T.update_bytes_per_param("adamw_fp16") == 24 + 4 + 2     # the fp32 copy of the gradient is read
    assert T.update_bytes_per_param("adamw_fp32") == 16 + 4 + 8     # momentum, variance; the weights are the master


def test_flash_backward_recomputes_the_scores():
    # the backward's attention: 5 matmuls (S again, dV, dP, dQ, dK) for the forward's 2; everything else twice
    w = T.step_workload("llama-2-7b", 1, 4096, optimizer_params=0)
    leaves = w.leaves()
    attention = [p for p in leaves if p.kind is rl.llm.parts.ATTENTION]
    assert len(attention) == 2  # forward and backward, every layer in each
    fwd_attention, bwd_attention = attention
    assert bwd_attention.flops == pytest.approx(2.5 * fwd_attention.flops)
    others_fwd = sum(p.flops for p in leaves[:len(leaves) // 2] if p.kind is not rl.llm.parts.ATTENTION)
    others_bwd = sum(p.flops for p in leaves[len(leaves) // 2:] if p.kind is not rl.llm.parts.ATTENTION)
    assert others_bwd == pytest.approx(2 * others_fwd)


def test_collective_latency_is_nccls_simple_ring():
    from roofline_lib.training import links
    topo = rl.get_topology("DGX H100")
    # NCCL tuning.cc, Simple protocol: ring base 8.4 us + 3.4 us per NVLink step; an 8-GPU all-gather has 7 steps
    assert links.collective_latency(topo, 1, 8, 1) == pytest.approx((8.4 + 7 * 3.4) * 1e-6)
    assert links.collective_latency(topo, 1, 8, 2) == pytest.approx((8.4 + 14 * 3.4) * 1e-6)
    assert links.collective_latency(topo, 1, 1, 1) == 0
    # across 2 nodes (tp 8 fills each): ring 8.4 + 1 net step 14 us, or a tree 8.4 + 14 x log2(2) us: 22.4 us
    assert links.collective_latency(topo, 8, 2, 1) == pytest.approx(22.4e-6)
    assert links.p2p_latency(topo, 8, 2) == pytest.approx(14e-6)


def test_pipeline_sends_scale_with_chunks_and_tp_is_exposed_by_default():
    kw = dict(n_chips=64, seq_len=4096, global_batch=256, tp=4, pp=4, zero_stage=1)
    one, four = (T.train_step("llama-3.1-8b", "h100-sxm", virtual_stages=v, **kw) for v in (1, 4))
    assert four.bytes_sent["pipeline sends"] == pytest.approx(4 * one.bytes_sent["pipeline sends"])
    exposed = T.train_step("llama-3.1-8b", "h100-sxm", **kw)
    hidden = T.train_step("llama-3.1-8b", "h100-sxm", tp_overlap="decomposed", **kw)
    assert 0 < hidden.terms["tensor parallel"] < exposed.terms["tensor parallel"]
    with pytest.raises(ValueError, match="tp_overlap"):
        T.train_step("llama-3.1-8b", "h100-sxm", tp_overlap="whole", **kw)
    with pytest.raises(ValueError, match="grad_reduce"):
        T.train_step("llama-3.1-8b", "h100-sxm", grad_reduce="fp16", **kw)


def test_last_stage_carries_the_lm_head_and_loss():
    # 405B: 126 layers; pp 126 puts one layer on each stage, the last one also the LM head + loss (h V against a
    # layer's 12 h^2-ish weights: well over half a layer), so the stage time exceeds 1/126 of the compute
    m = rl.get_model("llama-3.1-405b")
    st = T.train_step(m, "h100-sxm", n_chips=16128, seq_len=8192, global_batch=128, tp=1, pp=126,
                      recompute="full", zero_stage=1)
    whole = T.train_step(m, "h100-sxm", n_chips=128, seq_len=8192, global_batch=128, tp=1, pp=1,
                         recompute="full", zero_stage=1)
    per_layer_share = st.terms["compute"] / whole.terms["compute"] * 126  # a stage against one layer's share
    assert 1.4 < per_layer_share < 1.8


def test_tp_exposes_what_megatron_issues_between_dependent_matmuls():
    # Megatron-LM's LinearWithGradAccumulationAndAsyncCommunication, per layer and micro-batch (Korthikanti et al.
    # 2022, Sec. 4.2.2 for the bytes): forward 2 all-gathers + 2 reduce-scatters (sequence parallel) or 2
    # all-reduces, exposed; backward the 2 gathers of the output gradients (exposed), and for each
    # column-parallel linear (QKV, gate/up) a reduce-scatter of its input gradient under its weight-gradient
    # matmul and a second gather of its input under its input-gradient matmul. By hand, Llama-3.1-70B, tp 8 on a
    # DGX H100 (370.8 GB/s; NCCL Simple ring latency 8.4 + 3.4 us per step), 8,192 tokens, pp 4, 32 micro-batches
    act = 8192 * 8192 * 2
    ring = 2 * 7 / 8 * act / 370.8e9
    one_sp, one_ar = ring + 2 * (8.4 + 7 * 3.4) * 1e-6, ring + (8.4 + 14 * 3.4) * 1e-6
    qkv = 2 * 8192 * 8192 * (8192 + 2 * 1024) / 8 / 989.4e12  # forward = input-gradient = weight-gradient matmul
    gate_up = 2 * 8192 * 8192 * 2 * 28672 / 8 / 989.4e12  # longer than any of the collectives: hides them
    assert gate_up > one_ar > one_sp / 2 > qkv
    per_mb = 32 * 20
    kw = dict(n_chips=1024, seq_len=8192, global_batch=1024, tp=8, pp=4)
    sp = T.train_step("llama-3.1-70b", "h100-sxm", recompute="selective", **kw)
    assert sp.terms["tensor parallel"] == pytest.approx(per_mb * (3 * one_sp + 2 * (one_sp / 2 - qkv)), rel=1e-3)
    assert sp.bytes_sent["tensor parallel"] == pytest.approx(per_mb * 5 * 2 * 7 / 8 * act)
    no_sp = T.train_step("llama-3.1-70b", "h100-sxm", recompute="selective", sp=False, **kw)
    assert no_sp.terms["tensor parallel"] == pytest.approx(per_mb * (2 * one_ar + (one_ar - qkv)), rel=1e-3)
    assert no_sp.bytes_sent["tensor parallel"] == pytest.approx(per_mb * 4 * 2 * 7 / 8 * act)
    full = T.train_step("llama-3.1-70b", "h100-sxm", recompute="full", **kw)  # the forward's 2 again
    assert full.terms["tensor parallel"] == pytest.approx(sp.terms["tensor parallel"] + per_mb * 2 * one_sp,
                                                          rel=1e-3)
