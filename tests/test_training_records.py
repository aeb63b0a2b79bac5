"""The published training records (data/training/): every file loads, no record beats its bound, the set covers
the chips, scales and formats it must, and each FLOP convention converts as its source's own formula does."""

import collections
import pathlib

import pytest

import roofline_lib as rl

T = rl.training
RECORDS = T.published_measurements()
ROWS = {c.id: c for c in T.measured_vs_predicted(RECORDS)}


def test_every_file_loads_and_there_are_enough_records():
    files = sorted(T.records.TRAINING_DIR.glob("*.toml"))
    assert files and sum(len(T.load_measurements(f)) for f in files) == len(RECORDS) >= 40


@pytest.mark.parametrize("row", list(ROWS.values()), ids=list(ROWS))
def test_no_record_beats_its_bound(row):
    assert 0 < row.measured_tokens_per_s_per_chip <= row.bound_tokens_per_s_per_chip, row.record.quote
    assert 0 < row.mfu <= 1


def test_coverage_of_chips_scales_and_formats():
    chips = {r.chip for r in RECORDS}
    assert {"A100 80GB SXM4", "H100 SXM5", "H200 SXM"} <= chips and chips & {"B200", "GB200 (per GPU)"}
    sizes = [r.n_chips for r in RECORDS]
    assert min(sizes) <= 8 and max(sizes) >= 16384
    formats = {r.precision for r in RECORDS}
    assert "bf16" in formats and formats & {"fp8", "mxfp8"}
    assert all(r.quote.strip() and r.source.strip() for r in RECORDS)


def test_every_convention_in_the_data_is_known_and_converted():
    used = collections.Counter(r.flop_convention for r in RECORDS)
    assert set(used) <= set(T.CONVENTIONS) | {"none"}
    for r in RECORDS:
        if r.measures in ("model_tflops_per_chip", "mfu"):
            assert r.flop_convention != "none", r.id


def first(convention, measures):
    return next(r for r in RECORDS if r.flop_convention == convention and r.measures == measures)


def test_megatron2021_figure_through_eq3():
    # Narayanan et al. 2021 Eq. 3 per token: 96 l h^2 (1 + s / 6h + V / 16 l h), by hand from the record's shape
    r = first("megatron2021", "model_tflops_per_chip")
    m, s = r.model, r.seq_len
    h, L, V = m.hidden_size, m.num_layers, m.vocab_size
    per_token = 96 * L * h ** 2 * (1 + s / (6 * h) + V / (16 * L * h))
    assert r.measured_tokens_per_s_per_chip == pytest.approx(r.value * 1e12 / per_token, rel=1e-9)


def test_megatron_bridge_figure_reproduces_nemo_tokens():
    # NeMo 25.11 publishes tokens/s and model TFLOP/s for Llama 3 8B on H100: 14451 x 51.47 GFLOP = 744 TFLOP/s,
    # with Megatron-Bridge's count (causal attention, GQA and SwiGLU exact, LM head): by hand from the config
    h, L, i, V, s, kv_ratio = 4096, 32, 14336, 128256, 8192, 8 / 32
    per_token = 12 * L * h * h * ((1 + kv_ratio + s / h / 2) + i / h * 1.5) + 6 * h * V
    assert per_token == pytest.approx(T.flops_per_token("llama-3-8b", s, convention="megatron-bridge"), rel=1e-12)
    assert 14451 * per_token / 1e12 == pytest.approx(744, abs=0.5)


def test_mfu_record_through_its_sources_peak():
    # Korthikanti et al. 2022's model FLOPs, 72 l h^2 (1 + s / 6h + V / 12 l h) per token, over their peak
    r = first("megatron_model", "mfu")
    m, s = r.model, r.seq_len
    h, L, V = m.hidden_size, m.num_layers, m.vocab_size
    per_token = 72 * L * h ** 2 * (1 + s / (6 * h) + V / (12 * L * h))
    assert r.measured_tokens_per_s_per_chip == pytest.approx(r.value / 100 * r.peak_tflops_per_chip * 1e12 / per_token)


def test_llm_foundry_count_is_palms_for_multi_head_models():
    m = rl.get_model("llama-2-7b")  # multi-head, like MPT: d_model = heads x head_dim
    per_token = 6 * m.n_params + 12 * m.num_layers * m.hidden_size * 2048  # collect_results.py
    assert T.flops_per_token(m, 2048, convention="llm-foundry") == per_token
    assert T.flops_per_token(m, 2048, convention="palm") == per_token


def test_zero3_records_fall_with_chips_at_fixed_batch():
    rates = [ROWS[f"megatron2021-t2-zero3-174b-{n}"].measured_tokens_per_s_per_chip for n in (384, 768, 1536)]
    assert rates[0] > rates[1] > rates[2]


def test_whole_runs_imply_an_mfu_below_the_steps():
    runs = {r.id: r for r in T.training_runs()}
    r = runs["gpuhours-llama-2-7b"]
    # 2e12 tokens x 6 x 6.74e9 parameters / (184,320 h x 3600 s x 312e12) = 0.391 with 6N
    assert r.implied_mfu("6N") == pytest.approx(2e12 * 6 * 6_738_415_616 / (184_320 * 3600 * 312e12), rel=1e-6)
    assert all(0 < run.implied_mfu() < 0.6 for run in runs.values())


def test_the_405b_card_implies_its_steps_mfu_times_its_goodput():
    # Llama 3.1 405B by hand from its config.json (h 16384, 126 layers, 128 / 8 heads of 128, MLP 53248,
    # vocabulary 128256, untied): 6 x the multiplying weights + causal attention 6 L H d T at T = 8192
    layer = 16384 * 128 * 128 * 2 + 2 * 16384 * 8 * 128 + 3 * 16384 * 53248
    per_token = 6 * (126 * layer + 128256 * 16384) + 6 * 126 * 128 * 128 * 8192
    card = {r.id: r for r in T.training_runs()}["gpuhours-llama-3.1-405b"]
    assert card.implied_mfu() == pytest.approx(15e12 * per_token / (30.84e6 * 3600 * 989.4e12), rel=1e-3)
    # Meta's steps: 400 TFLOP/s per GPU on 16,384 H100s (attention full in that count), above 90 % of the
    # time in useful steps: the card's 34.5 % lies within a point of 0.9 x the step's MFU (causal)
    step = 400e12 * per_token / (per_token + 6 * 126 * 128 * 128 * 8192) / 989.4e12
    assert card.implied_mfu() < step and abs(card.implied_mfu() - 0.9 * step) < 0.01


def bad_file(tmp_path, **changes):
    text = pathlib.Path(RECORDS[0].source_file).read_text(encoding="utf-8")
    path = tmp_path / "bad.toml"
    import tomllib

    raw = tomllib.loads(text)
    rec = dict(raw["record"][0], **changes)
    lines = [f"source = {raw['source']!r}", "[[record]]"]
    for k, v in rec.items():
        if isinstance(v, dict):
            continue
        lines.append(f"{k} = {v!r}".replace("True", "true").replace("False", "false") if not isinstance(v, str)
                     else f"{k} = {v!r}")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@pytest.mark.parametrize("change,match", [
    (dict(dp=3), "must equal n_chips"),
    (dict(measures="mfu", peak_tflops_per_chip=0.0), "peak"),
    (dict(flop_convention="kaplan"), "flop_convention"),
    (dict(chip="a800"), "chip"),
    (dict(precision="int4"), "precision"),
])
def test_loader_names_what_is_wrong(tmp_path, change, match):
    if RECORDS[0].model.name.endswith(" model"):
        pytest.skip("the first record has an inline shape")
    with pytest.raises(ValueError, match=match):
        T.load_measurements(bad_file(tmp_path, **change))


def test_a_step_time_needs_no_flop_convention(tmp_path):
    """A step time becomes tokens/s without any FLOP count, so flop_convention = "none" is accepted and used."""
    if RECORDS[0].model.name.endswith(" model"):
        pytest.skip("the first record has an inline shape")
    path = bad_file(tmp_path, measures="step_time_s", value=2.0, unit="s", flop_convention="none",
                    global_batch_tokens=4_194_304, n_chips=512, dp=512, tp=1, pp=1)
    (rec,) = T.load_measurements(path)
    # 4,194,304 tokens a step / (2 s x 512 chips) = 4,096 tokens/s per chip
    assert rec.measured_tokens_per_s_per_chip == 4096
