"""roofline_lib.reality.records: the published records, their loader, calibration, and the invariant that a lower
bound never beats reality."""

import dataclasses

import pytest

from roofline_lib.reality import records as M

COMPARISONS = M.measured_vs_predicted()


def test_enough_records_of_every_kind():
    records = [c.record for c in COMPARISONS]
    assert len(records) >= 15
    chips = {r.chip for r in records}
    assert "A100 80GB SXM4" in chips and chips & {"H100 SXM5", "H200 SXM"}
    assert any(r.batch == 1 for r in records) and any(r.batch == "max" or r.batch >= 64 for r in records)
    assert any(r.weight_dtype in ("int8", "int4") for r in records)
    assert any(r.n_chips > 1 for r in records)
    assert any(r.measures in ("prefill", "prefill_throughput", "request", "throughput") for r in records)
    for r in records:
        assert r.quote and r.source and r.unit


@pytest.mark.parametrize("c", COMPARISONS, ids=lambda c: c.id)
def test_the_lower_bound_never_exceeds_the_measured_time(c):
    assert c.predicted_lower_s <= c.measured_s, (
        f"{c.id}: the roofline's lower bound {c.predicted_lower_s:.4g} s is above the measured "
        f"{c.measured_s:.4g} s: a wrong record ({c.record.source_file}) or a wrong model")
    assert c.mbu <= 1 and c.mfu <= 1, f"{c.id}: MBU {c.mbu:.3f}, MFU {c.mfu:.3f}"
    # the bound is max(t_math, t_mem) per step, summed over the steps: between the larger share and the sum
    assert max(c.mbu, c.mfu) * (1 - 1e-9) <= c.predicted_lower_s / c.measured_s <= (c.mbu + c.mfu) * (1 + 1e-9)


def _find(record_id):
    return next(c for c in COMPARISONS if c.id == record_id)


def test_gpt_fast_llama_2_7b_mbu_matches_the_readme():
    c = _find("gpt-fast-llama-2-7b-bf16-a100")
    assert 0.6 <= c.mbu <= 0.75
    # gpt-fast's own column: model bytes x tokens/s = 1397.31 GB/s, over the A100 80GB SXM4's 2.039 TB/s
    assert c.mbu == pytest.approx(1397.31e9 / 2.039e12, rel=0.03)
    # by hand: every weight but the embedding table, bf16, read once per token, at 104.9 tokens/s
    weights = 2 * (6_738_415_616 - 32_000 * 4_096)
    assert c.mbu == pytest.approx(weights * 104.9 / 2.039e12, rel=0.02)   # the KV cache of <= 205 positions adds ~1 %


def test_measured_seconds_by_hand():
    base = dict(id="x", system="s", chip="H100", n_chips=8, model="llama-2-70b", weight_dtype="fp8",
                kv_dtype="fp8", prompt_len=128, output_len=2048, quote="q", source="s")
    # 8 chips, 100 sequences, 1,000 output tokens/s per chip: 8,000 tokens/s; 100 x 2,048 tokens take 25.6 s
    rec = M.Record(**base, batch=100, measures="throughput", value=1000.0, unit="tokens/s", per="chip")
    assert rec.measured_seconds() == pytest.approx(100 * 2048 / 8000)
    rec = M.Record(**base, batch=4, measures="decode_step", value=50.0, unit="tok/s", per="sequence")
    assert rec.measured_seconds() == pytest.approx(1 / 50)
    rec = M.Record(**base, batch=4, measures="decode_step", value=200.0, unit="tok/s", per="system")
    assert rec.measured_seconds() == pytest.approx(4 / 200)
    rec = M.Record(**base, batch=100, measures="throughput", value=1000.0, unit="out tok/s/GPU", per="chip")
    assert rec.measured_seconds() == pytest.approx(100 * 2048 / 8000)
    rec = M.Record(**base, batch=100, measures="throughput", value=8000.0, unit="Tokens per second", per="system")
    assert rec.measured_seconds() == pytest.approx(100 * 2048 / 8000)
    rec = M.Record(**base, batch=1, measures="prefill", value=35.0, unit="ms", per="request")
    assert rec.measured_seconds() == pytest.approx(0.035)
    rec = M.Record(**base, batch=1, measures="prefill_throughput", value=4096.0, unit="tok/s", per="system")
    assert rec.measured_seconds() == pytest.approx(128 / 4096)


GOOD = '''
source = "a made-up source"
[[record]]
id = "made-up"
system = "test"
chip = "A100 80GB SXM4"
n_chips = 1
model = "llama-2-7b"
weight_dtype = "bf16"
kv_dtype = "bf16"
batch = 1
prompt_len = 5
output_len = 200
measures = "decode_step"
value = 50.0
unit = "tok/s"
per = "sequence"
quote = "| Llama-2-7B | 50.0 |"
'''


@pytest.mark.parametrize("broken, message", [
    (GOOD.replace('source = "a made-up source"', ""), "'source' is missing"),
    (GOOD.replace('chip = "A100 80GB SXM4"', 'chip = "A1000"'), "'chip' is not known: unknown accelerator"),
    (GOOD.replace('model = "llama-2-7b"', 'model = "llama-9"'), "'model' is not known"),
    (GOOD.replace('unit = "tok/s"', 'unit = "furlongs"'), "'unit' 'furlongs' is not understood"),
    (GOOD.replace('measures = "decode_step"', 'measures = "vibes"'), "'measures' must be one of"),
    (GOOD.replace("value = 50.0", "value = -1"), "'value' must be finite and > 0, got -1"),
    (GOOD.replace('per = "sequence"', 'per = "sequence"').replace('unit = "tok/s"', 'unit = "tok/s/GPU"'),
     "'per' must be \"chip\" for a unit per GPU"),
    (GOOD.replace('quote = "| Llama-2-7B | 50.0 |"', 'quote = " "'), "'quote' is empty"),
    (GOOD.replace("prompt_len = 5\n", "").replace('"decode_step"', '"prefill"'), "'prompt_len' is needed"),
    (GOOD.replace("system = ", "chips_per_replica = 3\nsystem = "), "'chips_per_replica' must divide n_chips"),
    (GOOD.replace('weight_dtype = "bf16"', 'weight_dtype = "int3"'), "'weight_dtype' is not known"),
])
def test_loader_names_file_record_and_field(tmp_path, broken, message):
    path = tmp_path / "source.toml"
    path.write_text(broken)
    with pytest.raises(ValueError, match=message) as info:
        M.load_measurements(path)
    assert "source.toml" in str(info.value)


def test_a_record_beyond_the_trained_context_is_loaded_flagged_and_bounded(tmp_path):
    # Llama-2-70B was trained on 4,096 positions (its config's max_position_embeddings); an engine may still run
    # 128 + 4,096 (TensorRT-LLM published such runs): a measurement, kept, flagged and bounded like any other.
    # Made-up figures: 8 x H100, 512 sequences, 1,000 output tokens/s per GPU.
    beyond = GOOD.replace('model = "llama-2-7b"', 'model = "llama-2-70b"').replace("n_chips = 1", "n_chips = 8")
    beyond = beyond.replace('chip = "A100 80GB SXM4"', 'chip = "H100 SXM"').replace("batch = 1", "batch = 512")
    beyond = beyond.replace("prompt_len = 5", "prompt_len = 128").replace("output_len = 200", "output_len = 4096")
    beyond = beyond.replace('measures = "decode_step"', 'measures = "throughput"').replace("value = 50.0",
                                                                                          "value = 1000.0")
    beyond = beyond.replace('per = "sequence"', 'per = "chip"')
    (tmp_path / "source.toml").write_text(beyond)
    (rec,) = M.load_measurements(tmp_path / "source.toml")
    assert rec.beyond_trained_context and rec.model == "Llama-2-70B"
    assert "128 + 4096 = 4224 positions, more than Llama-2-70B's max_context (4096)" in rec.notes
    (c,) = M.measured_vs_predicted([rec])
    # 512 x 4,096 output tokens at 8,000 tokens/s: 262.1 s measured; the bound, by hand from below: 4,096 decode
    # steps, each reading at least the bf16 matmul weights (all but the 32,000 x 8,192 embedding table) and the
    # KV cache of 512 x 128 prompt positions (2 x 80 layers x 8 KV heads x 128 x 2 bytes each), over 8 x 3.35 TB/s
    assert c.measured_s == pytest.approx(512 * 4096 / 8000)
    floor = 4096 * (2 * (68_976_648_192 - 32_000 * 8_192) + 512 * 128 * 2 * 80 * 8 * 128 * 2) / (8 * 3.35e12)
    assert floor < c.predicted_lower_s < c.measured_s
    # within the trained context nothing is flagged, and a note already there is kept
    (tmp_path / "source.toml").write_text(GOOD + 'notes = "as published"\n')
    (ok,) = M.load_measurements(tmp_path / "source.toml")
    assert not ok.beyond_trained_context and ok.notes == "as published"
    (tmp_path / "source.toml").write_text(GOOD.replace("prompt_len = 5", "prompt_len = 4000") + 'notes = "x"\n')
    (long,) = M.load_measurements(tmp_path / "source.toml")
    assert long.beyond_trained_context and long.notes.startswith("x Beyond the trained context: 4000 + 200")


def test_a_record_faster_than_the_roof_is_caught(tmp_path):
    # 500 tokens/s of Llama-2-7B in bf16 on one A100 would read 13 GB in 2 ms: 6.6 TB/s, over 3x the roof
    (tmp_path / "source.toml").write_text(GOOD.replace("value = 50.0", "value = 500.0"))
    (c,) = M.measured_vs_predicted(M.published_measurements(tmp_path))
    assert c.mbu > 1 and c.predicted_lower_s > c.measured_s


def test_calibration_uses_published_ceilings():
    # the A100 80GB SXM4's own: 271 TFLOP/s of 312 and 1.6 TB/s of 2.039 (stas00 / BabelStream)
    compute, memory = M.achieved_fractions("A100")
    assert compute == pytest.approx(271 / 312, rel=1e-3) and memory == pytest.approx(1.6 / 2.039, rel=1e-3)
    # a chip with none takes the median of those that have them, so its estimate is never faster
    compute, memory = M.achieved_fractions("L4")
    assert 0 < compute < 1 and 0 < memory < 1
    for c in COMPARISONS:
        assert c.calibrated_s >= c.predicted_lower_s


def test_vllm_and_sglang_records_by_hand():
    # vLLM PR #2192: Llama-2-70B fp16 on 4 A100s, 64 prompts of 256 tokens + 256 new ones in 14.57 s. Decode alone
    # reads a quarter of 2 x 68.98e9 weight bytes from each chip's 2.039 TB/s for 256 steps: at least 4.3 s. And the
    # SGLang Llama-3-8B steps (6.16-7.35 ms) can only be a Hopper's: on an A100 the step reads 2 x (8.03e9 - 128,256 x
    # 4,096 embedding parameters) = 15.0 GB at 2.039 TB/s, 7.37 ms, and the library's A100 bound says the same.
    by_id = {c.id: c for c in COMPARISONS}
    vllm = by_id["vllm-pr2192-llama-2-70b-a100-tp4-b64-custom"]
    assert vllm.measured_s == 14.57 and vllm.batch == 64
    assert 256 * 2 * 68.98e9 / 4 / 2.039e12 < vllm.predicted_lower_s < vllm.measured_s
    a100_step = 2 * (8.03e9 - 128_256 * 4_096) / 2.039e12
    assert 7.35e-3 < a100_step < 7.4e-3
    for rid in ("sglang-pr1401-llama-3-8b-flashinfer-graph-b1", "sglang-pr1401-llama-3-8b-triton-graph-b1",
                "sglang-pr1422-llama-3-8b-triton-compile-b1"):
        sglang = by_id[rid]
        on_a100 = M.compare(dataclasses.replace(sglang.record, chip="A100 80GB SXM4"))
        assert on_a100.predicted_lower_s > sglang.measured_s > sglang.predicted_lower_s, rid
    engines = [c for c in COMPARISONS if "vllm" in c.record.system.lower() or "sglang" in c.record.system.lower()]
    assert len(engines) >= 6
