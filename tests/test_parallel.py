"""Multi-chip steps (roofline_lib.multichip.parallel) against hand derivations from the models' config.json
figures, datasheet bandwidths, NCCL's published latency model and gpt-fast's measured scaling."""

import numpy as np
import pytest

import roofline_lib as rl
from roofline_lib.multichip import parallel
from roofline_lib.reality.records import published_measurements

# Llama-2-70B from meta-llama/Llama-2-70b-hf config.json: 80 layers, hidden 8192, 8 KV heads of 128;
# 68,976,648,192 parameters (the safetensors index total)
P70, L70, H70, KV70 = 68_976_648_192, 80, 8192, 8 * 128
H100_BW, H100_NVLINK, H100_PCIE = 3.35e12, 450e9, 64e9  # datasheet, per direction for the links
NCCL_BASE, NCCL_NVLINK, NCCL_PCI = 6.6e-6, 0.6e-6, 1.0e-6  # NVIDIA/nccl src/graph/tuning.cc, ring LL


def test_llama_2_70b_tensor_parallel_on_8_h100_by_hand():
    e = rl.parallel.tp_decode_step(rl.get_model("llama-2-70b"), "H100 SXM", batch=1, context=4096, n_chips=8)
    weights, kv = 2 * P70, 4096 * L70 * 2 * KV70 * 2
    t_mem = (weights + kv) / 8 / H100_BW  # 5.2 ms
    assert e.t_mem == pytest.approx(t_mem, rel=0.02)
    # 2 all-reduces per layer of one token's 8192 bf16 activations: NCCL's cheapest option, its ring with LL
    # (bytes at LL's half of NCCL's 20.6 GB/s per 25 GB/s H100 link)
    per_allreduce = NCCL_BASE + 14 * NCCL_NVLINK + 2 * 7 / 8 * H70 * 2 / (0.5 * 0.824 * H100_NVLINK)
    t_comm = 2 * L70 * per_allreduce  # 2.4 ms
    # memory-bound: overlapped, the step takes its memory time; one after another, the memory and the
    # all-reduces (the math, 2 x 69e9 FLOPs / 8 at 989.4 TFLOP/s = 17 us, is under 0.3 % of the sum)
    assert e.overlapped == pytest.approx(t_mem, rel=0.02)
    assert e.sequential == pytest.approx(t_mem + t_comm, rel=0.02)
    for dtype in ("int8", "fp8", "int4"):  # the weights' dtype does not change the activations on the wire
        other = parallel.tp_decode_step("llama-2-70b", "H100 SXM", 1, 4096, 8, weight_dtype=dtype)
        assert other.t_comm == e.t_comm and other.t_mem < e.t_mem
    assert e.t_comm == pytest.approx(t_comm, rel=1e-12)
    assert e.comm_bytes == pytest.approx(2 * L70 * 2 * 7 / 8 * H70 * 2, rel=1e-12)
    assert e.memory_per_chip == pytest.approx((weights + kv) / 8, rel=1e-12)
    assert e.bound == "memory" and e.fits


def test_pcie_decode_at_batch_64_is_communication_bound():
    # by hand: weights + 64 x 4096 positions of KV over 8 chips, against 160 PCIe all-reduces of [64, 8192]: 1 MiB
    # each, cheapest as NCCL's ring with LL (no LL128 over PCIe): 6.6 + 14 x 1.0 us + 1.75 x 1 MiB at LL's half of
    # NCCL's 0.75 x 64 GB/s
    kv = 64 * 4096 * L70 * 2 * KV70 * 2
    t_mem = (2 * P70 + kv) / 8 / H100_BW
    t_comm = 2 * L70 * (NCCL_BASE + 14 * NCCL_PCI + 1.75 * 64 * H70 * 2 / (0.5 * 0.75 * H100_PCIE))
    e = parallel.tp_decode_step("llama-2-70b", "H100 SXM", 64, 4096, 8, "pcie")
    assert e.t_comm == pytest.approx(t_comm, rel=1e-12)
    # the step also reads and writes the [64, ...] activations (norms and residuals on every chip): a little more
    assert t_mem < e.t_mem < 1.05 * t_mem
    assert t_comm > t_mem and e.bound == "communication"
    # a real PCIe box shares its switches: 22.2 GB/s of bus bandwidth for all 8 (data/topologies.toml)
    box = parallel.tp_decode_step("llama-2-70b", "H100 PCIe", 64, 4096, 8, "8 x PCIe Gen5 GPUs, two sockets")
    assert box.t_comm > e.t_comm and box.bound == "communication"
    assert rl.exercises.check("09.decode_bound_pcie", "communication")


def test_capacity_caps_the_batch():
    # 8 x A100 80GB: 81920 MiB each (nvidia-smi), less 1/8 of the weights, over the KV per sequence / 8
    free = 81920 * 2**20 - 2 * P70 / 8
    per_sequence = 4096 * L70 * 2 * KV70 * 2 / 8
    largest = parallel.tp_max_batch("llama-2-70b", "A100", 4096, 8)
    assert largest == int(free // per_sequence)
    assert parallel.tp_decode_step("llama-2-70b", "A100", largest, 4096, 8).fits
    assert not parallel.tp_decode_step("llama-2-70b", "A100", largest + 1, 4096, 8).fits
    assert parallel.tp_max_batch("llama-2-70b", "A100", 4096, 1) == 0  # 138 GB of weights on one 86 GB chip
    # vLLM's 0.9 share leaves fewer
    assert parallel.tp_max_batch("llama-2-70b", "A100", 4096, 8, usable_fraction=0.9) < largest


def test_kv_cache_is_copied_beyond_the_kv_heads():
    assert parallel.kv_shards("llama-2-70b", 16) == 8 and parallel.kv_shards("llama-2-7b", 16) == 16
    e8 = parallel.tp_decode_step("llama-2-70b", "H100 SXM", 64, 4096, 8)
    e16 = parallel.tp_decode_step("llama-2-70b", "H100 SXM", 64, 4096, 16)
    kv = 64 * 4096 * L70 * 2 * KV70 * 2
    assert e16.memory_per_chip == pytest.approx(2 * P70 / 16 + kv / 8, rel=1e-12)
    assert e16.t_mem > e8.t_mem / 2  # the weights halve, the KV share does not


def test_one_chip_is_the_single_chip_estimate():
    e = parallel.tp_decode_step("llama-2-7b", "H100 SXM", 4, 2048, 1)
    one = rl.estimate(rl.decode_step("llama-2-7b", 4, 2048), "H100 SXM")
    assert e.t_comm == 0 and e.t_mem == pytest.approx(one.t_mem) and e.t_math == pytest.approx(one.t_math)


def test_prefill_moves_the_prompt_activations():
    e = parallel.tp_prefill("llama-2-70b", "H100 SXM", 1, 4096, 8)
    assert e.comm_bytes == pytest.approx(2 * L70 * 1.75 * 4096 * H70 * 2, rel=1e-12)
    assert e.bound == "compute"
    # 2 FLOPs per parameter per token at least, over 8 chips at 989 TFLOP/s (dense bf16)
    assert e.t_math > 2 * P70 * 4096 / 8 / 989e12 * 0.95


def test_pipeline_buys_capacity_not_latency():
    one = rl.estimate(rl.decode_step("llama-2-70b", 8, 4096), "H100 SXM")
    p = parallel.pp_decode_step("llama-2-70b", "H100 SXM", 8, 4096, 8, microbatches=1)
    # one microbatch goes through the 8 stages in turn: the single chip's time (plus 8 sends)
    assert p.overlapped == pytest.approx(one.lower, rel=1e-9) and p.exposed > one.lower
    assert p.memory_per_chip == pytest.approx((2 * P70 + 8 * 4096 * L70 * 2 * KV70 * 2) / 8, rel=1e-12)
    for m in (1, 2, 8):  # flushed after every step (GPipe): idle share (n - 1) / (m + n - 1)
        q = parallel.pp_decode_step("llama-2-70b", "H100 SXM", 8, 4096, 8, microbatches=m, schedule="flushed")
        assert q.t_idle / q.overlapped == pytest.approx(7 / (m + 7), rel=1e-12)
    for m, idle in ((1, 7 / 8), (2, 6 / 8), (4, 4 / 8), (8, 0.0), (16, 0.0)):
        # kept in flight (a decode server): a round is max(8, m) stage-slots, a chip works in m of them
        q = parallel.pp_decode_step("llama-2-70b", "H100 SXM", 16, 4096, 8, microbatches=m)
        assert q.t_idle / q.overlapped == pytest.approx(idle, rel=1e-12, abs=1e-15)
    assert p.comm_bytes == 8 * H70 * 2  # one send of [8, 8192] bf16 per chip
    with pytest.raises(ValueError, match="'steady'.*'flushed'"):
        parallel.pp_decode_step("llama-2-70b", "H100 SXM", 8, 4096, 8, schedule="gpipe")


def test_expert_parallel_all_to_all_bytes_by_hand():
    # Mixtral-8x7B (config.json): 32 MoE layers, hidden 4096, 2 experts per token; batch 64 over 8 chips
    e = parallel.ep_decode_step("mixtral-8x7b", "H100 SXM", 64, 4096, 8)
    by_hand = 2 * 32 * 8 * 2 * 4096 * 2 * 7 / 8
    assert e.comm_bytes == pytest.approx(by_hand, rel=1e-12)
    assert rl.exercises.check("09.ep_alltoall_bytes", by_hand)
    assert e.t_comm == pytest.approx(64 * (NCCL_BASE + 7 * NCCL_NVLINK + 8 * 2 * 4096 * 2 * 7 / 8 / H100_NVLINK))
    with pytest.raises(ValueError, match="Llama-2-7B has no experts.*mixture-of-experts"):
        parallel.ep_decode_step("llama-2-7b", "H100", 8, 128, 8)


def test_replicas_hold_the_whole_model_and_send_nothing():
    r = parallel.replica_decode_step("llama-2-7b", "H100 SXM", 64, 4096, 8)
    m = rl.get_model("llama-2-7b")
    assert r.t_comm == 0 and r.comm_bytes == 0
    assert r.memory_per_chip == m.weight_bytes() + 8 * 4096 * 32 * 2 * 4096 * 2  # 32 layers, 32 KV heads of 128
    assert not parallel.replica_decode_step("llama-2-70b", "H100 SXM", 8, 4096, 8).fits


def test_vectorised_over_batch_and_context():
    e = parallel.tp_decode_step("llama-2-70b", "H100 SXM", np.array([1, 256]), 4096, 8, "pcie")
    assert list(e.bound) == ["memory", "communication"]
    mean = parallel.tp_decode_step("llama-2-7b", "A100", 1, np.arange(6, 206), 2).mean()
    assert isinstance(mean.t_mem, float)


def test_bad_input_names_what_is_accepted():
    with pytest.raises(ValueError, match="unknown link 'ethernet'"):
        parallel.tp_decode_step("llama-2-7b", "H100", 1, 128, 2, link="ethernet")
    with pytest.raises(ValueError, match="n_chips must be a whole number"):
        parallel.tp_decode_step("llama-2-7b", "H100", 1, 128, 2.5)
    with pytest.raises(ValueError, match="batch must be finite and > 0"):
        parallel.tp_decode_step("llama-2-7b", "H100", 0, 128, 2)
    with pytest.raises(ValueError, match="microbatches \\(3\\) must divide batch \\(8\\)"):
        parallel.pp_decode_step("llama-2-7b", "H100", 8, 128, 2, microbatches=3)
    with pytest.raises(ValueError, match="A10 has no nvlink figure"):
        parallel.tp_decode_step("llama-2-7b", "A10", 1, 128, 2)


# ---------------------------------------------------------------- against gpt-fast's published scaling

# pytorch-labs/gpt-fast README, tensor parallel on A100-80GB (power-limited to 330 W), batch 1, tokens/s:
# Llama-2-7B 2/4/8 GPUs 168.84 / 254.02 / 328.43; Llama-2-70B 21.32 / 38.01 / 62.50;
# Mixtral-8x7B (mixtral-moe/README.md at meta-pytorch/gpt-fast 6ecad9b, the table as revised by 48328fb) 96.67 /
# 155.35 / 227.82
GPT_FAST_TP = {("Llama-2-7B", 2): 168.84, ("Llama-2-7B", 4): 254.02, ("Llama-2-7B", 8): 328.43,
               ("Llama-2-70B", 2): 21.32, ("Llama-2-70B", 4): 38.01, ("Llama-2-70B", 8): 62.50,
               ("Mixtral-8x7B", 2): 96.67, ("Mixtral-8x7B", 4): 155.35, ("Mixtral-8x7B", 8): 227.82,
               # Llama-3.1 (README at 32971d3): 8B 149.10 / 217.21 / 276.01, 70B 16.03 / 37.45 / 58.78
               ("Llama-3.1-8B", 2): 149.10, ("Llama-3.1-8B", 4): 217.21, ("Llama-3.1-8B", 8): 276.01,
               ("Llama-3.1-70B", 2): 16.03, ("Llama-3.1-70B", 4): 37.45, ("Llama-3.1-70B", 8): 58.78}


def gpt_fast_tp_records():
    return [r for r in published_measurements() if r.system == "gpt-fast" and r.parallelism == "tensor"
            and r.weight_dtype == "bf16"]


def predict(rec, hw=None):
    contexts = rec.prompt_len + np.arange(1, rec.output_len + 1)  # the 200 steps of the generation
    return parallel.tp_decode_step(rec.model, hw or rec.chip, rec.batch, contexts, rec.n_chips, "nvlink",
                                   weight_dtype=rec.weight_dtype, kv_dtype=rec.kv_dtype).mean()


def test_every_gpt_fast_tensor_parallel_figure_is_above_the_bound():
    recs = {(r.model, r.n_chips): r for r in gpt_fast_tp_records()}
    assert set(recs) == set(GPT_FAST_TP)  # the records are the reference's figures, and all of them
    for key, tokens_per_s in GPT_FAST_TP.items():
        rec = recs[key]
        assert rec.value == tokens_per_s
        e = predict(rec)
        measured = 1 / tokens_per_s
        # the bound (all overlapped) and even the no-overlap sum with NCCL's latencies stay below
        assert e.overlapped < e.exposed <= e.sequential < measured, key
        # and at the published achieved A100 ceilings, 1.6 TB/s and 271 TFLOP/s, still below
        assert predict(rec, rl.measurements.calibrated(rec.chip)).sequential < measured, key


def test_measured_efficiency_falls_faster_than_predicted():
    # measured speed-up from 2 to 8 chips (4x the chips), by hand from the README's figures: Llama-2-7B
    # 328.43 / 168.84 = 1.945x, Llama-2-70B 62.50 / 21.32 = 2.932x; the bound predicts more for both
    recs = {(r.model, r.n_chips): r for r in gpt_fast_tp_records()}
    for model, by_hand in (("Llama-2-7B", 1.945), ("Llama-2-70B", 2.932)):
        measured = recs[(model, 8)].value / recs[(model, 2)].value
        assert measured == pytest.approx(by_hand, abs=1e-3), model
        predicted = predict(recs[(model, 2)]).exposed / predict(recs[(model, 8)]).exposed
        assert measured < predicted < 4, (model, measured, predicted)


def test_old_names_of_the_multichip_times_warn_and_agree():
    e = rl.parallel.tp_decode_step("llama-2-70b", "H100 SXM", batch=1, context=4096, n_chips=8)
    with pytest.warns(DeprecationWarning, match="overlapped"):
        assert e.lower == e.overlapped
    with pytest.warns(DeprecationWarning, match="sequential"):
        assert e.upper == e.sequential
