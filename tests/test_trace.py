"""rl.trace: the profiler-trace reader against hand-built traces (every figure worked out by hand), against
the published traces in ../shared/traces (every figure recomputed here from the raw JSON with plain json and
gzip, a different way), bad input, and a trace of this machine made with torch.profiler."""

import functools
import gzip
import json
import statistics
from pathlib import Path

import pytest

import roofline_lib as rl
from roofline_lib import trace as T
from roofline_lib.trace import synthetic

SHARED = Path(__file__).resolve().parents[2] / "shared" / "traces"


def published(name):
    path = SHARED / name
    if not path.is_file():
        pytest.skip(f"the published traces are not here ({SHARED} absent): they live beside the repository")
    return path


@functools.cache
def raw(path):
    return json.load(gzip.open(path))["traceEvents"]  # read once per run: the tests only look


@functools.cache
def read_once(path):
    return T.read(path)  # a Trace is read-only: each published one is read once per run


# ---------------------------------------------------------------- hand-built traces


def hand_trace(tmp_path, kernels, **kw):
    return T.read(synthetic.write_trace(tmp_path / "t.json", kernels, **kw))


def test_busy_idle_and_streams_by_hand(tmp_path):
    # stream 7: 0-12 us and 30-42 us; stream 9: 5-20 us (overlaps the first); idle 20-30 us
    t = hand_trace(tmp_path, [dict(name="gemm_a", start=0, duration=12e-6),
                              dict(name="gemm_b", start=30e-6, duration=12e-6),
                              dict(name="vectorized_elementwise_kernel", start=5e-6, duration=15e-6, stream=9)])
    assert t.window_s == pytest.approx(42e-6)
    assert t.busy_s == pytest.approx(32e-6)  # 0-20 and 30-42: overlapping streams count once
    assert t.idle_s == pytest.approx(10e-6) and t.busy_share == pytest.approx(32 / 42)
    cats = t.time_by_category()
    assert cats["GEMM"] == pytest.approx(24e-6) and cats["elementwise/normalisation"] == pytest.approx(15e-6)
    s = t.launch_stats()
    assert (s.kernels, s.median_s, s.short_share, s.launches) == (3, pytest.approx(12e-6), 0.0, 0)


def test_split_gap_is_reported_not_idle(tmp_path):
    # two 1 ms kernels, 0.5 s apart: the gap is a split, not idle time
    t = hand_trace(tmp_path, [dict(name="k1", start=0, duration=1e-3), dict(name="k2", start=0.501, duration=1e-3)])
    assert t.split_gaps == [(pytest.approx(1e-3), pytest.approx(0.5))]
    assert t.idle_s == pytest.approx(0) and t.busy_share == pytest.approx(1)
    assert "not idle time" in str(t.diagnose("H100"))
    # a gap just under the threshold is idle time
    t = hand_trace(tmp_path, [dict(name="k1", start=0, duration=1e-3), dict(name="k2", start=0.09, duration=1e-3)])
    assert t.split_gaps == [] and t.idle_s == pytest.approx(0.089)


def test_communication_overlap_by_hand(tmp_path):
    # all-reduce on stream 20 from 10 to 30 us; compute on stream 7 from 0 to 15 and 25 to 40: 5 + 5 us hidden
    t = hand_trace(tmp_path, [dict(name="gemm", start=0, duration=15e-6),
                              dict(name="gemm", start=25e-6, duration=15e-6),
                              dict(name="ncclKernel_AllReduce_RING_LL_Sum_bfloat16", start=10e-6, duration=20e-6,
                                   stream=20)])
    assert t.communication_s == pytest.approx(20e-6)
    assert t.communication_overlapped_s == pytest.approx(10e-6) and t.communication_exposed_s == pytest.approx(10e-6)


def test_gemm_rows_and_roofline_by_hand(tmp_path):
    # aten::mm [4096, 4096] x [4096, 8192] bf16 in 1 ms: 2 x 4096 x 8192 x 4096 = 274.9 GFLOP -> 274.9 TFLOP/s;
    # bytes 2 x (4096 x 4096 + 4096 x 8192 + 4096 x 8192) = 167.8 MB; intensity 1638.4 FLOP/byte
    t = hand_trace(tmp_path, [dict(name="sm90_xmma_gemm_bf16", start=0, duration=1e-3, launch=(0, 5e-6),
                                   op=("aten::mm", [(4096, 4096), (4096, 8192)], ["c10::BFloat16"] * 2))],
                   device_name="NVIDIA H100 80GB HBM3")
    (g,) = t.gemms()
    assert (g.m, g.n, g.k, g.dtype, g.batch) == (4096, 8192, 4096, "bf16", 1)
    assert g.flops_per_s == pytest.approx(2 * 4096 * 8192 * 4096 / 1e-3)
    assert g.intensity == pytest.approx(2 * 4096 * 8192 * 4096 / (2 * (4096 * 4096 + 2 * 4096 * 8192)))
    (p,) = t.placed()  # the recorded device is an H100 SXM: 989.4 TFLOP/s bf16 dense, 3.35 TB/s
    assert p.side == "compute" and p.share_of_roof == pytest.approx(274.877906944e12 / 989.4e12, rel=1e-3)
    assert t.launch_stats().launch_cpu_s == pytest.approx(5e-6)
    d = t.diagnose()  # one GEMM on the compute side at 28 % of its roof, 1 ms: all the window
    assert d.bottleneck == "compute" and d.share("compute") == pytest.approx(1)
    assert "compute side of the ridge: 1 kernels, 1 ms, a median 28% of the roof" in str(d)


@pytest.mark.parametrize("op, dims, expected", [
    ("aten::mm", [(8, 16), (16, 32)], (1, 8, 32, 16, 0)),
    ("aten::addmm", [(32,), (8, 16), (16, 32)], (1, 8, 32, 16, 1)),
    ("aten::bmm", [(4, 8, 16), (4, 16, 32)], (4, 8, 32, 16, 0)),
    ("aten::baddbmm", [(4, 8, 32), (4, 8, 16), (4, 16, 32)], (4, 8, 32, 16, 1)),
    ("aten::linear", [(2, 8, 16), (32, 16), (32,)], (1, 16, 32, 16, 0)),
    ("aten::mm", [(8, 16), (17, 32)], None),  # inner dimensions disagree
    ("aten::add", [(8, 16), (8, 16)], None),
    ("aten::mm", [], None),
])
def test_mnk_forms(op, dims, expected):
    from roofline_lib.trace.gemms import mnk
    assert mnk(op, tuple(tuple(d) for d in dims)) == expected


@pytest.mark.parametrize("name, kind, expected", [
    ("ncclKernel_AllReduce_RING_LL_Sum_float(ncclWorkElem)", "kernel", "communication"),
    ("void (anonymous namespace)::multimem_all_reduce_kernel<c10::BFloat16>", "kernel", "communication"),
    ("void pytorch_flash::flash_fwd_kernel<Flash_fwd_kernel_traits>", "kernel", "attention"),
    ("void paged_attention_ll4mi_QKV_mfma16_kernel<0>", "kernel", "attention"),
    ("sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64", "kernel", "GEMM"),
    ("nvjet_tst_64x64_64x16_2x1_2cta_v_bz_bias_TNT", "kernel", "GEMM"),
    ("Cijk_Alik_Bljk_BBS_BH_Bias_HA_S_SAV_UserArgs_MT32x32x256", "kernel", "GEMM"),
    ("volta_sgemm_128x32_nt", "kernel", "GEMM"),
    ("std::enable_if<vllm::_typeConvert<c10::BFloat16>::exists> fused_add_rms_norm_kernel", "kernel",
     "elementwise/normalisation"),
    ("void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>>", "kernel",
     "elementwise/normalisation"),
    ("Memcpy HtoD (Pageable -> Device)", "memcpy", "memory copies"),
    ("void moe::dev::finalize::finalizeKernelVecLoad", "kernel", "other"),
])
def test_categories(name, kind, expected):
    assert T.category(name, kind) == expected


def test_chip_names():
    assert T.chip_for("NVIDIA H100 80GB HBM3").name == "H100 SXM5"
    assert T.chip_for("AMD Instinct MI300X VF").name == "MI300X"
    assert T.chip_for("NVIDIA B200").name == "B200"
    assert T.chip_for("NVIDIA A100-PG509-200") is None  # not A10: whole words only
    assert T.chip_for("") is None and T.chip_for(None) is None


# ---------------------------------------------------------------- bad input


def test_bad_input(tmp_path):
    with pytest.raises(ValueError, match="no trace file"):
        T.read(tmp_path / "absent.json")
    (tmp_path / "notes.json").write_text("this is not JSON")
    with pytest.raises(ValueError, match="not JSON"):
        T.read(tmp_path / "notes.json")
    (tmp_path / "cut.json").write_text('{"traceEvents": [{"ph": "X", "cat": "kernel"')
    with pytest.raises(ValueError, match="cut short"):
        T.read(tmp_path / "cut.json")
    whole = gzip.compress(json.dumps({"traceEvents": []}).encode() * 50)
    (tmp_path / "cut.json.gz").write_bytes(whole[: len(whole) // 2])
    with pytest.raises(ValueError, match="gzip stream is damaged or cut short"):
        T.read(tmp_path / "cut.json.gz")
    (tmp_path / "other.json").write_text('{"name": "a config"}')
    with pytest.raises(ValueError, match="no 'traceEvents' list"):
        T.read(tmp_path / "other.json")
    with pytest.raises(ValueError, match="not one of the course's chips"):
        hand_trace(tmp_path, [dict(name="gemm", start=0, duration=1e-6)]).placed()


def test_empty_and_cpu_only_traces_are_diagnosed(tmp_path):
    (tmp_path / "empty.json").write_text('{"traceEvents": []}')
    t = T.read(tmp_path / "empty.json")
    assert t.busy_share is None and t.window_s == 0 and t.diagnose().bottleneck == "nothing"
    events = [{"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1, "ts": 0, "dur": 300,
               "args": {"Input Dims": [[64, 64], [64, 64]], "Input type": ["float", "float"]}},
              {"ph": "X", "cat": "cpu_op", "name": "aten::relu", "pid": 1, "tid": 1, "ts": 400, "dur": 100},
              {"ph": "X", "name": "no timestamp"}, "not an event"]
    (tmp_path / "cpu.json").write_text(json.dumps(events))  # the Chrome format's bare-array form
    t = T.read(tmp_path / "cpu.json")
    d = t.diagnose()
    assert d.bottleneck == "cpu" and "2 CPU operators, 400 µs" in str(d) and t.skipped == 2
    (g,) = t.gemms()  # the CPU operator's own time: 2 x 64^3 FLOPs in 300 us
    assert g.where == "cpu" and g.flops_per_s == pytest.approx(2 * 64**3 / 300e-6)


# ---------------------------------------------------------------- the simulated decode trace


def test_decode_trace_eager_vs_graph(tmp_path):
    eager = T.read(synthetic.decode_trace(tmp_path / "e.json.gz", "llama-3-8b", "H100", 1, 4096))
    graph = T.read(synthetic.decode_trace(tmp_path / "g.json.gz", "llama-3-8b", "H100", 1, 4096, graph=True))
    # eager PyTorch's kernels, counted by hand from gpt-fast's model.py (rl.launch.EAGER_KERNELS): per layer 8 (norm)
    # + 1 (QKV) + 18 (RoPE) + 2 (cache) + 4 (attention) + 1 + 1 + 8 + 2 (w1, w3) + 2 + 1 + 1 = 49; 32 layers, then
    # the embedding, the final norm's 8, the LM head and 10 per step: 1588. The graph replays the 387 fused ones.
    assert eager.launch_stats().kernels == 49 * 32 + 1 + 8 + 1 + 10 == 1588
    assert graph.launch_stats().kernels == rl.launch.decode_kernel_count("llama-3-8b") == 12 * 32 + 3
    # eager: the CPU's fitted cost per launch (gpt-fast's eager 25.5 tok/s over 1588 kernels: 1 / 25.5 / 1588 s,
    # 24.7 us) sets the pace: the window is about 1588 x 24.7 us; a 7 us call each
    assert eager.window_s == pytest.approx(1 / 25.5, rel=0.02)
    s = eager.launch_stats()
    assert s.launch_cpu_s == pytest.approx(7e-6) and s.launch_interval_s == pytest.approx(1 / 25.5 / 1588, rel=0.01)
    assert eager.diagnose().bottleneck == "overhead" and graph.diagnose().bottleneck == "memory"
    # the graph: 386 boundaries of 0.06 us idle, each kernel its roofline time plus 5 - 0.06 us
    times = rl.launch.decode_kernel_times("llama-3-8b", "H100", 1, 4096)
    assert graph.idle_s == pytest.approx(386 * 0.06e-6, abs=1e-9)  # times written to the picosecond
    assert graph.busy_s == pytest.approx(sum(times) + 387 * 4.94e-6, rel=1e-6)
    # the LM head (1 x 128256 x 4096 bf16): its weights, input and output read or written once at 3.35 TB/s
    lm_bytes = 2 * (4096 * 128256 + 4096 + 128256)
    placed = graph.placed()
    assert len(placed) == 4 * 32 + 1 and all(p.side == "memory" for p in placed)
    assert placed[0].share_of_roof == pytest.approx((lm_bytes / 3.35e12) / (lm_bytes / 3.35e12 + 4.94e-6))


def test_graph_boundary_as_the_published_graph_replay_shows_it():
    """The synthetic graph's gap per boundary, and the part of the boundary cost it puts inside the kernels, from
    the raw events of the published graph replay: 25.5 us idle over 433 boundaries; an RMSNorm of 32 x 2880 bf16
    (0.4 MB, 0.07 us at 5.3 TB/s) lasting 5.8 us at least."""
    ev = sorted((e for e in raw(published("gfx950-vllm-decode-cudagraph.json.gz"))
                 if e.get("cat") in ("kernel", "gpu_memcpy")), key=lambda e: e["ts"])
    gaps = [b["ts"] - (a["ts"] + a["dur"]) for a, b in zip(ev, ev[1:], strict=False)]
    assert len(gaps) == 433 and min(gaps) >= 0
    assert round(sum(gaps) / len(gaps), 2) * 1e-6 == pytest.approx(synthetic.GRAPH_NODE_GAP_S)
    assert sum(g < 0.002 for g in gaps) == 430  # the rest: where eager work meets the graph
    norms = [e["dur"] for e in ev if "Rmsnorm2dFwd" in e["name"]]
    assert len(norms) == 49 and min(norms) > 5.7
    assert synthetic.IN_KERNEL_S == pytest.approx(5e-6 - 0.06e-6)
    # the GPU: its recorded properties are an MI300X's (gfx942: 9.4, 304 CUs, 192 GiB), not a gfx950's
    props = json.load(gzip.open(published("gfx950-vllm-decode-cudagraph.json.gz")))["deviceProperties"][0]
    assert (props["computeMajor"], props["computeMinor"], props["numSms"]) == (9, 4, 304)
    assert round(props["totalGlobalMem"] / 2**30) == 192  # 206,141,652,992 bytes


def test_launch_interval_from_the_raw_runtime_events():
    """The launch call and the time from one call to the next (same thread), by hand from the raw events: the call
    is a few us, the interval several times it (Python and the dispatcher between the calls)."""
    for name, key in (("b200-vllm-gptoss-prefill-eager.json.gz", "overhead"),
                      ("h100-qwen1.5-0.5b-forward.json.gz", "compute")):
        calls = sorted((e for e in raw(published(name)) if e.get("cat") in ("cuda_runtime", "cuda_driver")
                        and "launch" in e["name"].lower()), key=lambda e: e["ts"])
        threads = {}
        for e in calls:
            threads.setdefault((e["pid"], e["tid"]), []).append(e["ts"])
        apart = [b - a for ts in threads.values() for a, b in zip(ts, ts[1:], strict=False)]
        f = T.PUBLISHED[key].figures
        assert statistics.median(e["dur"] for e in calls) * 1e-6 == pytest.approx(f["launch_call_s"], rel=0.01)
        assert statistics.median(apart) * 1e-6 == pytest.approx(f["launch_interval_s"], rel=0.01)
        assert f["launch_interval_s"] > 4 * f["launch_call_s"]


def test_split_gap_threshold_is_a_parameter(tmp_path):
    path = synthetic.write_trace(tmp_path / "s.json", [dict(name="k1", start=0, duration=1e-3),
                                                       dict(name="k2", start=0.051, duration=1e-3)])
    assert T.read(path).split_gaps == []  # 50 ms: under the default 0.1 s, idle time
    t = T.read(path, split_gap_s=0.02)
    assert t.split_gaps == [(pytest.approx(1e-3), pytest.approx(0.05))] and t.busy_share == pytest.approx(1)
    for bad in (0, -1, float("nan"), "0.1"):
        with pytest.raises(ValueError, match="split_gap_s"):
            T.read(path, split_gap_s=bad)


# ---------------------------------------------------------------- published traces, recomputed from the raw JSON


def independent(path, comm=("nccl", "all_reduce", "allreduce", "multimem")):
    """Window, busy time (union over streams), kernels and their short count, communication time and its part
    overlapped by other GPU work: plain loops over the raw events."""
    ev = [e for e in raw(path) if e.get("ph") == "X" and e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset")]
    t0 = min(e["ts"] for e in ev)  # offsets first: a clock of 6.5e12 us keeps only a nanosecond of its fraction
    gpu = sorted((e["ts"] - t0, e["ts"] - t0 + e["dur"], e["name"], e["cat"]) for e in ev)
    busy, cur_s, cur_e = 0.0, gpu[0][0], gpu[0][1]
    for s, e, _, _ in gpu[1:]:
        if s > cur_e:
            busy, cur_s = busy + cur_e - cur_s, s
        cur_e = max(cur_e, e)
    busy += cur_e - cur_s
    kernels = [d for d in (e["dur"] for e in ev if e["cat"] == "kernel")]
    is_comm = [any(w in n.lower() for w in comm) for _, _, n, _ in gpu]
    c_iv = [(s, e) for (s, e, _, _), c in zip(gpu, is_comm, strict=True) if c]
    o_iv = [(s, e) for (s, e, _, _), c in zip(gpu, is_comm, strict=True) if not c]
    # communication time and overlap at 1-ns resolution would be slow; comm kernels run on one stream, one at a
    # time, so sum each one's overlap with the merged other intervals
    merged = []
    for s, e in sorted(o_iv):
        if merged and s <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], e)
        else:
            merged.append([s, e])
    overlapped = sum(max(0.0, min(e, me) - max(s, ms)) for s, e in c_iv for ms, me in merged if ms < e and me > s)
    return dict(window=(max(e for _, e, _, _ in gpu) - gpu[0][0]) * 1e-6, busy=busy * 1e-6, kernels=len(kernels),
                short=sum(d < 10 for d in kernels), median=statistics.median(kernels) * 1e-6,
                comm=sum(e - s for s, e in c_iv) * 1e-6, overlapped=overlapped * 1e-6)


@pytest.mark.parametrize("name", ["b200-vllm-gptoss-prefill-eager.json.gz", "gfx950-vllm-decode-cudagraph.json.gz",
                                  "h100-qwen1.5-0.5b-forward.json.gz", "mi300x-qwen1.5-0.5b-forward.json.gz",
                                  "mi300x-sglang-qwen3-8b-decode.json.gz", "a100-ddp-convnet-nccl.json.gz",
                                  "v100-ddp-allreduce.json.gz"])
def test_published_trace_figures(name):
    path = published(name)
    t, ind = read_once(path), independent(path)
    assert t.window_s == pytest.approx(ind["window"], abs=1e-9)  # to a nanosecond: times are offsets of large clocks
    assert t.busy_s == pytest.approx(ind["busy"], rel=1e-6)
    s = t.launch_stats()
    assert s.kernels == ind["kernels"] and s.short_share == pytest.approx(ind["short"] / ind["kernels"])
    assert s.median_s == pytest.approx(ind["median"], abs=1e-9)
    assert t.communication_s == pytest.approx(ind["comm"], rel=1e-6, abs=1e-12)
    assert t.communication_overlapped_s == pytest.approx(ind["overlapped"], rel=1e-6, abs=1e-12)


def test_published_regimes():
    """The four regimes the course quotes, each from its trace (the figures in shared/traces/README.md)."""
    b200 = read_once(published("b200-vllm-gptoss-prefill-eager.json.gz"))
    assert round(b200.busy_share, 2) == 0.14 and b200.diagnose().bottleneck == "overhead"
    assert round(b200.launch_stats().short_share * 768) == 585
    lm_head = next(p for p in b200.placed() if (p.row.m, p.row.n, p.row.k) == (1, 25136, 2880))
    assert lm_head.side == "memory" and lm_head.share_of_roof > 0.5  # 4.3 TB/s of the B200's 8 TB/s
    assert read_once(published("gfx950-vllm-decode-cudagraph.json.gz")).busy_share > 0.99
    h100 = read_once(published("h100-qwen1.5-0.5b-forward.json.gz"))
    assert h100.device_name == "NVIDIA H100 80GB HBM3" and h100.device["numSms"] == 132
    assert round(h100.busy_share, 2) == 0.92
    mlp = statistics.median(g.flops_per_s for g in h100.gemms() if (g.m, g.n, g.k) == (8944, 2816, 1024))
    assert 580e12 < mlp < 620e12
    v100 = read_once(published("v100-ddp-allreduce.json.gz"))
    assert v100.communication_s == pytest.approx(0.357, abs=0.001) and v100.communication_overlapped_s == 0


def test_published_gemm_independently():
    """H100: the largest MLP GEMM, joined to its operator by hand: kernel -> correlation -> launch -> External id ->
    aten::mm [[8944, 1024], [1024, 2816]]; its fastest run's FLOP/s against the reader's."""
    path = published("h100-qwen1.5-0.5b-forward.json.gz")
    ev = raw(path)
    ext = {e["args"]["correlation"]: e["args"].get("External id") for e in ev if e.get("cat") == "cuda_runtime"}
    ops = {e["args"]["External id"]: e for e in ev if e.get("cat") == "cpu_op" and e["name"] == "aten::mm"
           and e["args"].get("Input Dims") == [[8944, 1024], [1024, 2816]]}
    times = [e["dur"] * 1e-6 for e in ev if e.get("cat") == "kernel" and ext.get(e["args"]["correlation"]) in ops]
    assert len(times) == 48  # gate and up projections, one each per layer
    best = 2 * 8944 * 2816 * 1024 / min(times)
    rows = [g for g in read_once(path).gemms() if (g.m, g.n, g.k) == (8944, 2816, 1024)]
    assert len(rows) == 48 and max(g.flops_per_s for g in rows) == pytest.approx(best, rel=1e-6)


def test_split_gap_in_published_trace():
    t = read_once(published("mi300x-sglang-qwen3-8b-decode.json.gz"))
    ((_, gap),) = t.split_gaps
    # its record_function ranges, as the raw events name them
    names = sorted(e["name"] for e in raw(published("mi300x-sglang-qwen3-8b-decode.json.gz"))
                   if e.get("cat") in ("user_annotation", "gpu_user_annotation"))
    assert sorted(a.name for a in t.annotations) == names and "step[DECODE bs=32]" in names
    ind = independent(published("mi300x-sglang-qwen3-8b-decode.json.gz"))
    assert gap == pytest.approx(0.4633, abs=1e-4)
    assert t.busy_share == pytest.approx(ind["busy"] / (ind["window"] - gap), rel=1e-6) and t.busy_share > 0.9


def test_counter_trace():
    """A100 AlexNet under CUPTI counter replay: no timed kernels, so CPU work; the counted FLOPs summed by hand."""
    path = published("a100-alexnet-cupti-counters.json.gz")
    flops = 0.0
    for e in raw(path):
        if e.get("cat") == "cuda_profiler_range":
            for key, v in e["args"].items():
                op = key.split("inst_executed_op_")[1].split("_")[0] if "inst_executed_op_" in key else ""
                flops += v * (2 if op.endswith("fma") else 1) if op else 0
    t = read_once(path)
    assert len(t.counted) == 77 and sum(c.flops for c in t.counted) == pytest.approx(flops)
    assert t.diagnose().bottleneck == "cpu"


# ---------------------------------------------------------------- this machine's own trace


def test_own_trace(tmp_path):
    pytest.importorskip("torch", reason="PyTorch is not installed: the own-trace helpers need it")
    t = T.profile_matmuls(tmp_path / "mm.json", sizes=(32, 128), repeats=2)
    rows = t.gemms()
    assert sorted((g.m, g.n, g.k) for g in rows) == [(32, 32, 32)] * 2 + [(128, 128, 128)] * 2
    assert all(g.dtype == "fp32" and g.flops_per_s > 0 for g in rows)
    if t.kernels:  # a GPU ran them
        assert t.busy_share > 0
    else:
        assert t.diagnose().bottleneck == "cpu"
    # torch.profiler.schedule: the warm-up round is thrown away, each recorded round marked ProfilerStep#N
    assert [a.name for a in t.annotations if a.where == "cpu"] == ["ProfilerStep#1", "ProfilerStep#2"]
    cold = T.profile_matmuls(tmp_path / "cold.json", sizes=(32,), repeats=2, warmup=0)
    assert len(cold.gemms()) == 2 and not [a for a in cold.annotations if a.name.startswith("ProfilerStep")]
    with pytest.raises(ValueError, match="warmup"):
        T.profile_matmuls(tmp_path / "bad.json", sizes=(32,), warmup=-1)
    d = T.profile_decode(tmp_path / "decode.json", steps=1, context=64)
    assert any(g.op == "aten::mm" and g.n == T.own.TINY_LLAMA["vocab_size"] for g in d.gemms())  # the LM head


def test_collectives_from_recorded_messages():
    """A100 data-parallel trace: every NCCL kernel records its message; bytes on the wire and the rate they imply,
    recomputed from the raw args (2 ranks: a ring all-reduce sends the whole message, a broadcast half of it)."""
    path = published("a100-ddp-convnet-nccl.json.gz")
    expected = []
    for e in sorted((e for e in raw(path) if e.get("cat") == "kernel" and "Collective name" in e["args"]),
                    key=lambda e: e["ts"]):
        a = e["args"]
        size = {"Float": 4, "Long": 8}[a["dtype"]] * a["In msg nelems"]
        wire = size * (2 * (a["Group size"] - 1) if a["Collective name"] == "allreduce" else a["Group size"] - 1) \
            / a["Group size"]
        expected.append((a["Collective name"], wire / (e["dur"] * 1e-6)))
    rows = read_once(path).collectives()
    assert [(r.collective, pytest.approx(r.bus_bytes_per_s, rel=1e-6)) for r in rows] == expected
    assert len(rows) == 21
    # far under even PCIe 4's 32 GB/s: the kernels' time is mostly waiting for the other rank, not the wire
    assert max(r.bus_bytes_per_s for r in rows) < 15e9


def test_diagnosis_of_exposed_communication(tmp_path):
    # 100 us of all-reduce on the compute stream after 50 us of elementwise work: nothing hides it
    t = hand_trace(tmp_path, [dict(name="vectorized_elementwise_kernel", start=0, duration=50e-6),
                              dict(name="ncclKernel_AllReduce_RING_LL_Sum_bfloat16", start=50e-6, duration=100e-6)],
                   device_name="NVIDIA H100 80GB HBM3")
    d = t.diagnose()
    assert d.bottleneck == "communication" and d.charged["communication"] == pytest.approx(100e-6)
    assert d.share("memory") == pytest.approx(1 / 3) and "chapters 09 and 13" in d.next_steps
    assert "100 µs exposed" in str(d)


def test_hidden_communication_longer_than_the_rest_is_noted(tmp_path):
    # elementwise work 0-60 us on stream 7; an all-reduce 10-90 us on stream 20: 50 us of it hidden, 30 exposed,
    # yet 80 us of communication against 60 us of everything else: the all-reduce sets the step's length
    t = hand_trace(tmp_path, [dict(name="vectorized_elementwise_kernel", start=0, duration=60e-6),
                              dict(name="ncclKernel_AllReduce_RING_LL_Sum_bfloat16", start=10e-6, duration=80e-6,
                                   stream=20)], device_name="NVIDIA H100 80GB HBM3")
    assert t.non_communication_s == pytest.approx(60e-6) and t.communication_exposed_s == pytest.approx(30e-6)
    d = t.diagnose()
    assert d.bottleneck == "memory" and any("critical path" in n for n in d.notes)
    # the same all-reduce, 10-50 us: 40 us, all hidden behind the 60 us: no note
    t = hand_trace(tmp_path, [dict(name="vectorized_elementwise_kernel", start=0, duration=60e-6),
                              dict(name="ncclKernel_AllReduce_RING_LL_Sum_bfloat16", start=10e-6, duration=40e-6,
                                   stream=20)], device_name="NVIDIA H100 80GB HBM3")
    assert not any("critical path" in n for n in t.diagnose().notes)


def test_on_roofline_draws_the_gemms(tmp_path):
    pytest.importorskip("matplotlib")
    from matplotlib import pyplot as plt
    t = T.read(synthetic.decode_trace(tmp_path / "g.json.gz", "llama-3-8b", "H100", 1, 4096, graph=True))
    fig, ax = t.on_roofline(top=3)
    stars = [line for line in ax.get_lines() if line.get_marker() == "*"]
    assert len(stars) == 3  # the three longest GEMMs, at their measured FLOP/s
    assert sorted(float(s.get_ydata()[0]) for s in stars) == pytest.approx(
        sorted(p.row.flops_per_s for p in t.placed()[:3]))
    plt.close(fig)


def test_own_trace_without_torch(tmp_path, monkeypatch):
    from roofline_lib.trace import own

    def missing():
        raise ModuleNotFoundError("PyTorch is not installed: pip install torch")
    monkeypatch.setattr(own, "_torch", missing)
    with pytest.raises(ModuleNotFoundError, match="pip install torch"):
        own.profile_matmuls(tmp_path / "mm.json")


def measured_figures(key):
    """Every figure PUBLISHED quotes for one trace, measured here with the reader."""
    entry = T.PUBLISHED[key]
    t = read_once(published(entry.file))
    s, cats = t.launch_stats(), t.time_by_category()
    out = dict(window_s=t.window_s, busy_share=t.busy_share, kernels=s.kernels,
               short_kernels=round(s.short_share * s.kernels), median_kernel_s=s.median_s,
               launch_call_s=s.launch_cpu_s, launch_interval_s=s.launch_interval_s,
               communication_s=t.communication_s, communication_hidden_s=t.communication_overlapped_s,
               elementwise_s=cats["elementwise/normalisation"], gemm_s=cats["GEMM"])
    out |= dict(boundaries=len(t.kernels) - 1, boundary_gap_s=t.idle_s / (len(t.kernels) - 1),
                boundaries_under_2ns=sum(b.start - a.end < 2e-9 for a, b in zip(t.kernels, t.kernels[1:],
                                                                                   strict=False)))
    norms = [k.duration for k in t.kernels if "Rmsnorm2dFwd" in k.name]
    if norms:
        out |= dict(rmsnorm_min_s=min(norms))
    gemms = t.gemms()
    lm = [g for g in gemms if g.n in (25136, 201088) and g.k == 2880]
    if lm:
        out |= dict(lm_head_s=lm[0].seconds, lm_head_bytes_per_s=lm[0].bytes_per_s)
    mlp = [g.flops_per_s for g in gemms if (g.m, g.n, g.k) == (8944, 2816, 1024)]
    if mlp:
        out |= dict(mlp_gemms=len(mlp), mlp_flops_per_s=statistics.median(mlp))
    if t.split_gaps:
        out |= dict(split_gap_s=t.split_gaps[0][1], busy_share_with_gap=t.busy_s / t.window_s)
    rows = [r for r in t.collectives() if r.collective == "allreduce"]
    if rows:
        slowest = max(rows, key=lambda r: r.seconds)
        out |= dict(all_reduces=len(rows), fastest_bus_bytes_per_s=max(r.bus_bytes_per_s for r in rows),
                    smallest_message_bytes=min(r.message_bytes for r in rows),
                    largest_message_bytes=max(r.message_bytes for r in rows),
                    slowest_all_reduce_s=slowest.seconds, slowest_all_reduce_bytes=slowest.message_bytes)
    return out


@pytest.mark.parametrize("key", sorted(T.PUBLISHED))
def test_quoted_figures_match_their_traces(key):
    """Each figure chapter 15 quotes equals what the reader measures, to the digits it is written with."""
    measured = measured_figures(key)
    for name, quoted in T.PUBLISHED[key].figures.items():
        if isinstance(quoted, int):
            assert measured[name] == quoted, name
        elif quoted == 0:
            assert measured[name] == 0, name
        else:
            # its significant digits as written: 84.5e-3 has 3, 1.733 has 4, 616.4e12 has 4
            mantissa = repr(float(quoted)).split("e")[0].replace(".", "").lstrip("0").rstrip("0")
            assert float(f"{measured[name]:.{max(len(mantissa), 1)}g}") == pytest.approx(quoted), (name, measured[name])


def test_odd_events_are_skipped_not_fatal(tmp_path):
    """Events a real trace should not hold (a text time, args that are not a mapping, dims that are not shapes,
    a device list of the wrong kind) are skipped or ignored; the rest is read."""
    events = [{"ph": "X", "cat": "kernel", "name": "gemm", "ts": "soon", "dur": 5},
              {"ph": "X", "cat": "kernel", "name": 5, "ts": 10, "dur": 5, "args": [1, 2]},
              {"ph": "X", "cat": "kernel", "name": "gemm", "ts": 20, "dur": -1},
              {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "ts": 0, "dur": 40,
               "args": {"Input Dims": "[[2, 2]]", "Input type": [None, 3]}},
              {"ph": "X", "cat": "kernel", "name": "gemm", "ts": 30, "dur": 10, "args": {"stream": [7]}}]
    (tmp_path / "odd.json").write_text(json.dumps({"traceEvents": events, "deviceProperties": "an H100"}))
    t = T.read(tmp_path / "odd.json")
    assert len(t.kernels) == 2 and t.skipped == 2 and t.device is None
    assert t.gemms() == [] and t.busy_s == pytest.approx(15e-6)
    assert t.diagnose().bottleneck in T.REGIMES


@pytest.mark.parametrize("op, dims, concrete, expected", [
    # FlashAttention's forward: Q, K, V as [B, S, H, D]; is_causal the 9th input
    ("aten::_flash_attention_forward", [(2, 128, 8, 64), (2, 256, 2, 64), (2, 256, 2, 64)],
     ["", "", "", "", "", "128", "256", "0.", "True"], (2, 8, 2, 128, 256, 64, 64, True)),
    # SDPA: [B, H, S, D]; is_causal the 5th input
    ("aten::_scaled_dot_product_flash_attention", [(2, 8, 128, 64), (2, 8, 128, 64), (2, 8, 128, 32)],
     ["", "", "", "0.", "False"], (2, 8, 8, 128, 128, 64, 32, False)),
    ("aten::_scaled_dot_product_flash_attention", [(2, 8, 128, 64), (3, 8, 128, 64), (2, 8, 128, 64)],
     None, None),  # batches disagree
    ("aten::bmm", [(2, 8, 128, 64)] * 3, None, None),
])
def test_attention_forms(op, dims, concrete, expected):
    from roofline_lib.trace.gemms import attention_shape
    assert attention_shape(op, tuple(tuple(d) for d in dims), concrete) == expected


def test_published_attention_independently():
    """H100: the fused attention of 16 sequences of 559 tokens, 16 heads of 64, causal. FLOPs by hand: per head and
    sequence 559 x 560 / 2 query-key pairs, 2 x 64 FLOPs each for the scores and 2 x 64 for the values; bytes: Q, K,
    V read and O written once, 2 bytes each. Its kernels' times from the raw events (kernel -> correlation ->
    launch -> External id -> aten::_flash_attention_forward)."""
    path = published("h100-qwen1.5-0.5b-forward.json.gz")
    ev = raw(path)
    ext = {e["args"]["correlation"]: e["args"].get("External id") for e in ev if e.get("cat") == "cuda_runtime"}
    ops = {e["args"]["External id"] for e in ev if e.get("name") == "aten::_flash_attention_forward"}
    times = sorted(e["dur"] * 1e-6 for e in ev if e.get("cat") == "kernel" and ext.get(e["args"]["correlation"]) in ops)
    flops = 16 * 16 * (559 * 560 // 2) * 2 * (64 + 64)
    nbytes = 4 * 16 * 559 * 16 * 64 * 2
    rows = read_once(path).attention()
    assert len(rows) == len(times) == 24 and all(r.causal and r.dtype == "bf16" for r in rows)
    assert rows[0].flops == flops and rows[0].bytes == nbytes
    assert sorted(r.seconds for r in rows) == pytest.approx(times)
    placed = [p for p in read_once(path).placed() if isinstance(p.row, T.AttentionRow)]
    # intensity 140 FLOP/byte, under the H100's ridge of 295: the memory side
    assert len(placed) == 24 and all(p.side == "memory" for p in placed)
