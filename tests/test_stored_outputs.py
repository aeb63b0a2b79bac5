"""The saved outputs of chapters 07 and 08 agree with their prose.

Their measured cells are not compared by nbval (timings vary), so nothing else would notice a saved
run whose figures contradict the text beside them. This test reads the outputs as committed.
"""

import json
import pathlib
import re

import numpy as np
import pytest

NOTEBOOKS = pathlib.Path(__file__).resolve().parents[1] / "notebooks"
ABOVE_ROOF_MARGIN = 1.2  # a kernel may sit at most 20% above the roof drawn for it


def _outputs(name):
    nb = json.loads((NOTEBOOKS / name).read_text(encoding="utf-8"))
    cells = [c for c in nb["cells"] if c["cell_type"] == "code"]
    texts = []
    for c in cells:
        for o in c.get("outputs", []):
            assert o["output_type"] != "error", f"{name}: a stored error output"
            assert o.get("name") != "stderr", f"{name}: stored stderr: {''.join(o.get('text', ''))}"
            if o["output_type"] == "stream":
                texts.append("".join(o["text"]))
            elif "text/plain" in o.get("data", {}):
                texts.append("".join(o["data"]["text/plain"]))
    return cells, "\n".join(texts)


def _floats(pattern, text):
    found = [float(x) for x in re.findall(pattern, text)]
    assert found, f"no match for {pattern!r}"
    return found


@pytest.fixture(scope="module")
def ch07():
    return _outputs("07_measure_your_machine.ipynb")


@pytest.fixture(scope="module")
def ch08():
    return _outputs("08_overhead_bound.ipynb")


def test_07_fp32_peak_above_fp64(ch07):
    _, text = ch07
    fp64 = _floats(r"fp64 peak\s+best\s+([\d.]+) GFLOP/s", text)[0]
    fp32 = _floats(r"fp32 peak\s+best\s+([\d.]+) GFLOP/s", text)[0]
    assert fp32 > 1.2 * fp64, (fp32, fp64)  # the x86-64 machine the outputs were saved on has SIMD
    assert _floats(r"fp32 / fp64 peak: ([\d.]+)", text)[0] == pytest.approx(fp32 / fp64, rel=0.01)


def test_07_no_kernel_above_its_roof(ch07):
    cells, text = ch07
    ratios = _floats(r"achieved / roof ([\d.]+)", text)
    assert len(ratios) == 8 and max(ratios) <= ABOVE_ROOF_MARGIN, ratios
    # the kernels judged against the cache roof are drawn against it in the figure
    assert "cache" in text and any("profile.cache_roof" in "".join(c["source"]) and "roofline_plot" in
                                   "".join(c["source"]) for c in cells)


def test_07_elementwise_arrays_exceed_the_cache(ch07):
    _, text = ch07
    array_mib = _floats(r"arrays: (\d+) MiB each", text)[0]
    llc_mib = _floats(r"MiB each \(last-level cache (\d+) MiB\)", text)[0]
    assert array_mib >= llc_mib
    assert re.search(r"vector add:.*roof\s+DRAM", text) and re.search(r"matmul 1024:.*roof\s+cache", text)


def test_07_small_kernels_miss_by_more_than_large(ch07):
    _, text = ch07
    sizes = (8, 32, 128, 512, 1024)
    ratio = [_floats(rf"matmul {m}\s+[\d.]+us\s+[\d.]+us\s+([\d.]+)", text)[0] for m in sizes]
    # prose: on a quiet machine the ratio falls as the matmul grows, from tens at 8 x 8 to about 1 at 1024
    assert ratio[0] > 10 and ratio[-1] < 1.5 and ratio[0] > 2 * min(ratio[-2:]), ratio
    assert np.polyfit(np.log(sizes), np.log(ratio), 1)[0] < -0.25, ratio


def test_08_overhead_agrees_with_the_one_element_call(ch08):
    _, text = ch08
    one = _floats(r"one-element call here: (\d+) ns", text)[0]
    profile_figure = _floats(r"the profile's overhead: (\d+) ns", text)[0]
    ratio = _floats(r"the profile's overhead: \d+ ns \(ratio ([\d.]+)\)", text)[0]
    assert 0.5 < one / profile_figure < 2 and 0.5 < ratio < 2
    summary = _floats(r"tiny-call overhead\s+(\d+) ns", text)[0]
    assert summary == profile_figure == _floats(r"per-call overhead: (\d+) ns", text)[0]


def test_08_flat_region_and_batching_slopes(ch08):
    _, text = ch08
    # prose: over n = 1 to 64 the log-log slope is about 0; the same work in more calls takes longer
    assert abs(_floats(r"64x range of work; log-log slope (-?[\d.]+)", text)[0]) < 0.5
    assert _floats(r"slope of time against calls (-?[\d.]+)", text)[0] > 0.25


def test_08_additive_model_at_the_small_end(ch08):
    _, text = ch08
    assert 0.5 < _floats(r"at the ends: smallest ([\d.]+)", text)[0] < 2


def test_08_launch_queue_and_decode_claims(ch08):
    _, text = ch08
    idle = dict(zip(_floats(r"kernels of\s+([\d.]+) us: idle", text), _floats(r"us: idle (\d+)% \(async", text),
                    strict=True))
    assert idle[1.0] > 75 and idle[5.0] == 0 and idle[19.9] == 0
    assert "387 kernels per decode step" in text
    # prose: eager ~11.6x (CPU-bound), graphs 1.6x, fused + graphs 1.25x the H200 batch-1 roofline time
    eager = _floats(r"H200, batch 1: eager ([\d.]+)x", text)[0]
    graphs = _floats(r"H200, batch 1: eager [\d.]+x, graphs ([\d.]+)x", text)[0]
    both = _floats(r"fused \+ graphs ([\d.]+)x its roofline", text)[0]
    assert eager > 10 and 1.5 < graphs < 1.7 and 1.2 < both < 1.3
    # prose: gpt-fast eager 25.5 tok/s fitted; compiled 107.0 reproduced within about ±10 %
    eager_tok, compiled_tok = _floats(r"gpt-fast eager:\s+model\s+([\d.]+) tok/s", text)[0], \
        _floats(r"gpt-fast compiled: model\s+([\d.]+) tok/s", text)[0]
    assert abs(eager_tok / 25.5 - 1) < 0.1 and abs(compiled_tok / 107.0 - 1) < 0.1
