"""Accelerator data against independent datasheet figures, and the loader's validation."""

import math
import pathlib
import re

import numpy as np
import pytest

import roofline_lib as rl
from roofline_lib.specs.hardware import load_accelerator

# Independent values: datasheet peaks and bandwidths (shared/reference/accelerators-sourced.csv)
# and the worked ridge points of the course's sources (scaling book, seed errata).
RIDGES_BF16 = {
    "H200": 989.4 / 4.8,  # ~206, scaling book
    "H100": 989.4 / 3.35,  # ~295, scaling book
    "A100 80GB SXM4": 312 / 2.039,  # ~153, erratum 1
    "A100 80GB PCIe": 312 / 1.935,  # ~161, erratum 1
    "A100 40GB SXM4": 312 / 1.555,  # ~200.6: the seed's "A100 80GB" number belongs here
    "A10": 125 / 0.6,  # ~208, seed 002 (correct there)
}


@pytest.mark.parametrize("name, ridge", RIDGES_BF16.items())
def test_ridge_points_match_datasheet_ratios(name, ridge):
    assert rl.get_accelerator(name).ridge_point("bf16") == pytest.approx(ridge, rel=1e-3)


def test_published_ridge_roundings():
    assert round(rl.get_accelerator("H200").ridge_point()) == 206
    assert round(rl.get_accelerator("H100 SXM").ridge_point()) == 295
    assert round(rl.get_accelerator("A100").ridge_point()) == 153


def test_h100_pcie_dense_figures_from_erratum_9():
    hw = rl.get_accelerator("H100 PCIe")
    assert hw.peak_flops("fp32") == 51e12
    assert hw.peak_flops("tf32") == 378e12
    assert hw.peak_flops("bf16") == 756e12
    assert hw.peak_flops("fp8") == 1513e12
    # the datasheet's starred headline is exactly twice the dense value
    assert hw.sparse_flops_by_dtype["bf16"] == pytest.approx(2 * hw.peak_flops("bf16"), rel=1e-3)


def test_dense_is_never_the_sparse_headline():
    checked = 0
    for name in rl.list_accelerators():
        hw = rl.get_accelerator(name)
        for dtype, sparse in hw.sparse_flops_by_dtype.items():
            # 2% slack: the L40S datasheet pairs 362.05 dense with 733* sparse
            assert sparse == pytest.approx(2 * hw.peak_flops(dtype), rel=0.02), (name, dtype)
            checked += 1
    assert checked >= 20  # the chips' sparse headlines were really compared (27 today)


def test_units_are_si():
    hw = rl.get_accelerator("H200")
    assert hw.mem_bandwidth == 4.8e12
    assert hw.mem_capacity == 143771 * 2**20   # nvidia-smi memory.total on an H200: 143771MiB
    assert hw.interconnect_bandwidth == 900e9
    assert hw.interconnect_bandwidth_per_direction == 450e9
    assert rl.get_accelerator("TPU v4").mem_capacity == 32 * 2**30


# Driver-reported totals (nvidia-smi memory.total, MiB) from public printouts, independent of data/:
# modal-labs/modal-client pull request #2797 and H200 printouts ('/ 143771MiB').
NVIDIA_SMI_MIB = {"H200 SXM": 143771, "A100 80GB SXM4": 81920, "H100 SXM5": 81559, "A100 40GB SXM4": 40960,
                  "A10": 23028, "L40S": 46068, "L4": 23034}


@pytest.mark.parametrize("chip, mib", sorted(NVIDIA_SMI_MIB.items()))
def test_capacity_is_what_the_driver_reports(chip, mib):
    hw = rl.get_accelerator(chip)
    assert hw.mem_capacity == pytest.approx(mib * 2**20, rel=0.015)
    # the datasheet's "N GB" read as N x 1e9 bytes under-counts every one of them
    label_gb = float(hw.mem_capacity_label.split()[0])
    assert label_gb * 1e9 < hw.mem_capacity


def test_h200_has_h100_compute_and_1_4x_bandwidth():
    h100, h200 = rl.get_accelerator("H100"), rl.get_accelerator("H200")
    assert h100.peak_flops("bf16") == h200.peak_flops("bf16")
    assert h200.mem_bandwidth / h100.mem_bandwidth == pytest.approx(1.43, abs=0.01)


def test_required_chips_are_present():
    names = set(rl.list_accelerators())
    for required in ["A100 40GB SXM4", "A100 40GB PCIe", "A100 80GB SXM4", "A100 80GB PCIe", "H100 SXM5",
                     "H100 PCIe", "H200 SXM", "H200 NVL", "A10", "L4", "L40S", "B200", "MI300X", "TPU v5e",
                     "TPU v5p"]:
        assert required in names


def test_every_chip_names_a_source_for_every_figure():
    paths = sorted((pathlib.Path(rl.specs.hardware.ACCELERATOR_DIR)).glob("*.toml"))
    assert len(paths) == len(rl.list_accelerators()) >= 15  # every chip's file, not an empty folder
    for path in paths:
        hw = load_accelerator(path)
        assert hw.sources["peak_dense_TFLOPs"] and hw.sources["mem_bandwidth_TBps"], path.name


@pytest.mark.parametrize("spelling", ["h200", "H200", "H200-SXM", "h200 sxm", "H200_SXM"])
def test_lookup_is_case_and_punctuation_insensitive(spelling):
    assert rl.get_accelerator(spelling).name == "H200 SXM"


def test_unknown_chip_names_close_matches():
    with pytest.raises(ValueError, match=r"unknown accelerator 'H300'.*H200 SXM"):
        rl.get_accelerator("H300")


def test_missing_dtype_lists_what_the_chip_has():
    with pytest.raises(ValueError, match=r"no fp8 .*fp64, fp32, tf32, bf16, fp16, int8"):
        rl.get_accelerator("A100").peak_flops("fp8")


def test_unknown_dtype():
    with pytest.raises(ValueError, match="unknown dtype 'fp12'"):
        rl.get_accelerator("H200").peak_flops("fp12")


def test_dtype_aliases():
    hw = rl.get_accelerator("H200")
    assert hw.peak_flops("bfloat16") == hw.peak_flops("BF16") == hw.peak_flops("bf16")


def test_achieved_uses_published_measurements():
    real = rl.get_accelerator("A100").achieved()
    assert real.peak_flops("bf16") == 271.2e12  # stas00: 87% of 312
    assert real.mem_bandwidth == 1.6e12
    assert real.peak_flops("bf16") / rl.get_accelerator("A100").peak_flops("bf16") == pytest.approx(0.87, abs=0.01)
    with pytest.raises(ValueError, match="no published measured ceilings"):
        rl.get_accelerator("L4").achieved()


GOOD = """
name = "Test chip"
vendor = "Test"
mem_bandwidth_TBps = 1.0
mem_capacity_label = "10 GB"
mem_capacity_MiB = 10240
[peak_dense_TFLOPs]
bf16 = 100
[sources]
peak_dense_TFLOPs = "made up for the test"
mem_bandwidth_TBps = "made up"
mem_capacity_label = "made up"
mem_capacity_MiB = "made up"
"""


def write(tmp_path, text):
    path = tmp_path / "chip.toml"
    path.write_text(text)
    return path


def test_loader_accepts_a_minimal_file(tmp_path):
    hw = load_accelerator(write(tmp_path, GOOD))
    assert hw.ridge_point("bf16") == pytest.approx(100)


@pytest.mark.parametrize("broken, message", [
    (GOOD.replace("mem_bandwidth_TBps = 1.0\n", ""), "field 'mem_bandwidth_TBps' is missing"),
    (GOOD.replace("mem_bandwidth_TBps = 1.0", 'mem_bandwidth_TBps = "fast"'), "'mem_bandwidth_TBps' must be a number"),
    (GOOD.replace("bf16 = 100", "bf16 = -5"), r"'peak_dense_TFLOPs.bf16' must be finite and > 0"),
    (GOOD.replace("bf16 = 100", "bf16 = 0"), r"'peak_dense_TFLOPs.bf16' must be finite and > 0"),
    (GOOD.replace("bf16 = 100", "bf16 = nan"), r"'peak_dense_TFLOPs.bf16' must be finite and > 0"),
    (GOOD.replace("bf16 = 100", "bf17 = 100"), "not a known dtype"),
    (GOOD.replace('mem_capacity_MiB = "made up"', ""), "sources.mem_capacity_MiB' is missing"),
    (GOOD.replace("mem_capacity_MiB = 10240\n", ""), "mem_capacity_MiB' must be given once"),
    (GOOD.replace("mem_capacity_MiB = 10240\n", "mem_capacity_MiB = 10240\nmem_capacity_GiB = 10\n"),
     "must be given once"),
    (GOOD.replace("mem_capacity_MiB = 10240\n", "mem_capacity_GB = 10\n"), "'mem_capacity_GB' is ambiguous"),
    (GOOD.replace('mem_capacity_label = "10 GB"\n', ""), "'mem_capacity_label' is missing"),
    (GOOD.replace('mem_capacity_label = "10 GB"\n', "mem_capacity_label = 10\n"), "datasheet's text"),
    (GOOD + "\n[[", "not valid TOML"),
    (GOOD.replace("[peak_dense_TFLOPs]", "special_function_TOPS = 3.9\n[peak_dense_TFLOPs]"),
     "sources.special_function_TOPS' is missing"),
    (GOOD.replace("[peak_dense_TFLOPs]", "special_function_TOPS = 0\n[peak_dense_TFLOPs]")
     + 'special_function_TOPS = "made up"\n', "'special_function_TOPS' must be finite and > 0"),
])
def test_loader_names_file_chip_and_field(tmp_path, broken, message):
    with pytest.raises(ValueError, match=message) as info:
        load_accelerator(write(tmp_path, broken))
    assert "chip.toml" in str(info.value)
    if "TOML" not in message:
        assert "Test chip" in str(info.value)


def test_every_data_file_loads_and_has_positive_figures():
    assert len(rl.list_accelerators()) >= 15
    for name in rl.list_accelerators():
        hw = rl.get_accelerator(name)
        assert hw.mem_bandwidth > 0 and hw.mem_capacity > 0
        assert all(v > 0 and math.isfinite(v) for v in hw.peak_flops_by_dtype.values())
        assert re.search(r"\w", hw.sources["mem_bandwidth_TBps"])


def test_accelerator_constructor_validates():
    with pytest.raises(ValueError, match="mem_bandwidth must be finite and > 0"):
        rl.Accelerator(name="x", peak_flops_by_dtype={"fp32": 1e12}, mem_bandwidth=0, mem_capacity=1e9)


def test_special_function_rate_follows_the_flashattention3_derivation():
    # FlashAttention-3 paper, footnote 5: 16 special-function ops per SM per clock x 132 SMs x 1830 MHz,
    # "3.9 TFLOPS", and "the exponential has 256x lower throughput" than the 989 TFLOP/s of FP16 matmul
    for name in ("H100 SXM5", "H200 SXM"):
        hw = rl.get_accelerator(name)
        assert hw.special_function_rate == pytest.approx(16 * 132 * 1830e6, rel=1e-9)
        assert hw.special_function_rate == pytest.approx(3.9e12, rel=0.01)
        assert hw.peak_flops("bf16") / hw.special_function_rate == pytest.approx(256, rel=0.01)
        assert "FlashAttention-3" in hw.sources["special_function_TOPS"]


def test_exp_time_is_count_over_rate_and_needs_a_sourced_rate():
    h100 = rl.get_accelerator("H100")
    assert h100.exp_time(16 * 132 * 1830e6) == pytest.approx(1.0)
    assert np.allclose(h100.exp_time(np.array([1e9, 2e9])), [1e9 / 3.86496e12, 2e9 / 3.86496e12])
    with pytest.raises(ValueError, match="count must be finite and > 0"):
        h100.exp_time(-1)
    with pytest.raises(ValueError, match="A100 80GB SXM4 has no sourced special-function.*H100 SXM5"):
        rl.get_accelerator("A100").exp_time(1e9)


def test_loader_reads_special_function_rate(tmp_path):
    text = GOOD.replace("[peak_dense_TFLOPs]", "special_function_TOPS = 2.5\n[peak_dense_TFLOPs]")
    hw = load_accelerator(write(tmp_path, text + 'special_function_TOPS = "made up"\n'))
    assert hw.special_function_rate == 2.5e12
    assert load_accelerator(write(tmp_path, GOOD)).special_function_rate is None


def test_block_scaled_formats_find_their_tensor_core_row():
    # the Blackwell datasheet lists one FP4 row (9 PFLOP/s dense per HGX B200 GPU, 18 with 2:4 sparsity); NVFP4 and
    # MXFP4 run on those tensor cores, MXFP8 on the FP8 ones (4.5 PFLOP/s)
    b200 = rl.get_accelerator("B200")
    for name in ("nvfp4", "NVFP4", "mxfp4", "mx-fp4", "fp4"):
        assert b200.peak_flops(name) == 9000e12 and b200.datasheet_row(name) == "fp4"
    assert b200.peak_flops("mxfp8") == 4500e12 and b200.datasheet_row("mxfp8") == "fp8"
    assert b200.datasheet_row("bf16") == "bf16" and b200.ridge_point("nvfp4") == b200.ridge_point("fp4")
    # a chip without FP4 tensor cores says so, naming the row it looked for and what it has
    with pytest.raises(ValueError, match=r"H100 SXM5 has no nvfp4 peak in its datasheet \(nor fp4, the tensor-core "
                                         r"rate nvfp4 computes at\); it has: fp64, "):
        rl.get_accelerator("H100").peak_flops("nvfp4")
    with pytest.raises(ValueError, match=r"has no int4 peak in its datasheet; it has: "):
        rl.get_accelerator("H100").peak_flops("int4")


def test_grand_teton_h100_is_the_torchtitan_pages_chip():
    # pytorch/torchtitan benchmarks/llama3_h100_202412_torchtitan.md (and the async-TP page), Hardware: "Each H100
    # GPU is equipped with 96GB HBM2e with 2.4 TB/sec peak memory bandwidth", "400 Gb/s per GPU", "the default
    # 500W power limit"; footnote 2: an "SXM H100" whose peak "is between SXM and NVL" (989.4 and 835 TFLOP/s
    # dense bf16, the H100 datasheet): no measured figure, so the SXM's peak stands as the upper bound
    gt = rl.get_accelerator("H100 96GB 500W")
    assert gt.name == "H100 SXM5 96GB HBM2e (500 W)"
    assert gt.mem_bandwidth == 2.4e12
    assert gt.mem_capacity_label == "96 GB" and gt.mem_capacity == 96 * 2**30
    assert gt.peak_flops("bf16") == 989.4e12 and gt.peak_flops("fp8") == 1978.9e12
    assert gt.peak_flops("bf16") > 835e12  # above the NVL's: an upper bound, never below the page's bracket
    assert not gt.measured  # no published measurement of the 500 W part: none recorded
    assert gt.interconnect_bandwidth == 900e9 and gt.compute_units == 132
    teton = rl.get_topology("Grand Teton H100")
    assert teton.chip == gt.name and teton.gpus_per_node == 8
    assert teton.nic_bandwidth == 400e9 / 8  # 400 Gb/s per GPU
