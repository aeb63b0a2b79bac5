"""Whole requests and serving techniques: checked against brute-force loops, hand numbers and published records."""

import math

import numpy as np
import pytest

import roofline_lib as rl
from roofline_lib import llm, measurements, serving


def lower(w, hw="A100"):
    return rl.estimate(w, hw).lower


# ------------------------------------------------------------------ whole requests

def test_request_is_prefill_then_each_decode_step_brute_force():
    """Llama-2-7B bf16, A100 80GB SXM, batch 1, 512 prompt and 128 output tokens (the issue's case)."""
    r = serving.request("llama-2-7b", "A100 80GB SXM4", batch=1, prompt_len=512, output_len=128)
    ttft = lower(rl.prefill("llama-2-7b", 1, 512))
    steps = [lower(rl.decode_step("llama-2-7b", 1, c)) for c in range(512, 640)]  # contexts 512 .. 639
    assert r.ttft == ttft
    assert r.e2e == pytest.approx(ttft + sum(steps), rel=1e-12)
    assert r.tpot == pytest.approx(sum(steps) / 128, rel=1e-12)
    assert r.throughput == pytest.approx(128 / r.e2e, rel=1e-12)
    assert r.fits


@pytest.mark.parametrize("model,hw,batch,prompt,out", [
    ("llama-2-7b", "A100", 1024, 2048, 300),      # compute-bound from the start
    ("llama-2-7b", "A100", 400, 64, 4000),        # crosses from compute- to memory-bound as the cache grows
    ("llama-3-70b", "H100", 96, 1000, 700),
    ("mixtral-8x7b", "H200", 12, 30, 200),
    ("deepseek-v2-lite", "MI300X", 300, 100, 900),
])
def test_closed_form_decode_sum_equals_the_loop(model, hw, batch, prompt, out):
    contexts = np.arange(prompt, prompt + out)
    brute = float(np.sum(rl.estimate(rl.decode_step(model, batch, contexts), hw).lower))
    assert serving.decode_time(model, hw, batch, prompt, out) == pytest.approx(brute, rel=1e-12)


def test_the_crossing_case_really_crosses():
    e = rl.estimate(rl.decode_step("llama-2-7b", 400, np.array([64, 4063])), "A100")
    assert list(e.bound) == ["compute", "memory"]


def test_sum_max_affine_against_brute_force():
    rng = np.random.default_rng(1)
    for _ in range(300):
        a, c = rng.uniform(0, 10, 2)
        b, d = rng.uniform(-0.1, 0.1, 2)
        n = int(rng.integers(1, 200))
        i = np.arange(n)
        assert serving.sum_max_affine(a, b, c, d, n) == pytest.approx(np.maximum(a + b * i, c + d * i).sum(),
                                                                      rel=1e-12)
    assert serving.sum_max_affine(1, 0, 1, 0, 5) == 5  # equal lines


def test_vectorised_over_batch_prompt_and_output():
    rng = np.random.default_rng(0)
    B, P, OUT = rng.integers(1, 256, 10_000), rng.integers(1, 4096, 10_000), rng.integers(1, 2048, 10_000)
    sweep = serving.request("llama-2-7b", "A100", B, P, OUT)
    assert sweep.e2e.shape == (10_000,)
    for j in (0, 17, 9999):
        one = serving.request("llama-2-7b", "A100", int(B[j]), int(P[j]), int(OUT[j]))
        assert sweep.e2e[j] == pytest.approx(one.e2e, rel=1e-12)
        assert sweep.fits[j] == one.fits


def test_throughput_per_chip_and_cost_by_hand():
    r = serving.request("llama-2-7b", "A100", batch=32, prompt_len=512, output_len=128, n_chips=2)
    assert r.throughput == pytest.approx(32 * 128 / r.e2e)
    assert r.throughput_per_chip == pytest.approx(r.throughput / 2)
    # $2 per chip-hour, 2 chips: 4/3600 dollars per second over throughput tokens per second
    assert r.cost_per_million_tokens(2.0) == pytest.approx(4 / 3600 / r.throughput * 1e6, rel=1e-12)
    assert r.cost_per_million_tokens(2.0, tokens="total") < r.cost_per_million_tokens(2.0)
    with pytest.raises(ValueError, match="price_per_chip_hour"):
        r.cost_per_million_tokens(0)
    with pytest.raises(ValueError, match="'output' or 'total'"):
        r.cost_per_million_tokens(1, tokens="input")


def test_memory_is_in_driver_bytes():
    # Llama-2-7B bf16: 13,476,831,232 B of weights + 0.5 MiB per position; A100 80GB: 81920 MiB
    free = 81920 * 2**20 - 6_738_415_616 * 2
    most = int(free // (640 * 2**19))
    assert serving.capacity("llama-2-7b", "A100", 640) == most
    assert serving.request("llama-2-7b", "A100", most, 512, 128).fits
    assert not serving.request("llama-2-7b", "A100", most + 1, 512, 128).fits


@pytest.mark.parametrize("kwargs,match", [
    (dict(batch=0), "batch"), (dict(prompt_len=1.5), "prompt_len"), (dict(output_len=-3), "output_len"),
    (dict(n_chips=0), "n_chips"),
])
def test_bad_request_input_is_refused(kwargs, match):
    args = dict(batch=1, prompt_len=512, output_len=128) | kwargs
    with pytest.raises(ValueError, match=match):
        serving.request("llama-2-7b", "A100", **args)


# ------------------------------------------------------------------ continuous batching

@pytest.mark.parametrize("chunked", [False, True])
def test_continuous_batching_obeys_littles_law(chunked):
    c = serving.continuous("llama-2-7b", "A100", 512, 128, np.array([1, 8, 64, 200]), chunked=chunked)
    assert np.allclose(c.batch, c.rate * 128 * c.tpot, rtol=1e-12)  # in flight = rate x time decoding
    assert np.all(np.diff(c.throughput) > 0) and np.all(np.diff(c.tpot) > 0)  # the trade-off


def test_continuous_without_chunking_by_hand():
    t_pre = lower(rl.prefill("llama-2-7b", 1, 512))
    step = serving.request("llama-2-7b", "A100", 64, 512, 128).tpot
    c = serving.continuous("llama-2-7b", "A100", 512, 128, 64)
    assert c.rate == pytest.approx(64 / (128 * step + 64 * t_pre), rel=1e-12)
    assert c.tpot == pytest.approx(step + 64 * t_pre / 128, rel=1e-12)


def test_rate_and_slo_design():
    c = serving.batch_for_rate("llama-2-7b", "A100", 512, 128, rate=10.0)
    below = serving.continuous("llama-2-7b", "A100", 512, 128, c.batch - 1)
    assert c.rate >= 10.0 > below.rate
    best = serving.best_batch_under_slo("llama-2-7b", "A100", 512, 128, tpot_slo=50e-3)
    assert best.tpot <= 50e-3 < serving.continuous("llama-2-7b", "A100", 512, 128, best.batch + 1).tpot
    with pytest.raises(ValueError, match="no batch meets"):
        serving.best_batch_under_slo("llama-2-7b", "A100", 512, 128, tpot_slo=1e-3)
    with pytest.raises(ValueError, match="more than"):
        serving.batch_for_rate("llama-2-7b", "A100", 512, 128, rate=1e6)


# ------------------------------------------------------------------ techniques

def test_static_vs_continuous_by_hand():
    # equal lengths: nothing to gain
    same = serving.static_vs_continuous("llama-2-7b", "A100", 4, 100, [50] * 8)
    assert same.gain == pytest.approx(1.0, rel=1e-12)
    # two requests, one slot each group of 2: lengths 10 and 30. Static: 30 steps at batch 2;
    # continuous: 40 / 2 = 20 steps at batch 2 (mean context 100 + (45 + 435) / 40 = 112)
    pre = lower(rl.prefill("llama-2-7b", 2, 100)) / 2
    static = 2 * pre + sum(lower(rl.decode_step("llama-2-7b", 2, c)) for c in range(100, 130))
    cont = 2 * pre + 20 * lower(rl.decode_step("llama-2-7b", 2, 112))
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


def test_extend_step_is_prefill_and_decode_at_its_ends():
    for model in ("llama-2-7b", "deepseek-v2-lite", "mixtral-8x7b"):
        a, b = llm.extend_step(model, 3, 1, 511), llm.decode_step(model, 3, 512)
        assert (a.flops, a.bytes) == pytest.approx((b.flops, b.bytes), rel=1e-12)
        c, d = llm.extend_step(model, 3, 200, 0), llm.prefill(model, 3, 200)
        assert (c.flops, c.bytes) == pytest.approx((d.flops, d.bytes), rel=1e-12)
    with pytest.raises(ValueError, match="cached_len"):
        llm.extend_step("llama-2-7b", 1, 4, -1)
    with pytest.raises(ValueError, match="logits_per_sequence"):
        llm.extend_step("llama-2-7b", 1, 4, 10, logits_per_sequence=5)


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


def test_disaggregated_by_hand():
    d = serving.disaggregated("llama-2-7b", "H100", "H200", rate=10, prompt_len=512, output_len=128,
                              decode_batch=64)
    t_pre = lower(rl.prefill("llama-2-7b", 1, 512), "H100")
    assert d.prefill_chips == pytest.approx(10 * t_pre)
    step = serving.request("llama-2-7b", "H200", 64, 512, 128).tpot
    assert d.decode_chips == pytest.approx(10 * 128 * step / 64)
    assert d.kv_bytes == 512 * 2**19
    assert d.kv_transfer_s == pytest.approx(512 * 2**19 / 450e9)  # NVLink 900 GB/s both ways -> 450 one way


# ------------------------------------------------------------------ published records

def _dtypes(rec):
    chip = rl.get_accelerator(rec.chip)
    compute = rec.compute_dtype or ("fp8" if rec.weight_dtype == "fp8" and "fp8" in chip.dtypes else "bf16")
    return dict(weight_dtype=rec.weight_dtype, kv_dtype=rec.kv_dtype, compute_dtype=compute,
                n_chips=rec.replica_chips)


def _records(kind):
    return [r for r in measurements.published_measurements() if r.prompt_len and r.output_len and kind(r)]


@pytest.mark.parametrize("rec", _records(lambda r: r.measures == "throughput"), ids=lambda r: r.id)
def test_no_throughput_record_beats_the_request_bound(rec):
    c = measurements.compare(rec)
    r = serving.request(rec.model, rec.chip, c.batch, rec.prompt_len, rec.output_len, **_dtypes(rec))
    assert r.e2e <= c.measured_s
    # the same work as the reality-check chapter's bound, to within its one-position shift of contexts
    assert r.e2e == pytest.approx(c.predicted_lower_s, rel=0.01)


@pytest.mark.parametrize("rec", _records(lambda r: "-serve-" in r.id), ids=lambda r: r.id)
def test_no_online_serving_record_beats_the_bound_at_its_arrival_rate(rec):
    # TensorRT-LLM v0.14 online serving: 2 requests per second (the table's QPS column)
    c = serving.batch_for_rate(rec.model, rec.chip, rec.prompt_len, rec.output_len, 2.0, **_dtypes(rec))
    bound = c.ttft if rec.measures == "prefill" else c.tpot
    assert bound <= rec.measured_seconds()
    assert math.isfinite(bound) and c.batch >= 1


# ------------------------------------------------------------------ chapter 11's exercises, by hand

def test_ch11_by_hand():
    check = rl.exercises.check
    assert check("11.littles_law", 12.0) and not check("11.littles_law", 48 / 200)
    assert check("11.spec_tokens", 1 + 0.6 + 0.36 + 0.216)
    assert not check("11.spec_tokens", 0.6 + 0.36 + 0.216)  # the target's own token forgotten
    # H100 SXM: 81559 MiB - 13,476,831,232 B = 72,043,978,752 B; pages: 304, 912, 1504 -> mean 906.67 positions
    # x 524,288 B = 475,354,453 B per sequence -> 151
    assert check("11.paged_batch", 151) and not check("11.paged_batch", 152)
    assert check("11.spec_pays", "does not pay")
    costs = {chip: serving.best_batch_under_slo("llama-2-13b", chip, 1024, 256, 50e-3).cost_per_million_tokens(p)
             for chip, p in {"A100": 1.80, "H100": 2.50, "H200": 3.50}.items()}
    assert min(costs, key=costs.get) == "H200"
    assert check("11.slo_chip", "H200") and not check("11.slo_chip", "a100")
