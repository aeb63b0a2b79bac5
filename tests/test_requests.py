"""roofline_lib.serving: whole requests and continuous batching, checked against brute-force loops, hand numbers
and published records."""

import math

import numpy as np
import pytest

import roofline_lib as rl
from roofline_lib import serving
from roofline_lib.reality import records as measurements


def lower(w, hw="A100"):
    return rl.estimate(w, hw).lower


# ------------------------------------------------------------------ whole requests

def test_request_is_prefill_then_each_decode_step_brute_force():
    """Llama-2-7B bf16, A100 80GB SXM, batch 1, 512 prompt and 128 output tokens (the issue's case)."""
    r = serving.request("llama-2-7b", "A100 80GB SXM4", batch=1, prompt_len=512, output_len=128)
    ttft = lower(rl.prefill("llama-2-7b", 1, 512))
    # chapter 10's convention: step i = 1 .. 128 attends to 512 + i positions
    steps = [lower(rl.decode_step("llama-2-7b", 1, c)) for c in range(513, 641)]
    assert r.ttft == ttft
    assert r.e2e == pytest.approx(ttft + sum(steps), rel=1e-12)
    assert r.tpot == pytest.approx(sum(steps) / 128, rel=1e-12)
    assert r.throughput == pytest.approx(128 / (ttft + sum(steps)), rel=1e-12)  # tokens over the whole request
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
    # the work split perfectly over 2 chips (the module's stated model): every term of the time halves, so each
    # chip serves as many tokens/s as one chip alone
    one = serving.request("llama-2-7b", "A100", batch=32, prompt_len=512, output_len=128, n_chips=1)
    assert r.e2e == pytest.approx(one.e2e / 2, rel=1e-12)
    assert r.throughput_per_chip == pytest.approx(one.throughput, rel=1e-12)
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
    assert rl.llm.max_batch("llama-2-7b", "A100", 640) == most
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
    c = serving.continuous("llama-2-7b", "A100", np.array([1, 8, 64, 200]), 512, 128, chunked=chunked)
    assert np.allclose(c.batch, c.rate * 128 * c.tpot, rtol=1e-12)  # in flight = rate x time decoding
    assert np.all(np.diff(c.throughput) > 0) and np.all(np.diff(c.tpot) > 0)  # the trade-off


def test_continuous_without_chunking_by_hand():
    t_pre = lower(rl.prefill("llama-2-7b", 1, 512))
    step = serving.request("llama-2-7b", "A100", 64, 512, 128).tpot
    c = serving.continuous("llama-2-7b", "A100", 64, 512, 128)
    assert c.rate == pytest.approx(64 / (128 * step + 64 * t_pre), rel=1e-12)
    assert c.tpot == pytest.approx(step + 64 * t_pre / 128, rel=1e-12)


def test_rate_and_slo_design():
    c = serving.batch_for_rate("llama-2-7b", "A100", 512, 128, rate=10.0)
    below = serving.continuous("llama-2-7b", "A100", c.batch - 1, 512, 128)
    assert c.rate >= 10.0 > below.rate
    best = serving.best_batch_under_slo("llama-2-7b", "A100", 512, 128, tpot_slo=50e-3)
    assert best.tpot <= 50e-3 < serving.continuous("llama-2-7b", "A100", best.batch + 1, 512, 128).tpot
    with pytest.raises(ValueError, match="no batch meets"):
        serving.best_batch_under_slo("llama-2-7b", "A100", 512, 128, tpot_slo=1e-3)
    with pytest.raises(ValueError, match="more than"):
        serving.batch_for_rate("llama-2-7b", "A100", 512, 128, rate=1e6)


# ------------------------------------------------------------------ published records

def _dtypes(rec):
    chip = rl.get_accelerator(rec.chip)
    compute = rec.compute_dtype or ("fp8" if rec.weight_dtype == "fp8" and "fp8" in chip.dtypes else "bf16")
    return dict(weight_dtype=rec.weight_dtype, kv_dtype=rec.kv_dtype, compute_dtype=compute,
                n_chips=rec.replica_chips)


def _records(kind):
    return [r for r in measurements.published_measurements() if r.prompt_len and r.output_len and kind(r)]


def test_the_published_records_below_are_there():
    # the two tests below are parametrized over these records: an empty list would pass them silently
    assert len(_records(lambda r: r.measures == "throughput")) >= 10
    assert len(_records(lambda r: "-serve-" in r.id)) >= 4


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


def test_capacity_is_the_old_name_of_max_batch_and_warns():
    with pytest.warns(DeprecationWarning, match="max_batch"):
        old = serving.capacity("llama-2-7b", "A100", 640, n_chips=2)
    assert old == rl.llm.max_batch("llama-2-7b", "A100", 640, n_chips=2)
