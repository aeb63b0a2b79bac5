"""The best estimate beside each record (reality.estimate): its terms checked against hand arithmetic, and its
error on the records its fitted constants never saw."""

import numpy as np
import pytest

import roofline_lib as rl
from roofline_lib.reality import estimate as E
from roofline_lib.reality import fit


@pytest.fixture(scope="module")
def comparisons():
    return {c.id: c for c in rl.reality.measured_vs_predicted()}


def test_batch_one_decode_terms_by_hand(comparisons):
    # Llama-2-7B bf16 on one A100 at batch 1, 5-token prompt, 200 tokens: 6.738e9 params x 2 bytes, plus a KV
    # cache of 2 x 32 layers x 4096 x 2 bytes per position at a mean context of 5 + 100.5 positions, all read at
    # the 1.6 TB/s the copy benchmark reaches; 5 kernels per layer (QKV, attention, output, gate+up, down) x 32
    # + embedding + LM head = 162 boundaries of 5 us.
    terms = comparisons["gpt-fast-llama-2-7b-bf16-a100"].estimate_terms
    by_hand = (6.738e9 * 2 + 2 * 32 * 4096 * 2 * 105.5) / 1.6e12
    assert terms.kernels == pytest.approx(by_hand, rel=0.02)
    assert terms.boundaries == pytest.approx(162 * 5e-6)
    assert terms.allreduce == terms.dequant == terms.host == terms.request == 0


def test_tensor_parallel_allreduce_by_hand(comparisons):
    # 8 x A100 (300 GB/s per direction): 2 all-reduces per layer x 32 layers of one token's 4096 bf16
    # activations, each 19 us + 2 (7/8) x 8192 B / (0.8 x 300 GB/s).
    terms = comparisons["gpt-fast-llama-2-7b-bf16-a100-tp8"].estimate_terms
    assert terms.allreduce == pytest.approx(64 * (19e-6 + 2 * 7 / 8 * 8192 / (0.8 * 300e9)))


def test_int4_reads_its_weights_at_the_kernel_share(comparisons):
    c = comparisons["gpt-fast-llama-2-7b-int4-a100"]
    assert c.estimate_terms.kernel_class.startswith("tinygemm")
    assert c.estimate_terms.dequant > 0.5 * c.estimate_terms.kernels  # share 0.5: the weight reads double


def test_server_batch_from_littles_law(comparisons):
    # 29228.22 tokens/s over 8 replicas x 0.123263268 s per output token = 450.4 sequences in flight
    assert comparisons["mlperf41-nvidia-h200x8-llama2-70b-server-tpot"].estimate_batch == 450


def test_estimate_never_below_the_bound(comparisons):
    for c in comparisons.values():
        assert c.estimate_s >= c.predicted_lower_s, c.id


def test_fitted_on_is_the_fixed_half_of_the_records(comparisons):
    # every fitted record is in the hash half, and every record of that half today was fitted on (a record
    # added later may fall in the half: it is held out all the same, since it is not in FITTED_ON)
    assert set(E.FITTED_ON) <= set(comparisons)
    assert E.FITTED_ON == fit.fitting_half(E.FITTED_ON)
    assert len(E.FITTED_ON) == 29
    assert not set(E.FITTED_ON) & set(fit.RESERVED_FOR_EXERCISES)


def test_held_out_error(comparisons):
    held_out = [abs(c.estimate_error) for c in comparisons.values() if c.id not in E.FITTED_ON]
    assert len(held_out) >= 30
    assert np.median(held_out) <= 0.30


def test_error_table_rows(comparisons):
    rows = fit.error_table(list(comparisons.values()))
    assert [r[0] for r in rows] == [*fit.KINDS, "all"]
    reserved = len(fit.RESERVED_FOR_EXERCISES)
    assert rows[-1][1] == len(E.FITTED_ON) and rows[-1][3] == len(comparisons) - len(E.FITTED_ON) - reserved


def test_engines_by_system():
    assert E.engine_for("gpt-fast").name.startswith("gpt-fast")
    assert E.engine_for("TensorRT-LLM (Triton backend)") is E.ENGINES["TensorRT-LLM server"]
    assert E.engine_for("vLLM 0.6") is E.ENGINES["other"]


def test_cost_counts_by_hand(comparisons):
    # Llama-2-7B on 8 A100s, 200 generated tokens after a 5-token prompt: 1 prefill + 200 decode passes per
    # request; the decode_step record's unit is one step, 2 all-reduces x 32 layers
    rec = comparisons["gpt-fast-llama-2-7b-bf16-a100-tp8"].record
    counts = E.cost_counts(rec)
    assert counts.allreduces == 64 and counts.passes == 1 and counts.requests == 0
    ttft = comparisons["trtllm-v014-serve-llama-3.1-70b-h100-tp4-ttft"].record
    assert E.cost_counts(ttft).requests == 1 and E.cost_counts(ttft).allreduces == 2 * 80


def test_refit_on_the_frozen_half_gives_the_frozen_constants(comparisons):
    # the fast fit (kernel terms cached, engine costs linear in their counts) lands where the constants were
    # fitted, and leaves the module as it found it once they are put back
    before = fit.current_values()
    try:
        values, _ = fit.fit(half=E.FITTED_ON, comparisons=list(comparisons.values()))
    finally:
        fit._set_all(before)
    assert values == pytest.approx({"tinygemm weight_read_share": 0.5, "int8-mixed-mm weight_read_share": 0.8,
                                    "gpt-fast allreduce_latency_s": 19e-6, "FP8_RESIDUAL_SHARE": 0.45,
                                    "server host_step_s": 1.2e-3, "server request_s": 9e-3})


def test_family_of():
    assert [fit.family_of(type("R", (), {"system": s})) for s in
            ("gpt-fast", "torchao (gpt-fast-style)", "TensorRT-LLM (Triton backend)",
             "MLPerf Inference v4.1 (NVIDIA, TensorRT-LLM)", "vLLM 0.2.6", "SGLang v0.4", "llama.cpp")] == \
        ["gpt-fast/torchao", "gpt-fast/torchao", "TensorRT-LLM", "MLPerf", "vLLM/SGLang", "vLLM/SGLang", "other"]


def test_split_study_restores_the_constants_and_reports_every_family(comparisons):
    before = fit.current_values()
    splits = fit.split_study(list(comparisons.values()), n_splits=2, seed=1, rounds=1)
    assert fit.current_values() == before and len(splits) == 2
    for s in splits:
        assert set(s.by_family) == set(fit.FAMILIES) and set(s.values) == set(fit.FITTED)
        assert sum(n for n, _ in s.by_family.values()) <= len(comparisons) // 2 + 1
    # a split is a split: held-out error is a median of |errors|, so it is not negative and not absurd
    assert all(0 <= s.held_out < 1 for s in splits)
