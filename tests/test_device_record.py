"""rl.measure.decode (a real model's decode step in PyTorch) and rl.measure.record (the course's own measurement
kept as data): the step's tensors against the model's analytic parameter count and a hand count, the step with
its KV cache against a plain causal forward pass, grouped attention against torch's own attention with the KV
heads repeated, and a real quick record of the CPU written, read back and checked (no bound above a measured
time). Without torch the torch tests skip with the reason; the TOML and data checks run everywhere."""

import dataclasses
import importlib.util
import sys
import tomllib

import pytest

import roofline_lib as rl
from roofline_lib.measure import record

HAS_TORCH = importlib.util.find_spec("torch") is not None
needs_torch = pytest.mark.skipif(not HAS_TORCH, reason="PyTorch is not installed (pip install '.[gpu]'): "
                                                       "the decode step cannot be built")

LLAMA = rl.get_model("Llama-3.1-8B")
TINY = dataclasses.replace(LLAMA, name="tiny llama", hidden_size=64, intermediate_size=160, num_layers=2,
                           num_heads=4, num_kv_heads=2, head_dim=16, vocab_size=100, aliases=())
TINY_QWEN = dataclasses.replace(rl.get_model("Qwen3-8B"), name="tiny qwen3", hidden_size=64, intermediate_size=96,
                                num_layers=3, num_heads=4, num_kv_heads=1, head_dim=32, vocab_size=50, aliases=())
TINY_TIED = dataclasses.replace(TINY, name="tiny tied", tie_word_embeddings=True)


def hand_count(h, inter, layers, heads, kv_heads, d, vocab, tied=False, qk_norm=False):
    """Parameters counted by hand: q and o are h x heads*d, k and v h x kv_heads*d, three h x inter MLP matrices,
    two norms of h per layer (and two of d with query/key norms), the final norm, the embedding and the head."""
    per_layer = 2 * h * heads * d + 2 * h * kv_heads * d + 3 * h * inter + 2 * h + (2 * d if qk_norm else 0)
    return layers * per_layer + h + vocab * h * (1 if tied else 2)


@needs_torch
@pytest.mark.parametrize("model, by_hand", [
    (TINY, hand_count(64, 160, 2, 4, 2, 16, 100)),
    (TINY_QWEN, hand_count(64, 96, 3, 4, 1, 32, 50, qk_norm=True)),
    (TINY_TIED, hand_count(64, 160, 2, 4, 2, 16, 100, tied=True)),
])
def test_tensors_hold_what_the_model_counts(model, by_hand):
    from roofline_lib.measure.decode import DecodeModel
    m = DecodeModel(model, batch=2, context=8, device="cpu", dtype="bf16")
    assert m.n_params() == by_hand == model.n_params
    assert m.weight_bytes() == model.weight_bytes("bf16") == 2 * by_hand
    assert m.kv_bytes() == model.kv_cache_bytes(2, 8, "bf16")


@needs_torch
@pytest.mark.parametrize("model", [TINY, TINY_QWEN, TINY_TIED])
def test_step_with_its_cache_equals_the_whole_forward_pass(model):
    """Position 7's logits from a causal pass over 8 tokens equal a step at position 7 after a pass over the
    first 7 (which filled the cache): the step reads its cache, attends to every position, and rotates."""
    import torch

    from roofline_lib.measure.decode import DecodeModel
    tokens = torch.randint(0, model.vocab_size, (2, 8), generator=torch.Generator().manual_seed(3))
    whole = DecodeModel(model, batch=2, context=8, device="cpu", dtype="fp32").forward(tokens)[:, -1]
    stepped = DecodeModel(model, batch=2, context=8, device="cpu", dtype="fp32")
    stepped.forward(tokens[:, :7])
    stepped.tokens = tokens[:, 7]
    got = stepped.step()
    assert got.shape == (2, model.vocab_size)
    assert torch.allclose(got, whole, atol=1e-4, rtol=1e-4)
    assert whole.abs().max() > 0.1  # not a trivially small signal


@needs_torch
def test_grouped_attention_equals_torch_attention_with_kv_repeated():
    import torch

    from roofline_lib.measure.decode import DecodeModel
    m = DecodeModel(TINY, batch=2, context=6, device="cpu", dtype="fp32")
    gen = torch.Generator().manual_seed(5)
    q = torch.randn(2, 4, 3, 16, generator=gen)
    k, v = torch.randn(2, 2, 6, 16, generator=gen), torch.randn(2, 2, 6, 16, generator=gen)
    got = m._attend(q, k, v, causal=True)
    # the same, the plain way: every query head gets its own copy of its group's K and V; query s sees keys up to
    # 6 - 3 + s
    mask = torch.arange(6)[None, :] <= torch.arange(3)[:, None] + 3
    ref = torch.nn.functional.scaled_dot_product_attention(q, k.repeat_interleave(2, 1), v.repeat_interleave(2, 1),
                                                           attn_mask=mask)
    assert torch.allclose(got, ref.transpose(1, 2).reshape(2, 3, 64), atol=1e-5)


@needs_torch
def test_with_cache_shares_the_weights():
    from roofline_lib.measure.decode import DecodeModel
    m = DecodeModel(TINY, batch=1, context=4, device="cpu", dtype="fp32")
    other = m.with_cache(3, 10)
    assert other.embed.data_ptr() == m.embed.data_ptr()
    assert other.k_cache.shape == (2, 3, 2, 10, 16) and m.k_cache.shape == (2, 1, 2, 4, 16)
    assert other.step().shape == (3, 100)


@needs_torch
def test_refusals_say_what_is_built():
    from roofline_lib.measure.decode import DecodeModel
    with pytest.raises(ValueError, match="Mixtral-8x7B has mixture of experts"):
        DecodeModel("Mixtral-8x7B", 1, 4, device="cpu", dtype="fp32")
    with pytest.raises(ValueError, match="dtype must be one of fp32, bf16, fp16, got 'fp8'"):
        DecodeModel(TINY, 1, 4, device="cpu", dtype="fp8")
    with pytest.raises(ValueError, match="context"):
        DecodeModel(TINY, 1, 0, device="cpu", dtype="fp32")


def test_without_torch_the_message_says_what_to_install(monkeypatch):
    from roofline_lib.measure.decode import DecodeModel
    monkeypatch.setitem(sys.modules, "torch", None)
    with pytest.raises(ModuleNotFoundError, match=r'pip install "\.\[gpu\]"'):
        DecodeModel(TINY, 1, 4, device="cpu")


@needs_torch
def test_a_quick_record_of_the_cpu_is_written_read_back_and_sane(tmp_path):
    # weights of ~78 MB, over twice this machine's last-level cache, so the step streams them from memory
    model = dataclasses.replace(TINY, hidden_size=256, intermediate_size=768, num_layers=4, num_heads=8,
                                head_dim=32, vocab_size=32000)
    rec = record.record_device("cpu", quick=True, model=model, decodes=((1, 64), (4, 128)))
    path = record.write_record(rec, tmp_path)
    assert path.name == f"{path.name.rsplit('-', 3)[0]}-{rec['date']}.toml"
    back = record.load_record(path)
    assert back.data == tomllib.loads(path.read_text())
    assert back.data["bandwidth"]["copy"] == rec["bandwidth"]["copy"]
    assert back.data["bandwidth"]["copy_counted_once"] == pytest.approx(rec["bandwidth"]["copy"] / 2)
    assert [row["batch"] for row in back.decodes] == [1, 4]
    for row in back.decodes:
        assert row["weight_bytes"] == model.weight_bytes("fp32")
        # the bound reads every weight but the embedding table (one row per token) and the whole cache
        embed = model.vocab_size * model.hidden_size * 4
        assert row["bound_bytes"] > row["weight_bytes"] - embed
        assert row["eager_min_s"] <= row["eager_median_s"] <= row["eager_max_s"]
    assert back.problems() == []
    assert back.accelerator.mem_bandwidth == max(rec["bandwidth"]["add"], rec["bandwidth"]["triad"])
    assert record.write_record(rec, tmp_path).name.endswith(f"{rec['date']}-2.toml")  # a second run that day


def made_up_record(**decode):
    row = {"model": "Llama-3.1-8B", "dtype": "bf16", "batch": 1, "context": 1024, "bound_on_datasheet_s": 3.5e-3,
           "bound_on_measured_s": 4.0e-3, "eager_min_s": 6.0e-3, "graph_min_s": 4.2e-3} | decode
    return {"date": "2026-12-01", "device": {"name": "NVIDIA H200", "datasheet": "H200 SXM",
                                             "total_memory_bytes": 150754820096.0},
            "method": {"quick": False}, "bandwidth": {"copy": 4.2e12, "add": 4.3e12, "triad": 4.3e12},
            "matmul": {"bf16": 7.9e14}, "launch": {"issue": 5e-6, "round_trip": 1.2e-5}, "decode": [row]}


def test_problems_name_a_bound_above_a_measurement(tmp_path):
    ok = tmp_path / "ok.toml"
    ok.write_text(record.to_toml(made_up_record()))
    assert record.load_record(ok).problems() == []
    bad = tmp_path / "bad.toml"
    bad.write_text(record.to_toml(made_up_record(graph_min_s=3.0e-3)))
    assert record.load_record(bad).problems() == [
        "Llama-3.1-8B batch 1 context 1024: bound_on_datasheet_s 3.500 ms is above the fastest measured step 3.000 ms",
        "Llama-3.1-8B batch 1 context 1024: bound_on_measured_s 4.000 ms is above the fastest measured step 3.000 ms"]
    over = made_up_record()
    over["matmul"]["bf16"] = 1.2e15  # above the H200's 989 TFLOP/s dense bf16
    path = tmp_path / "over.toml"
    path.write_text(record.to_toml(over))
    assert record.load_record(path).problems() == ["matmul bf16: 1200.0 TFLOP/s measured, above the datasheet's 989.4"]


def test_toml_keeps_strange_strings_and_refuses_what_it_cannot_write():
    rec = {"date": "x", "device": {"name": 'a "quoted" \\ name', "odd key": 1}, "decode": []}
    assert tomllib.loads(record.to_toml(rec)) == {"date": "x", "device": {"name": 'a "quoted" \\ name', "odd key": 1}}
    with pytest.raises(TypeError, match="numbers, strings and lists, got NoneType"):
        record.to_toml({"date": None})


def test_a_file_that_is_no_record_is_refused(tmp_path):
    path = tmp_path / "other.toml"
    path.write_text('date = "2026-12-01"\n')
    with pytest.raises(ValueError, match=r"not a record .*\(no device, method, bandwidth, matmul, launch\)"):
        record.load_record(path)


def test_every_device_name_maps_to_a_datasheet_of_the_course():
    for torch_name, chip in record.DATASHEET_NAMES.items():
        assert record.datasheet_for(torch_name) is rl.get_accelerator(chip), torch_name
    assert record.datasheet_for("NVIDIA H200").name == "H200 SXM"
    assert record.datasheet_for("an unknown card") is None


RECORDS = record.own_measurements()


@pytest.mark.skipif(not RECORDS, reason="data/measured/ holds no record yet (python -m roofline_lib.measure.record "
                                        "on a GPU writes one)")
@pytest.mark.parametrize("rec", RECORDS, ids=[r.path.name for r in RECORDS])
def test_the_course_s_own_records_show_no_bound_above_a_measurement(rec):
    assert rec.problems() == []
    assert rec.decodes, "a record measures at least one decode step"
