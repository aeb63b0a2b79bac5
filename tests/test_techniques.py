"""roofline_lib.serving.techniques: continuous batching, paged KV, speculative decoding, chunked prefill,
prefix caching and disaggregation, against brute-force loops and hand numbers."""

import pytest

import roofline_lib as rl
from roofline_lib import llm, serving


def lower(w, hw="A100"):
    return rl.estimate(w, hw).lower


# ------------------------------------------------------------------ techniques

def test_static_vs_continuous_by_hand():
    # equal lengths: nothing to gain
    same = serving.static_vs_continuous("llama-2-7b", "A100", 4, 100, [50] * 8)
    assert same.gain == pytest.approx(1.0, rel=1e-12)
    # two requests, one slot each group of 2: lengths 10 and 30. Static: 30 steps at batch 2;
    # continuous: 40 / 2 = 20 steps at batch 2. Step i = 1 .. O attends to 100 + i positions (chapter 10's
    # convention), so static's steps attend 101 .. 130 and the continuous mean context is 101 + (45 + 435) / 40 = 113
    pre = lower(rl.prefill("llama-2-7b", 2, 100)) / 2
    static = 2 * pre + sum(lower(rl.decode_step("llama-2-7b", 2, c)) for c in range(101, 131))
    cont = 2 * pre + 20 * lower(rl.decode_step("llama-2-7b", 2, 113))
    r = serving.static_vs_continuous("llama-2-7b", "A100", 2, 100, [10, 30])
    assert r.static_s == pytest.approx(static, rel=1e-12)
    assert r.continuous_s == pytest.approx(cont, rel=1e-12)
    assert r.static_throughput == pytest.approx(40 / static)


def test_paged_kv_fits_more_sequences_by_hand():
    # Llama-2-7B bf16 on an A100 80GB: 81920 MiB - 13,476,831,232 B of weights = 72,422,514,688 B for the cache;
    # 2 x 32 layers x 4096 x 2 B = 524,288 B per position. Lengths 100, 300, 1000, 600 (mean 500).
    fit = serving.kv_fit("llama-2-7b", "A100", [100, 300, 1000, 600], max_len=4096)
    assert fit.free_bytes == 72_422_514_688 and fit.bytes_per_position == 524_288
    # contiguous: 4096 positions reserved each -> 72,422,514,688 // 2,147,483,648 = 33
    assert fit.contiguous_batch == 33
    # pages of 16: 112 + 304 + 1008 + 608 = 2032 positions for 4 -> 508 each -> // 266,338,304 = 271
    assert fit.paged_positions == 508 and fit.paged_batch == 271
    assert fit.contiguous_waste == pytest.approx(1 - 500 / 4096)
    assert fit.paged_waste == pytest.approx(1 - 500 / 508)
    with pytest.raises(ValueError, match="max_len"):
        serving.kv_fit("llama-2-7b", "A100", [5000], max_len=4096)


def test_speculative_verify_raises_intensity_about_k_times_at_batch_1():
    s = serving.speculative("llama-2-7b", "A100", batch=1, context=512, k=4, acceptance=0.8)
    # k + 1 = 5 positions through the weights read once: intensity x ~5 ("about k": between k and k + 1)
    assert 4 <= s.intensity_ratio <= 5
    assert s.intensity_ratio == pytest.approx(5, rel=0.01)
    assert s.t_verify < 1.05 * s.t_plain  # still memory-bound: the 4 extra positions ride on the weight read
    # at a large batch and short context the verify step is compute-bound: 5x the FLOPs for 3.4 tokens
    big = serving.speculative("llama-2-7b", "A100", batch=1024, context=128, k=4, acceptance=0.8)
    assert rl.estimate(big.verify, "A100").bound == "compute"
    assert big.speedup < 1 < s.speedup


def test_expected_tokens_per_verify_by_enumeration():
    for a in (0.0, 0.3, 0.8, 0.99, 1.0):
        for k in range(0, 7):
            # n drafts accepted (n < k: then a rejection) with probability a^n (1 - a); all k with a^k
            probs = [a**n * (1 - a) for n in range(k)] + [a**k]
            by_hand = sum(p * (n + 1) for n, p in enumerate(probs))
            assert serving.expected_tokens_per_verify(a, k) == pytest.approx(by_hand, rel=1e-12, abs=1e-12)
    assert serving.expected_tokens_per_verify(0.8, 4) == pytest.approx(1 + 0.8 + 0.64 + 0.512 + 0.4096)
    for bad in (-0.1, 1.5, float("nan")):
        with pytest.raises(ValueError, match="acceptance"):
            serving.expected_tokens_per_verify(bad, 4)
    with pytest.raises(ValueError, match="k"):
        serving.speculative("llama-2-7b", "A100", 1, 512, k=-1, acceptance=0.5)


def test_speculative_draft_cost():
    free = serving.speculative("llama-2-7b", "A100", 1, 512, 4, 0.8)
    drafted = serving.speculative("llama-2-7b", "A100", 1, 512, 4, 0.8, draft_model="llama-2-7b")
    assert drafted.t_draft == pytest.approx(4 * free.t_plain)
    assert drafted.speedup < 1 < free.speedup  # a draft as large as the target never pays


@pytest.mark.parametrize("cost", [0.05, 0.1])
def test_speculative_draft_cost_as_a_share_of_a_target_step(cost):
    # k = 4, a = 0.8: E = (1 - 0.8^5) / 0.2 = 3.3616 tokens for 4 x cost + 1 target steps, plus the verify
    # pass's own excess over a plain step (at batch 1 it reads the same weights: under 1 % more)
    expected = (1 - 0.8**5) / (1 - 0.8)
    s = serving.speculative("llama-2-7b", "A100", 1, 512, 4, 0.8, draft_cost=cost)
    assert s.t_draft == pytest.approx(4 * cost * s.t_plain, rel=1e-12)
    assert s.speedup == pytest.approx(expected / (4 * cost + 1), rel=0.01)
    assert s.speedup == pytest.approx({0.05: 2.80, 0.1: 2.40}[cost], abs=0.01)  # 3.3616 / 1.2 and / 1.4


def test_speculative_draft_cost_default_and_bad_input():
    free = serving.speculative("llama-2-7b", "A100", [1, 64], 512, 4, 0.8)
    zero = serving.speculative("llama-2-7b", "A100", [1, 64], 512, 4, 0.8, draft_cost=0.0)
    assert list(zero.speedup) == list(free.speedup) and free.t_draft == 0.0
    with pytest.raises(ValueError, match="draft_cost"):
        serving.speculative("llama-2-7b", "A100", 1, 512, 4, 0.8, draft_cost=-0.1)
    with pytest.raises(ValueError, match="not both"):
        serving.speculative("llama-2-7b", "A100", 1, 512, 4, 0.8, draft_model="llama-2-7b", draft_cost=0.1)


def test_chunked_prefill_reads_the_weights_once():
    # Llama-2-7B's matmul weights: all parameters but the embedding table (rows are looked up) and the
    # 65 norm vectors, in bf16
    streamed = (6_738_415_616 - 32000 * 4096 - 65 * 4096) * 2
    assert serving.weight_bytes_read("llama-2-7b") == streamed
    m = serving.chunked_prefill("llama-2-7b", "A100", 32, 1024, 256, 512)
    dec, chunk = rl.decode_step("llama-2-7b", 32, 1024), llm.extend_step("llama-2-7b", 1, 256, 0)
    assert m.mixed.bytes == dec.bytes + chunk.bytes - streamed
    assert m.mixed.flops == dec.flops + chunk.flops
    assert m.mixed.intensity > m.decode.intensity  # toward the ridge
    assert m.t_mixed < m.t_decode + lower(chunk)  # cheaper than running them apart
    assert m.ttft_chunked == 2 * m.t_mixed
    assert m.stall_unchunked == m.t_decode + lower(rl.prefill("llama-2-7b", 1, 512))


def test_prefix_cache_saves_the_shared_prefill():
    p = serving.prefix_cache("llama-2-7b", "A100", 8, 1000, 200)
    assert p.warm.flops < p.cold.flops and p.ttft_warm < p.ttft_cold
    assert 0.8 < p.flops_saved < 1000 / 1200 + 0.01  # most of the prompt is the shared part
    assert p.kv_bytes_shared == 7 * 1000 * 2**19


def test_prefix_cache_at_a_hit_rate_and_its_decode_reads():
    # Llama-3-8B's KV per position by hand: K and V x 32 layers x 8 KV heads x 128 x 2 bytes = 131,072
    p = serving.prefix_cache("llama-3-8b", "H100", 64, 2000, 200)
    per_position = 2 * 32 * 8 * 128 * 2
    # a hit rate mixes warm and cold requests: linear in the rate, from the cold TTFT to the warm one
    assert p.mean_ttft(0.0) == pytest.approx(p.ttft_cold) and p.mean_ttft(1.0) == pytest.approx(p.ttft_warm)
    assert p.mean_ttft(0.25) == pytest.approx(0.25 * p.ttft_warm + 0.75 * p.ttft_cold)
    assert p.prefill_flops_saved(0.5) == pytest.approx(0.5 * p.flops_saved)
    assert p.prefill_capacity_gain(1.0) == pytest.approx(p.ttft_cold / p.ttft_warm)
    assert list(p.prefill_capacity_gain([0.0, 0.5])) == pytest.approx([1.0, p.ttft_cold / p.mean_ttft(0.5)])
    # the first decode step: 64 sequences attend to 2,201 positions (prompt + output token 1); sharing the
    # prefix's reads saves 63 copies of its 2,000 positions; the FLOPs do not change
    assert p.decode.bytes - p.decode_shared.bytes == 63 * 2000 * per_position
    assert p.decode.bytes == rl.decode_step("llama-3-8b", 64, 2201).bytes
    assert p.decode_shared.flops == p.decode.flops
    assert p.decode_prefix_share == pytest.approx(63 * 2000 * per_position / p.decode.bytes)
    # both steps memory-bound on the H100: their times are in the ratio of their bytes
    assert p.t_decode / p.t_decode_shared == pytest.approx(p.decode.bytes / p.decode_shared.bytes)
    for bad in (-0.1, 1.5):
        with pytest.raises(ValueError, match="hit_rate"):
            p.mean_ttft(bad)


def test_disaggregated_by_hand():
    d = serving.disaggregated("llama-2-7b", "H100", "H200", rate=10, prompt_len=512, output_len=128,
                              decode_batch=64)
    t_pre = lower(rl.prefill("llama-2-7b", 1, 512), "H100")
    assert d.prefill_chips == pytest.approx(10 * t_pre)
    step = serving.request("llama-2-7b", "H200", 64, 512, 128).tpot
    assert d.decode_chips == pytest.approx(10 * 128 * step / 64)
    assert d.kv_bytes == 512 * 2**19
    # by default the pools are separate nodes: the KV cache crosses a 400 Gb/s NIC (50 GB/s)
    assert d.kv_transfer_s == pytest.approx(512 * 2**19 / 50e9)
    assert d.ttft == pytest.approx(t_pre + 512 * 2**19 / 50e9) and d.tpot == pytest.approx(step)
    nvlink = serving.disaggregated("llama-2-7b", "H100", "H200", rate=10, prompt_len=512, output_len=128,
                                   decode_batch=64, link_bandwidth=450e9)  # one NVLink domain: 900 GB/s both ways
    assert nvlink.kv_transfer_s == pytest.approx(512 * 2**19 / 450e9)
    # a colocated server on the same chips: its steps share the time with the prefills
    share = d.prefill_chips / (d.prefill_chips + d.decode_chips)
    assert d.colocated_mean_tpot == pytest.approx(step / (1 - share))
    assert d.colocated_worst_tpot == pytest.approx(step + t_pre)
