"""The best estimate of a training step (training.estimate, training.fit) and the peak memory a framework
reports (training.peak), against hand derivations, framework tables and the published records."""

import numpy as np
import pytest

import roofline_lib as rl
from roofline_lib.training import estimate as E
from roofline_lib.training import fit as F
from roofline_lib.training import peak as P

T = rl.training
KW = dict(n_chips=64, seq_len=4096, global_batch=256, tp=2, pp=2, zero_stage=1)


def test_matmul_efficiency_by_hand():
    h = E.MATMUL_HALF_DIM
    assert E.matmul_efficiency(E.CEILING_DIM) == pytest.approx(1.0)
    assert E.matmul_efficiency(1e9) == 1.0  # never above the measured ceiling
    assert E.matmul_efficiency(h) == pytest.approx(0.5 * (E.CEILING_DIM + h) / E.CEILING_DIM)


def test_estimate_is_slower_than_the_optimistic_step_and_its_terms_add_up():
    st = T.train_step("llama-3.1-8b", "h100-sxm", **KW)
    est = st.estimate
    assert est.terms["compute"] > st.terms["compute"]  # achieved ceilings are below the datasheet's
    assert est.step_time_s == pytest.approx(sum(est.terms.values()))
    assert sum(est.mfu_terms.values()) == pytest.approx(1.0)
    assert est.tokens_per_s_per_chip == pytest.approx(256 * 4096 / (est.step_time_s * 64))
    assert est.mfu < st.mfu < 1


def test_wide_tp_loses_matmul_efficiency():
    # the per-chip GEMMs of TP 8 on an 8B model are 8 times narrower: the compute per token rises
    one, eight = (T.train_step("llama-3.1-8b", "h100-sxm", n_chips=64, seq_len=4096, global_batch=256, tp=t,
                               zero_stage=1).estimate.terms["compute"] for t in (1, 8))
    assert eight * 8 > one * 1.05


def test_held_out_error_on_the_frozen_split():
    rows = [(c, c.best_estimate_tokens_per_s_per_chip) for c in T.measured_vs_predicted(best=True)
            if c.best_estimate_tokens_per_s_per_chip is not None]
    assert len(rows) > 100
    table = {r[0]: r for r in F.error_table(rows, E.FITTED_ON)}
    _, n_in, _, n_out, held_out = table["all"]
    assert n_in == len(E.FITTED_ON) and n_out == len(rows) - n_in
    print({name: (r[3], r[4]) for name, r in table.items()})
    # 0.284 on the last fit (roofline_lib.training.fit.SPLITS); a change that loses more than 1.6 points of it
    # must say why
    assert held_out < 0.30
    # no record beats its bound, whatever the estimate says
    assert all(c.measured_tokens_per_s_per_chip <= c.bound_tokens_per_s_per_chip for c, _ in rows)


def test_model_states_are_megatrons_table():
    # Megatron-LM's distributed-optimizer table, bf16 parameters with fp32 gradients: 18 bytes per parameter
    # unsharded, 6 + 12/d with the distributed optimizer (ZeRO-1)
    m, hw = rl.get_model("llama-3.1-8b"), rl.get_accelerator("h100-sxm")
    n = m.n_params
    for zero, expected in ((0, 18), (1, 6 + 12 / 8)):
        st = T.train_step(m, hw, n_chips=8, seq_len=4096, global_batch=8, zero_stage=zero)
        t = st.memory.peak_terms
        assert t["weights"] + t["gradients"] + t["optimizer states"] == pytest.approx(expected * n)
    # FSDP2: fp32 sharded parameters, fp32 gradients and AdamW's two states (16/d), plus two bf16 layers gathered
    # and one layer's bf16 gradients and fp32 reduce-scatter buffer
    st = T.train_step(m, hw, n_chips=8, seq_len=4096, global_batch=8, zero_stage=3)
    t, layer = st.memory.peak_terms, n / m.num_layers
    assert t["weights"] + t["gradients"] + t["optimizer states"] == pytest.approx(16 * n / 8 + (4 + 6) * layer)


def test_peak_memory_against_every_published_figure():
    from roofline_lib.training.records import _train_step
    ratios = {}
    for rec in T.published_measurements():
        if rec.published_memory_gib is None:
            continue
        st = _train_step(rec)
        assert st is not None, rec.id
        ratios[rec.id] = float(st.memory.peak) / P.GIB / rec.published_memory_gib
    print({k: round(v, 2) for k, v in ratios.items()})
    assert len(ratios) == 20
    values = np.array(list(ratios.values()))
    # what holds today (the torchtitan figures: its selective checkpointing is every other layer, not
    # Korthikanti's; its pipeline runs hold more micro-batches than 1F1B's): the median within 25 %, every
    # figure within a factor 2.5
    assert 0.8 < np.median(values) < 1.25
    # torchtitan's 8B FSDP runs with its selective (every-other-matmul) checkpointing: within 10 %
    eights = [v for k, v in ratios.items() if k.startswith("torchtitan-2024-12-8b-") and "fsdp" in k]
    assert len(eights) == 6 and all(0.9 < v < 1.1 for v in eights)
    assert values.min() > 1 / 2.5 and values.max() < 2.5


def test_fits_counts_what_the_allocator_does_not():
    st = T.train_step("llama-3.1-8b", "h100-sxm", **KW)
    outside = P.CUDA_CONTEXT_BYTES + P.NCCL_BYTES  # outside the allocator: not in the peak, but on the GPU
    assert st.fits == (st.memory.peak + outside <= rl.get_accelerator("h100-sxm").mem_capacity)
    assert st.memory.peak == pytest.approx(sum(st.memory.peak_terms.values()))
    assert st.memory.peak > st.memory.total  # the theory's total leaves out what frameworks add


def test_search_ranks_by_the_estimate_with_margins():
    r = T.search("llama-3.1-8b", "h100-sxm", n_chips=64, seq_len=4096, global_batch=256, pps=(1, 2, 4),
                 cps=(1,), recomputes=("none",), zero_stages=(0, 1))
    best = r.best(3)
    assert best[0]["margin"] == 0 and all(b["margin"] >= 0 for b in best)
    assert [b["estimate_step_time_s"] for b in best] == sorted(b["estimate_step_time_s"] for b in best)
    with pytest.raises(ValueError, match="by must be"):
        r.best(3, by="bound")


def test_torchtitans_selective_checkpointing_by_hand():
    # per block a fresh count of aten.mm: wq 1, wk 2, wv 3, wo 4, w1 5, w3 6, w2 7; the even ones run again: K
    # (4096 x 8 x 128), the output projection (4096 x 4096) and the MLP up projection (4096 x 14336), 2 FLOPs per
    # weight per token, 32 layers of Llama-3.1-8B
    again = 2 * 32 * (4096 * 1024 + 4096 * 4096 + 4096 * 14336)
    n = T.flops_per_token("llama-3.1-8b", 8192)
    assert T.flops_per_token("llama-3.1-8b", 8192, recompute="every_other") == n + again
    # the step's workloads run the same FLOPs: the kernels recomputed, one sequence
    w = {r: T.step_workload("llama-3.1-8b", 1, 8192, recompute=r).flops for r in ("none", "every_other")}
    assert w["every_other"] - w["none"] == pytest.approx(again * 8192)
    # the records say "selective"; torchtitan's is this policy, Megatron's stays Korthikanti's
    from roofline_lib.training.records import framework_recompute
    recs = {r.id: r for r in T.published_measurements()}
    assert framework_recompute(recs["torchtitan-2024-12-8b-8gpu-fsdp"]) == "every_other"
    assert all(framework_recompute(r) == r.recompute for r in recs.values() if "torchtitan" not in r.system.lower())
    with pytest.raises(ValueError, match="every_other"):
        T.flops_per_token("llama-3.1-8b", 8192, recompute="half")


def test_grand_teton_records_run_on_the_grand_teton_chip():
    # both torchtitan H100 pages ran on Grand Teton hosts (96GB HBM2e at 500 W), not on an 80 GB HBM3 H100 SXM5
    recs = T.published_measurements()
    teton = [r for r in recs if r.source_file.replace("\\", "/").rsplit("/", 1)[-1]
             in ("torchtitan-h100-2024-12.toml", "torchtitan-asynctp-h100-2025-06.toml")]
    assert len(teton) == 18 + 8
    assert {r.chip for r in teton} == {"H100 SXM5 96GB HBM2e (500 W)"}
    assert not any(r.chip == "H100 SXM5 96GB HBM2e (500 W)" for r in recs if r not in teton)
    # the estimate prices them at 2.4 TB/s, where the 80 GB part's 3.35 would make them faster still
    rec = next(r for r in teton if r.id == "torchtitan-2024-12-8b-8gpu-fsdp")
    from roofline_lib.training.records import _train_step
    st = _train_step(rec)
    sxm = T.train_step(rec.model, "h100-sxm", **{k: st.config[k] for k in (
        "n_chips", "seq_len", "global_batch", "micro_batch", "tp", "pp", "cp", "zero_stage", "recompute")})
    assert st.estimate.terms["optimizer"] > sxm.estimate.terms["optimizer"]
